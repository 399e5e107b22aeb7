package gcstats_test

import (
	"fmt"
	"log"
	"time"

	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/trace"
)

// Each GC of a trace with its pause, as PerfView's GCStats lists them, and
// the process's summary.
func ExampleRead() {
	r, err := trace.Open("../testdata/traces/gcevents.etl.zip")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	a, err := gcstats.Read(r)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range a.Processes() {
		s := p.Summary()
		fmt.Printf("process %d: %d GCs, max pause %.3f ms, max heap %d bytes\n", p.PID, s.All.Count, ms(s.All.MaxPause), s.MaxHeap)
		for _, gc := range p.GCs {
			fmt.Printf("GC %d: gen %d %v %v, paused %.3f ms, heap %d -> %d bytes\n",
				gc.Number, gc.Generation, gc.Type, gc.Reason, ms(gc.Pause), gc.HeapBefore, gc.HeapAfter)
		}
	}
	// Output:
	// process 179596: 2 GCs, max pause 0.787 ms, max heap 657192 bytes
	// GC 1: gen 1 NonConcurrentGC Induced, paused 0.787 ms, heap 1468104 -> 657192 bytes
	// GC 2: gen 2 NonConcurrentGC Induced, paused 0.542 ms, heap 657192 -> 436504 bytes
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
