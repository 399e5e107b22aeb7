package gcstats_test

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/tracetest"
)

// TestOriginIsTraceStart: Read counts times from the trace's start (an
// EventPipe trace's sync time), as PerfView's GCStats and TraceEvent's
// relative times do, not from the first event, which comes 17.886 ms
// later in the 3.0 trace (seconds later in a quiet session's): each GC's
// start is TraceEvent's GC/Start time (its baseline's dump of the event).
func TestOriginIsTraceStart(t *testing.T) {
	const path = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"
	a := analyze(t, path+".zip")
	ps := a.Processes()
	if len(ps) != 1 {
		t.Fatalf("%d processes, want 1", len(ps))
	}
	for _, e := range tracetest.BaselineEvents(t, path+".baseline.txt", "GC/Start") {
		want, _ := strconv.ParseFloat(e["MSec"], 64)
		n, _ := strconv.Atoi(e["Count"])
		if n < 1 || n > len(ps[0].GCs) {
			t.Fatalf("GC %q of %d", e["Count"], len(ps[0].GCs))
		}
		gc := ps[0].GCs[n-1]
		if got := float64(gc.Start.Sub(a.Origin())) / float64(time.Millisecond); math.Abs(got-want) > 0.0005 {
			t.Errorf("GC %d starts at %.4f ms, TraceEvent's at %s", n, got, e["MSec"])
		}
	}
}
