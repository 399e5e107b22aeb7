package nettrace

import "slices"

// dropCounter counts the events a runtime dropped, from the per-thread
// sequence numbers (NetTrace V4 and later): each capture thread numbers
// its events 1, 2, 3, …, counting the ones it had to drop, and each
// sequence point records every thread's latest number. A gap between two
// events of a thread, or between a thread's last event and the number a
// sequence point records, is that many dropped events. As TraceEvent does,
// a thread before V6 whose last number was 0 is taken to be a recycled
// thread ID, not a gap.
//
// Damage the reader skipped also leaves gaps: the events of a skipped
// block. Each damage starts a new epoch, and a thread remembers the epoch
// of its last event; the first gap of a thread last seen before the
// latest damage is that damage's lost events (lost), not the runtime's
// drops. An event's gap counts only once a later number of its thread
// confirms it (see lostGaps).
//
// A gap that is the runtime's drops, too, counts only once the thread's
// next number after the block that showed it settles it (settle): its
// next event in a later event block, a sequence point's or thread
// removal's number for it, or else the trace's end. Damage the reader
// does not find (a header garbled so that it still parses) moves numbers,
// and the thread's next numbers undo the move.
//
// Events of one thread come in runs, so the current thread's number is
// kept outside the map and the map is touched only when the thread
// changes.
type dropCounter struct {
	seqs     map[uint64]threadSeq // capture thread → its last number
	cur      uint64
	curSeq   uint32
	curEpoch uint32
	curPend  int32  // the current thread's threadSeq.pend
	curBlk   uint32 // and its threadSeq.blk
	have     bool   // cur and curSeq hold a thread
	dropped  uint64
	// blk numbers the event blocks and the blocks that hold (sequence
	// points, thread removals), from 1: the latest one read.
	blk uint32
	v6  bool
	// blockStart is dropped as the current event block began; tainted:
	// damage was found in the block, which takes its drops back
	// (Reader.untaint).
	blockStart uint64
	tainted    bool
	// holding: the gaps counted since held, by the block at holdAt (a
	// sequence point, a thread removal), wait for the block after it:
	// damage found at that block's start often began a few bytes sooner,
	// in the numbers just read. The block's own gaps are pended with
	// blk holdBlk; pointGaps are those of them that forget counted.
	holding   bool
	held      uint64
	holdAt    int64
	holdBlk   uint32
	pointGaps uint64

	// moved: a block read since the last sequence point was moved
	// (Reader.movedBlock), so a thread's numbers that go back, to 1
	// too, are its blocks out of order, not a recycled thread ID: its
	// next gap is the way back (settle).
	moved bool

	epoch uint32 // how many damages so far
	// pointEpoch is epoch as the last sequence point (V4, V5) ended:
	// every thread seen by then, or listed there, is in seqs.
	pointEpoch uint32
	// lost takes the events gaps show lost to damage; nil until the
	// first damage.
	lost *lostGaps
}

// threadSeq is a thread's last sequence number and the epoch it was seen
// in, and what its numbers in event block blk left to settle (see
// settle): pend > 0 is the events its gaps there showed dropped, held;
// pend < 0, that its numbers went back by -pend there.
type threadSeq struct {
	seq, epoch uint32
	pend       int32
	blk        uint32
}

// next reports whether seq is the next number of the current thread th,
// the usual case, which the readers' loops check inline (a call would
// not be inlined) before calling event.
func (d *dropCounter) next(th uint64, seq uint32) bool {
	return th == d.cur && seq-d.curSeq == 1 && d.have
}

// event notes an event of capture thread th with sequence number seq.
//
// A thread first seen after damage (before V6, which declares threads)
// whose first number is above 1 had its first events in the damage: a
// session numbers each thread's events from 1, and a thread of events
// before the damage, or one a sequence point listed, would have been seen.
func (d *dropCounter) event(th uint64, seq uint32) {
	if d.lost != nil && len(d.lost.pending) > 0 {
		d.lost.confirm(th, seq, false)
	}
	if !d.have || th != d.cur {
		if d.epoch > 0 && !d.v6 && int32(seq-1) > 0 && d.lost != nil {
			if _, seen := d.seqs[th]; !seen {
				d.lost.add(th, seq, int64(seq-1))
			}
		}
		d.switchTo(th, seq-1)
	}
	if d.curPend != 0 && d.curBlk != d.blk {
		d.settle(seq - 1)
	} else if b := int32(d.curSeq - (seq - 1)); b > 0 && int32(d.curSeq) > 0 && (d.v6 || seq != 1 || d.moved) {
		// The numbers went back (before V6, back to 1 is a recycled
		// thread ID, unless a block was moved).
		d.pend(-b)
	}
	if n := d.gap(d.curSeq, seq-1); n > 0 {
		d.lost.add(th, seq, n)
	}
	d.curSeq = seq
}

