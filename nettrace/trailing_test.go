package nettrace

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestTrailingInput appends input after the end of whole traces of every
// format (a V1/V2 trailer, a V4/V5 NullReference, a V6 EndOfStream
// block): each event is still read, in both orders, and the trace ends
// with a DamageError that records the extra bytes (where, how many, what
// they begin with) instead of io.EOF; in strict mode the trace ends with
// that error.
func TestTrailingInput(t *testing.T) {
	traces := map[string][]byte{
		"V2 (2.1 netperf)": loadTrace(t, "../testdata/traces/eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf.zip"),
		"V4 (5.0)":         loadTrace(t, "../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"),
		"V5 (6.0)":         loadTrace(t, "../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"),
		"V6":               buildV6(true),
	}
	for name, data := range traces {
		for _, o := range []Order{FileOrder, TimeOrder} {
			_, want, err := readToEnd(data, o)
			if err != io.EOF {
				t.Fatalf("%s, order %v: the whole trace ends with %v, want io.EOF", name, o, err)
			}
			for _, c := range []struct {
				tail []byte
				says string
			}{
				{make([]byte, 1000), "the input goes on 1000 bytes after the trace's end, beginning with zeros"},
				{[]byte("x"), "the input goes on 1 byte after the trace's end"},
				{data, "beginning with another trace's header"},
			} {
				in := append(bytes.Clone(data), c.tail...)
				r, n, err := readToEnd(in, o)
				if n != want {
					t.Errorf("%s, order %v, %d bytes appended: %d events, want %d", name, o, len(c.tail), n, want)
				}
				var de *DamageError
				if !errors.As(err, &de) || !errors.Is(err, ErrDamaged) {
					t.Errorf("%s, order %v, %d bytes appended: the trace ends with %v, want a DamageError", name, o, len(c.tail), err)
					continue
				}
				d := r.Damage()
				if len(d) != 1 || d[0].Offset != int64(len(data)) || d[0].Length != int64(len(c.tail)) || d[0].Events != -1 {
					t.Errorf("%s, order %v, %d bytes appended: damage %v, want %d bytes at %d, events -1", name, o, len(c.tail), d, len(c.tail), len(data))
					continue
				}
				if !strings.Contains(d[0].Err.Error(), c.says) || !strings.Contains(d[0].Err.Error(), "offset "+strconv.Itoa(len(data))) {
					t.Errorf("%s: %q does not say %q at offset %d", name, d[0].Err, c.says, len(data))
				}
				// Strict: the same as an error.
				sr, err := NewReader(bytes.NewReader(in))
				if err != nil {
					t.Fatal(err)
				}
				sr.SetStrict(true)
				sr.SetOrder(o)
				var sn int
				for {
					if _, err = sr.Next(); err != nil {
						break
					}
					sn++
				}
				var e *Error
				if sn != want || !errors.As(err, &e) || !errors.Is(err, ErrFormat) || e.Offset != int64(len(data)) {
					t.Errorf("%s, order %v, strict: %d events and %v, want %d and an ErrFormat at %d", name, o, sn, err, want, len(data))
				}
			}
		}
	}
}
