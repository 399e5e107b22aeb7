package nettrace

import (
	"bytes"
	"encoding/binary"
	"io"
	"path/filepath"
	"runtime"
	"testing"
)

// bigV6 writes a V6 trace with nBlocks event blocks of 1000 events each,
// all referring to metadata, stacks and labels defined up front.
func bigV6(nBlocks int, compress bool) []byte {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, tid: 100, pid: 1}, wThread{index: 2, tid: 200, pid: 1})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E", fields: []Field{{Name: "V", Type: TypeInt64}}})
	w.stacks(1, []uint64{1, 2, 3}, []uint64{4, 5})
	w.labelLists(1, [][]byte{labActivity(guidA)})
	ts := int64(1_000_000)
	seq := uint32(0)
	for b := 0; b < nBlocks; b++ {
		evs := make([]wEvent, 1000)
		for i := range evs {
			ts += 37
			seq++
			evs[i] = wEvent{meta: 1, seq: seq, thread: uint64(1 + i%2), capThread: 1, stack: uint32(1 + i%2), ts: ts,
				label: uint32(i % 2), payload: binary.LittleEndian.AppendUint64(nil, uint64(i))}
		}
		w.events(compress, evs...)
	}
	return w.end()
}

// TestZeroAllocs proves Next does not allocate in steady state, on a
// synthetic V6 trace (compressed and not) and on real V4 and V3 traces.
func TestZeroAllocs(t *testing.T) {
	check := func(name string, data []byte, warm, runs int, maxAvg float64) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < warm; i++ {
			if _, err := r.Next(); err != nil {
				t.Fatalf("%s: warm-up: %v", name, err)
			}
		}
		var nerr error
		avg := testing.AllocsPerRun(runs, func() {
			if _, err := r.Next(); err != nil && nerr == nil {
				nerr = err
			}
		})
		if nerr != nil {
			t.Fatalf("%s: %v", name, nerr)
		}
		if avg > maxAvg {
			t.Errorf("%s: %.3f allocations per event, want at most %v", name, avg, maxAvg)
		}
	}
	check("V6 compressed", bigV6(5, true), 1100, 2000, 0)
	check("V6 uncompressed", bigV6(5, false), 1100, 2000, 0)
	arr := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	// The rundown events come after all metadata and stacks were read.
	check("arraytypes (V4)", arr, 100, 1800, 0)
}

// TestAllocsPerEventReal reads whole real traces and reports the
// allocations per event: only new metadata and stack blocks allocate.
func TestAllocsPerEventReal(t *testing.T) {
	for _, name := range []string{
		"perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip",
		"perfview/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip",
	} {
		data := loadTrace(t, sharedPath(t, name))
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for {
			if _, err := r.Next(); err != nil {
				if err != io.EOF {
					t.Fatal(err)
				}
				break
			}
			n++
		}
		runtime.ReadMemStats(&after)
		avg := float64(after.Mallocs - before.Mallocs)
		perEvent := avg / float64(n)
		t.Logf("%s: %d events, %.0f allocations in all, %.4f per event", name, n, avg, perEvent)
		if perEvent > 0.05 {
			t.Errorf("%s: %.4f allocations per event", name, perEvent)
		}
	}
}

// BenchmarkReader reads whole traces from memory: MB/s over the
// decompressed trace and events/s.
func BenchmarkReader(b *testing.B) {
	for _, c := range []struct{ name, path string }{
		{"netperf-v2-62MB", "perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip"},
		{"netperf-v3-10MB", "perfview/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip"},
		{"nettrace-v4-4.8MB", "perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"},
		{"nettrace-v6-synthetic", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			var data []byte
			if c.path == "" {
				data = bigV6(500, true)
			} else {
				data = loadTrace(b, sharedPath(b, c.path))
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			events := 0
			for i := 0; i < b.N; i++ {
				r, err := NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := r.Next(); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
					events++
				}
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}
