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
// Events of one thread come in runs, so the current thread's number is
// kept outside the map and the map is touched only when the thread
// changes.
type dropCounter struct {
	seqs     map[uint64]threadSeq // capture thread → its last number
	cur      uint64
	curSeq   uint32
	curEpoch uint32
	have     bool // cur and curSeq hold a thread
	dropped  uint64
	v6       bool
	// blockStart is dropped as the current event block began; tainted:
	// damage was found in the block, which takes its drops back
	// (Reader.untaint).
	blockStart uint64
	tainted    bool
	// holding: the gaps counted since held, by the block at holdAt (a
	// sequence point, a thread removal), wait for the block after it:
	// damage found at that block's start often began a few bytes sooner,
	// in the numbers just read.
	holding bool
	held    uint64
	holdAt  int64

	epoch uint32 // how many damages so far
	// lost takes the events gaps show lost to damage; nil until the
	// first damage.
	lost *lostGaps
}

// threadSeq is a thread's last sequence number and the epoch it was seen
// in.
type threadSeq struct{ seq, epoch uint32 }

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
	if n := d.gap(d.curSeq, seq-1); n > 0 {
		d.lost.add(th, seq, n)
	}
	d.curSeq = seq
}

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
		d.held = before
	}
	d.holding, d.holdAt = true, at
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
		d.dropped, d.holding = d.held, false
	}
}

// checkpoint notes a sequence point's number for thread th.
func (d *dropCounter) checkpoint(th uint64, seq uint32) {
	if d.lost != nil && len(d.lost.pending) > 0 {
		d.lost.confirm(th, seq, true)
	}
	d.switchTo(th, seq)
	if n := d.gap(d.curSeq, seq); n > 0 {
		d.lost.count(d.lost.r.lostTo, n)
	}
	d.curSeq = seq
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
		d.seqs[d.cur] = threadSeq{d.curSeq, d.curEpoch}
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
	d.seqs[th] = threadSeq{0, d.epoch}
}

// forget drops every thread (a V6 sequence point that flushes the thread
// table) or one (a RemoveThread entry, after its checkpoint).
func (d *dropCounter) forget(th uint64, all bool) {
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
		d.seqs[d.cur] = threadSeq{d.curSeq, d.curEpoch}
	}
	s, ok := d.seqs[th]
	if !ok {
		s = threadSeq{ifNew, d.epoch}
	}
	d.cur, d.curSeq, d.curEpoch, d.have = th, s.seq, s.epoch, true
}

// gap counts the numbers between last and expected as dropped, or, when
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
		d.dropped += uint64(n)
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
// were missing in all), and a moved number shows its move. Such numbers are not confirmed: the garbled thread is not
// seen again, and the real numbers of a moved thread that come next are
// below the moved ones. The gaps of an event block in which damage is
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
// So that the count never goes back, the gaps of an event block count
// once the reader has read the block to its end without damage, and
// those a sequence point shows once the block after it begins without
// damage (damage found at that block's start often began a few bytes
// sooner, in the numbers just read).
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
