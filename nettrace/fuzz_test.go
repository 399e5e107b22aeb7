package nettrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/clrgo/clrevents/internal/columntest"
)

// FuzzReader feeds arbitrary bytes to the reader and the payload decoders:
// nothing may panic, every error must be an *Error with a sentinel, and the
// reader must stop.
func FuzzReader(f *testing.F) {
	small := loadTrace(f, filepath.Join(repoTraces, "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"))
	f.Add(small)
	arr := loadTrace(f, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	f.Add(arr[:4096])
	f.Add(arr[:20000])
	f.Add(buildV6(true))
	f.Add(buildV6(false))
	f.Add(universalTrace()) // the universal providers' well-known fields
	// The .NET Core 2.0 cut: its first 20 KB and trailer, whole and with
	// 3 bytes taken out of an event before metadata records (a shift the
	// reader learns from the event after the next one).
	v2 := loadTrace(f, filepath.Join(repoTraces, "eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip"))
	v2head := append(bytes.Clone(v2[:20000]), v2[len(v2)-17:]...)
	f.Add(v2head)
	f.Add(append(bytes.Clone(v2head[:4000]), v2head[4003:]...))
	for _, name := range []string{
		"perfview/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip",
		"perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip",
	} {
		p := filepath.Join(sharedTraces, name)
		if _, err := os.Stat(p); err == nil {
			d := loadTrace(f, p)
			f.Add(d[:3000])
			f.Add(append(bytes.Clone(d[:3000]), d[len(d)-40:]...))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			checkErr(t, err)
			return
		}
		var buf []byte
		var offsets []int64
		var dropped uint64
		// Every event record takes bytes of the input, so the reader ends
		// (resynchronising too: no skip loop) within len(data) events.
		for i := 0; ; i++ {
			if i > len(data) {
				t.Fatalf("more than %d events from %d bytes: the reader does not stop", len(data), len(data))
			}
			ev, err := r.Next()
			if d := r.Dropped(); d < dropped {
				t.Fatalf("Dropped went back from %d to %d", dropped, d)
			} else {
				dropped = d
			}
			if err == io.EOF {
				if len(r.Damage()) > 0 {
					t.Fatalf("io.EOF after damage %v", r.Damage())
				}
				break
			}
			if err != nil {
				checkErr(t, err)
				if _, err2 := r.Next(); err2 != err {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				var de *DamageError
				if errors.As(err, &de) != (len(r.Damage()) > 0) {
					t.Fatalf("final error %v with damage %v", err, r.Damage())
				}
				for _, d := range r.Damage() {
					if d.Offset < 0 || d.Length < 0 || d.Offset > int64(len(data)) || d.Length > int64(len(data)) || d.Err == nil || d.Events < -1 || d.Events > d.Length/minRecord {
						t.Fatalf("damage %+v in %d bytes", d, len(data))
					}
				}
				break
			}
			if ev.Metadata == nil {
				t.Fatal("event without metadata")
			}
			offsets = append(offsets, ev.Offset)
			var jerr error
			buf, jerr = ev.Metadata.AppendJSON(buf[:0], ev.Payload)
			buf, _ = ev.Metadata.AppendText(buf[:0], ev.Payload)
			// A row of columns fails exactly where the JSON does.
			if cerr := ev.Metadata.describe().AppendColumns(&columntest.Recorder{}, ev.Payload, 8); (cerr == nil) != (jerr == nil) {
				t.Fatalf("columns: %v, JSON: %v", cerr, jerr)
			}
		}
		// In strict mode the reader stops at the first damage: its events
		// are the first ones of the resynchronising reader.
		r, _ = NewReader(bytes.NewReader(data))
		r.SetStrict(true)
		for i := 0; ; i++ {
			ev, err := r.Next()
			if err != nil {
				var de *DamageError
				if errors.As(err, &de) {
					t.Fatalf("strict mode ended with %v", err)
				}
				break
			}
			if i >= len(offsets) || ev.Offset != offsets[i] {
				t.Fatalf("strict event %d at %d, not the resynchronising reader's", i, ev.Offset)
			}
		}
	})
}

// FuzzTimeOrder: in time order the reader gives the same events as in file
// order (offset, payload and stack), then the same end.
func FuzzTimeOrder(f *testing.F) {
	arr := loadTrace(f, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	f.Add(arr[:30000])
	f.Add(buildV6(true))
	f.Add(buildV6(false))
	f.Fuzz(func(t *testing.T, data []byte) {
		read := func(o Order) (map[string]int, string) {
			r, err := NewReader(bytes.NewReader(data))
			if err != nil {
				return nil, err.Error()
			}
			r.SetOrder(o)
			seen := map[string]int{}
			for i := 0; i < 20000; i++ {
				ev, err := r.Next()
				if err != nil {
					return seen, err.Error()
				}
				seen[fmt.Sprintf("%d/%x/%v", ev.Offset, ev.Payload, ev.Stack)]++
			}
			return seen, "too many events"
		}
		fileSet, fileEnd := read(FileOrder)
		timeSet, timeEnd := read(TimeOrder)
		if fileEnd != timeEnd {
			t.Fatalf("file order ends with %q, time order with %q", fileEnd, timeEnd)
		}
		if fileEnd == "too many events" {
			return
		}
		if len(fileSet) != len(timeSet) {
			t.Fatalf("%d events in file order, %d in time order", len(fileSet), len(timeSet))
		}
		for k, n := range fileSet {
			if timeSet[k] != n {
				t.Fatalf("event %s: %d in file order, %d in time order", k, n, timeSet[k])
			}
		}
	})
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if !errors.Is(err, ErrFormat) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrUnsupported) {
		t.Fatalf("error %v has no sentinel", err)
	}
}
