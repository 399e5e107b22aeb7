package gcstats_test

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOriginIsTraceStart: Read counts times from the trace's start (an
// EventPipe trace's sync time), as PerfView's GCStats and TraceEvent's
// relative times do, not from the first event, which comes 17.886 ms
// later in the 3.0 trace (seconds later in a quiet session's): each GC's
// start is TraceEvent's GC/Start time (its baseline's dump of the event).
func TestOriginIsTraceStart(t *testing.T) {
	const path = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"
	base, err := os.ReadFile(path + ".baseline.txt")
	if err != nil {
		t.Fatal(err)
	}
	a := analyze(t, path+".zip")
	ps := a.Processes()
	if len(ps) != 1 {
		t.Fatalf("%d processes, want 1", len(ps))
	}
	re := regexp.MustCompile(`MSec= *"([0-9.]+)".* EventName="GC/Start" Count="([0-9]+)"`)
	checked := 0
	for _, line := range strings.Split(string(base), "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		want, _ := strconv.ParseFloat(m[1], 64)
		n, _ := strconv.Atoi(m[2])
		if n < 1 || n > len(ps[0].GCs) {
			t.Fatalf("GC %d of %d: %s", n, len(ps[0].GCs), line)
		}
		gc := ps[0].GCs[n-1]
		if got := float64(gc.Start.Sub(a.Origin())) / float64(time.Millisecond); math.Abs(got-want) > 0.0005 {
			t.Errorf("GC %d starts at %.4f ms, TraceEvent's at %s", n, got, m[1])
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no GC/Start in the baseline")
	}
}
