package trace

import (
	"bytes"
	"io"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
)

// smallTraces are the repository's two smallest EventPipe traces: the .NET
// 6 checkpoints trace (3 events, 1.7 KB), where a Reader's time is what it
// costs to make and to end, and the .NET 5 arraytypes trace (1,970 events,
// 0.5 MB).
var smallTraces = []struct{ name, path string }{
	{"6.0", "../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"},
	{"5.0", "../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"},
}

// readSmall reads data to the end through NewReader in order o, as a program
// that reads many small traces (a collector's windows, a dataset's
// traces) does, and returns the number of events.
func readSmall(tb testing.TB, data []byte, o Order) int {
	r, err := NewReader(bytes.NewReader(data), WithOrder(o))
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			tb.Fatal(err)
		}
		n++
	}
	if err := r.Close(); err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkSmallTrace: a Reader made, read to the end and closed, a new
// one each time.
func BenchmarkSmallTrace(b *testing.B) {
	for _, tr := range smallTraces {
		data := tracetest.Bytes(b, tr.path)
		for _, o := range []Order{FileOrder, TimeOrder} {
			b.Run(tr.name+"/"+o.String(), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					readSmall(b, data, o)
				}
			})
		}
	}
}

// TestSmallTraceAllocs: what a Reader costs to make, read to the end and
// close, once a Reader before it has left its buffers, on a trace of three
// events (their one metadata record and its description). It was 34
// allocations in file order and 40 in time order.
func TestSmallTraceAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	data := tracetest.Bytes(t, smallTraces[0].path)
	var src bytes.Reader
	for _, o := range []Order{FileOrder, TimeOrder} {
		read := func() {
			src.Reset(data)
			r, err := NewReader(&src, WithOrder(o))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				if _, err := r.Next(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if err := r.Close(); err != nil || n != 3 {
				t.Fatalf("%v: %d events, %v; want 3", o, n, err)
			}
		}
		read()
		// The Reader (and package nettrace's), the options, the
		// metadata record, its strings and description, the metadata
		// table, the event's resolved type and its cache: 13.
		const want = 13
		n := testing.AllocsPerRun(50, read)
		t.Logf("%v: %.1f allocations a Reader", o, n)
		if n > want {
			t.Errorf("%v: %.1f allocations a Reader, want at most %d", o, n, want)
		}
	}
}
