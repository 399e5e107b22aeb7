package gcstats_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/trace"
)

// TestHeapsLabel: the report names the GC (workstation or server) only
// as far as the trace tells. The runtime's GCSettings event says which;
// without it, more than one heap is server GC, but one heap may be either
// (a server GC may run one: GCHeapCount=1, DATAS), and without heap
// histories the heap count is unknown. Without a global heap history, the
// per-heap histories give the heap count (the highest HeapIndex + 1).
// Each of these but the global history of 4 heaps was "workstation GC"
// (the garbled count "server GC, 1048576 heaps").
func TestHeapsLabel(t *testing.T) {
	perHeap := func(heap uint32) clrevents.Event {
		return &clrevents.GCPerHeapHistoryV3{HeapIndex: heap, Count: 1, Values: clrevents.GCPerHeapHistoryV3ValuesArrayOf(clrevents.GCPerHeapHistoryV3ValuesElem{SizeBefore: 1000})}
	}
	for _, c := range []struct {
		name   string
		events []clrevents.Event // during the GC
		heaps  int
		want   string
	}{
		{"per-heap histories of 4 heaps", []clrevents.Event{perHeap(0), perHeap(1), perHeap(3), perHeap(2)}, 4, "server GC, 4 heaps"},
		{"global history of 4 heaps", []clrevents.Event{&clrevents.GCGlobalHeapHistoryV2{NumHeaps: 4}}, 4, "server GC, 4 heaps"},
		{"one heap", []clrevents.Event{&clrevents.GCGlobalHeapHistoryV2{NumHeaps: 1}, perHeap(0)}, 1, "1 heap"},
		{"no heap history", nil, 0, "heap count unknown"},
		{"server GC on one heap", []clrevents.Event{&clrevents.GCSettingsV1{ServerGC: true}, perHeap(0)}, 1, "server GC, 1 heap"},
		{"server GC, no heap history", []clrevents.Event{&clrevents.GCSettingsV1{ServerGC: true}}, 0, "server GC"},
		{"workstation GC", []clrevents.Event{&clrevents.GCSettingsV1{ServerGC: false}, &clrevents.GCGlobalHeapHistoryV2{NumHeaps: 1}}, 1, "workstation GC"},
		// A heap index or count no runtime writes (the GC makes 1,024
		// heaps at most) is left out.
		{"garbled heap index", []clrevents.Event{perHeap(0), perHeap(70000)}, 1, "1 heap"},
		{"garbled heap count", []clrevents.Event{&clrevents.GCGlobalHeapHistoryV2{NumHeaps: 1 << 20}}, 0, "heap count unknown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFeed()
			f.suspend(1, 7, clrevents.GCSuspendEEReasonSuspendForGC)
			f.at(1.1, 7, &clrevents.GCSuspendEEEndV1{})
			f.at(1.2, 7, &clrevents.GCStartV2{Count: 1})
			for i, ev := range c.events {
				f.at(2, int64(10+i), ev)
			}
			f.at(3, 7, &clrevents.GCEndV1{Count: 1})
			f.at(3.1, 7, &clrevents.GCHeapStatsV2{GenerationSize0: 10})
			f.at(3.2, 7, &clrevents.GCRestartEEEndV1{})
			p := f.process(t)
			if p.Heaps != c.heaps || p.GCs[0].Heaps != c.heaps {
				t.Errorf("heaps %d, the GC's %d; want %d", p.Heaps, p.GCs[0].Heaps, c.heaps)
			}
			if err := f.a.DecodeErrors(); strings.HasPrefix(c.name, "garbled") != errors.Is(err, trace.ErrNotCredible) {
				t.Errorf("decode errors: %v", err)
			}
			for _, w := range []func(*strings.Builder) error{
				func(b *strings.Builder) error { return gcstats.WriteText(b, f.t0, f.a.Processes()) },
				func(b *strings.Builder) error { return gcstats.WriteHTML(b, f.t0, f.a.Processes(), "t") },
			} {
				var b strings.Builder
				if err := w(&b); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(b.String(), "1 GCs ("+c.want+")") {
					t.Errorf("no %q in\n%s", "1 GCs ("+c.want+")", b.String())
				}
			}
		})
	}
}
