package trace

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/clrgo/clrevents/internal/racemode"
	"github.com/clrgo/clrevents/internal/tracetest"
)

// TestStreamReaderReuse: a Reader over a stream (NewReader) that follows
// one that has read to the end takes over its buffers: the 64 KiB buffer
// NewReader recognises the format with, which the format reader reads
// directly instead of buffering the bytes again, and the format reader's
// block buffer. Reading the 0.5 MB .NET 5 trace so allocated 84 KB a
// Reader in either order; now about 20 KB (the trace's metadata and
// types).
func TestStreamReaderReuse(t *testing.T) {
	if racemode.Enabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	data := tracetest.Bytes(t, "../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")
	read := func(o Order) (events int) {
		r, err := NewReader(bytes.NewReader(data), WithOrder(o))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for {
			if _, err := r.Next(); err == io.EOF {
				return events
			} else if err != nil {
				t.Fatal(err)
			}
			events++
		}
	}
	for _, o := range []Order{FileOrder, TimeOrder} {
		want := read(o)
		// The least of a few Readers: a collection between two empties
		// the pools.
		least := uint64(1 << 62)
		for range 5 {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			if n := read(o); n != want {
				t.Fatalf("%v: %d events, then %d", o, want, n)
			}
			runtime.ReadMemStats(&m1)
			least = min(least, m1.TotalAlloc-m0.TotalAlloc)
		}
		if least > 40<<10 {
			t.Errorf("%v: a Reader after another allocated %d bytes, want at most 40 KiB (its buffers are the last one's)", o, least)
		}
	}
}
