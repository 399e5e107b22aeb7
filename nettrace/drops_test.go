package nettrace

import (
	"fmt"
	"testing"
)

// dropsTrace writes a V6 trace of 4 threads and 12 event blocks of 24
// events each, in compressed headers, in which the runtime dropped events:
// a thread's numbers jump in the middle of a block, at a block's start, in
// a thread's last event before a sequence point, at a sequence point, and
// in the last block, where no later number of the thread comes. It
// returns the trace and the events dropped. When shift is not 0, the
// numbers of the events of block sb from its event at on are moved by
// shift, as a garbled sequence delta moves them (each compressed header's
// number is a delta from the one before it, whatever its thread); the
// events dropped stay the same.
func dropsTrace(compress bool, sb, at int, shift int32) ([]byte, uint64) {
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 7, tid: 70}, wThread{index: 2, pid: 7, tid: 71},
		wThread{index: 3, pid: 7, tid: 72}, wThread{index: 4, pid: 7, tid: 73})
	w.metadata(wMeta{id: 1, provider: "P", eventID: 1, name: "E"})
	var seq [5]uint32
	var dropped uint64
	drop := func(th uint64, n uint32) {
		seq[th] += n
		dropped += uint64(n)
	}
	ts := int64(1000)
	for b := range 12 {
		if b == 6 {
			drop(3, 5) // seen only in the sequence point
			w.sequencePoint(ts, 0, 1, uint64(seq[1]), 2, uint64(seq[2]), 3, uint64(seq[3]), 4, uint64(seq[4]))
		}
		var evs []wEvent
		for i := range 24 {
			th := uint64(1 + (i/3+b)%4) // runs of 3, each block starting elsewhere
			switch {
			case b == 2 && i == 7, b == 9 && i == 0, b == 11 && i == 22:
				drop(th, 4) // mid-block, at a block's start, in the last block
			case b == 5 && i == 21:
				drop(th, 3) // the thread's last event before the sequence point
			}
			seq[th]++
			s := seq[th]
			if b == sb && i >= at {
				s += uint32(shift)
			}
			ts += 10
			evs = append(evs, wEvent{meta: 1, seq: s, thread: th, capThread: th, ts: ts, sorted: i == 23})
		}
		w.events(compress, evs...)
	}
	return w.end(), dropped
}

// TestDroppedGarbledNumbers: a gap in a thread's sequence numbers counts
// as the runtime's drops only once a later number of the thread settles
// it. Events the runtime dropped count, all of them, by the end; numbers
// that a garbled sequence delta moved (a header that damage garbled but
// that still parses, which the reader does not find as damage) do not:
// the thread's next numbers go back below them. They counted as drops,
// the move once for each thread seen after it in the block.
func TestDroppedGarbledNumbers(t *testing.T) {
	for _, compress := range []bool{true, false} {
		data, want := dropsTrace(compress, -1, 0, 0)
		for _, o := range []Order{FileOrder, TimeOrder} {
			if got, damage := readDropped(t, data, o); got != want || len(damage) > 0 {
				t.Errorf("compressed %v, %v: the runtime's drops: Dropped %d, want %d; damage %v", compress, o, got, want, damage)
			}
		}
		for _, c := range []struct {
			block, at int
			shift     int32
		}{{3, 5, 77}, {3, 5, -20}, {5, 10, 300}, {9, 0, 40}, {2, 8, 9}, {6, 23, 1000}} {
			what := fmt.Sprintf("compressed %v, block %d moved by %d from event %d", compress, c.block, c.shift, c.at)
			bad, _ := dropsTrace(compress, c.block, c.at, c.shift)
			for _, o := range []Order{FileOrder, TimeOrder} {
				if got, damage := readDropped(t, bad, o); got != want || len(damage) > 0 {
					t.Errorf("%s, %v: Dropped %d, want %d; damage %v", what, o, got, want, damage)
				}
			}
		}
	}
}

// TestDroppedUndetectedDamage writes over headers of the .NET Core 3.0
// trace (no drops) so that they still parse and the reader finds no
// damage. At 2,717,506 (4d ca 18 25) the event at 2,717,505 takes a
// number 86 above its thread's last, and the rest of its block moves up
// by 77: 86 + 3 × 77 = 317 events counted as dropped. At
// 961,073 one byte of a compressed header's sequence delta (0x81, as 0x13)
// moves numbers the same way: 4,575 counted. The
// threads' numbers in later blocks go back below the moved ones, which
// shows the gaps were not the runtime's: 9 and 11 are counted now.
// What is left is not a moved number: 9 of the 86 at 2,717,506 are not
// undone by the thread's later numbers (the garbled header's number is
// off by 9 more than the move), and events that the
// damage took without the reader finding it (0x13 loses 5) leave real
// gaps, which can only count as drops. The count stays within 16 events
// of the events missing. (As 0x7f, the byte made an event's payload
// swallow 312 events, undetected, until the reader checked stack IDs: a
// header after it refers to a stack no block defined, and the damage is
// found.)
func TestDroppedUndetectedDamage(t *testing.T) {
	data := loadTrace(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	_, whole, _ := readToEnd(data, FileOrder)
	if whole != 105540 || data[961073] != 0x81 {
		t.Fatalf("the intact trace: %d events, byte %#x at 961073", whole, data[961073])
	}
	for _, c := range []struct {
		p      patch
		before uint64 // Dropped before the gaps waited for a later number
	}{
		{patch{2717506, [4]byte{0x4d, 0xca, 0x18, 0x25}}, 317},
		{patch{961070, [4]byte{0x01, 0x03, 0x00, 0x13}}, 4575},
	} {
		bad := patched(data, c.p)
		for _, o := range []Order{FileOrder, TimeOrder} {
			r, n, _ := readToEnd(bad, o)
			if len(r.Damage()) > 0 {
				t.Errorf("%v, %v: damage found (%v); the test needs damage that is not", c.p, o, r.Damage())
				continue
			}
			missing := uint64(whole - n)
			if got := r.Dropped(); got > missing+16 {
				t.Errorf("%v, %v: Dropped %d (was %d), %d events missing", c.p, o, got, c.before, missing)
			}
		}
	}
}
