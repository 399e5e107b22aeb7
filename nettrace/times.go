package nettrace

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/clrgo/clrevents/internal/timeorder"
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
// before it), so an event is out of place when it precedes the session's
// start once an event confirmed that start (this one's next will do), or
// is out of order with the events around it by more than a millisecond of
// the trace's clock (timeorder.Window.Check; the trace states no length).
// Such a time is garbled (one flipped bit in a 2.0 trace's copy gave it a
// span of 187 years) and, kept, stretches the span of everything read.
func (r *Reader) checkTimeV3(start, end int) error {
	ts, f := r.hdr.ts, r.info.QPCFrequency
	if f <= 0 {
		return nil
	}
	w := timeorder.Window{Prev: r.prevTS, HasPrev: r.hasPrevTS, Tol: uint64(max(f/1000, 1)), Lowest: math.MinInt64} // a millisecond
	var size1 int
	if w.Next, size1, w.HasNext = r.peekTimeV3(end, 0); w.HasNext {
		w.After, _, w.HasAfter = r.peekTimeV3(end, size1)
	}
	why := ""
	if r.floor > 0 && ts < r.floor && (r.floorOK || w.HasNext && w.Next >= r.floor) {
		why = fmt.Sprintf("precedes the session's start (%d)", r.info.SyncTimeQPC)
	} else {
		why = w.Why(w.Check(ts), "")
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
