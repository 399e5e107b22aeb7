package gcstats_test

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/gcstats"
)

// The shared traces hold only blocking workstation GCs; these sequences
// are the events a runtime logs for the other kinds (gc.cpp's order:
// suspend, start, end, heap statistics, restart), fed through Observe.

type feed struct {
	a   *gcstats.Analyzer
	t0  time.Time
	pid int64
}

func newFeed() *feed {
	f := &feed{a: gcstats.NewAnalyzer(), t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), pid: 42}
	f.a.SetOrigin(f.t0)
	return f
}

// at feeds ev at ms milliseconds on thread tid.
func (f *feed) at(ms float64, tid int64, ev clrevents.Event) {
	f.a.Observe(f.t0.Add(time.Duration(ms*float64(time.Millisecond))), f.pid, tid, ev)
}

func (f *feed) suspend(ms float64, tid int64, r clrevents.GCSuspendEEReason) {
	f.at(ms, tid, &clrevents.GCSuspendEEBeginV1{Reason: r})
}

func (f *feed) process(t *testing.T) *gcstats.Process {
	t.Helper()
	ps := f.a.Processes()
	if len(ps) != 1 {
		t.Fatalf("%d processes", len(ps))
	}
	return ps[0]
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func near(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

// TestBackgroundGC: a background GC pauses at its start and again when it
// suspends for its final phase (SuspendForGCPrep, on the background GC
// thread); a foreground GC runs in between with its own pause, and the
// sampling profiler's suspensions on a third thread count for nobody.
func TestBackgroundGC(t *testing.T) {
	const user, bgc, prof = 100, 200, 300
	f := newFeed()
	f.suspend(10, user, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(10.5, user, &clrevents.GCSuspendEEEndV1{})
	f.at(11, user, &clrevents.GCStartV2{Count: 7, Depth: 2, Reason: clrevents.GCReasonAllocSmall, Type: clrevents.GCTypeBackgroundGC})
	f.at(12, user, &clrevents.GCRestartEEEndV1{}) // initial pause: 10 → 12
	// A profiler suspension while the background GC marks.
	f.suspend(13, prof, clrevents.GCSuspendEEReasonSuspendOther)
	f.at(14, prof, &clrevents.GCRestartEEEndV1{})
	// A foreground (gen 1) GC during the background GC.
	f.suspend(20, user, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(20.2, user, &clrevents.GCSuspendEEEndV1{})
	f.at(21, user, &clrevents.GCStartV2{Count: 8, Depth: 1, Reason: clrevents.GCReasonAllocSmall, Type: clrevents.GCTypeForegroundGC})
	f.at(24, user, &clrevents.GCEndV1{Count: 8, Depth: 1})
	f.at(24.1, user, &clrevents.GCHeapStatsV2{GenerationSize0: 100, GenerationSize1: 200})
	f.at(25, user, &clrevents.GCRestartEEEndV1{}) // foreground pause: 20 → 25
	// The background GC's final pause, on its own thread.
	f.suspend(30, bgc, clrevents.GCSuspendEEReasonSuspendForGCPrep)
	f.at(30.5, bgc, &clrevents.GCSuspendEEEndV1{})
	f.at(33, bgc, &clrevents.GCRestartEEEndV1{}) // 30 → 33
	f.at(40, bgc, &clrevents.GCEndV1{Count: 7, Depth: 2})
	f.at(40.1, bgc, &clrevents.GCHeapStatsV2{GenerationSize0: 10, GenerationSize2: 5000})

	p := f.process(t)
	if len(p.GCs) != 2 {
		t.Fatalf("%d GCs, want 2", len(p.GCs))
	}
	b, fg := p.GCs[0], p.GCs[1]
	if b.Type != clrevents.GCTypeBackgroundGC || !b.Complete {
		t.Errorf("GC 7: type %v complete %v", b.Type, b.Complete)
	}
	if b.Pauses != 2 || !near(msOf(b.Pause), 2+3) {
		t.Errorf("GC 7: %d pauses, %v; want 2 pauses, 5ms (10→12, 30→33)", b.Pauses, b.Pause)
	}
	if !near(msOf(b.Duration), 29) {
		t.Errorf("GC 7: duration %v, want 29ms", b.Duration)
	}
	if b.HeapAfter != 5010 {
		t.Errorf("GC 7: heap after %d, want 5010", b.HeapAfter)
	}
	if fg.Type != clrevents.GCTypeForegroundGC || !fg.Complete || fg.Pauses != 1 || !near(msOf(fg.Pause), 5) {
		t.Errorf("GC 8: type %v complete %v, %d pauses of %v; want foreground, complete, 1 of 5ms", fg.Type, fg.Complete, fg.Pauses, fg.Pause)
	}
	if !near(msOf(fg.Suspend), 0.2) || !near(msOf(fg.Duration), 3) {
		t.Errorf("GC 8: suspend %v duration %v, want 0.2ms 3ms", fg.Suspend, fg.Duration)
	}
	s := p.Summary()
	if s.Gens[2].Count != 1 || s.Gens[1].Count != 1 || !near(msOf(s.All.TotalPause), 10) || !near(msOf(s.All.MaxPause), 5) {
		t.Errorf("summary %+v", s)
	}
}

// TestServerGC: four heaps, each with its per-heap history; the heap
// before the GC is their sum, and the suspending thread is a GC thread.
func TestServerGC(t *testing.T) {
	const gcThread = 7
	f := newFeed()
	f.suspend(1, gcThread, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(1.1, gcThread, &clrevents.GCSuspendEEEndV1{})
	f.at(1.2, gcThread, &clrevents.GCStartV2{Count: 1, Depth: 0, Reason: clrevents.GCReasonAllocSmall})
	for h := 0; h < 4; h++ {
		f.at(2, int64(10+h), &clrevents.GCPerHeapHistoryV3{
			HeapIndex: uint32(h),
			Count:     5,
			Values: clrevents.GCPerHeapHistoryV3ValuesArrayOf(
				clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: 1000},
				clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: 100, FreeListAfter: 30, FreeObjAfter: uint64(h)},
				clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: 10, FreeObjAfter: 2},
				clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: 1},
				clrevents.GCPerHeapHistoryV3ValuesElem{},
			),
		})
	}
	f.at(2.1, gcThread, &clrevents.GCGlobalHeapHistoryV4{NumHeaps: 4, CondemnedGeneration: 0})
	f.at(3, gcThread, &clrevents.GCEndV1{Count: 1})
	f.at(3.1, gcThread, &clrevents.GCHeapStatsV2{GenerationSize1: 400, GenerationSize2: 40})
	f.at(4, gcThread, &clrevents.GCRestartEEEndV1{})

	p := f.process(t)
	if p.Heaps != 4 || len(p.GCs) != 1 {
		t.Fatalf("heaps %d, %d GCs; want 4, 1", p.Heaps, len(p.GCs))
	}
	gc := p.GCs[0]
	if gc.HeapBefore != 4*1111 || gc.HeapBeforeEstimated || gc.GenSizeBefore[gcstats.Gen0] != 4000 {
		t.Errorf("heap before %d (estimated %v, gen0 %d), want 4444 from the histories", gc.HeapBefore, gc.HeapBeforeEstimated, gc.GenSizeBefore[0])
	}
	if gc.Heaps != 4 || !gc.Complete || !near(msOf(gc.Pause), 3) {
		t.Errorf("heaps %d complete %v pause %v, want 4 true 3ms", gc.Heaps, gc.Complete, gc.Pause)
	}
	// Free space after the GC, summed over the heaps: gen 1 holds
	// 4*30 + (0+1+2+3) of its 400 bytes, gen 2 4*2 of its 40.
	if !gc.HasFragmentation || gc.Fragmentation != [gcstats.NumGens]uint64{0, 126, 8, 0, 0} || gc.TotalFragmentation() != 134 {
		t.Errorf("fragmentation %v (has %v), want [0 126 8 0 0]", gc.Fragmentation, gc.HasFragmentation)
	}
	if got := gc.FragmentationPercent(1); !near(got, 31.5) {
		t.Errorf("gen 1 fragmentation %.2f%%, want 31.5%%", got)
	}
	if got := gc.FragmentationPercent(0); got != 0 {
		t.Errorf("gen 0 (empty) fragmentation %.2f%%, want 0", got)
	}
}

// TestEstimatedHeapBefore: without per-heap histories the heap before a GC
// is the previous GC's heap with generation 0 grown by the allocations
// since (AllocationTick).
func TestEstimatedHeapBefore(t *testing.T) {
	f := newFeed()
	gc := func(at float64, n uint32, gen0, gen1 uint64) {
		f.suspend(at, 1, clrevents.GCSuspendEEReasonSuspendForGC)
		f.at(at+0.1, 1, &clrevents.GCStartV2{Count: n})
		f.at(at+0.5, 1, &clrevents.GCEndV1{Count: n})
		f.at(at+0.6, 1, &clrevents.GCHeapStatsV2{GenerationSize0: gen0, GenerationSize1: gen1})
		f.at(at+0.7, 1, &clrevents.GCRestartEEEndV1{})
	}
	gc(1, 1, 50, 1000)
	for i := 0; i < 3; i++ {
		f.at(2+float64(i), 1, &clrevents.GCAllocationTickV4{AllocationAmount: 100_000, AllocationAmount64: 100_000, AllocationKind: clrevents.GCAllocationKindSmall})
	}
	f.at(5, 1, &clrevents.GCAllocationTickV4{AllocationAmount: 90_000, AllocationAmount64: 90_000, AllocationKind: clrevents.GCAllocationKindLarge})
	gc(10, 2, 60, 1100)
	p := f.process(t)
	g := p.GCs[1]
	if !g.HeapBeforeEstimated || g.HeapBefore != 1000+300_000 {
		t.Errorf("heap before %d (estimated %v), want 301000 estimated", g.HeapBefore, g.HeapBeforeEstimated)
	}
	if g.Allocated != [3]uint64{300_000, 90_000, 0} {
		t.Errorf("allocated %v", g.Allocated)
	}
	if s := p.Summary(); s.Allocated != 390_000 {
		t.Errorf("summary allocated %d", s.Allocated)
	}
	// Pause share: the previous GC ended at its heap statistics (1.6 ms),
	// this GC's pause began at 10 ms and lasted 0.7 ms.
	if want := 100 * 0.7 / (0.7 + 8.4); !near(g.PausePercent, want) {
		t.Errorf("pause share %.4f%%, want %.4f%%", g.PausePercent, want)
	}
}

// TestStartWithoutSuspension: a trace that begins while the runtime is
// suspended for a GC has the GC's start event but not its suspension: the
// GC is a row with its pause unknown (not made up), complete once its
// thread restarts the runtime, and the summary counts it without a pause.
func TestStartWithoutSuspension(t *testing.T) {
	f := newFeed()
	f.at(0.5, 1, &clrevents.GCSuspendEEEndV1{}) // the suspension's end, its begin before the trace
	f.at(1, 1, &clrevents.GCStartV2{Count: 3})
	f.at(2, 1, &clrevents.GCEndV1{Count: 3})
	f.at(2.1, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 10})
	f.at(2.2, 1, &clrevents.GCRestartEEEndV1{})
	f.suspend(10, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(10.1, 1, &clrevents.GCStartV2{Count: 4})
	f.at(10.5, 1, &clrevents.GCEndV1{Count: 4})
	f.at(10.6, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 20})
	f.at(10.7, 1, &clrevents.GCRestartEEEndV1{})
	p := f.process(t)
	if len(p.GCs) != 2 {
		t.Fatalf("%d GCs, want 2 (every GCStart is a GC)", len(p.GCs))
	}
	g := p.GCs[0]
	if g.Number != 3 || g.HasPause || g.Pause != 0 || g.Pauses != 0 || !g.PauseStart.IsZero() || g.PausePercent != 0 {
		t.Errorf("GC 3: has pause %v, pause %v (%d), pause start %v, %.1f%%; want an unknown pause", g.HasPause, g.Pause, g.Pauses, g.PauseStart, g.PausePercent)
	}
	if !g.Complete || !near(msOf(g.Duration), 1) || g.HeapAfter != 10 {
		t.Errorf("GC 3: complete %v, duration %v, heap after %d; want true, 1ms, 10", g.Complete, g.Duration, g.HeapAfter)
	}
	if g := p.GCs[1]; !g.HasPause || !g.Complete || !near(msOf(g.Pause), 0.7) {
		t.Errorf("GC 4: has pause %v, complete %v, pause %v; want true, true, 0.7ms", g.HasPause, g.Complete, g.Pause)
	}
	s := p.Summary()
	if s.All.Count != 2 || s.All.Measured != 1 || s.PauseUnknown != 1 || !near(msOf(s.All.TotalPause), 0.7) || !near(msOf(s.All.MeanPause()), 0.7) {
		t.Errorf("summary: %d GCs, %d measured, %d unknown, total pause %v, mean %v; want 2, 1, 1, 0.7ms, 0.7ms",
			s.All.Count, s.All.Measured, s.PauseUnknown, s.All.TotalPause, s.All.MeanPause())
	}
}

