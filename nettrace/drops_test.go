package nettrace

import (
	"bytes"
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
// trace (no drops) so that they still parse.
//
// A garbled sequence delta of a header whose capture thread the trace
// knows moves the numbers of the rest of its block (each compressed
// header's number is a delta from the one before it, whatever its
// thread): the reader cannot tell, but the threads' numbers in later
// blocks go back below the moved ones, which shows the gaps were not the
// runtime's, so none counts as dropped. 5 added to the delta of every
// 997th event's header (where it states one in a byte) leaves every event
// in and Dropped 0.
//
// At 2,717,506 (4d ca 18 25) and at 961,073 (one byte of a sequence
// delta, 0x81 as 0x13) the damage once went unfound too: the numbers
// moved, and 317 and 4,575 events counted as dropped before the gaps
// waited for a later number, 9 and 11 after. Both make the next header
// that states a thread of its own name one never seen, numbered a delta
// above the event before it: damage now (dropCounter.stray), found, and
// no event counted as dropped.
func TestDroppedUndetectedDamage(t *testing.T) {
	data := loadTrace(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	r, whole, _ := readToEnd(data, FileOrder)
	if whole != 105540 || data[961073] != 0x81 || r.Dropped() != 0 {
		t.Fatalf("the intact trace: %d events, byte %#x at 961073, Dropped %d", whole, data[961073], r.Dropped())
	}
	var offs []int64
	rd := mustReader(t, bytes.NewReader(data))
	for {
		e, err := rd.Next()
		if err != nil {
			break
		}
		offs = append(offs, e.Offset)
	}
	moved := 0
	for i := 100; i < len(offs); i += 997 {
		at := int(offs[i])
		f := data[at]
		if f&2 == 0 { // no sequence delta
			continue
		}
		p := at + 1
		if f&1 != 0 { // the metadata ID's varint first
			for data[p]&0x80 != 0 {
				p++
			}
			p++
		}
		if data[p] >= 0x7b { // not a one-byte varint after adding 5
			continue
		}
		moved++
		bad := bytes.Clone(data)
		bad[p] += 5
		for _, o := range []Order{FileOrder, TimeOrder} {
			r, n, _ := readToEnd(bad, o)
			if len(r.Damage()) > 0 || n != whole || r.Dropped() != 0 {
				t.Errorf("delta at %d moved by 5, %v: %d events of %d, Dropped %d, damage %v", p, o, n, whole, r.Dropped(), r.Damage())
			}
		}
	}
	if moved < 10 {
		t.Errorf("%d deltas moved; the test needs more", moved)
	}
	for _, p := range []patch{
		{2717506, [4]byte{0x4d, 0xca, 0x18, 0x25}},
		{961070, [4]byte{0x01, 0x03, 0x00, 0x13}},
	} {
		if !checkLost(t, fmt.Sprint(p), data, whole, []patch{p}, 16, true) {
			t.Errorf("%v: no damage found", p)
		}
		for _, o := range []Order{FileOrder, TimeOrder} {
			if r, _, _ := readToEnd(patched(data, p), o); r.Dropped() != 0 {
				t.Errorf("%v, %v: Dropped %d", p, o, r.Dropped())
			}
		}
	}
}
