package simruntime_test

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	_ "github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/counters"
	"github.com/clrgo/clrevents/diagnostics"
	"github.com/clrgo/clrevents/internal/simruntime"
)

// TestWorkload: a Workload's sessions decode through the front door, hold
// what their providers ask for, advance their timestamps, and end with a
// rundown only when asked.
func TestWorkload(t *testing.T) {
	dir := t.TempDir()
	w := &simruntime.Workload{PID: 4321, Rate: 5000, DropPerTick: 2, Tick: 5 * time.Millisecond}
	srv, err := simruntime.Start(dir, simruntime.Config{PID: 4321, Stream: w.Stream})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cl := diagnostics.NewClientAddress(4321, srv.Addr())
	ctx := context.Background()
	cfg := diagnostics.SessionConfig{Providers: []diagnostics.Provider{
		{Name: diagnostics.RuntimeProvider, Keywords: 0x1 | 0x10 | 0x4000 | 0x8000 | 0x10000, Level: 5},
		{Name: diagnostics.SampleProfilerName, Level: 5},
		{Name: diagnostics.SystemRuntimeCounters, Level: 5, Keywords: ^uint64(0), Args: "EventCounterIntervalSec=0.1"},
	}}
	s, err := cl.StartSession(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Reader()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(700 * time.Millisecond)
		s.Stop(ctx, 5*time.Second)
	}()
	names := map[string]int{}
	var last int64
	ncounters := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Timestamp() < last {
			t.Fatalf("%s at %d before %d", e.Name(), e.Timestamp(), last)
		}
		last = e.Timestamp()
		if _, err := e.Decode(); err != nil {
			if c, cerr := counters.Decode(e); cerr == nil {
				ncounters++
				_ = c
				continue
			}
			t.Fatalf("%s (%s %d v%d): %v", e.Name(), e.Provider(), e.ID(), e.Version(), err)
		}
		names[e.Name()]++
		if e.Name() == "ThreadSample" && len(e.Stack()) != 3 {
			t.Fatalf("sample stack %x", e.Stack())
		}
	}
	t.Log(names, ncounters, r.Dropped())
	for _, n := range []string{"GCStart_V2", "GCEnd_V1", "GCHeapStats_V2", "GCSuspendEEBegin_V1", "GCRestartEEEnd_V1",
		"GCAllocationTick_V4", "ExceptionThrown_V1", "ContentionStart_V2", "ContentionStop_V1", "MethodLoadVerbose_V2",
		"MethodJittingStarted_V1", "ThreadSample", "ThreadPoolWorkerThreadAdjustmentAdjustment", "MethodDCEndVerbose_V2", "ModuleDCEnd_V2"} {
		if names[n] == 0 {
			t.Errorf("no %s", n)
		}
	}
	if ncounters < 10 {
		t.Errorf("%d counters", ncounters)
	}
	if r.Dropped() == 0 {
		t.Errorf("no drops counted")
	}
	_ = os.Getpid
}
