package jitstats_test

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/jitstats"
	"github.com/clrgo/clrevents/trace"
)

const (
	sharedDir = "../../shared/fixtures/traces/perfview"
	core30    = sharedDir + "/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	net452    = sharedDir + "/net.4.5.2.x86.etl.zip"
)

func open(t *testing.T, path string) *trace.Reader {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is not here (it comes with ../shared beside the checkout): %v", path, err)
	}
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

type key struct {
	pid, tid int64
	id       uint64
}

// compiles pairs, independently of the package, each JittingStarted with
// the next load of the same method on the same thread, by the events' Go
// types, and returns the compile times in load order.
func compiles(t *testing.T, path string) map[int64][]time.Duration {
	r := open(t, path)
	started := map[key]time.Time{}
	out := map[int64][]time.Duration{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Provider() != "Microsoft-Windows-DotNETRuntime" {
			continue
		}
		switch e.Name() {
		case "MethodJittingStarted_V1", "MethodLoadVerbose_V1", "MethodLoadVerbose_V2":
		default:
			continue
		}
		ev, err := e.Decode()
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case *clrevents.MethodJittingStartedV1:
			started[key{e.ProcessID(), e.ThreadID(), ev.MethodID}] = e.Time()
		case *clrevents.MethodLoadVerboseV1:
			k := key{e.ProcessID(), e.ThreadID(), ev.MethodID}
			if t0, ok := started[k]; ok {
				out[k.pid] = append(out[k.pid], e.Time().Sub(t0))
				delete(started, k)
			}
		case *clrevents.MethodLoadVerboseV2:
			k := key{e.ProcessID(), e.ThreadID(), ev.MethodID}
			if t0, ok := started[k]; ok {
				out[k.pid] = append(out[k.pid], e.Time().Sub(t0))
				delete(started, k)
			}
		}
	}
}

func TestCompileTimes(t *testing.T) {
	for _, path := range []string{core30, net452} {
		t.Run(path[len(sharedDir)+1:], func(t *testing.T) {
			want := compiles(t, path)
			a, err := jitstats.Read(open(t, path))
			if err != nil {
				t.Fatal(err)
			}
			if err := a.DecodeErrors(); err != nil {
				t.Error(err)
			}
			for _, p := range a.Processes() {
				// ETW's kernel Process events name the executables;
				// EventPipe traces do not.
				name := map[int64]string{3644: "Test.x86.exe", 3988: "PerfView.exe"}[p.PID]
				if path == core30 {
					name = ""
				}
				if p.Name != name {
					t.Errorf("pid %d named %q, want %q", p.PID, p.Name, name)
				}
				var got []time.Duration
				for _, m := range p.Methods {
					if m.HasJitTime {
						got = append(got, m.JitTime)
					}
				}
				w := want[p.PID]
				if len(got) != len(w) {
					t.Errorf("pid %d: %d timed compiles, want %d", p.PID, len(got), len(w))
					continue
				}
				for i := range w {
					if got[i] != w[i] {
						t.Errorf("pid %d: compile %d took %v, want %v", p.PID, i, got[i], w[i])
					}
				}
				delete(want, p.PID)
			}
			for pid, w := range want {
				if len(w) > 0 {
					t.Errorf("pid %d: %d compiles missing", pid, len(w))
				}
			}
		})
	}
}

// TestTiers: the 3.0 trace's loads carry tiers from version 2 on (8
// tier-1 recompiles); version 1 loads leave the bits 0 on runtimes before
// .NET Core 3.0, but this runtime sets them (MinOptJitted, Optimized).
func TestTiers(t *testing.T) {
	a, err := jitstats.Read(open(t, core30))
	if err != nil {
		t.Fatal(err)
	}
	ps := a.Processes()
	if len(ps) != 1 {
		t.Fatalf("%d processes", len(ps))
	}
	s := ps[0].Summary()
	got := map[string]int{}
	for _, ts := range s.Tiers {
		got[ts.Tier.String()] = ts.Count
	}
	want := map[string]int{"MinOptJitted": 43, "Optimized": 2, "OptimizedTier1": 8}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("tier %s: %d methods, want %d (all: %v)", k, got[k], v, got)
		}
	}
	// 1,547 R2RGetEntryPoint events name 708 methods.
	if s.All.Count != 53 || s.Pending != 1 || ps[0].ReadyToRun != 708 {
		t.Errorf("%d methods, %d pending, %d R2R; want 53, 1, 708", s.All.Count, s.Pending, ps[0].ReadyToRun)
	}
	slow := ps[0].Slowest(3)
	if len(slow) != 3 || slow[0].JitTime < slow[1].JitTime || slow[1].JitTime < slow[2].JitTime {
		t.Errorf("slowest not in order: %v", slow)
	}
	if slow[0].Name != "System.Marvin.ComputeHash(value class System.ReadOnlySpan`1<unsigned int8>,unsigned int64)" {
		t.Errorf("slowest is %q", slow[0].Name)
	}
}

