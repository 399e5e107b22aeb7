package gcstats_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/internal/baseline"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/trace"
)

const (
	gcevents     = "../testdata/traces/gcevents.etl.zip"
	gceventsBase = "../testdata/traces/gcevents.baseline.txt"
	sharedDir    = "../../shared/fixtures/traces/perfview"
	core30       = sharedDir + "/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	net452       = sharedDir + "/net.4.5.2.x86.etl.zip"
)

func analyze(t *testing.T, path string) *gcstats.Analyzer {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := gcstats.Read(r)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := a.DecodeErrors(); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	return a
}

func needShared(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is not here (it comes with ../shared beside the checkout): %v", path, err)
	}
}

// baselineGC is a GC as TraceEvent's dump of gcevents.etl shows it, its
// figures derived here from the dumped timestamps alone.
type baselineGC struct {
	number, gen         int64
	reason              string
	startMS, pauseStart float64
	pauseMS, durationMS float64
	heapAfter           int64
	pauseDone, ended    bool
	suspendTID          int64
}

// TestAgainstTraceEvent: the GCs of gcevents.etl as TraceEvent dumped
// them (every GC event of that trace is in the baseline): the pause is the
// time from the SuspendForGC suspension to the restart's end on the same
// thread, the duration from GC/Start to GC/Stop, both from TraceEvent's
// timestamps; the heap after the GC is HeapStats' TotalHeapSize.
func TestAgainstTraceEvent(t *testing.T) {
	b, err := baseline.ParseFile(gceventsBase)
	if err != nil {
		t.Fatal(err)
	}
	var want []*baselineGC
	var suspendMS float64
	suspendTID := int64(-1)
	var cur *baselineGC
	for i := range b.Events {
		e := &b.Events[i]
		if e.Provider != "Microsoft-Windows-DotNETRuntime" {
			continue
		}
		field := func(name string) int64 {
			v, ok := e.Field(name)
			if !ok {
				t.Fatalf("line %d: no %s", e.Line, name)
			}
			n, err := baseline.ParseInt(v)
			if err != nil {
				t.Fatalf("line %d: %s=%q: %v", e.Line, name, v, err)
			}
			return n
		}
		switch e.Name {
		case "GC/SuspendEEStart":
			if r, _ := e.Field("Reason"); r == "SuspendForGC" {
				suspendMS, suspendTID = e.MSec, e.TID
			}
		case "GC/Start":
			r, _ := e.Field("Reason")
			cur = &baselineGC{number: field("Count"), gen: field("Depth"), reason: r, startMS: e.MSec, pauseStart: suspendMS, suspendTID: suspendTID}
			want = append(want, cur)
		case "GC/Stop":
			cur.durationMS = e.MSec - cur.startMS
			cur.ended = true
		case "GC/HeapStats":
			cur.heapAfter = field("TotalHeapSize")
		case "GC/RestartEEStop":
			if cur != nil && e.TID == cur.suspendTID && !cur.pauseDone {
				cur.pauseMS = e.MSec - cur.pauseStart
				cur.pauseDone = true
			}
		}
	}
	if len(want) != 2 {
		t.Fatalf("baseline has %d GCs, want 2", len(want))
	}

	a := analyze(t, gcevents)
	procs := a.Processes()
	if len(procs) != 1 || procs[0].PID != 179596 {
		t.Fatalf("processes %v, want one, 179596", procs)
	}
	got := procs[0].GCs
	if len(got) != len(want) {
		t.Fatalf("%d GCs, want %d", len(got), len(want))
	}
	// The baseline's times are rounded to a microsecond, and differences
	// of two of them are within 1 µs of the exact value.
	const tol = 0.0011
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	for i, w := range want {
		g := got[i]
		if g.Number != w.number || int64(g.Generation) != w.gen || g.Reason.String() != w.reason {
			t.Errorf("GC %d: number %d gen %d reason %s, want %d %d %s", i, g.Number, g.Generation, g.Reason, w.number, w.gen, w.reason)
		}
		if d := ms(g.Start.Sub(a.Origin())); math.Abs(d-w.startMS) > tol {
			t.Errorf("GC %d: start %.4f ms, TraceEvent %.3f", w.number, d, w.startMS)
		}
		if math.Abs(ms(g.Pause)-w.pauseMS) > tol {
			t.Errorf("GC %d: pause %.4f ms, from TraceEvent's timestamps %.3f", w.number, ms(g.Pause), w.pauseMS)
		}
		if math.Abs(ms(g.Duration)-w.durationMS) > tol {
			t.Errorf("GC %d: duration %.4f ms, from TraceEvent's timestamps %.3f", w.number, ms(g.Duration), w.durationMS)
		}
		if int64(g.HeapAfter) != w.heapAfter {
			t.Errorf("GC %d: heap after %d, TraceEvent's TotalHeapSize %d", w.number, g.HeapAfter, w.heapAfter)
		}
		if !g.Complete || g.Pauses != 1 {
			t.Errorf("GC %d: complete %v pauses %d, want true 1", w.number, g.Complete, g.Pauses)
		}
		if g.HeapBeforeEstimated || g.HeapBefore == 0 {
			t.Errorf("GC %d: heap before %d (estimated %v); the trace has per-heap histories", w.number, g.HeapBefore, g.HeapBeforeEstimated)
		}
	}
	// Per-heap history of GC 1 (gen 1): SizeBefore of gen 0 is 0x112d30.
	if g := got[0].GenSizeBefore[gcstats.Gen0]; g != 0x112d30 {
		t.Errorf("GC 1 gen 0 size before %#x, want 0x112d30", g)
	}
}

