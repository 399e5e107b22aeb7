package trace

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/racemode"

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

// readSmall reads src to the end through NewReader in order o, as a
// program that reads many small traces (a collector's windows, a
// dataset's traces) does, and returns the number of events.
func readSmall(tb testing.TB, src io.Reader, o Order) int {
	r, err := NewReader(src, WithOrder(o))
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
					readSmall(b, bytes.NewReader(data), o)
				}
			})
		}
	}
}

// TestSmallTraceAllocs: what a Reader costs to make, read to the end and
// close, once a Reader before it has left its buffers, on a trace of three
// events (their one metadata record and its description). It was 34
// allocations in file order and 40 in time order; 13 with providers
// cached and the registered tables shared, 9 with what an event resolves
// to shared too.
func TestSmallTraceAllocs(t *testing.T) {
	if racemode.Enabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	data := tracetest.Bytes(t, smallTraces[0].path)
	var src bytes.Reader
	for _, o := range []Order{FileOrder, TimeOrder} {
		read := func() {
			src.Reset(data)
			if n := readSmall(t, &src, o); n != 3 {
				t.Fatalf("%v: %d events, want 3", o, n)
			}
		}
		read()
		// The Reader (and package nettrace's), the options, the
		// metadata record, its strings and description, the metadata
		// table and the cache of its resolved types: 9.
		const want = 9
		n := testing.AllocsPerRun(50, read)
		t.Logf("%v: %.1f allocations a Reader", o, n)
		if n > want {
			t.Errorf("%v: %.1f allocations a Reader, want at most %d", o, n, want)
		}
	}
}

// TestResolvedShared: Readers over the registered tables share what an
// event resolves to; WithExactVersions, which changes the answer, has its
// own; the shared answers are bounded.
func TestResolvedShared(t *testing.T) {
	data := tracetest.Bytes(t, smallTraces[0].path)
	first := func(opts ...Option) *resolved {
		r, err := NewReader(bytes.NewReader(data), opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e.res == nil || !e.res.typ.ok() {
			t.Fatalf("%s: not resolved to a type", e.Name())
		}
		return e.res
	}
	a, b := first(), first()
	if a != b {
		t.Errorf("two Readers: two answers for the same event")
	}
	if x := first(WithExactVersions()); x == a {
		t.Errorf("WithExactVersions shares the answer of a Reader without it")
	}
	ts := newReaderTables(clrimpl.Tables(), 0) // not the shared one: this fills it
	r := &Reader{ts: ts}
	for i := range maxResolved + 10 {
		r.resolveEvent("Provider-"+strconv.Itoa(i), clrimpl.GUID{}, 1, 0)
	}
	ts.mu.Lock()
	n := len(ts.resolved)
	ts.mu.Unlock()
	if n > maxResolved {
		t.Errorf("%d answers kept, want at most %d", n, maxResolved)
	}
}

// TestReadersConcurrent: Readers in several goroutines share the provider
// cache, the registered tables and what events resolve to (run with
// -race), and each reads every event.
func TestReadersConcurrent(t *testing.T) {
	var data [][]byte
	want := map[int]int{}
	for i, tr := range smallTraces {
		data = append(data, tracetest.Bytes(t, tr.path))
		want[i] = readSmall(t, bytes.NewReader(data[i]), FileOrder)
	}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 20 {
				k := (g + i) % len(data)
				o := []Order{FileOrder, TimeOrder}[i%2]
				r, err := NewReader(bytes.NewReader(data[k]), WithOrder(o))
				if err != nil {
					errs <- err
					return
				}
				n := 0
				for {
					e, err := r.Next()
					if err == io.EOF {
						break
					} else if err != nil {
						errs <- err
						return
					}
					if e.Name() == "" {
						errs <- fmt.Errorf("trace %d, %v: an event without a name", k, o)
						return
					}
					n++
				}
				r.Close()
				if n != want[k] {
					errs <- fmt.Errorf("trace %d, %v: %d events, want %d", k, o, n, want[k])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