// observer returns a new Analyzer whose origin is t0, and at, which feeds
// it an event of process 9 at ms milliseconds on thread tid.
func observer() (a *jitstats.Analyzer, t0 time.Time, at func(ms float64, tid int64, ev clrevents.Event)) {
	a = jitstats.NewAnalyzer()
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a.SetOrigin(t0)
	return a, t0, func(ms float64, tid int64, ev clrevents.Event) {
		a.Observe(t0.Add(time.Duration(ms*float64(time.Millisecond))), 9, tid, ev)
	}
}

// TestSynthetic feeds the events a tiered runtime logs for one method
// compiled twice, plus the cases the model must not count.
func TestSynthetic(t *testing.T) {
	a, t0, at := observer()
	ns, name, sig := clrevents.UTF16Of("App"), clrevents.UTF16Of("Run"), clrevents.UTF16Of("void  (int32)")
	tier := func(t clrevents.OptimizationTier) clrevents.MethodFlags {
		return clrevents.MethodFlagsJitted | clrevents.MethodFlags(t)<<7
	}
	at(1, 5, &clrevents.MethodJittingStartedV1{MethodID: 0x100, MethodILSize: 40, MethodNamespace: ns, MethodName: name, MethodSignature: sig})
	at(1.5, 6, &clrevents.MethodJittingStartedV1{MethodID: 0x200, MethodILSize: 8}) // another thread, never loaded
	at(3, 5, &clrevents.MethodLoadVerboseV2{MethodID: 0x100, MethodSize: 120, MethodFlags: tier(clrevents.TierQuickJitted), MethodNamespace: ns, MethodName: name, MethodSignature: sig})
	at(50, 7, &clrevents.MethodJittingStartedV1{MethodID: 0x100, MethodILSize: 40})
	at(58, 7, &clrevents.MethodLoadV2{MethodID: 0x100, MethodSize: 90, MethodFlags: tier(clrevents.TierOptimizedTier1)})
	at(60, 8, &clrevents.MethodLoadV2{MethodID: 0x300, MethodSize: 10, MethodFlags: tier(clrevents.TierOptimized)}) // jitted, no start event
	at(61, 8, &clrevents.MethodLoadV2{MethodID: 0x400, MethodSize: 10})                                             // not jitted: a stub
	at(62, 8, &clrevents.R2RGetEntryPoint{MethodID: 0x500})
	at(63, 9, &clrevents.R2RGetEntryPoint{MethodID: 0x500}) // the same method, from another thread
	at(64, 9, &clrevents.R2RGetEntryPointV1{MethodID: 0x600})
	at(63, 5, &clrevents.MethodJitInliningFailed{FailReason: clrevents.UTF16Of("too many il bytes")})
	at(64, 5, &clrevents.MethodJitInliningFailed{FailReason: clrevents.UTF16Of("too many il bytes")})
	at(65, 5, &clrevents.MethodJitInliningSucceeded{})

	ps := a.Processes()
	if len(ps) != 1 {
		t.Fatalf("%d processes", len(ps))
	}
	p := ps[0]
	if len(p.Methods) != 3 {
		t.Fatalf("%d methods, want 3", len(p.Methods))
	}
	m0, m1, m2 := p.Methods[0], p.Methods[1], p.Methods[2]
	if m0.Name != "App.Run(int32)" || m0.Tier != clrevents.TierQuickJitted || m0.JitTime != 2*time.Millisecond || m0.ILSize != 40 || m0.NativeSize != 120 {
		t.Errorf("tier 0 compile: %+v", *m0)
	}
	if m1.Name != "" || m1.Tier != clrevents.TierOptimizedTier1 || m1.JitTime != 8*time.Millisecond || m1.ThreadID != 7 {
		t.Errorf("tier 1 compile: %+v", *m1)
	}
	if m2.HasJitTime || m2.Tier != clrevents.TierOptimized || m2.Start != t0.Add(60*time.Millisecond) {
		t.Errorf("untimed compile: %+v", *m2)
	}
	s := p.Summary()
	if s.All.Count != 3 || s.All.Timed != 2 || s.All.JitTime != 10*time.Millisecond || s.Pending != 1 {
		t.Errorf("summary %+v", s)
	}
	if p.ReadyToRun != 2 || p.Inlining.Failed != 2 || p.Inlining.Succeeded != 1 || p.Inlining.Reasons["too many il bytes"] != 2 {
		t.Errorf("R2R %d, inlining %+v", p.ReadyToRun, p.Inlining)
	}
}

