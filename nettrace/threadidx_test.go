package nettrace

import (
	"bytes"
	"strings"
	"testing"
)

// TestV6ThreadIndexes: events find their V6 threads (and capture threads)
// by index, small and large (above the indexes kept in a slice), as the
// thread blocks define, redefine and remove them and sequence points
// flush them, in both orders.
func TestV6ThreadIndexes(t *testing.T) {
	w := newV6Writer(8, 0, kv{"ProcessId", "1234"})
	w.metadata(wMeta{id: 1, provider: rt, eventID: 85, opt: optVersion(0)})
	w.threads(wThread{index: 2, pid: 1234, tid: 20}, wThread{index: 5000, pid: 1234, tid: 50}, wThread{index: 3, pid: 1234, tid: 30})
	w.events(true,
		wEvent{meta: 1, seq: 1, thread: 2, capThread: 5000, ts: 10},
		wEvent{meta: 1, seq: 1, thread: 5000, capThread: 3, ts: 20},
		wEvent{meta: 1, seq: 2, thread: 3, capThread: 3, ts: 30},
	)
	w.threads(wThread{index: 2, pid: 1234, tid: 21}) // redefined
	w.removeThreads(3, 2)
	w.events(true,
		wEvent{meta: 1, seq: 2, thread: 2, capThread: 5000, ts: 40},
		wEvent{meta: 1, seq: 3, thread: 3, capThread: 5000, ts: 50}, // removed: undefined
	)
	w.sequencePoint(60, 1, 5000, 3) // flushes the thread table
	w.threads(wThread{index: 5000, pid: 1234, tid: 51}, wThread{index: 4, pid: 1234, tid: 40})
	w.events(true,
		wEvent{meta: 1, seq: 1, thread: 5000, capThread: 4, ts: 70},
		wEvent{meta: 1, seq: 2, thread: 2, capThread: 4, ts: 80}, // flushed: undefined
		wEvent{meta: 1, seq: 3, thread: 4, capThread: 4, ts: 90},
	)
	data := w.end()
	type got struct{ tid, capture uint64 }
	want := []got{{20, 50}, {50, 30}, {30, 30}, {21, 50}, {51, 40}, {40, 40}}
	for _, o := range []Order{FileOrder, TimeOrder} {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SetOrder(o)
		var have []got
		var end error
		for {
			ev, err := r.Next()
			if err != nil {
				end = err
				break
			}
			have = append(have, got{ev.ThreadID, ev.CaptureThreadID})
		}
		if len(have) != len(want) {
			t.Fatalf("%v: threads %v, want %v", o, have, want)
		}
		for i := range want {
			if have[i] != want[i] {
				t.Errorf("%v: event %d: thread %d, capture thread %d; want %d, %d", o, i, have[i].tid, have[i].capture, want[i].tid, want[i].capture)
			}
		}
		// The two events of threads not defined when they came are
		// skipped, and counted as lost.
		lost := int64(0)
		for _, d := range r.Damage() {
			lost += d.Events
		}
		if lost != 2 || !damageNames(r, "thread index 3") {
			t.Errorf("%v: ended with %v, damage %v; want the 2 events of undefined threads lost", o, end, r.Damage())
		}
	}
}

// damageNames reports whether one of r's damages names ref.
func damageNames(r *Reader, ref string) bool {
	for _, d := range r.Damage() {
		if strings.Contains(d.Err.Error(), ref) {
			return true
		}
	}
	return false
}
