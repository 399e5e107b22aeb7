package metrics_test

import (
	"hash/fnv"
	"strconv"
	"testing"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// TestCounterNameCollision: counters whose metric names come out the
// same (threadpool-thread-count is named threadpool_threads; gc-heap-size
// in MB and gc-heap-size-bytes are both _bytes; names that differ in case
// or in '-' against '_') are two metrics, the later seen named with its
// own name's hash. They were one, and each scrape kept one of the two
// values, which one by chance, while the scrape said nothing.
func TestCounterNameCollision(t *testing.T) {
	data, _ := simruntime.CountersTrace(42, [][]simruntime.Counter{{
		{Name: "threadpool-thread-count", Value: 5},
		{Name: "threadpool-threads", Value: 7},
		{Name: "gc-heap-size", Units: "MB", Value: 3},
		{Name: "gc-heap-size-bytes", Units: "B", Value: 9},
	}})
	set := metrics.New(metrics.Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(set)
	feed(t, set.Process(42, "app"), data)
	fams := gather(t, reg) // fails on a duplicate series
	hashed := func(name, metric string) string {
		h := fnv.New32a()
		h.Write([]byte("System.Runtime/" + name))
		s := strconv.FormatUint(uint64(h.Sum32()), 16)
		for len(s) < 8 {
			s = "0" + s
		}
		return metric + "_h" + s
	}
	for _, c := range []struct {
		metric string
		want   float64
	}{
		{"dotnet_runtime_threadpool_threads", 5},
		{hashed("threadpool-threads", "dotnet_runtime_threadpool_threads"), 7},
		{"dotnet_runtime_gc_heap_size_bytes", 3e6},
		{hashed("gc-heap-size-bytes", "dotnet_runtime_gc_heap_size_bytes"), 9},
	} {
		if _, ok := fams[c.metric]; !ok {
			t.Errorf("no %s", c.metric)
			continue
		}
		if got := value(t, fams, c.metric, "pid", "42"); got != c.want {
			t.Errorf("%s = %v, want %v", c.metric, got, c.want)
		}
	}
}
