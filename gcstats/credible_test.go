package gcstats_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/trace"
)

// step is one event of a synthetic sequence: at ms on thread tid.
type step struct {
	ms  float64
	tid int64
	ev  clrevents.Event
}

// twoGCs is the events of two blocking GCs on thread 1 (gc.cpp's order),
// with allocation ticks before each and per-heap histories.
func twoGCs() []step {
	hist := func(before uint64) *clrevents.GCPerHeapHistoryV3 {
		return &clrevents.GCPerHeapHistoryV3{Values: clrevents.GCPerHeapHistoryV3ValuesArrayOf(
			clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: before, FreeListAfter: 10},
			clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: 500},
		)}
	}
	tick := &clrevents.GCAllocationTickV4{AllocationAmount: 100_000, AllocationAmount64: 100_000, AllocationKind: clrevents.GCAllocationKindSmall}
	return []step{
		{1, 1, tick},
		{10, 1, &clrevents.GCSuspendEEBeginV1{Reason: clrevents.GCSuspendEEReasonSuspendForGC}},
		{10.5, 1, &clrevents.GCSuspendEEEndV1{}},
		{11, 1, &clrevents.GCStartV2{Count: 1, Depth: 0, Reason: clrevents.GCReasonAllocSmall}},
		{12, 1, hist(4000)},
		{13, 1, &clrevents.GCEndV1{Count: 1}},
		{13.5, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 100, GenerationSize1: 3000}},
		{14, 1, &clrevents.GCRestartEEEndV1{}},
		{20, 1, tick},
		{30, 1, &clrevents.GCSuspendEEBeginV1{Reason: clrevents.GCSuspendEEReasonSuspendForGC}},
		{30.2, 1, &clrevents.GCSuspendEEEndV1{}},
		{31, 1, &clrevents.GCStartV2{Count: 2, Depth: 1, Reason: clrevents.GCReasonAllocSmall}},
		{32, 1, hist(5000)},
		{35, 1, &clrevents.GCEndV1{Count: 2, Depth: 1}},
		{35.5, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 50, GenerationSize2: 4000}},
		{36, 1, &clrevents.GCRestartEEEndV1{}},
	}
}

// reportOf feeds steps to a new Analyzer and returns its JSON lines
// report and its DecodeErrors.
func reportOf(t *testing.T, steps []step) (string, error) {
	t.Helper()
	f := newFeed()
	for _, s := range steps {
		f.at(s.ms, s.tid, s.ev)
	}
	var b bytes.Buffer
	if err := gcstats.WriteJSONLines(&b, f.a.Origin(), f.a.Processes()); err != nil {
		t.Fatal(err)
	}
	return b.String(), f.a.DecodeErrors()
}

// TestNotCredible: an event whose values no runtime writes, as a damaged
// trace's garbled payload or timestamp gives, is left out and named
// (trace.ErrNotCredible): the report is the one of the same events
// without it, where it would otherwise hold a generation of 7, a heap of
// a petabyte, allocations of 128 TiB, a negative duration or pause, or a
// pause of more than 100%.
func TestNotCredible(t *testing.T) {
	const huge = clrevents.MaxAllocationBytes + 1
	cases := []struct {
		name   string
		remove int    // the step the bad one replaces (-1: none)
		at     int    // where it goes
		bad    step   // the event
		want   string // in the error
	}{
		{"generation 7", -1, 8, step{15, 1, &clrevents.GCStartV2{Count: 9, Depth: 7}}, "Depth 7"},
		{"heap statistics", 14, 14, step{35.5, 1, &clrevents.GCHeapStatsV2{GenerationSize0: 50, GenerationSize2: huge}}, "heap statistics"},
		{"heap statistics' total", 14, 14, step{35.5, 1, &clrevents.GCHeapStatsV2{GenerationSize1: 1 << 47, GenerationSize2: 1 << 47, GenerationSize3: 1 << 47}}, "heap statistics"},
		{"per-heap history", 12, 12, step{32, 1, &clrevents.GCPerHeapHistoryV3{Values: clrevents.GCPerHeapHistoryV3ValuesArrayOf(
			clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: huge})}}, "per-heap history"},
		{"allocation tick", 8, 8, step{20, 1, &clrevents.GCAllocationTickV4{AllocationAmount: huge & 0xFFFFFFFF, AllocationAmount64: huge, AllocationKind: clrevents.GCAllocationKindLarge}}, "more than an address space"},
		{"allocation tick's two amounts", 8, 8, step{20, 1, &clrevents.GCAllocationTickV4{AllocationAmount: 100_000, AllocationAmount64: 200_000}}, "low 32 bits"},
		{"small object tick of 128 TiB", 8, 8, step{20, 1, &clrevents.GCAllocationTickV4{AllocationAmount: 100_000, AllocationAmount64: 1<<47 + 100_000}}, "small object heap"},
		{"end before start", 13, 13, step{25, 1, &clrevents.GCEndV1{Count: 2, Depth: 1}}, "before its start"},
		{"suspension ends before it began", 10, 10, step{29, 1, &clrevents.GCSuspendEEEndV1{}}, "suspension ends"},
		{"restart before the suspension", -1, 10, step{29, 1, &clrevents.GCRestartEEEndV1{}}, "before the suspension began"},
		{"restart before the GC", -1, 4, step{10.8, 1, &clrevents.GCRestartEEEndV1{}}, "before its GC began"},
		{"GC before its suspension", 11, 11, step{29, 1, &clrevents.GCStartV2{Count: 2, Depth: 1}}, "before the suspension"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := twoGCs()
			ref := slices.Clone(base)
			if c.remove >= 0 {
				ref = slices.Delete(ref, c.remove, c.remove+1)
			}
			bad := slices.Clone(ref)
			bad = slices.Insert(bad, c.at, c.bad)
			want, refErr := reportOf(t, ref)
			if refErr != nil {
				t.Fatalf("the reference: %v", refErr)
			}
			got, err := reportOf(t, bad)
			if !errors.Is(err, trace.ErrNotCredible) || !errors.Is(err, trace.ErrUndecoded) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("DecodeErrors = %v, want ErrNotCredible saying %q", err, c.want)
			}
			if got != want {
				t.Errorf("report\n%s\nwant the report without the event\n%s", got, want)
			}
		})
	}
}

// TestPausePercentAtMost100: a pause that begins before the previous GC
// ended (its heap statistics, here garbled into the pause) is all pause,
// not more.
func TestPausePercentAtMost100(t *testing.T) {
	steps := twoGCs()
	steps[6].ms = 31 // GC 1's heap statistics after GC 2's pause began
	f := newFeed()
	for _, s := range steps {
		f.at(s.ms, s.tid, s.ev)
	}
	p := f.process(t)
	if len(p.GCs) != 2 {
		t.Fatalf("%d GCs", len(p.GCs))
	}
	if gc := p.GCs[1]; !gc.Complete || gc.PausePercent != 100 {
		t.Errorf("GC 2: complete %v, pause %v%%, want complete and 100%%", gc.Complete, gc.PausePercent)
	}
}