// TestForegroundGCDuringBackgroundSuspension: the runtime logs a
// suspension's begin before it waits for the runtime to be free, so a
// foreground GC's suspension (SuspendForGC, its Count still the background
// GC's number) can begin while the background GC's own SuspendForGCPrep
// suspension holds the runtime. The foreground GC is a GC with its own
// pause, from the background GC's restart (when it could suspend) to its
// own; the background GC keeps its events.
func TestForegroundGCDuringBackgroundSuspension(t *testing.T) {
	const user, bgc = 100, 200
	f := newFeed()
	f.suspend(10, user, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(10.5, user, &clrevents.GCSuspendEEEndV1{})
	f.at(11, user, &clrevents.GCStartV2{Count: 7, Depth: 2, Reason: clrevents.GCReasonAllocSmall, Type: clrevents.GCTypeBackgroundGC})
	f.at(12, user, &clrevents.GCRestartEEEndV1{}) // initial pause: 10 → 12
	// The background GC's final phase; the user thread asks for a GC
	// while it holds the runtime.
	f.suspend(30, bgc, clrevents.GCSuspendEEReasonSuspendForGCPrep)
	f.at(30.1, user, &clrevents.GCSuspendEEBeginV1{Reason: clrevents.GCSuspendEEReasonSuspendForGC, Count: 7})
	f.at(30.5, bgc, &clrevents.GCSuspendEEEndV1{})
	f.at(33, bgc, &clrevents.GCRestartEEEndV1{}) // 30 → 33
	f.at(33.4, user, &clrevents.GCSuspendEEEndV1{})
	f.at(33.5, user, &clrevents.GCStartV2{Count: 8, Depth: 1, Reason: clrevents.GCReasonAllocSmall, Type: clrevents.GCTypeForegroundGC})
	f.at(36, user, &clrevents.GCEndV1{Count: 8, Depth: 1})
	f.at(36.1, user, &clrevents.GCHeapStatsV2{GenerationSize0: 100, GenerationSize1: 200})
	f.at(37, user, &clrevents.GCRestartEEEndV1{}) // 33 → 37
	f.at(40, bgc, &clrevents.GCEndV1{Count: 7, Depth: 2})
	f.at(40.1, bgc, &clrevents.GCHeapStatsV2{GenerationSize0: 10, GenerationSize2: 5000})

	p := f.process(t)
	if len(p.GCs) != 2 {
		t.Fatalf("%d GCs, want 2", len(p.GCs))
	}
	b, fg := p.GCs[0], p.GCs[1]
	if fg.Number != 8 || fg.Type != clrevents.GCTypeForegroundGC || !fg.HasPause || !fg.Complete {
		t.Fatalf("GC 8: number %d type %v has pause %v complete %v", fg.Number, fg.Type, fg.HasPause, fg.Complete)
	}
	if fg.Pauses != 1 || !near(msOf(fg.Pause), 4) || !near(msOf(fg.Suspend), 0.4) || !near(msOf(fg.PauseStart.Sub(f.t0)), 33) {
		t.Errorf("GC 8: %d pauses of %v from %v, suspend %v; want 1 of 4ms from 33ms, suspend 0.4ms",
			fg.Pauses, fg.Pause, fg.PauseStart.Sub(f.t0), fg.Suspend)
	}
	if !near(msOf(fg.Duration), 2.5) || fg.HeapAfter != 300 {
		t.Errorf("GC 8: duration %v heap after %d, want 2.5ms 300", fg.Duration, fg.HeapAfter)
	}
	if !b.Complete || b.Pauses != 2 || !near(msOf(b.Pause), 2+3) || !near(msOf(b.Suspend), 0.5+0.5) {
		t.Errorf("GC 7: complete %v, %d pauses of %v, suspend %v; want true, 2 of 5ms, 1ms", b.Complete, b.Pauses, b.Pause, b.Suspend)
	}
	if !near(msOf(b.Duration), 29) || b.HeapAfter != 5010 {
		t.Errorf("GC 7: duration %v heap after %d, want 29ms 5010", b.Duration, b.HeapAfter)
	}
	s := p.Summary()
	if s.All.Count != 2 || s.PauseUnknown != 0 || !near(msOf(s.All.TotalPause), 9) {
		t.Errorf("summary: %d GCs, %d unknown, %v paused; want 2, 0, 9ms", s.All.Count, s.PauseUnknown, s.All.TotalPause)
	}
	// The process's time in the trace runs from the origin to the last
	// event: 40.1 ms, 9 of them paused.
	if !near(msOf(s.Span), 40.1) || !near(s.PausePercent, 100*9/40.1) {
		t.Errorf("paused %.3f%% of %v, want %.3f%% of 40.1ms", s.PausePercent, s.Span, 100*9/40.1)
	}
}

// TestBackgroundGCBeganBeforeTrace: the events of a background GC that
// started before the trace (its final suspension, end and heap
// statistics) belong to no GC of the trace; they neither end nor
// complete the foreground GC that runs meanwhile.
func TestBackgroundGCBeganBeforeTrace(t *testing.T) {
	const user, bgc = 100, 200
	f := newFeed()
	f.suspend(1, user, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(1.1, user, &clrevents.GCSuspendEEEndV1{})
	f.at(1.2, user, &clrevents.GCStartV2{Count: 6, Depth: 0, Type: clrevents.GCTypeForegroundGC})
	f.at(2, bgc, &clrevents.GCEndV1{Count: 5, Depth: 2}) // not GC 6's end
	f.at(3, user, &clrevents.GCEndV1{Count: 6})
	f.at(3.1, user, &clrevents.GCHeapStatsV2{GenerationSize0: 7})
	f.at(3.2, user, &clrevents.GCRestartEEEndV1{})
	f.suspend(5, bgc, clrevents.GCSuspendEEReasonSuspendForGCPrep)
	f.at(5.5, bgc, &clrevents.GCRestartEEEndV1{})
	f.at(6, bgc, &clrevents.GCHeapStatsV2{GenerationSize2: 900})
	p := f.process(t)
	if len(p.GCs) != 1 {
		t.Fatalf("%d GCs, want 1", len(p.GCs))
	}
	g := p.GCs[0]
	if !g.Complete || !near(msOf(g.Duration), 1.8) || !near(msOf(g.Pause), 2.2) || g.HeapAfter != 7 {
		t.Errorf("GC 6: complete %v duration %v pause %v heap after %d; want true 1.8ms 2.2ms 7", g.Complete, g.Duration, g.Pause, g.HeapAfter)
	}
}

// TestAllocationUnknown: without AllocationTick events the allocation is
// unknown, not zero.
func TestAllocationUnknown(t *testing.T) {
	f := newFeed()
	f.suspend(1, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(1.1, 1, &clrevents.GCStartV2{Count: 1})
	f.at(1.5, 1, &clrevents.GCEndV1{Count: 1})
	f.at(1.6, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 50})
	f.at(1.7, 1, &clrevents.GCRestartEEEndV1{})
	p := f.process(t)
	if s := p.Summary(); p.HasAllocated || s.HasAllocated {
		t.Errorf("allocation known (%v, %v) without AllocationTick events", p.HasAllocated, s.HasAllocated)
	}
	// A tick after the last GC is in no GC's allocation.
	f.at(2, 1, &clrevents.GCAllocationTickV4{AllocationAmount: 100_000, AllocationAmount64: 100_000, AllocationKind: clrevents.GCAllocationKindSmall})
	if s := p.Summary(); s.HasAllocated {
		t.Errorf("allocation known (%d) with GC 1's unknown", s.Allocated)
	}

	// With ticks before every GC, it is known.
	f = newFeed()
	f.at(0.5, 1, &clrevents.GCAllocationTickV4{AllocationAmount: 100_000, AllocationAmount64: 100_000, AllocationKind: clrevents.GCAllocationKindSmall})
	f.suspend(1, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(1.1, 1, &clrevents.GCStartV2{Count: 1})
	f.at(1.5, 1, &clrevents.GCEndV1{Count: 1})
	f.at(1.6, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 50})
	f.at(1.7, 1, &clrevents.GCRestartEEEndV1{})
	f.at(2, 1, &clrevents.GCAllocationTickV4{AllocationAmount: 100_000, AllocationAmount64: 100_000, AllocationKind: clrevents.GCAllocationKindSmall})
	p = f.process(t)
	if s := p.Summary(); !s.HasAllocated || s.Allocated != 100_000 || !p.GCs[0].HasAllocated || p.GCs[0].AllocatedExact {
		t.Errorf("allocated %d (known %v; GC 1's known %v, exact %v), want 100000 from its tick", s.Allocated, s.HasAllocated, p.GCs[0].HasAllocated, p.GCs[0].AllocatedExact)
	}
}

// TestMissing: what Missing says of a process without GCs. Suspensions
// none of which is for a GC mean no GC ran; some for a GC mean the GCs'
// own events are not in the trace; reasons the manifest does not name
// count as another reason. A process without any GC-keyword event, in a
// trace whose other processes have GCs, gets their PIDs; with nothing at
// all, ErrNoEvents itself. Every one errors.Is ErrNoEvents.
func TestMissing(t *testing.T) {
	f := newFeed()
	for i := range 3 {
		f.suspend(float64(i), 1, clrevents.GCSuspendEEReasonSuspendOther)
		f.at(float64(i)+0.5, 1, &clrevents.GCRestartEEEndV1{})
	}
	f.suspend(5, 1, clrevents.GCSuspendEEReason(99))
	f.at(6, 1, &clrevents.GCAllocationTickV3{AllocationAmount: 100, AllocationAmount64: 100})
	want := "no GC events: the trace holds 4 runtime suspensions (SuspendOther 3, another reason 1), none of them for a GC, and 1 allocation tick, but no GCStart: no garbage collection ran while it recorded"
	if err := f.a.Missing(-1); !errors.Is(err, gcstats.ErrNoEvents) || err.Error() != want {
		t.Errorf("no GC reason: %v\nwant %s", err, want)
	}
	f.suspend(7, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	f.suspend(8, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	want = "no GC events: the trace holds 6 runtime suspensions (SuspendOther 3, SuspendForGC 2, another reason 1), 2 of them for a GC, and 1 allocation tick, but no GCStart: the GCs' own events are not in it (the trace stopped before them, or they were dropped or lost to damage)"
	if err := f.a.Missing(42); !errors.Is(err, gcstats.ErrNoEvents) || err.Error() != want {
		t.Errorf("for a GC: %v\nwant %s", err, want)
	}
	if err := f.a.Missing(7); err != gcstats.ErrNoEvents {
		t.Errorf("a process with no event: %v, want ErrNoEvents itself", err)
	}

	// Only allocation ticks.
	g := newFeed()
	g.at(1, 1, &clrevents.GCAllocationTickV3{AllocationAmount: 100, AllocationAmount64: 100})
	want = "no GC events: the trace holds 1 allocation tick, but no GCStart: no garbage collection ran while it recorded"
	if err := g.a.Missing(-1); !errors.Is(err, gcstats.ErrNoEvents) || err.Error() != want {
		t.Errorf("ticks: %v\nwant %s", err, want)
	}

	// Processes with GCs: nil for them and for any; the others are named.
	h := newFeed()
	h.suspend(1, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	h.at(2, 1, &clrevents.GCStartV2{Count: 1})
	h.pid = 43
	h.suspend(1, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	h.at(2, 1, &clrevents.GCStartV2{Count: 1})
	for _, pid := range []int64{-1, 42, 43} {
		if err := h.a.Missing(pid); err != nil {
			t.Errorf("Missing(%d) = %v, want nil", pid, err)
		}
	}
	want = "no GC events: the trace has them for processes 42, 43"
	if err := h.a.Missing(9); !errors.Is(err, gcstats.ErrNoEvents) || err.Error() != want {
		t.Errorf("another process: %v\nwant %s", err, want)
	}
}

// TestRestartLost: damage lost the restart after GC 5, whose suspension
// then stayed open on its thread. GC 6 starting shows the runtime had
// restarted: GC 5's pause is unknown, and it is complete (its end and
// heap statistics are in the trace). A restart much later on GC 5's
// thread, whose own suspension was lost too, is not GC 5's: taken as
// its, GC 5 paused for a second.
func TestRestartLost(t *testing.T) {
	const a, b = 100, 200
	f := newFeed()
	f.suspend(10, a, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(10.2, a, &clrevents.GCSuspendEEEndV1{})
	f.at(10.5, a, &clrevents.GCStartV2{Count: 5})
	f.at(11, a, &clrevents.GCEndV1{Count: 5})
	f.at(11.1, a, &clrevents.GCHeapStatsV2{GenerationSize0: 10})
	// GC 5's restart is lost.
	f.suspend(20, b, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(20.2, b, &clrevents.GCSuspendEEEndV1{})
	f.at(20.5, b, &clrevents.GCStartV2{Count: 6})
	f.at(21, b, &clrevents.GCEndV1{Count: 6})
	f.at(21.1, b, &clrevents.GCHeapStatsV2{GenerationSize0: 20})
	f.at(22, b, &clrevents.GCRestartEEEndV1{})
	f.at(1000, a, &clrevents.GCRestartEEEndV1{}) // its suspension lost
	p := f.process(t)
	if len(p.GCs) != 2 {
		t.Fatalf("%d GCs, want 2", len(p.GCs))
	}
	g := p.GCs[0]
	if g.HasPause || g.Pause != 0 || g.Pauses != 0 || g.Suspend != 0 || !g.PauseStart.IsZero() || !g.Complete {
		t.Errorf("GC 5: has pause %v, pause %v (%d), suspend %v, pause start %v, complete %v; want an unknown pause, complete",
			g.HasPause, g.Pause, g.Pauses, g.Suspend, g.PauseStart, g.Complete)
	}
	if g := p.GCs[1]; !g.HasPause || !g.Complete || !near(msOf(g.Pause), 2) {
		t.Errorf("GC 6: has pause %v, complete %v, pause %v; want true, true, 2ms", g.HasPause, g.Complete, g.Pause)
	}
	s := p.Summary()
	if s.All.Count != 2 || s.PauseUnknown != 1 || !near(msOf(s.All.MaxPause), 2) {
		t.Errorf("summary: %d GCs, %d with the pause unknown, max pause %v; want 2, 1, 2ms", s.All.Count, s.PauseUnknown, s.All.MaxPause)
	}
}

// TestServerBackgroundHistoriesAfterEnd: a server background GC logs its
// per-heap and global histories after its end, here after a foreground
// GC that ran during it: they are the background GC's (the GC completed
// last, as PerfView takes them), not the foreground GC's, which started
// last (before, the foreground GC's heap before was both GCs' summed and
// the background GC's was an estimate of no heaps).
func TestServerBackgroundHistoriesAfterEnd(t *testing.T) {
	const user, bgc = 100, 200
	heap := func(h uint32, before uint64) *clrevents.GCPerHeapHistoryV3 {
		return &clrevents.GCPerHeapHistoryV3{HeapIndex: h, Count: 1, Values: clrevents.GCPerHeapHistoryV3ValuesArrayOf(
			clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: before, FreeListAfter: uint64(h) + 1})}
	}
	f := newFeed()
	f.suspend(10, user, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(10.1, user, &clrevents.GCSuspendEEEndV1{})
	f.at(10.2, user, &clrevents.GCStartV2{Count: 5, Depth: 2, Type: clrevents.GCTypeBackgroundGC})
	f.at(11, user, &clrevents.GCRestartEEEndV1{})
	f.suspend(20, user, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(20.1, user, &clrevents.GCSuspendEEEndV1{})
	f.at(20.2, user, &clrevents.GCStartV2{Count: 6, Depth: 0, Type: clrevents.GCTypeForegroundGC})
	f.at(20.5, 11, heap(0, 1000))
	f.at(20.5, 12, heap(1, 1000))
	f.at(20.6, user, &clrevents.GCGlobalHeapHistoryV2{NumHeaps: 2})
	f.at(21, user, &clrevents.GCEndV1{Count: 6, Depth: 0})
	f.at(21.1, user, &clrevents.GCHeapStatsV2{GenerationSize0: 50, GenerationSize2: 10000})
	f.at(21.2, user, &clrevents.GCRestartEEEndV1{})
	f.suspend(30, bgc, clrevents.GCSuspendEEReasonSuspendForGCPrep)
	f.at(30.1, bgc, &clrevents.GCSuspendEEEndV1{})
	f.at(31, bgc, &clrevents.GCRestartEEEndV1{})
	f.at(40, bgc, &clrevents.GCEndV1{Count: 5, Depth: 2})
	f.at(40.1, bgc, &clrevents.GCHeapStatsV2{GenerationSize0: 50, GenerationSize2: 5000})
	f.at(40.2, 11, heap(0, 7000))
	f.at(40.2, 12, heap(1, 7000))
	f.at(40.3, bgc, &clrevents.GCGlobalHeapHistoryV2{NumHeaps: 2})
	p := f.process(t)
	if len(p.GCs) != 2 {
		t.Fatalf("%d GCs, want 2", len(p.GCs))
	}
	for _, c := range []struct {
		gc     *gcstats.GC
		before uint64
	}{{p.GCs[0], 14000}, {p.GCs[1], 2000}} {
		g := c.gc
		if g.HeapBefore != c.before || g.HeapBeforeEstimated || g.Heaps != 2 || g.TotalFragmentation() != 3 {
			t.Errorf("GC %d: heap before %d (estimated %v), %d heaps, free %d; want %d from its own 2 heaps' histories, free 3",
				g.Number, g.HeapBefore, g.HeapBeforeEstimated, g.Heaps, g.TotalFragmentation(), c.before)
		}
	}
}

// TestEstimateLargeHeaps: without per-heap histories the heap before a
// GC counts the large and pinned object heaps at least as large as the
// GC left them (a GC of generation 0 does not shrink them), as PerfView
// estimates; and a background GC's estimate starts from the GC before
// it, not from a foreground GC that ran during it.
func TestEstimateLargeHeaps(t *testing.T) {
	f := newFeed()
	blocking := func(ms float64, n, gen uint32, hs *clrevents.GCHeapStatsV2) {
		f.suspend(ms, 1, clrevents.GCSuspendEEReasonSuspendForGC)
		f.at(ms+0.1, 1, &clrevents.GCSuspendEEEndV1{})
		f.at(ms+0.2, 1, &clrevents.GCStartV2{Count: n, Depth: gen, Type: clrevents.GCTypeNonConcurrentGC})
		f.at(ms+1, 1, &clrevents.GCEndV1{Count: n, Depth: gen})
		f.at(ms+1.1, 1, hs)
		f.at(ms+1.2, 1, &clrevents.GCRestartEEEndV1{})
	}
	blocking(10, 1, 0, &clrevents.GCHeapStatsV2{GenerationSize0: 100_000, GenerationSize2: 1_000_000, GenerationSize3: 1_000_000, GenerationSize4: 10})
	for i := range 20 {
		f.at(20+float64(i)/10, 1, &clrevents.GCAllocationTickV4{AllocationAmount: 100_000, AllocationAmount64: 100_000, AllocationKind: clrevents.GCAllocationKindLarge})
	}
	f.at(23, 1, &clrevents.GCAllocationTickV4{AllocationAmount: 200_000, AllocationAmount64: 200_000, AllocationKind: clrevents.GCAllocationKindSmall})
	blocking(30, 2, 0, &clrevents.GCHeapStatsV2{GenerationSize0: 100_000, GenerationSize2: 1_000_000, GenerationSize3: 3_000_000, GenerationSize4: 50})
	p := f.process(t)
	if g := p.GCs[1]; !g.HeapBeforeEstimated || g.HeapBefore != 200_000+1_000_000+3_000_000+50 {
		t.Errorf("gen 0 GC after 2 MB of large objects: heap before %d (estimated %v), want 4200050 (the large object heap's 3 MB after it held before)", g.HeapBefore, g.HeapBeforeEstimated)
	}

	// A background GC (5) with a foreground GC (6) during it.
	f = newFeed()
	blocking(1, 4, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 10, GenerationSize2: 1000})
	backgroundWithForeground(f, 9000, 500)
	p = f.process(t)
	var bg *gcstats.GC
	for _, g := range p.GCs {
		if g.Number == 5 {
			bg = g
		}
	}
	if bg == nil || bg.HeapBefore != 1010 {
		t.Errorf("background GC: %+v; want its heap before estimated from GC 4's 1010 bytes, not GC 6's", bg)
	}
}

// TestHTMLHeapLineInTimeOrder: with a foreground GC during a background
// one, the heap line's points go forward in time (the background GC's
// end, after the foreground GC's, is drawn after it; before, the line ran
// back to it).
func TestHTMLHeapLineInTimeOrder(t *testing.T) {
	f := newFeed()
	backgroundWithForeground(f, 10000, 5000)
	var b strings.Builder
	if err := gcstats.WriteHTML(&b, f.t0, f.a.Processes(), "bgc"); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`class="heap-line"[^>]* points="([^"]*)"`).FindStringSubmatch(b.String())
	if m == nil {
		t.Fatal("no heap line")
	}
	points := strings.Fields(m[1])
	if len(points) != 4 {
		t.Fatalf("%d points, want 4", len(points))
	}
	last := -1.0
	for _, p := range points {
		x, _ := strconv.ParseFloat(p[:strings.IndexByte(p, ',')], 64)
		if x < last {
			t.Fatalf("the heap line goes back in time: %v", points)
		}
		last = x
	}
}

// TestMissingGCs: GC numbers absent between two the trace holds are GCs
// whose events were lost: the summary lists them, the text says so, and a
// whole trace has none.
func TestMissingGCs(t *testing.T) {
	f := newFeed()
	for i, n := range []uint32{1, 2, 5, 7} {
		ms := float64(10 * (i + 1))
		f.suspend(ms, 1, clrevents.GCSuspendEEReasonSuspendForGC)
		f.at(ms+0.1, 1, &clrevents.GCStartV2{Count: n})
		f.at(ms+0.5, 1, &clrevents.GCEndV1{Count: n})
		f.at(ms+0.6, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 10})
		f.at(ms+0.7, 1, &clrevents.GCRestartEEEndV1{})
	}
	s := f.process(t).Summary()
	if want := []gcstats.GCRange{{3, 4}, {6, 6}}; !slices.Equal(s.Missing, want) || s.MissingCount() != 3 {
		t.Errorf("missing %v (%d), want %v (3)", s.Missing, s.MissingCount(), want)
	}
	var b strings.Builder
	if err := gcstats.WriteText(&b, f.t0, f.a.Processes()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "GCs 3 to 4, 6 (3 in all) are not in the trace") {
		t.Errorf("the text does not say which GCs were lost:\n%s", b.String())
	}
	for _, path := range []string{gcevents, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"} {
		for _, p := range analyze(t, path).Processes() {
			if m := p.Summary().Missing; len(m) != 0 {
				t.Errorf("%s: process %d: GCs %v said missing from a whole trace", path, p.PID, m)
			}
		}
	}
}

// TestEphemeralBeforeBackgroundPauses: when an ephemeral GC runs before a
// background GC in the same suspension (and takes its restart), the
// background GC's pause is its initial suspension and its GCPrep pause,
// and it counts two pauses (it counted one, its pause summing two).
func TestEphemeralBeforeBackgroundPauses(t *testing.T) {
	const user, bgc = 100, 200
	f := newFeed()
	f.at(1, user, &clrevents.GCHeapStatsV2{GenerationSize0: 1000, GenerationSize2: 10000})
	f.suspend(10, user, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(10.1, user, &clrevents.GCSuspendEEEndV1{})
	f.at(10.2, user, &clrevents.GCStartV2{Count: 5, Depth: 2, Type: clrevents.GCTypeBackgroundGC})
	f.at(10.3, user, &clrevents.GCStartV2{Count: 6, Depth: 1, Type: clrevents.GCTypeNonConcurrentGC})
	f.at(12, user, &clrevents.GCEndV1{Count: 6, Depth: 1})
	f.at(12.1, user, &clrevents.GCHeapStatsV2{GenerationSize0: 100, GenerationSize1: 200, GenerationSize2: 10000})
	f.at(12.2, user, &clrevents.GCRestartEEEndV1{})
	f.suspend(30, bgc, clrevents.GCSuspendEEReasonSuspendForGCPrep)
	f.at(30.1, bgc, &clrevents.GCSuspendEEEndV1{})
	f.at(31, bgc, &clrevents.GCRestartEEEndV1{})
	f.at(40, bgc, &clrevents.GCEndV1{Count: 5, Depth: 2})
	f.at(40.1, bgc, &clrevents.GCHeapStatsV2{GenerationSize0: 50, GenerationSize1: 300, GenerationSize2: 5000})
	for _, g := range f.process(t).GCs {
		if g.Number == 5 && (g.Pauses != 2 || !near(msOf(g.Pause), 1.1)) {
			t.Errorf("background GC: %d pauses, %v; want 2 pauses, 1.1 ms (0.1 suspended with the ephemeral GC, 1.0 for GCPrep)", g.Pauses, g.Pause)
		}
	}
}

// backgroundWithForeground feeds a background GC (5, from 10 ms to 40 ms)
// with a foreground GC (6, at 20 ms) during it, leaving generation 2 at
// fgGen2 and bgGen2 bytes.
func backgroundWithForeground(f *feed, fgGen2, bgGen2 uint64) {
	f.suspend(10, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(10.1, 1, &clrevents.GCSuspendEEEndV1{})
	f.at(10.2, 1, &clrevents.GCStartV2{Count: 5, Depth: 2, Type: clrevents.GCTypeBackgroundGC})
	f.at(11, 1, &clrevents.GCRestartEEEndV1{})
	f.suspend(20, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(20.1, 1, &clrevents.GCSuspendEEEndV1{})
	f.at(20.2, 1, &clrevents.GCStartV2{Count: 6, Depth: 0, Type: clrevents.GCTypeForegroundGC})
	f.at(21, 1, &clrevents.GCEndV1{Count: 6, Depth: 0})
	f.at(21.1, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 20, GenerationSize2: fgGen2})
	f.at(21.2, 1, &clrevents.GCRestartEEEndV1{})
	f.at(40, 2, &clrevents.GCEndV1{Count: 5, Depth: 2})
	f.at(40.1, 2, &clrevents.GCHeapStatsV2{GenerationSize0: 20, GenerationSize2: bgGen2})
}

// TestAllocatedBackgroundGC: a background GC's allocation takes its
// large and pinned object heaps from the per-heap histories and its
// generation 0 from the AllocationTick events, as PerfView counts it: so
// it is known with ticks, never exact, and unknown without them; the
// blocking GC after it is exact from the histories of both.
func TestAllocatedBackgroundGC(t *testing.T) {
	// hist is one heap's history: generation 0 and the large object
	// heap's sizes before and after.
	hist := func(gen0Before, gen0After, lohBefore, lohAfter uint64) *clrevents.GCPerHeapHistoryV3 {
		e := clrevents.GCPerHeapHistoryV3ValuesElem{}
		return &clrevents.GCPerHeapHistoryV3{Values: clrevents.GCPerHeapHistoryV3ValuesArrayOf(
			clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: gen0Before, SizeAfter: gen0After}, e, e,
			clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: lohBefore, SizeAfter: lohAfter})}
	}
	run := func(ticks bool) *gcstats.Process {
		f := newFeed()
		tick := func(ms float64) {
			if ticks {
				f.at(ms, 1, &clrevents.GCAllocationTickV4{AllocationAmount: 100_000, AllocationAmount64: 100_000, AllocationKind: clrevents.GCAllocationKindSmall})
			}
		}
		tick(1)
		f.suspend(10, 1, clrevents.GCSuspendEEReasonSuspendForGC)
		f.at(11, 1, &clrevents.GCStartV2{Count: 1, Depth: 1})
		f.at(12, 1, hist(4000, 100, 7000, 7000))
		f.at(13, 1, &clrevents.GCEndV1{Count: 1, Depth: 1})
		f.at(13.5, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 100, GenerationSize3: 7000})
		f.at(14, 1, &clrevents.GCRestartEEEndV1{})
		tick(15)
		f.suspend(20, 2, clrevents.GCSuspendEEReasonSuspendForGC)
		f.at(21, 2, &clrevents.GCStartV2{Count: 2, Depth: 2, Type: clrevents.GCTypeBackgroundGC})
		f.at(22, 2, &clrevents.GCRestartEEEndV1{})
		f.at(30, 2, hist(3000, 3000, 9000, 8500))
		f.at(31, 2, &clrevents.GCEndV1{Count: 2, Depth: 2})
		f.at(31.5, 2, &clrevents.GCHeapStatsV2{GenerationSize0: 3000, GenerationSize3: 8500})
		f.suspend(40, 1, clrevents.GCSuspendEEReasonSuspendForGC)
		f.at(41, 1, &clrevents.GCStartV2{Count: 3, Depth: 0})
		f.at(42, 1, hist(5000, 200, 8500, 0))
		f.at(43, 1, &clrevents.GCEndV1{Count: 3})
		f.at(43.5, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 200, GenerationSize3: 8500})
		f.at(44, 1, &clrevents.GCRestartEEEndV1{})
		return f.process(t)
	}
	for _, ticks := range []bool{true, false} {
		p := run(ticks)
		if len(p.GCs) != 3 {
			t.Fatalf("ticks %v: %d GCs, want 3", ticks, len(p.GCs))
		}
		bgc, after := p.GCs[1], p.GCs[2]
		// The BGC: the LOH grew from 7000 to 9000 (2000), generation 0 the
		// tick's 100,000 since GC 1's heap statistics.
		if want := [3]uint64{100_000, 2000, 0}; !bgc.Complete || bgc.HasAllocated != ticks || bgc.AllocatedExact || ticks && bgc.Allocated != want {
			t.Errorf("ticks %v: the background GC's allocation %v (known %v, exact %v, complete %v), want %v known %v, not exact", ticks, bgc.Allocated, bgc.HasAllocated, bgc.AllocatedExact, bgc.Complete, want, ticks)
		}
		// GC 3: generation 0 from the BGC's 3000 after to 5000 before;
		// the LOH stayed at 8500.
		if want := [3]uint64{2000, 0, 0}; !after.HasAllocated || !after.AllocatedExact || after.Allocated != want {
			t.Errorf("ticks %v: GC 3's allocation %v (known %v, exact %v), want %v, exact", ticks, after.Allocated, after.HasAllocated, after.AllocatedExact, want)
		}
	}
}

// TestLostForegroundStart: a foreground GC (8) ran during background GC
// 7, but its GCStart was lost (the runtime drops events when its buffers
// fill). Its end and heap statistics are of a GC the trace does not
// hold: they must not end the background GC, which then took the
// foreground GC's sizes and lost its later pause (GCPrep).
func TestLostForegroundStart(t *testing.T) {
	const user, bgc = 100, 200
	f := newFeed()
	f.suspend(10, user, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(10.5, user, &clrevents.GCSuspendEEEndV1{})
	f.at(11, user, &clrevents.GCStartV2{Count: 7, Depth: 2, Type: clrevents.GCTypeBackgroundGC})
	f.at(12, user, &clrevents.GCRestartEEEndV1{})
	f.suspend(20, user, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(20.2, user, &clrevents.GCSuspendEEEndV1{})
	// GC 8's GCStart is lost.
	f.at(24, user, &clrevents.GCEndV1{Count: 8, Depth: 1})
	f.at(24.1, user, &clrevents.GCHeapStatsV2{GenerationSize0: 100, GenerationSize1: 200})
	f.at(25, user, &clrevents.GCRestartEEEndV1{})
	f.suspend(30, bgc, clrevents.GCSuspendEEReasonSuspendForGCPrep)
	f.at(30.5, bgc, &clrevents.GCSuspendEEEndV1{})
	f.at(33, bgc, &clrevents.GCRestartEEEndV1{})
	f.at(40, bgc, &clrevents.GCEndV1{Count: 7, Depth: 2})
	f.at(40.1, bgc, &clrevents.GCHeapStatsV2{GenerationSize0: 10, GenerationSize2: 5000})
	p := f.process(t)
	if len(p.GCs) != 1 {
		t.Fatalf("%d GCs, want 1 (the background GC)", len(p.GCs))
	}
	g := p.GCs[0]
	if !g.Complete || g.HeapAfter != 5010 || g.Pauses != 2 || !near(msOf(g.Pause), 5) || !near(msOf(g.Duration), 29) {
		t.Errorf("GC 7: complete %v, heap after %d, %d pauses of %v, duration %v; want complete, 5010, 2 of 5ms, 29ms",
			g.Complete, g.HeapAfter, g.Pauses, g.Pause, g.Duration)
	}
}

// TestLostEndThenStart: GC 5's GCEnd was lost, then GC 6's GCStart. GC 5
// has its own heap statistics, which came before its restart; those of
// GC 6, which the trace does not hold, are not GC 5's. (GC 5 was taken
// for a concurrent GC still running at its restart, and ended with GC
// 6's sizes.)
func TestLostEndThenStart(t *testing.T) {
	f := newFeed()
	f.suspend(10, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(10.1, 1, &clrevents.GCSuspendEEEndV1{})
	f.at(10.2, 1, &clrevents.GCStartV2{Count: 5, Depth: 0})
	// GC 5's GCEnd is lost.
	f.at(11, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 10, GenerationSize2: 1000})
	f.at(11.1, 1, &clrevents.GCRestartEEEndV1{})
	f.suspend(20, 1, clrevents.GCSuspendEEReasonSuspendForGC)
	f.at(20.1, 1, &clrevents.GCSuspendEEEndV1{})
	// GC 6's GCStart is lost.
	f.at(21, 1, &clrevents.GCEndV1{Count: 6, Depth: 1})
	f.at(21.1, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 99, GenerationSize1: 9999})
	f.at(21.2, 1, &clrevents.GCRestartEEEndV1{})
	p := f.process(t)
	if len(p.GCs) != 1 {
		t.Fatalf("%d GCs, want 1", len(p.GCs))
	}
	if g := p.GCs[0]; !g.Complete || g.HeapAfter != 1010 || !near(msOf(g.Pause), 1.1) {
		t.Errorf("GC 5: complete %v, heap after %d, pause %v; want complete, 1010, 1.1ms", g.Complete, g.HeapAfter, g.Pause)
	}
}
