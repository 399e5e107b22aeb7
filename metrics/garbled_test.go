package metrics_test

import (
	"math"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/metrics"
	"github.com/clrgo/clrevents/trace"
	"github.com/prometheus/client_golang/prometheus"
)

// TestGarbledValues: values no runtime writes, as a damaged trace's
// garbled payloads hold them, leave the counters alone: allocation ticks
// of 2^63+5 bytes (which wrapped the byte counter), whose two amounts
// disagree, or of a TiB of small objects (CheckAmount), and lock waits
// of -5 s, NaN and +Inf (which made the seconds counter negative or
// NaN). The credible events beside them count as ever.
func TestGarbledValues(t *testing.T) {
	runtime := clrevents.ProviderRuntime.GUID()
	ts := int64(0)
	clr := func(info *clrevents.EventInfo, payload []byte) []byte {
		ts += 1000
		return etltest.Event(runtime, info.ID, info.Version, uint8(info.Opcode), uint16(info.Task), 5, 10, ts, payload)
	}
	tickOf := func(lo uint32, n uint64) []byte {
		return clr((*clrevents.GCAllocationTickV3)(nil).Info(), (&clrevents.GCAllocationTickV3{AllocationAmount: lo, AllocationAmount64: n, ClrInstanceID: 1}).Encode(nil, 8))
	}
	tick := func(n uint64) []byte { return tickOf(uint32(n), n) }
	start := func() []byte {
		return clr((*clrevents.ContentionStartV1)(nil).Info(), (&clrevents.ContentionStartV1{ClrInstanceID: 1}).Encode(nil, 8))
	}
	stop := func(ns float64) []byte {
		return clr((*clrevents.ContentionStopV1)(nil).Info(), (&clrevents.ContentionStopV1{ClrInstanceID: 1, DurationNs: ns}).Encode(nil, 8))
	}
	events := [][]byte{
		tick(1<<63 + 5), tick(4096), tick(1 << 49), tickOf(100, 200), tick(1<<40 + 100),
		start(), stop(-5e9), start(), stop(math.NaN()), start(), stop(math.Inf(1)), start(), stop(2e6),
	}
	log, err := etltest.Log(tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip"), events...)
	if err != nil {
		t.Fatal(err)
	}
	set := metrics.New(metrics.Options{})
	reg := prometheus.NewRegistry()
	reg.MustRegister(set)
	eachEvent(t, log, func(e *trace.Event) {
		if err := set.Add(e); err != nil {
			t.Fatal(err)
		}
	})
	f := gather(t, reg)
	for _, c := range []struct {
		name string
		want float64
	}{
		{"dotnet_gc_allocated_bytes_total", 4096},
		{"dotnet_monitor_lock_contentions_total", 4},
		{"dotnet_monitor_lock_contention_seconds_total", 0.002},
	} {
		if got := value(t, f, c.name, "pid", "10"); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
}
