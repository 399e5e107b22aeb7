package gcstats_test

import (
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
		f.at(2+float64(i), 1, &clrevents.GCAllocationTickV4{AllocationAmount: 100, AllocationAmount64: 100_000, AllocationKind: clrevents.GCAllocationKindSmall})
	}
	f.at(5, 1, &clrevents.GCAllocationTickV4{AllocationAmount64: 90_000, AllocationKind: clrevents.GCAllocationKindLarge})
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

// TestStartWithoutSuspension: a trace that begins inside a GC has its
// start event but not its suspension: it is counted as skipped, not
// reported with a made-up pause.
func TestStartWithoutSuspension(t *testing.T) {
	f := newFeed()
	f.at(1, 1, &clrevents.GCStartV2{Count: 3})
	f.at(2, 1, &clrevents.GCEndV1{Count: 3})
	f.at(2.1, 1, &clrevents.GCHeapStatsV2{})
	f.at(2.2, 1, &clrevents.GCRestartEEEndV1{})
	p := f.process(t)
	if len(p.GCs) != 0 || p.Skipped != 1 {
		t.Errorf("%d GCs, %d skipped; want 0, 1", len(p.GCs), p.Skipped)
	}
}
