package timeorder

import "testing"

// TestCheck: each verdict, and the cases that stay OK, on a stream of
// times 100 apart with a tolerance of 10 and events at most 1000 apart.
func TestCheck(t *testing.T) {
	w := func(prev int64, hasPrev bool, next ...int64) Window {
		x := Window{Prev: prev, HasPrev: hasPrev, Tol: 10, MaxGap: 1000, Lowest: -1 << 62}
		if len(next) > 0 {
			x.Next, x.HasNext = next[0], true
		}
		if len(next) > 1 {
			x.After, x.HasAfter = next[1], true
		}
		return x
	}
	for _, c := range []struct {
		name string
		w    Window
		ts   int64
		want Verdict
	}{
		{"in order", w(100, true, 300, 400), 200, OK},
		{"jitter", w(100, true, 300, 400), 95, OK},
		{"moved back", w(100, true, 300, 400), 50, BeforePrev},
		{"moved far forward", w(100, true, 300, 400), 5000, FarAfterPrev},
		{"moved forward", w(100, true, 300, 400), 350, AfterNext},
		{"the next moved back", w(100, true, 50, 400), 200, OK},
		{"a first event moved forward", w(0, false, 300, 400), 350, AfterNext},
		{"a first event of two", w(0, false, 300), 350, OK},
		{"a first event far before the next", w(0, false, 3000, 3100), 100, FarBeforeNext},
		{"two moved forward together", w(100, true, 352, 300), 350, TogetherAfterNext},
		{"the event before moved forward", w(500, true, 300, 400), 200, OK},
		{"the event before moved, the one after agrees with it", w(500, true, 300, 600), 200, BeforePrev},
		{"a run far from the event before", w(100, true, 5100, 5200), 5000, FarAfterPrev},
		{"the last event", w(100, true), 350, OK},
	} {
		if got := c.w.Check(c.ts); got != c.want {
			t.Errorf("%s: %d → %d, want %d", c.name, c.ts, got, c.want)
		}
	}
	// A run before Lowest is never taken for the right one.
	x := w(500, true, 300, 400)
	x.Lowest = 250
	if got := x.Check(200); got != BeforePrev {
		t.Errorf("a run before Lowest: %d, want BeforePrev", got)
	}
	if x.Why(BeforePrev, " in its buffer") != "precedes the event before it in its buffer (500)" || x.Why(OK, "") != "" {
		t.Errorf("Why: %q", x.Why(BeforePrev, " in its buffer"))
	}
}
