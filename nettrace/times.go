package nettrace

import (
	"encoding/binary"
	"fmt"
)

// The timestamp checks beyond a block's stated range: the session's start
// (all versions) and, in V1–V3, the order of the events.

// sessionFloor sets floor from the trace header's sync time: a
// millisecond of its clock before it (none, 0, when the header states no
// frequency).
func (r *Reader) sessionFloor() {
	r.floor, r.floorOK = 0, false
	f, t0 := r.info.QPCFrequency, r.info.SyncTimeQPC
	if f > 0 && t0 > 0 {
		r.floor = t0 - min(max(f/1000, 1), t0)
	}
}

// checkTimeV3 checks the timestamp of the V1–V3 event record just decoded
// (r.hdr), which ends at end, and returns an error (a lost record) when it
// cannot be right. The runtimes that wrote these formats (.NET Core 2.0
// and 2.1) wrote every event in time order, whatever its thread (the
// repository's traces, 298,000 events, hold none earlier than the one
// before it), so an event is out of place when it precedes the event
// before it by more than a millisecond of the trace's clock, or follows
// the next by as much while that one is in order with the one before (for
// the trace's first event, with the one after it), or precedes the
// session's start once an event confirmed that start (this one's next
// will do). Two events in a row moved forward together are both left out
// (the one after them shows it); when an event and the next two agree
// with each other and not with the event before, that one (a longer run)
// moved, and the trace goes on from them instead of losing the rest one
// by one. Such a time is garbled (one flipped bit in a 2.0 trace's copy
// gave it a span of 187 years) and, kept, stretches the span of
// everything read.
func (r *Reader) checkTimeV3(start, end int) error {
	ts, f := r.hdr.ts, r.info.QPCFrequency
	if f <= 0 {
		return nil
	}
	tol := uint64(max(f/1000, 1)) // a millisecond
	// later reports whether a is later than b by more than tol.
	later := func(a, b int64) bool { return a > b && uint64(a)-uint64(b) > tol }
	prev, hasPrev := r.prevTS, r.hasPrevTS
	n1, size1, ok1 := r.peekTimeV3(end, 0)
	var n2 int64
	ok2 := false
	if ok1 {
		n2, _, ok2 = r.peekTimeV3(end, size1)
	}
	why := ""
	switch {
	case r.floor > 0 && ts < r.floor && (r.floorOK || ok1 && n1 >= r.floor):
		why = fmt.Sprintf("precedes the session's start (%d)", r.info.SyncTimeQPC)
	case hasPrev && later(prev, ts):
		if ok1 && !later(ts, n1) && later(prev, n1) && !(ok2 && !later(prev, n2)) {
			// The next events agree with this one, not with the event
			// before: that one (and a run before it) moved forward, and
			// the trace goes on from this one.
			break
		}
		why = fmt.Sprintf("precedes the event before it (%d)", prev)
	case !ok1:
	case later(ts, n1):
		// ts was garbled forward, or n1 back.
		if hasPrev && !later(prev, n1) || !hasPrev && ok2 && !later(n1, n2) {
			why = fmt.Sprintf("follows the event after it (%d)", n1)
		}
	case hasPrev && ok2 && later(ts, n2) && later(n1, n2) && !later(prev, n2):
		// This event and the next both follow the one after, which is in
		// order with the one before: the two moved forward together (the
		// next is left out in its turn).
		why = fmt.Sprintf("and the event after it follow the next (%d)", n2)
	}
	if why != "" {
		return as(classRecord, r.errf(ErrFormat, "event", r.blkOff+int64(start), "timestamp %d %s: garbled", ts, why))
	}
	r.prevTS, r.hasPrevTS = ts, true
	if !r.floorOK && r.floor > 0 && ts >= r.floor {
		r.floorOK = true
	}
	return nil
}

// peekTimeV3 returns the timestamp of the V1–V3 event record skip bytes
// after the one at end (in the block, or for V1/V2, whose records are
// blocks of their own, in the stream), and the record's size; ok is false
// when there is none to read (the block or input ends, a metadata record).
func (r *Reader) peekTimeV3(end, skip int) (ts int64, size int, ok bool) {
	var b []byte
	if r.ver == 3 {
		if end+skip > len(r.blk) {
			return 0, 0, false
		}
		b = r.blk[end+skip:]
	} else {
		b, _ = r.s.peek(min(skip+24, 4096))
		if len(b) < skip {
			return 0, 0, false
		}
		b = b[skip:]
	}
	if len(b) < 20 || binary.LittleEndian.Uint32(b[4:]) == 0 {
		return 0, 0, false
	}
	size = int(binary.LittleEndian.Uint32(b)) + 4
	return int64(binary.LittleEndian.Uint64(b[12:])), size, size >= 56
}
