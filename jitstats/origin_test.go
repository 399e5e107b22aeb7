package jitstats_test

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/jitstats"
	"github.com/clrgo/clrevents/trace"
)

// TestOriginIsTraceStart: Read counts times from the trace's start (an
// EventPipe trace's sync time), as PerfView's JITStats and TraceEvent's
// relative times do, not from the first event, which comes 17.886 ms
// later in the 3.0 trace: a compile's start is TraceEvent's
// Method/JittingStarted time (its baseline's dump of the event).
func TestOriginIsTraceStart(t *testing.T) {
	const path = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"
	base, err := os.ReadFile(path + ".baseline.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.Open(path + ".zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := jitstats.Read(r)
	if err != nil {
		t.Fatal(err)
	}
	starts := map[uint64]float64{}
	for _, p := range a.Processes() {
		for _, m := range p.Methods {
			starts[m.MethodID] = float64(m.Start.Sub(a.Origin())) / float64(time.Millisecond)
		}
	}
	re := regexp.MustCompile(`MSec= *"([0-9.]+)".* EventName="Method/JittingStarted" MethodID="0x([0-9A-F]+)"`)
	checked := 0
	for _, line := range strings.Split(string(base), "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		want, _ := strconv.ParseFloat(m[1], 64)
		id, _ := strconv.ParseUint(m[2], 16, 64)
		got, ok := starts[id]
		if !ok || math.Abs(got-want) > 0.0005 {
			t.Errorf("method 0x%x: start %.4f ms (compiled: %v), TraceEvent's %s", id, got, ok, m[1])
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no Method/JittingStarted in the baseline")
	}
}