// stray reports whether an event of capture thread th numbered seq, in
// a block of compressed headers (before V6), is one a garbled header made
// up: a thread not seen before, no damage found since the last sequence
// point, whose first number is not 1 but the number of the event before
// it (whatever its thread) plus less than strayDelta. (Reader.eventNumber
// says what is made of it; a block's first header states its number in
// full, where the delta says nothing, and is taken only when its number
// is a known thread's next.)
//
// A session numbers each thread's events from 1 (a thread whose first
// events the runtime dropped starts higher, but by the events it
// dropped, not by another thread's count), and a compressed header
// states its number as a delta from the header before it. A header that
// damage garbled but that still parses (a flipped capture thread byte, or
// a flags byte whose bits make it read its fields from other bytes)
// hands its later headers a thread, a sequence number and a time they
// inherit, and the first header after it that states a thread of its own
// most often states one of the bytes' making (0, 1, 26), with a number a
// byte or two of delta above the one before (three bytes at most): on
// the .NET Core 3.0 trace, one flipped byte so made up to 1,116 events
// with other threads, numbers and times, no check tripped, and their
// gaps counted 1,259 events as the runtime's drops. Each of the
// repository's and the shared traces numbers every capture thread from 1.
//
// After damage, a thread whose first events were in the damage is seen
// first with its number as it stands (event), so the check stops there
// until the next sequence point, which lists every thread of the
// session with its number (pointEpoch).
func (d *dropCounter) stray(th uint64, seq uint32) bool {
	if d.v6 || d.epoch != d.pointEpoch || !d.have || th == d.cur || seq == 1 || seq-d.curSeq-1 >= strayDelta {
		return false
	}
	_, seen := d.seqs[th]
	return !seen
}

// nextOf returns the one thread seen whose last number is seq-1, the
// current one first: the thread an event numbered seq, whose capture
// thread field damage changed, is (stray). It reports false when no
// thread's, or more than one's, is.
func (d *dropCounter) nextOf(seq uint32) (uint64, bool) {
	if d.have && seq-d.curSeq == 1 {
		for th, s := range d.seqs {
			if th != d.cur && seq-s.seq == 1 {
				return 0, false
			}
		}
		return d.cur, true
	}
	var found uint64
	n := 0
	for th, s := range d.seqs {
		if seq-s.seq == 1 && (!d.have || th != d.cur) {
			found, n = th, n+1
		}
	}
	return found, n == 1
}

// strayDelta bounds the delta of a thread stray takes for made up: what
// three bytes of varint hold.
const strayDelta = 1 << 21

// skipped notes an event the reader skipped as it came (its metadata not
// defined) and reports whether its damage record counts it: when its
// number is the next of its thread's (or the thread is new), the thread
// takes it, so that the gap it would leave does not count it again. Any
// other number, most likely that of damaged bytes read as a record, is
// left out; a real event left out is counted only by a gap its thread
// shows after the block (in the block, whose drops untaint takes back,
// not at all).
func (d *dropCounter) skipped(th uint64, seq uint32) bool {
	if last, ok := d.last(th); ok && seq-last != 1 {
		return false
	}
	// The thread's next event, or its first (as event would take it).
	d.switchTo(th, seq-1)
	d.curSeq = seq
	return true
}

// last returns capture thread th's last sequence number, and whether the
// thread was seen (or declared) since it was last forgotten.
func (d *dropCounter) last(th uint64) (uint32, bool) {
	if d.have && th == d.cur {
		return d.curSeq, true
	}
	s, ok := d.seqs[th]
	return s.seq, ok
}

// fits reports whether seq is the next number of capture thread th, or
// 1 for a thread not seen (or declared and not seen): what an event of
// the thread brings next, when none was dropped.
func (d *dropCounter) fits(th uint64, seq uint32) bool {
	last, _ := d.last(th) // 0 for a thread not seen
	return seq-last == 1
}

