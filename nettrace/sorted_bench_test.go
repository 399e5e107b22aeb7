package nettrace

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkOrder reads the .NET Core 3.0 trace (4.8 MB, ../shared) and
// the .NET 5 arraytypes trace (0.5 MB, where what a Reader costs to make
// and to end shows) in file and in time order, a new Reader each time.
func BenchmarkOrder(b *testing.B) {
	traces := []struct{ name, path string }{
		{"3.0", filepath.Join(sharedTraces, "perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")},
		{"5.0", filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip")},
	}
	for _, tr := range traces {
		if _, err := os.Stat(tr.path); err != nil {
			b.Run(tr.name, func(b *testing.B) { b.Skip("needs the shared traces: ", err) })
			continue
		}
		data := loadTrace(b, tr.path)
		for _, o := range []Order{FileOrder, TimeOrder} {
			b.Run(tr.name+"/"+o.String(), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for i := 0; i < b.N; i++ {
					r, err := NewReader(bytes.NewReader(data))
					if err != nil {
						b.Fatal(err)
					}
					r.SetOrder(o)
					for {
						if _, err := r.Next(); err == io.EOF {
							break
						} else if err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// benchV6Trace is a V6 trace for BenchmarkV6Order, as busy as the .NET
// Core 3.0 trace (about 115,000 events): 8 threads, 120 stretches between
// sequence points, each of ten compressed blocks of 96 events, 12 of each
// thread's in a row; a stack on every event (50 a stretch), 24-byte
// payloads. No V6 capture here is large enough to measure.
func benchV6Trace() []byte {
	w := newV6Writer(8, 0, kv{"ProcessId", "1234"})
	var ts []wThread
	for i := uint64(1); i <= 8; i++ {
		ts = append(ts, wThread{index: i, pid: 1234, tid: 1000 + i})
	}
	w.threads(ts...)
	w.metadata(wMeta{id: 1, provider: rt, eventID: 85, opt: append(optVersion(0), optLevel(4)...)},
		wMeta{id: 2, provider: rt, eventID: 80, opt: append(optVersion(1), optLevel(4)...)})
	t := int64(1_000_000)
	seq := map[uint64]uint32{}
	payload := make([]byte, 24)
	for s := 0; s < 120; s++ {
		var stacks [][]uint64
		for k := 0; k < 50; k++ {
			stacks = append(stacks, []uint64{0x1000 + uint64(k), 0x2000, 0x3000, 0x4000, 0x5000, 0x6000})
		}
		w.stacks(1, stacks...)
		for b := 0; b < 10; b++ {
			var evs []wEvent
			for th := uint64(1); th <= 8; th++ {
				for j := 0; j < 12; j++ {
					t += 37
					seq[th]++
					evs = append(evs, wEvent{meta: uint32(1 + j%2), seq: seq[th], thread: th, capThread: th, proc: uint32(th), stack: uint32(1 + (j*7+int(th))%50), ts: t - int64(th)*400, payload: payload})
				}
			}
			w.events(true, evs...)
		}
		var pairs []uint64
		for th := uint64(1); th <= 8; th++ {
			pairs = append(pairs, th, uint64(seq[th]))
		}
		w.sequencePoint(t, 0, pairs...)
	}
	return w.end()
}

// BenchmarkV6Order reads benchV6Trace in file and time order, a new Reader
// each time, and reports the time an event.
func BenchmarkV6Order(b *testing.B) {
	data := benchV6Trace()
	for _, o := range []Order{FileOrder, TimeOrder} {
		b.Run(o.String(), func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; i < b.N; i++ {
				r, err := NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				r.SetOrder(o)
				n = 0
				for {
					if _, err := r.Next(); err == io.EOF {
						break
					} else if err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
