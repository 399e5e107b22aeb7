package jitstats_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/jitstats"
)

// TestOriginIsTraceStart: Read counts times from the trace's start (an
// EventPipe trace's sync time), as PerfView's JITStats and TraceEvent's
// relative times do, not from the first event, which comes 17.886 ms
// later in the 3.0 trace: a compile's start is TraceEvent's
// Method/JittingStarted time (its baseline's dump of the event).
func TestOriginIsTraceStart(t *testing.T) {
	const path = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"
	a, err := jitstats.Read(open(t, path+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	starts := map[uint64]float64{}
	for _, p := range a.Processes() {
		for _, m := range p.Methods {
			starts[m.MethodID] = float64(m.Start.Sub(a.Origin())) / float64(time.Millisecond)
		}
	}
	for _, e := range tracetest.BaselineEvents(t, path+".baseline.txt", "Method/JittingStarted") {
		want, _ := strconv.ParseFloat(e["MSec"], 64)
		id, _ := strconv.ParseUint(strings.TrimPrefix(e["MethodID"], "0x"), 16, 64)
		if got, ok := starts[id]; !ok || math.Abs(got-want) > 0.0005 {
			t.Errorf("method %s: start %.4f ms (compiled: %v), TraceEvent's %s", e["MethodID"], got, ok, e["MSec"])
		}
	}
}