// TestSampleProfilerSuspensions: on the 3.0 trace the SampleProfiler
// suspends the runtime 5475 times (reason SuspendOther, on its own
// thread), interleaved with the GC's suspensions; none of them may count
// as a GC pause. GC 1's pause is 20.865 ms (TraceEvent's GCStats: 20.9).
func TestSampleProfilerSuspensions(t *testing.T) {
	needShared(t, core30)
	a := analyze(t, core30)
	procs := a.Processes()
	if len(procs) != 1 {
		t.Fatalf("%d processes with GCs, want 1", len(procs))
	}
	p := procs[0]
	if len(p.GCs) != 478 {
		t.Fatalf("%d GCs, want 478", len(p.GCs))
	}
	if d := p.GCs[0].Pause; d < 20860*time.Microsecond || d > 20870*time.Microsecond {
		t.Errorf("GC 1 pause %v, want 20.865ms", d)
	}
	for _, gc := range p.GCs {
		if !gc.Complete || gc.Pauses != 1 {
			t.Errorf("GC %d: complete %v, %d pauses", gc.Number, gc.Complete, gc.Pauses)
		}
		if gc.Pause < gc.Suspend+gc.Duration {
			t.Errorf("GC %d: pause %v for a %v suspension and a %v GC", gc.Number, gc.Pause, gc.Suspend, gc.Duration)
		}
		if gc.Type.String() != "NonConcurrentGC" {
			t.Errorf("GC %d: type %v", gc.Number, gc.Type)
		}
	}
	// Independently: each SuspendForGC suspension paired with the next
	// restart on its own thread, whatever else suspends in between.
	want := forGCSuspensions(t, core30)
	if len(want) != len(p.GCs) {
		t.Fatalf("%d SuspendForGC suspensions, %d GCs", len(want), len(p.GCs))
	}
	for i, gc := range p.GCs {
		if gc.Pause != want[i] {
			t.Errorf("GC %d: pause %v, suspension to restart %v", gc.Number, gc.Pause, want[i])
		}
	}
	s := p.Summary()
	if s.All.Count != 478 || s.Gens[0].Count != 473 || s.Gens[1].Count != 5 {
		t.Errorf("summary counts %d (gen0 %d, gen1 %d), want 478 (473, 5)", s.All.Count, s.Gens[0].Count, s.Gens[1].Count)
	}
	if s.PausePercent <= 0 || s.PausePercent >= 100 {
		t.Errorf("paused %.2f%%", s.PausePercent)
	}
}

// forGCSuspensions pairs every SuspendForGC suspension with the next
// restart end on the thread that suspended.
func forGCSuspensions(t *testing.T, path string) []time.Duration {
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	open := map[int64]time.Time{}
	var out []time.Duration
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		switch e.Name() {
		case "GCSuspendEEBegin_V1":
			ev, err := e.Decode()
			if err != nil {
				t.Fatal(err)
			}
			if ev.(*clrevents.GCSuspendEEBeginV1).Reason == clrevents.GCSuspendEEReasonSuspendForGC {
				open[e.ThreadID()] = e.Time()
			}
		case "GCRestartEEEnd_V1":
			if t0, ok := open[e.ThreadID()]; ok {
				out = append(out, e.Time().Sub(t0))
				delete(open, e.ThreadID())
			}
		}
	}
}