// hold makes the gaps counted from before on, by the block at at, wait
// for the block after it (release, or revert when damage is found
// there); a block held after another keeps the first one's count.
func (d *dropCounter) hold(at int64, before uint64) {
	if !d.holding {
		d.held, d.pointGaps = before, 0
	}
	d.blk++
	d.holding, d.holdAt, d.holdBlk = true, at, d.blk
}

// release counts the held gaps: the block after the one that held them
// (at, not holdAt) was read.
func (d *dropCounter) release(at int64) {
	if d.holding && at != d.holdAt {
		d.holding = false
	}
}

// revert takes the held gaps back: damage was found just after them.
func (d *dropCounter) revert() {
	if d.holding {
		d.dropped -= d.pointGaps
		d.unhold(d.holdBlk)
		d.holding = false
	}
}

// checkpoint notes a sequence point's number for thread th.
//
// A thread it names that no event showed, after damage (before V6, which
// declares threads), had its events up to seq in the damage, as event
// takes a thread's first number after damage: a session numbers each
// thread's events from 1.
func (d *dropCounter) checkpoint(th uint64, seq uint32) {
	if d.lost != nil && len(d.lost.pending) > 0 {
		d.lost.confirm(th, seq, true)
	}
	if d.lost != nil && d.epoch > 0 && !d.v6 && int32(seq) > 0 && (!d.have || th != d.cur) {
		if _, seen := d.seqs[th]; !seen {
			d.lost.count(d.lost.r.lostTo, int64(seq))
		}
	}
	d.switchTo(th, seq)
	if d.curPend != 0 && d.curBlk != d.blk || int32(seq-d.curSeq) < 0 {
		d.settle(seq)
	}
	if n := d.gap(d.curSeq, seq); n > 0 {
		d.lost.count(d.lost.r.lostTo, n)
	}
	d.curSeq = seq
}

// settle settles what the current thread's numbers in an earlier block
// left (curPend) on its next number, in a later block or a sequence
// point: expected is what that number says the thread's last one was (an
// event's number less 1, a sequence point's number).
//
// A gap the runtime left is followed by numbers that go on from the one
// that ended it. Numbers that a garbled header moved (in compressed
// headers each number is a delta from the header before it, whatever its
// thread, so a garbled delta moves every later number of its block; the
// reader finds no damage when the header still parses) show a gap at each
// thread's first event after it, or the numbers going back; the thread's
// next number, in a later block, is its real one, which undoes the move.
// So held gaps count less what the numbers then go back by, and a thread
// whose numbers went back has its next gap taken as the way back, up to
// as much.
func (d *dropCounter) settle(expected uint32) {
	p := d.curPend
	d.curPend = 0
	if int32(expected) < 0 || int32(d.curSeq) < 0 {
		// (A number of 2^31 or more is no thread's; see gap.)
		d.dropped += uint64(max(p, 0))
		return
	}
	j := int32(expected - d.curSeq)
	switch {
	case p > 0 && j < 0:
		if p += j; p < 0 {
			d.pend(p) // it went back by more
			return
		}
		d.dropped += uint64(p)
	case p > 0:
		d.dropped += uint64(p)
	case p < 0 && j > 0:
		d.curSeq += uint32(min(j, -p))
	case j < 0:
		d.pend(j)
	}
}

// pend adds n to the current thread's curPend, in the current block: a
// gap held (n > 0), or numbers gone back (n < 0).
func (d *dropCounter) pend(n int32) {
	d.curPend = int32(max(min(int64(d.curPend)+int64(n), 1<<31-1), -1<<31))
	d.curBlk = d.blk
}

// unhold discards what the numbers of block blk left to settle: damage
// was found in it, or just after it, and its numbers may be part of the
// damage.
func (d *dropCounter) unhold(blk uint32) {
	if d.have && d.curBlk == blk {
		d.curPend = 0
	}
	for th, s := range d.seqs {
		if s.pend != 0 && s.blk == blk {
			s.pend = 0
			d.seqs[th] = s
		}
	}
}

