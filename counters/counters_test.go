package counters_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/counters"
	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/trace"
)

// read decodes every event of trace tr.
func read(t *testing.T, tr []byte) ([]counters.Counter, []error) {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(tr))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var cs []counters.Counter
	var errs []error
	for {
		e, err := r.Next()
		if err == io.EOF {
			return cs, errs
		}
		if err != nil {
			t.Fatal(err)
		}
		c, err := counters.Decode(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !c.Time.Equal(e.Time()) {
			t.Errorf("%s: time %v, the event's %v", c.Name, c.Time, e.Time())
		}
		cs = append(cs, c)
	}
}

// TestDecode: System.Runtime's mean and incrementing counters, as the
// runtime's EventCounters events carry them (simulated, in the shape its
// EventPipe metadata gives them), decode to their figures; NaN comes
// through.
func TestDecode(t *testing.T) {
	tr, _ := simruntime.CountersTrace(1, [][]simruntime.Counter{{
		{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 12.5},
		{Name: "alloc-rate", DisplayName: "Allocation Rate", Units: "B", Increment: true, Value: 8168},
		{Name: "gc-heap-size", DisplayName: "GC Heap Size", Units: "MB", Value: math.NaN()},
	}})
	cs, errs := read(t, tr)
	if len(errs) > 0 || len(cs) != 3 {
		t.Fatalf("%d counters, errors %v", len(cs), errs)
	}
	cpu, alloc, heap := cs[0], cs[1], cs[2]
	want := counters.Counter{Provider: "System.Runtime", Time: cpu.Time, Name: "cpu-usage", DisplayName: "CPU Usage", DisplayUnits: "%",
		Kind: counters.Mean, Mean: 12.5, Min: 12.5, Max: 12.5, Count: 1, IntervalSec: 1, Series: "Interval=1000", CounterType: "Mean"}
	if cpu != want {
		t.Errorf("cpu-usage\n%+v, want\n%+v", cpu, want)
	}
	want = counters.Counter{Provider: "System.Runtime", Time: alloc.Time, Name: "alloc-rate", DisplayName: "Allocation Rate", DisplayUnits: "B",
		Kind: counters.Increment, Increment: 8168, DisplayRateTimeScale: "00:00:01", IntervalSec: 1, Series: "Interval=1000", CounterType: "Sum"}
	if alloc != want {
		t.Errorf("alloc-rate\n%+v, want\n%+v", alloc, want)
	}
	if cpu.Value() != 12.5 || alloc.Value() != 8168 || !math.IsNaN(heap.Value()) || !math.IsNaN(heap.Max) {
		t.Errorf("values %v, %v, %v (max %v)", cpu.Value(), alloc.Value(), heap.Value(), heap.Max)
	}
}

// TestDecodeShapes: EventCounters described as the runtime's EventPipe
// metadata describes them (the Write call's argument as one unnamed
// object: {"": {"Payload": …}}) and as an ETW log's TraceLogging
// description lays them out ({"Payload": …}) give the same counters.
func TestDecodeShapes(t *testing.T) {
	iv := [][]simruntime.Counter{{
		{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 12.5},
		{Name: "alloc-rate", DisplayName: "Allocation Rate", Units: "B", Increment: true, Value: 8168},
	}}
	nested, _ := simruntime.CountersTrace(1, iv)
	flat, _ := simruntime.FlatCountersTrace(1, iv)
	a, errs := read(t, nested)
	if len(errs) > 0 || len(a) != 2 {
		t.Fatalf("the runtime's shape: %d counters, errors %v", len(a), errs)
	}
	b, errs := read(t, flat)
	if len(errs) > 0 || len(b) != 2 {
		t.Fatalf("the flat shape: %d counters, errors %v", len(b), errs)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("counter %d: the runtime's shape gives\n%+v, the flat one\n%+v", i, a[i], b[i])
		}
	}
	if a[0].Mean != 12.5 || a[1].Increment != 8168 {
		t.Errorf("values %+v", a)
	}
}

