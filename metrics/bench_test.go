package metrics_test

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/metrics"
	"github.com/clrgo/clrevents/trace"
	"github.com/prometheus/client_golang/prometheus"
)

// The metrics hot path: reading a trace alone, then reading it and
// feeding every event to Process.Add, on a simulated session (every
// event kind the metrics use) and on a real .NET Core 3.0 trace (GCs,
// allocation ticks, samples). The difference is Add's cost.
func BenchmarkAdd(b *testing.B) {
	w := &simruntime.Workload{PID: 7, Rate: 50000}
	sim := record(b, w, allProviders, 300*time.Millisecond)
	real, err := os.ReadFile("../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{{"sim", sim}, {"dotnetcore3.0", real}} {
		for _, add := range []bool{false, true} {
			name := tc.name + "/read"
			if add {
				name = tc.name + "/read+add"
			}
			b.Run(name, func(b *testing.B) {
				set := metrics.New(metrics.Options{})
				p := set.Process(7, "bench")
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					r, err := trace.NewReader(bytes.NewReader(tc.data))
					if err != nil {
						b.Fatal(err)
					}
					for {
						e, err := r.Next()
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						n++
						if add {
							p.Add(e)
						}
					}
					r.Close()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
			})
		}
	}
}

// BenchmarkCollect: a scrape of 20 processes' metrics.
func BenchmarkCollect(b *testing.B) {
	w := &simruntime.Workload{PID: 7}
	data := record(b, w, allProviders, 200*time.Millisecond)
	set := metrics.New(metrics.Options{})
	for pid := range int64(20) {
		feed(b, set.Process(pid, "app"), data)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(set)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