// TestFrameworkDoubleStart: .NET Framework 4.5.2 logs GCStart twice per GC
// (versions 1 and 2); each GC counts once, and the private provider's
// per-heap histories give the heap before.
func TestFrameworkDoubleStart(t *testing.T) {
	needShared(t, net452)
	a := analyze(t, net452)
	var n int
	for _, p := range a.Processes() {
		// The kernel's Process events name the executable (the
		// baseline's PName for the process's lines is Test.x86).
		if p.PID == 3644 && p.Name != "Test.x86.exe" {
			t.Errorf("pid 3644 named %q", p.Name)
		}
		for i, gc := range p.GCs {
			n++
			if i > 0 && gc.Number != p.GCs[i-1].Number+1 {
				t.Errorf("pid %d: GC %d follows %d", p.PID, gc.Number, p.GCs[i-1].Number)
			}
			if gc.Complete && gc.HeapBeforeEstimated {
				t.Errorf("pid %d GC %d: heap before estimated; the trace has private per-heap histories", p.PID, gc.Number)
			}
		}
	}
	if n != 80 {
		t.Errorf("%d GCs, want 80", n)
	}
}

// TestNoGCEvents: a trace without GCs is ErrNoEvents, whose text names
// the keyword and level to record, as clrdump says it.
func TestNoGCEvents(t *testing.T) {
	r, err := trace.Open("../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := gcstats.Read(r)
	if !errors.Is(err, gcstats.ErrNoEvents) {
		t.Fatalf("error %v, want ErrNoEvents", err)
	}
	if !strings.Contains(err.Error(), "GC keyword (0x1) at level Informational (4)") {
		t.Errorf("error %q does not name the keyword", err)
	}
	if ps := a.Processes(); len(ps) != 0 {
		t.Errorf("%d processes with GC events, want none", len(ps))
	}
}

// TestSuspensionsWithoutGCs: the 2.0 trace's 14,846 suspensions are the
// sampling profiler's (SuspendOther); with no GCStart it has no GC and no
// process to report, and the error says so rather than asking for the
// keyword its suspensions show was on.
func TestSuspensionsWithoutGCs(t *testing.T) {
	path := sharedDir + "/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip"
	needShared(t, path)
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if a, err := gcstats.Read(r); !errors.Is(err, gcstats.ErrNoEvents) || len(a.Processes()) != 0 {
		t.Errorf("error %v, %d processes; want ErrNoEvents and none", err, len(a.Processes()))
	} else if want := "no GC events: the trace holds 14,846 runtime suspensions (SuspendOther 14,846), none of them for a GC, and 169 allocation ticks, but no GCStart: no garbage collection ran while it recorded"; err.Error() != want {
		t.Errorf("error %q\nwant %q", err, want)
	}
}

func TestHTMLSelfContained(t *testing.T) {
	a := analyze(t, gcevents)
	var b strings.Builder
	if err := gcstats.WriteHTML(&b, a.Origin(), a.Processes(), "gcevents <etl>"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"http://", "https://", "<script", "src="} {
		if i := strings.Index(page, bad); i >= 0 && !strings.HasPrefix(page[i:], "http://www.w3.org/2000/svg") {
			t.Errorf("page refers to %q: %s", bad, page[max(0, i-40):min(len(page), i+40)])
		}
	}
	if !strings.Contains(page, "gcevents &lt;etl&gt;") {
		t.Error("title not escaped")
	}
	if n := strings.Count(page, `class="pause gen`); n != 2 {
		t.Errorf("%d pause bars, want 2", n)
	}
}

// BenchmarkRead: the whole GC model of the 3.0 trace (105,540 events, 478
// GCs), reading included.
func BenchmarkRead(b *testing.B) {
	if _, err := os.Stat(core30); err != nil {
		b.Skipf("%s is not here (it comes with ../shared): %v", core30, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := trace.Open(core30)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := gcstats.Read(r); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
}

// TestFragmentation: each GC's free space after it, by generation, equals
// the free-list and free-object space of the per-heap histories logged
// after its start event, summed independently here; the runtime's and
// the .NET Framework private provider's layouts.
func TestFragmentation(t *testing.T) {
	for _, path := range []string{gcevents, core30, net452} {
		t.Run(path[strings.LastIndexByte(path, '/')+1:], func(t *testing.T) {
			needShared(t, path)
			want := fragmentationByGC(t, path)
			checked := 0
			for _, p := range analyze(t, path).Processes() {
				for _, gc := range p.GCs {
					w, ok := want[[2]int64{p.PID, gc.Number}]
					if !ok {
						if gc.HasFragmentation {
							t.Errorf("pid %d GC %d: fragmentation %v without per-heap histories", p.PID, gc.Number, gc.Fragmentation)
						}
						continue
					}
					checked++
					if !gc.HasFragmentation || gc.Fragmentation != w {
						t.Errorf("pid %d GC %d: fragmentation %v (has %v), want %v", p.PID, gc.Number, gc.Fragmentation, gc.HasFragmentation, w)
					}
					for g := range gcstats.NumGens {
						if pct := gc.FragmentationPercent(g); gc.Complete && (pct < 0 || pct > 100) {
							t.Errorf("pid %d GC %d gen %d: %.1f%% fragmented (%d free of %d)", p.PID, gc.Number, g, pct, gc.Fragmentation[g], gc.GenSizeAfter[g])
						}
					}
				}
			}
			if checked == 0 || checked < len(want)-1 {
				t.Errorf("checked %d GCs of %d with per-heap histories", checked, len(want))
			}
		})
	}
}

// fragmentationByGC sums FreeListAfter and FreeObjAfter per generation of
// every per-heap history into the latest GC started in its process.
func fragmentationByGC(t *testing.T, path string) map[[2]int64][gcstats.NumGens]uint64 {
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	current := map[int64]int64{} // pid → the latest GC number
	out := map[[2]int64][gcstats.NumGens]uint64{}
	add := func(pid int64, gen int, free uint64) {
		k := [2]int64{pid, current[pid]}
		v := out[k]
		if gen < gcstats.NumGens {
			v[gen] += free
		}
		out[k] = v
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(e.Name(), "GCStart") && !strings.HasPrefix(e.Name(), "GCPerHeapHistory") {
			continue
		}
		ev, err := e.Decode()
		if err != nil {
			continue
		}
		switch ev := ev.(type) {
		case clrevents.GCStartEvent:
			current[e.ProcessID()] = int64(ev.GCStartFields().Count)
		case *clrevents.GCPerHeapHistoryV3:
			for g := range ev.Values.Len() {
				v := ev.Values.At(g)
				add(e.ProcessID(), g, v.FreeListAfter+v.FreeObjAfter)
			}
		case *clrevents.GCPerHeapHistory:
			for g := range ev.Values.Len() {
				v := ev.Values.At(g)
				add(e.ProcessID(), g, v.FreeListAfter+v.FreeObjAfter)
			}
		}
	}
	return out
}

// eventSpan returns, independently of the package, the times of a
// trace's first and last events, those of the kernel's Process/Start and
// Process/Stop events for pid, and that of pid's first
// RuntimeInformationStart of the runtime provider (zero when the trace
// has none).
func eventSpan(t *testing.T, path string, pid int64) (first, last, started, stopped, runtime time.Time) {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if first.IsZero() {
			first = e.Time()
		}
		last = e.Time()
		if e.ProcessID() == pid && runtime.IsZero() && e.Provider() == "Microsoft-Windows-DotNETRuntime" && e.Name() == "RuntimeInformationStart" {
			runtime = e.Time()
		}
		if e.Provider() == "Windows Kernel" && e.ProcessID() == pid {
			switch e.Name() {
			case "Process/Start":
				started = e.Time()
			case "Process/Stop":
				stopped = e.Time()
			}
		}
	}
}

// TestTimeInTrace: the share of time paused is over the process's time in
// the trace, not over the span of its GCs (gcevents.etl's two GCs, 1.3 ms
// of pauses 0.75 ms apart, read 99.45% paused): from its Process/Start to
// its Process/Stop when the trace records them (the 4.5.2 trace's
// Test.x86.exe, whose runtime starts 113 ms after the process), else from
// the runtime's start (gcevents.etl's runtime starts 8.185 s into the
// 11.609 s trace: over the whole trace, 0.01% paused) to the trace's end.
func TestTimeInTrace(t *testing.T) {
	for _, c := range []struct {
		path      string
		pid       int64
		boundedBy bool
	}{{gcevents, 179596, false}, {net452, 3644, true}} {
		t.Run(c.path[strings.LastIndexByte(c.path, '/')+1:], func(t *testing.T) {
			needShared(t, c.path)
			_, last, started, stopped, runtime := eventSpan(t, c.path, c.pid)
			if c.boundedBy == started.IsZero() || c.boundedBy == stopped.IsZero() || runtime.IsZero() {
				t.Fatalf("Process/Start %v, Process/Stop %v, runtime start %v in the trace", started, stopped, runtime)
			}
			wantStart, wantEnd := runtime, last
			if c.boundedBy {
				wantStart, wantEnd = started, stopped
			}
			a := analyze(t, c.path)
			var p *gcstats.Process
			for _, q := range a.Processes() {
				if q.PID == c.pid {
					p = q
				}
			}
			if p == nil {
				t.Fatalf("no process %d", c.pid)
			}
			start, end := p.TimeInTrace()
			if !start.Equal(wantStart) || !end.Equal(wantEnd) {
				t.Errorf("time in trace %v to %v, want %v to %v", start, end, wantStart, wantEnd)
			}
			s := p.Summary()
			if s.Span != wantEnd.Sub(wantStart) {
				t.Errorf("span %v, want %v", s.Span, wantEnd.Sub(wantStart))
			}
			var paused time.Duration
			for _, gc := range p.GCs {
				paused += gc.Pause
			}
			if want := 100 * float64(paused) / float64(wantEnd.Sub(wantStart)); math.Abs(s.PausePercent-want) > 1e-9 || s.PausePercent >= 1 {
				t.Errorf("paused %.4f%%, want %.4f%%", s.PausePercent, want)
			}
		})
	}
}

// TestAllocationTicksLeftOut: gcevents.etl read without its AllocationTick
// events (as a trace recorded at level Informational holds it): the
// allocation is unknown, not zero; the pauses do not change.
func TestAllocationTicksLeftOut(t *testing.T) {
	full := analyze(t, gcevents).Processes()[0]
	if !full.HasAllocated || full.Summary().Allocated == 0 {
		t.Fatalf("the whole trace: allocation known %v, %d bytes", full.HasAllocated, full.Summary().Allocated)
	}
	r, err := trace.Open(gcevents)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a := gcstats.NewAnalyzer()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(e.Name(), "GCAllocationTick") {
			a.Add(e)
		}
	}
	p := a.Processes()[0]
	if s := p.Summary(); p.HasAllocated || s.HasAllocated {
		t.Errorf("allocation known (%v, %v, %d bytes) without AllocationTick events", p.HasAllocated, s.HasAllocated, s.Allocated)
	}
	for i, gc := range p.GCs {
		if gc.Pause != full.GCs[i].Pause {
			t.Errorf("GC %d: pause %v, %v with the ticks", gc.Number, gc.Pause, full.GCs[i].Pause)
		}
	}
}

// TestHTMLHeapLine: the heap line runs through each complete GC's size
// before it (a point, at its pause) and after it, starting at the first
// point, not detached from it.
func TestHTMLHeapLine(t *testing.T) {
	a := analyze(t, gcevents)
	var b strings.Builder
	if err := gcstats.WriteHTML(&b, a.Origin(), a.Processes(), "gcevents"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	m := regexp.MustCompile(`class="heap-line"[^>]* points="([^"]*)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no heap line")
	}
	points := strings.Fields(m[1])
	circles := regexp.MustCompile(`class="heap-before" cx="([^"]*)" cy="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(points) != 4 || len(circles) != 2 {
		t.Fatalf("%d line points, %d before points; want 4, 2 (two GCs)", len(points), len(circles))
	}
	for i, c := range circles {
		if points[2*i] != c[1]+","+c[2] {
			t.Errorf("GC %d: the line passes %s, its before point is at %s,%s", i+1, points[2*i], c[1], c[2])
		}
	}
	y := func(p string) float64 {
		v, _ := strconv.ParseFloat(p[strings.IndexByte(p, ',')+1:], 64)
		return v
	}
	// Both GCs shrank the heap: the line drops at each (SVG's y grows
	// downwards).
	if y(points[1]) <= y(points[0]) || y(points[3]) <= y(points[2]) {
		t.Errorf("the line does not drop at the GCs: %v", points)
	}
}

// TestNewerVersion: a newer runtime's GCStart (version 3, which no table
// has) is a GC as the version it decodes as: before, the model looked
// events up by their exact type and found none, and said the trace held
// no GCStart.
func TestNewerVersion(t *testing.T) {
	const path = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	want := 0
	for _, p := range analyze(t, path).Processes() {
		want += len(p.GCs)
	}
	r, err := trace.NewReader(bytes.NewReader(tracetest.NewerGCStart(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := gcstats.Read(r)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, p := range a.Processes() {
		got += len(p.GCs)
	}
	if got != want || want != 478 {
		t.Errorf("%d GCs with GCStart version 3, %d with version 2; want 478", got, want)
	}

	// The same with a generated package of one's own that has version
	// 3, and the GC events of clrevents under its own names, before or
	// after clrevents': it decodes them, and the model still finds them
	// as clrevents' (before, it found no GC).
	own := tracetest.OwnPackage("own", func(info *clrevents.EventInfo) bool { return strings.HasPrefix(info.Name, "GC") }, true)
	for _, tables := range [][]*clrimpl.Table{{own, clrevents.Table()}, {clrevents.Table(), own}} {
		r, err := trace.NewReader(bytes.NewReader(tracetest.NewerGCStart(t, path)), trace.WithEvents(tables...))
		if err != nil {
			t.Fatal(err)
		}
		a, err := gcstats.Read(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		got, pause := 0, time.Duration(0)
		for _, p := range a.Processes() {
			got += len(p.GCs)
			for _, g := range p.GCs {
				pause += g.Pause
			}
		}
		if got != want {
			t.Errorf("with a package of one's own (tables %v): %d GCs, want %d", tables, got, want)
		}
		if pause <= 0 {
			t.Errorf("with a package of one's own (tables %v): pauses sum to %v ms", tables, pause)
		}
	}
}

// TestAllocatedFromHistories: a GC's allocation is PerfView's, from the
// per-heap histories of it and the GC before it (the 3.0 trace has them
// for every GC), not the AllocationTick events' sample, which this
// runtime overcounts: before, GC 2 said 9.747 MB allocated since GC 1,
// more than its whole heap before (3.756 MB), and all 478 GCs said more
// than their heap. The figures are TraceEvent's GCStats (GetUserAllocated),
// as an independent port of it computes them from the trace's events:
// 7.948 MB before GC 1 (from the ticks: it has no GC before it), 2.672 MB
// before GC 2, 2.261 MB before GC 3, 1,123.459 MB over the trace.
func TestAllocatedFromHistories(t *testing.T) {
	ps := analyze(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip").Processes()
	if len(ps) != 1 || len(ps[0].GCs) != 478 {
		t.Fatalf("%d processes, want 1 with 478 GCs", len(ps))
	}
	p := ps[0]
	mb := func(b uint64) float64 { return float64(b) / 1e6 }
	for i, want := range []float64{7.948, 2.672, 2.261} {
		gc := p.GCs[i]
		var got uint64
		for _, v := range gc.Allocated {
			got += v
		}
		if math.Abs(mb(got)-want) > 0.0005 || !gc.HasAllocated || gc.AllocatedExact != (i > 0) {
			t.Errorf("GC %d: allocated %.4f MB (known %v, exact %v), want %.3f (exact %v)", gc.Number, mb(got), gc.HasAllocated, gc.AllocatedExact, want, i > 0)
		}
	}
	for _, gc := range p.GCs[1:] {
		var got uint64
		for _, v := range gc.Allocated {
			got += v
		}
		if !gc.AllocatedExact || got > gc.HeapBefore {
			t.Errorf("GC %d: allocated %d bytes (exact %v), more than its heap before (%d)", gc.Number, got, gc.AllocatedExact, gc.HeapBefore)
			break
		}
	}
	if s := p.Summary(); !s.HasAllocated || math.Abs(mb(s.Allocated)-1123.459) > 0.01 {
		t.Errorf("the process's GCs allocated %.3f MB (known %v), want PerfView's 1123.459", mb(s.Allocated), s.HasAllocated)
	}
}