// flush counts every held gap: no later number will come to settle it
// (the trace's end, or a V6 sequence point that flushes the threads).
func (d *dropCounter) flush() {
	if d.have {
		d.count(d.curPend, d.curBlk)
		d.curPend = 0
	}
	for th, s := range d.seqs {
		if s.pend != 0 {
			d.count(s.pend, s.blk)
			s.pend = 0
			d.seqs[th] = s
		}
	}
}

// count counts a thread's held gaps, pend from block blk, unsettled.
func (d *dropCounter) count(pend int32, blk uint32) {
	if pend > 0 {
		d.dropped += uint64(pend)
		if d.holding && blk == d.holdBlk {
			d.pointGaps += uint64(pend)
		}
	}
}

// damaged starts a new epoch: gaps that follow, of threads not seen since,
// are events the damage lost. The current thread is put back in the map,
// so that its next event goes through switchTo and sees the new epoch.
func (d *dropCounter) damaged() {
	d.epoch++
	d.park()
}

// park puts the current thread back in the map, so that its next event
// goes through switchTo (and event) instead of the readers' inline check.
func (d *dropCounter) park() {
	if d.have {
		if d.seqs == nil {
			d.seqs = make(map[uint64]threadSeq)
		}
		d.seqs[d.cur] = threadSeq{d.curSeq, d.curEpoch, d.curPend, d.curBlk}
		d.have = false
	}
}

// declare notes a V6 thread a ThreadBlock defines: its sequence numbers
// start at 1 from here, so its first event's number less 1 is the events
// dropped (or lost to damage since) before it, as TraceEvent counts them.
// A thread defined again keeps its numbers.
func (d *dropCounter) declare(th uint64) {
	if _, ok := d.last(th); ok {
		return
	}
	if d.seqs == nil {
		d.seqs = make(map[uint64]threadSeq)
	}
	d.seqs[th] = threadSeq{seq: 0, epoch: d.epoch}
}

// forget drops every thread (a V6 sequence point that flushes the thread
// table) or one (a RemoveThread entry, after its checkpoint).
// Their held gaps count: no later number of theirs will settle them.
func (d *dropCounter) forget(th uint64, all bool) {
	if all {
		d.flush()
	} else if d.have && th == d.cur {
		d.count(d.curPend, d.curBlk)
	} else if s, ok := d.seqs[th]; ok {
		d.count(s.pend, s.blk)
	}
	if d.have && (all || th == d.cur) {
		d.have = false
	}
	if all {
		clear(d.seqs)
	} else {
		delete(d.seqs, th)
	}
}

func (d *dropCounter) switchTo(th uint64, ifNew uint32) {
	if d.have {
		if th == d.cur {
			return // (putting it in the map and taking it out changes nothing)
		}
		if d.seqs == nil {
			d.seqs = make(map[uint64]threadSeq)
		}
		d.seqs[d.cur] = threadSeq{d.curSeq, d.curEpoch, d.curPend, d.curBlk}
	}
	s, ok := d.seqs[th]
	if !ok {
		s = threadSeq{seq: ifNew, epoch: d.epoch}
	}
	d.cur, d.curSeq, d.curEpoch, d.curPend, d.curBlk, d.have = th, s.seq, s.epoch, s.pend, s.blk, true
}

// gap holds the numbers between last and expected as dropped, until the
// thread's next number in a later block settles them (settle), or, when
// the thread was last seen before the latest damage, returns them: events
// lost to damage, which the caller gives to lost.
func (d *dropCounter) gap(last, expected uint32) int64 {
	stale := d.curEpoch != d.epoch
	d.curEpoch = d.epoch
	if !d.v6 && last == 0 || int32(last) < 0 {
		// (A number of 2^31 or more is no thread's: a header that
		// damage garbled, read before the damage was found, set it.)
		return 0
	}
	if n := int32(expected - last); n > 0 {
		if stale && d.lost != nil {
			return int64(n)
		}
		d.pend(n)
	}
	return 0
}