// TestDecodeOthers: another event is ErrNotCounters; an EventCounters
// event that holds no counter's report is an error naming it and its
// offset.
func TestDecodeOthers(t *testing.T) {
	i32 := []simruntime.Field{{Name: "X", Type: simruntime.TypeInt32}}
	_, errs := read(t, simruntime.EventSourceTrace(1, "My-Source", "Other", i32, []byte{1, 0, 0, 0}))
	if len(errs) != 1 || !errors.Is(errs[0], counters.ErrNotCounters) {
		t.Errorf("errors %v, want ErrNotCounters", errs)
	}
	_, errs = read(t, simruntime.EventSourceTrace(1, "My-Source", "EventCounters", i32, []byte{1, 0, 0, 0}))
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "My-Source/EventCounters at offset ") || !strings.Contains(errs[0].Error(), `payload is not a counter: {"X":1}`) {
		t.Errorf("errors %v", errs)
	}
	_, errs = read(t, simruntime.EventSourceTrace(1, "My-Source", "EventCounters", i32, []byte{1, 0}))
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "My-Source/EventCounters at offset ") || errors.Is(errs[0], counters.ErrNotCounters) {
		t.Errorf("short payload: errors %v", errs)
	}
}

// TestRateSeconds: the session's interval, else the measured one to the
// millisecond, else a second.
func TestRateSeconds(t *testing.T) {
	for _, c := range []struct {
		c    counters.Counter
		want float64
	}{
		{counters.Counter{Series: "Interval=2500", IntervalSec: 1}, 2.5},
		{counters.Counter{Series: "Interval=x", IntervalSec: 0.99987}, 1},
		{counters.Counter{IntervalSec: 2.0004}, 2},
		{counters.Counter{}, 1},
	} {
		if got := c.c.RateSeconds(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.c, got, c.want)
		}
	}
}

// TestPrinter: dotnet-counters' lines: a heading per report (a counter
// that comes again begins the next), units, a rate's interval, counts.
func TestPrinter(t *testing.T) {
	tr, _ := simruntime.CountersTrace(1, [][]simruntime.Counter{
		{{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 12.5},
			{Name: "alloc-rate", DisplayName: "Allocation Rate", Units: "B", Increment: true, Value: 8168},
			{Name: "gen-0-gc-count", DisplayName: "Gen 0 GC Count", Increment: true, Value: 3},
			{Name: "threadpool-thread-count", Units: "count", Value: 1421893.21}},
		{{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 3}},
	})
	cs, _ := read(t, tr)
	var b bytes.Buffer
	p := counters.NewPrinter(&b)
	for i := range cs {
		if err := p.Print(&cs[i]); err != nil {
			t.Fatal(err)
		}
	}
	heading := "[System.Runtime] " + cs[0].Time.Local().Format("15:04:05") + "\n"
	want := heading +
		row("CPU Usage (%)", "             12.5  ") +
		row("Allocation Rate (B / 1 sec)", "          8,168    ") +
		row("Gen 0 GC Count (Count / 1 sec)", "              3    ") +
		row("threadpool-thread-count (Count)", "      1,421,893.21 ") +
		"[System.Runtime] " + cs[4].Time.Local().Format("15:04:05") + "\n" +
		row("CPU Usage (%)", "              3    ")
	if b.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", b.String(), want)
	}
}

// TestPrinterProviders: a report of another provider gets its own
// heading, even when none of its counters' names came before.
func TestPrinterProviders(t *testing.T) {
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	p := counters.NewPrinter(&b)
	for _, c := range []counters.Counter{
		{Provider: "System.Runtime", Name: "cpu-usage", DisplayName: "CPU Usage", DisplayUnits: "%", Mean: 12.5, Count: 1},
		{Provider: "Microsoft.AspNetCore.Hosting", Name: "current-requests", DisplayName: "Current Requests", Mean: 3, Count: 1},
		{Provider: "System.Net.Http", Name: "current-requests", DisplayName: "Current Requests", Mean: 1, Count: 1},
	} {
		c.Time = at
		if err := p.Print(&c); err != nil {
			t.Fatal(err)
		}
	}
	hm := at.Local().Format("15:04:05")
	want := "[System.Runtime] " + hm + "\n" + row("CPU Usage (%)", "             12.5  ") +
		"[Microsoft.AspNetCore.Hosting] " + hm + "\n" + row("Current Requests", "              3    ") +
		"[System.Net.Http] " + hm + "\n" + row("Current Requests", "              1    ")
	if b.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", b.String(), want)
	}
}

func row(label, value string) string {
	return "    " + label + strings.Repeat(" ", 52-len(label)) + " " + value + "\n"
}
