package gcstats

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readableTime is a tick label: seconds with decimals, m:ss or h:mm:ss.
var readableTime = regexp.MustCompile(`^(\d+(\.\d+)? s|\d+:[0-5]\d(\.\d+)?|\d+:[0-5]\d:[0-5]\d(\.\d+)?)$`)

// secondsOf reads a tick label back.
func secondsOf(label string) (float64, bool) {
	v := 0.0
	for _, part := range strings.Split(strings.TrimSuffix(label, " s"), ":") {
		f, err := strconv.ParseFloat(part, 64)
		if err != nil {
			return 0, false
		}
		v = v*60 + f
	}
	return v, true
}

// TestTimeTicks: from a millisecond to days, starting anywhere from the
// trace's start to a day into it, an axis has 3 to 9 ticks inside it,
// whose labels are short, readable, distinct times that read back as the
// tick's time.
func TestTimeTicks(t *testing.T) {
	spans := []float64{1e-3, 1.5e-3, 7e-3, 0.05, 0.3, 1, 2.5, 13, 59, 61, 200, 1000, 3599, 3601, 7300, 5 * 3600, 26 * 3600, 4 * 86400}
	offsets := []float64{0, 0.0004, 11.6074, 59.99, 123.4, 3599.9995, 3 * 3600, 86400 + 0.123}
	for _, span := range spans {
		for _, off := range offsets {
			x0, x1 := off, off+span
			ticks, unit := timeTicks(x0, x1)
			if len(ticks) < 3 || len(ticks) > 9 {
				t.Errorf("[%g, %g]: %d ticks", x0, x1, len(ticks))
			}
			seen := map[string]bool{}
			for i, tk := range ticks {
				if tk.v < x0-span*1e-9 || tk.v > x1+span*1e-9 {
					t.Errorf("[%g, %g]: tick %g outside", x0, x1, tk.v)
				}
				if seen[tk.label] {
					t.Errorf("[%g, %g]: label %q twice", x0, x1, tk.label)
				}
				seen[tk.label] = true
				if !readableTime.MatchString(tk.label) || len(tk.label) > 14 {
					t.Errorf("[%g, %g] (%s): label %q not a readable time", x0, x1, unit, tk.label)
				}
				v, ok := secondsOf(tk.label)
				if step := ticks[min(1, len(ticks)-1)].v - ticks[0].v; !ok || math.Abs(v-tk.v) > step/100 {
					t.Errorf("[%g, %g]: label %q reads %g, tick %g", x0, x1, tk.label, v, tk.v)
				}
				if i > 0 && tk.v <= ticks[i-1].v {
					t.Errorf("[%g, %g]: ticks out of order", x0, x1)
				}
			}
		}
	}
}

// TestTimeTicksShortTrace: the 1.5 ms of gcevents.etl's GCs, 11.6 s into
// the trace, had five labels reading "11.61 s"; they are now distinct
// and the axis's round steps.
func TestTimeTicksShortTrace(t *testing.T) {
	ticks, _ := timeTicks(11.6073, 11.6088)
	var labels []string
	for _, tk := range ticks {
		labels = append(labels, tk.label)
	}
	if got := strings.Join(labels, ", "); got != "11.6074 s, 11.6076 s, 11.6078 s, 11.6080 s, 11.6082 s, 11.6084 s, 11.6086 s, 11.6088 s" {
		t.Errorf("labels %s", got)
	}
	ticks, unit := timeTicks(0, 5*3600)
	if unit != "h:mm:ss" || ticks[0].label != "0:00:00" || ticks[1].label != "1:00:00" || ticks[len(ticks)-1].label != "5:00:00" {
		t.Errorf("5 hours: %s, %v", unit, ticks)
	}
}

// TestValueTicks: a value axis from 0 covers the top with round,
// distinct labels.
func TestValueTicks(t *testing.T) {
	for _, top := range []float64{0, 1e-4, 0.0123, 0.787, 1, 3.734, 20.865, 48.096, 999, 12345.6, math.Inf(1), math.NaN()} {
		ticks := valueTicks(top)
		if len(ticks) < 2 || len(ticks) > 5 || ticks[0].v != 0 || ticks[len(ticks)-1].v < top && !math.IsInf(top, 1) {
			t.Errorf("top %g: ticks %v", top, ticks)
		}
		seen := map[string]bool{}
		for _, tk := range ticks {
			if seen[tk.label] {
				t.Errorf("top %g: label %q twice in %v", top, tk.label, ticks)
			}
			seen[tk.label] = true
		}
	}
}