// lostGaps counts the events that gaps in the sequence numbers show lost
// to damage, in the damage records.
//
// A gap a sequence point shows counts at once. A gap an event shows is
// held until a later number of its thread confirms the event's: a number
// above it in a later block, or one at least as high in a sequence point.
// A number below it, or none by the trace's end, and the gap does not
// count. Damage that a header survives with a garbled capture thread or
// sequence number (in compressed headers, each header's number is a delta
// from the one before it, whatever its thread, so a garbled delta moves
// every later number of the block) makes a gap the runtime never left,
// of any size: a thread ID no thread has, first seen after damage, would
// count its whole inherited number as lost (44,086 events, for a 4-byte
// patch of the .NET Core 3.0 trace read after another, where 5,309 events
// were missing in all), and a moved number shows its move. Such numbers
// are not confirmed: the garbled thread is not seen again, and the real
// numbers of a moved thread that come next are below the moved ones. The gaps of an event block in which damage is
// found are not counted at all (drop), as its drops are not: its numbers
// may be part of the damage.
type lostGaps struct {
	r       *Reader
	pending []lostGap
}

// lostGap is a gap an event showed, held until a later number confirms
// it.
type lostGap struct {
	th    uint64
	seq   uint32 // the event's number
	rec   int    // the damage record the gap counts in
	n     int64  // the events the gap is
	block int64  // the stream offset of the event's block
}

// add holds the gap of n events that the event numbered seq of thread th,
// in the current block, shows. Past maxPending gaps held, the older half
// is discarded: gaps that stay unconfirmed that long are mostly of thread
// IDs that damage made up, and every thread switch looks through them.
func (l *lostGaps) add(th uint64, seq uint32, n int64) {
	if len(l.pending) == maxPending {
		l.pending = l.pending[:copy(l.pending, l.pending[maxPending/2:])]
	}
	l.pending = append(l.pending, lostGap{th: th, seq: seq, rec: l.r.lostTo, n: n, block: l.r.blkOff})
}

const maxPending = 1024

// confirm settles the held gaps of thread th on its number seq, that of an
// event (in a block after theirs) or of a sequence point (point).
func (l *lostGaps) confirm(th uint64, seq uint32, point bool) {
	k := 0
	for _, g := range l.pending {
		if g.th != th || !point && g.block == l.r.blkOff {
			l.pending[k] = g
			k++
			continue
		}
		if d := int32(seq - g.seq); d > 0 || point && d == 0 {
			l.count(g.rec, g.n)
		}
	}
	l.pending = l.pending[:k]
}

// drop discards the gaps held from the event block at stream offset
// block, in which damage was found.
func (l *lostGaps) drop(block int64) {
	l.pending = slices.DeleteFunc(l.pending, func(g lostGap) bool { return g.block == block })
}

// count adds n events lost to the damage record i, no more than its bytes
// could hold: a gap confirmed by a number that is itself damaged may
// still be of any size.
func (l *lostGaps) count(i int, n int64) {
	if d := &l.r.damage[i]; d.Events >= 0 {
		d.Events = max(d.Events, min(d.Events+n, d.Length/minRecord))
	}
}

// Dropped returns how many events the runtime reported dropping so far,
// counted from the gaps in each thread's sequence numbers (NetTrace V4 and
// later; 0 for older formats, which do not number events). A session whose
// buffers overflowed drops events; the count grows as the trace is read,
// and is complete at io.EOF. Events lost to damage the reader skipped are
// not counted here but in the Damage records, and nor are the gaps in a
// block in which the reader found damage (its numbers may be damaged).
//
// A gap counts once a later number of the same thread confirms it: the
// thread's next event in a later event block, or the number a sequence
// point (or a V6 thread removal) records for it, or else the trace's end
// (or a V6 sequence point that flushes the thread table). A header that
// damage garbled but that still parses, which the reader cannot tell
// from a real one, can carry a made-up number, and in compressed headers
// a garbled sequence delta moves every later number of its block: the
// gaps that shows are undone by the thread's next numbers, which go back
// below the made-up ones, and the gaps count less what the numbers go
// back by (and a thread whose numbers went back has its next gap taken as
// the way back). So a thread's drops show only after its next number
// comes, a block or more later. Events that such damage takes without
// the reader finding it leave gaps that count as drops.
//
// So that the count never goes back, what the numbers of an event block
// confirm counts once the reader has read the block to its end without
// damage, and what a sequence point's confirm once the block after it
// begins without damage (damage found at that block's start often began a
// few bytes sooner, in the numbers just read, and the gaps the sequence
// point showed are then discarded).
func (r *Reader) Dropped() uint64 {
	d := &r.drops
	switch {
	case d.holding:
		return d.held
	case r.inEvents && (r.pos < len(r.blk) || d.tainted):
		return d.blockStart
	}
	return d.dropped
}