// TestNoJITEvents: a trace without JIT activity (gcevents.etl has only GC
// events) is ErrNoEvents, whose text names the keyword to record, as
// clrdump says it; so is a process with only a compile's start.
func TestNoJITEvents(t *testing.T) {
	r, err := trace.Open("../testdata/traces/gcevents.etl.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := jitstats.Read(r)
	if !errors.Is(err, jitstats.ErrNoEvents) || len(a.Processes()) != 0 {
		t.Fatalf("error %v, %d processes; want ErrNoEvents, none", err, len(a.Processes()))
	}
	if !strings.Contains(err.Error(), "JIT keyword (0x10) at level Verbose (5)") {
		t.Errorf("error %q does not name the keyword", err)
	}
	b := jitstats.NewAnalyzer()
	b.Observe(time.Now(), 1, 1, &clrevents.MethodJittingStartedV1{MethodID: 1})
	if ps := b.Processes(); len(ps) != 0 {
		t.Errorf("%d processes for a compile that never ended", len(ps))
	}
}

// TestLoadBeforeStart: a method's load earlier than the start of its
// compile on the same thread (a garbled timestamp) is left out and named
// (trace.ErrNotCredible) instead of giving a negative compile time, and
// the start is still there for the load that follows it.
func TestLoadBeforeStart(t *testing.T) {
	a, _, at := observer()
	jitted := clrevents.MethodFlagsJitted
	at(10, 5, &clrevents.MethodJittingStartedV1{MethodID: 0x100, MethodILSize: 40})
	at(8, 5, &clrevents.MethodLoadVerboseV2{MethodID: 0x100, MethodSize: 120, MethodFlags: jitted})
	at(12, 5, &clrevents.MethodLoadVerboseV2{MethodID: 0x100, MethodSize: 120, MethodFlags: jitted})

	err := a.DecodeErrors()
	if !errors.Is(err, trace.ErrNotCredible) || !errors.Is(err, trace.ErrUndecoded) ||
		!strings.Contains(err.Error(), "MethodLoadVerbose_V2 at 2026-01-01T00:00:00.008Z in process 9") {
		t.Errorf("DecodeErrors = %v, want ErrNotCredible naming the load", err)
	}
	ps := a.Processes()
	if len(ps) != 1 || len(ps[0].Methods) != 1 {
		t.Fatalf("processes %v, want one with one method", ps)
	}
	if m := ps[0].Methods[0]; !m.HasJitTime || m.JitTime != 2*time.Millisecond || m.ILSize != 40 {
		t.Errorf("method %+v, want the compile from 10 ms to 12 ms", *m)
	}
}

// TestGarbledCompileTimes: a thread's events come in time order, so a
// compile whose load is later than the thread's next event (its
// timestamp garbled forward), or whose start is earlier than the thread's
// event before it (garbled back), keeps its method but not a compile
// time of hours, and is named (trace.ErrNotCredible); the compiles around
// it keep theirs.
func TestGarbledCompileTimes(t *testing.T) {
	a, _, at := observer()
	start := func(id uint64, name string) *clrevents.MethodJittingStartedV1 {
		return &clrevents.MethodJittingStartedV1{MethodID: id, MethodName: clrevents.UTF16Of(name)}
	}
	load := func(id uint64) *clrevents.MethodLoadVerboseV2 {
		return &clrevents.MethodLoadVerboseV2{MethodID: id, MethodFlags: clrevents.MethodFlagsJitted}
	}
	const hours = 70e6 // ms
	// Thread 5: A's load garbled forward.
	at(10, 5, start(1, "A"))
	at(hours, 5, load(1))
	at(20, 5, start(2, "B"))
	at(25, 5, load(2))
	// Thread 6: D's start garbled back, before C's load.
	at(30, 6, start(3, "C"))
	at(35, 6, load(3))
	at(-hours, 6, start(4, "D"))
	at(45, 6, load(4))
	// Thread 7: in order, a compile of a minute is credible.
	at(50, 7, start(5, "E"))
	at(60050, 7, load(5))

	err := a.DecodeErrors()
	if !errors.Is(err, trace.ErrNotCredible) || !strings.Contains(err.Error(), "2 events did not decode") ||
		!strings.Contains(err.Error(), "the load of A") || !strings.Contains(err.Error(), "the compile's start is") {
		t.Errorf("DecodeErrors = %v, want the two garbled compiles named", err)
	}
	ps := a.Processes()
	if len(ps) != 1 {
		t.Fatalf("%d processes", len(ps))
	}
	want := map[string]time.Duration{"A": -1, "B": 5 * time.Millisecond, "C": 5 * time.Millisecond, "D": -1, "E": time.Minute}
	for _, m := range ps[0].Methods {
		w, ok := want[m.Name]
		if !ok {
			t.Errorf("unexpected method %q", m.Name)
			continue
		}
		delete(want, m.Name)
		if w < 0 && m.HasJitTime || w >= 0 && (!m.HasJitTime || m.JitTime != w) {
			t.Errorf("%s: compile time %v (known %v), want %v", m.Name, m.JitTime, m.HasJitTime, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing methods %v", want)
	}
}

// TestObserveOrigin: without SetOrigin, reports count from the first event
// Observe saw, as gcstats' do.
func TestObserveOrigin(t *testing.T) {
	a := jitstats.NewAnalyzer()
	t0 := time.Date(2026, 1, 1, 0, 0, 5, 0, time.UTC)
	a.Observe(t0, 9, 1, &clrevents.MethodJittingStartedV1{MethodID: 1})
	a.Observe(t0.Add(time.Second), 9, 1, &clrevents.MethodJittingStartedV1{MethodID: 2})
	if got := a.Origin(); !got.Equal(t0) {
		t.Errorf("Origin %v, want the first event's %v", got, t0)
	}
}
