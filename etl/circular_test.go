package etl_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
)

// wrappedLog is a circular log whose file filled up and wrapped, as
// Windows leaves one: the log header buffer (its StartBuffers), then the
// buffer written last, which took the place of the oldest, then the
// older one; the header counts the overwritten buffer in BuffersWritten.
// maxMB is the header's MaximumFileSize.
func wrappedLog(t *testing.T, maxMB uint32) (log []byte, g clrimpl.GUID) {
	t.Helper()
	real := tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip") // a circular-mode log that did not wrap
	r, err := etl.NewReader(bytes.NewReader(real))
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	if !h.Circular() {
		t.Fatalf("gcevents.etl's mode %#x is not circular", h.LogFileMode)
	}
	base := h.HeaderTimestamp + 10*h.Frequency
	hs := int(binary.LittleEndian.Uint32(real)) // the header buffer's size
	g = clrimpl.MustParseGUID("11111111-2222-3333-4444-555555555555")
	buffer := func(id0 int, t0 int64) []byte {
		var evs [][]byte
		for i := range 3 {
			evs = append(evs, etltest.Event(g, uint16(id0+i), 0, 0, 0, 1, 2, t0+int64(i)*h.Frequency/10, nil))
		}
		l, err := etltest.Log(real, evs...)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint64(l[hs+16:], uint64(t0)) // the buffer's TimeStamp
		return l
	}
	older := buffer(0, base)
	newer := buffer(10, base+5*h.Frequency)
	log = append(bytes.Clone(newer), older[hs:]...)
	// The log header's payload: BuffersWritten (4: the header, the two
	// here and the one overwritten) and MaximumFileSize.
	at, err := etltest.HeaderAt(log)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(log[at+28:], maxMB)
	binary.LittleEndian.PutUint32(log[at+36:], 4)
	return log, g
}

// TestCircularWrapped: a circular log that wrapped is read in the order
// its buffers were written, each processor's by the times their headers
// give, and is not taken for a cut one for holding fewer buffers than
// BuffersWritten counts; a circular log short of its maximum size cannot
// have wrapped, and a count above its buffers still means it was cut.
func TestCircularWrapped(t *testing.T) {
	read := func(log []byte, g clrimpl.GUID) ([]uint16, error) {
		r, err := etl.NewReader(bytes.NewReader(log))
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint16
		for {
			e, err := r.Next()
			if err != nil {
				return ids, err
			}
			if e.ProviderGUID == g {
				ids = append(ids, e.ID)
			}
		}
	}
	log, g := wrappedLog(t, 0) // no maximum stated: it may have wrapped
	ids, err := read(log, g)
	if want := []uint16{0, 1, 2, 10, 11, 12}; !slices.Equal(ids, want) || err != io.EOF {
		t.Errorf("a wrapped circular log: events %v, %v; want %v, EOF", ids, err, want)
	}
	log, g = wrappedLog(t, 800) // gcevents.etl's maximum: 800 MB, far from full
	if _, err := read(log, g); !errors.Is(err, etl.ErrTruncated) {
		t.Errorf("a circular log short of its maximum size with buffers missing: %v, want ErrTruncated", err)
	}
}
