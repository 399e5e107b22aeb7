// Package timeorder tells whether an event's timestamp can be right among
// its neighbours in a stream its writer wrote in time order: an ETW
// buffer, a .NET Core 2.x EventPipe trace. A garbled time (one flipped bit
// moves it by years) is out of order with the events around it; the
// format readers leave such an event out as damage, so that no layer above
// takes the span of what it read from it.
package timeorder

import "fmt"

// Window is an event's neighbours in the stream and the limits that apply.
type Window struct {
	Prev    int64 // the last event taken
	HasPrev bool
	// Next and After are the two events after this one, where the stream
	// has them in view.
	Next, After       int64
	HasNext, HasAfter bool
	// Tol is how far events may be out of order before a time counts as
	// garbled (a clock's jitter is no damage); MaxGap, where not 0, how
	// far two events may be apart at all (the session's length).
	Tol, MaxGap uint64
	// Lowest: a run of events earlier than this is never taken for the
	// right one (see Check).
	Lowest int64
}

// Verdict is what Check found.
type Verdict uint8

const (
	OK                Verdict = iota
	BeforePrev                // earlier than the event before by more than Tol
	FarAfterPrev              // later than the event before by more than MaxGap
	FarBeforeNext             // a first event, earlier than the next by more than MaxGap
	AfterNext                 // later than the next by more than Tol, the next in order
	TogetherAfterNext         // with the next, later than the one after, which is in order
)

// Check returns OK when the time ts can be right, or why it cannot:
//   - it precedes the event before by more than Tol, or follows it by more
//     than MaxGap;
//   - it follows the next event by more than Tol while the next is in
//     order with the event before (for a first event, with the one after
//     it): it moved forward, or the next moved back, and the next agrees;
//   - a first event, it precedes the next, in order with the one after, by
//     more than MaxGap;
//   - it and the next both follow the one after, which is in order with
//     the event before: the two moved forward together (the next is found
//     in its turn).
//
// When ts is out of order with the event before but the next two agree
// with it and not with that one, the event before (and a run before it)
// moved: ts is OK, and the stream goes on from it instead of losing every
// later event as "earlier than the event before". Not when ts is further
// from the event before than MaxGap, or earlier than Lowest: such a run is
// garbled itself (damage to compressed bytes repeats in the events that
// copy them). A first event with only one after it, when the two
// disagree, cannot be told from it: OK.
func (w *Window) Check(ts int64) Verdict {
	later := func(a, b int64) bool { return a > b && uint64(a)-uint64(b) > w.Tol }
	far := func(a, b int64) bool { return w.MaxGap > 0 && a > b && uint64(a)-uint64(b) > w.MaxGap }
	prev, n1, n2 := w.Prev, w.Next, w.After
	ok1, ok2 := w.HasNext, w.HasNext && w.HasAfter
	// fits: x can follow the event before.
	fits := func(x int64) bool { return !later(prev, x) && !far(x, prev) }
	if w.HasPrev && !fits(ts) {
		if ok1 && !later(ts, n1) && !fits(n1) && !(ok2 && fits(n2)) && !far(ts, prev) && !far(prev, ts) && ts >= w.Lowest {
			return OK // the event before moved
		}
		if later(prev, ts) {
			return BeforePrev
		}
		return FarAfterPrev
	}
	switch {
	case !ok1:
		return OK
	case !later(ts, n1):
		if !w.HasPrev && far(n1, ts) && ok2 && !later(n1, n2) {
			return FarBeforeNext
		}
		if w.HasPrev && ok2 && later(ts, n2) && later(n1, n2) && !later(prev, n2) {
			return TogetherAfterNext
		}
		return OK
	}
	// ts follows the next by more than Tol: ts moved forward, or n1 back.
	n1Fits := ok2 && !later(n1, n2)
	if w.HasPrev {
		n1Fits = !later(prev, n1)
	}
	if n1Fits {
		return AfterNext
	}
	return OK
}

// Why says what v found of the time, in words that follow "timestamp
// T": in names where the events are ("in its buffer", or "").
func (w *Window) Why(v Verdict, in string) string {
	switch v {
	case BeforePrev:
		return fmt.Sprintf("precedes the event before it%s (%d)", in, w.Prev)
	case FarAfterPrev:
		return fmt.Sprintf("follows the event before it%s (%d) by more than the session lasted", in, w.Prev)
	case FarBeforeNext:
		return fmt.Sprintf("precedes the event after it%s (%d) by more than the session lasted", in, w.Next)
	case AfterNext:
		return fmt.Sprintf("follows the event after it%s (%d)", in, w.Next)
	case TogetherAfterNext:
		return fmt.Sprintf("and the event after it follow the next%s (%d)", in, w.After)
	}
	return ""
}
