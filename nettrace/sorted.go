package nettrace

import (
	"math"
	"slices"
	"sync"

	"github.com/clrgo/clrevents/clrimpl"
)

// Order is the order in which Next delivers events.
type Order uint8

const (
	// FileOrder delivers events as the file holds them: in time order
	// within each thread, but threads interleaved by block. It costs
	// nothing beyond reading.
	FileOrder Order = iota
	// TimeOrder delivers events in timestamp order, as TraceEvent does:
	// of events with equal timestamps, those flagged IsSorted first (an
	// IsSorted event goes out as soon as TraceEvent reads it, before the
	// events it holds with its timestamp), then in file order. From
	// NetTrace V4 on, the
	// runtime writes a sequence point once every event before it has been
	// written; the reader holds the events between two sequence points
	// and hands them out merged by timestamp. It keeps the stretch's event
	// blocks and stack table alive instead of copying payloads and stacks,
	// so memory is bounded by the largest stretch of the file between two
	// sequence points. Files before V4 have no sequence points and come in
	// file order either way. A Reader that has handed out its last event
	// leaves those buffers to the next Reader in time order, so a process
	// that reads many traces allocates them about once.
	TimeOrder
)

func (o Order) String() string {
	if o == TimeOrder {
		return "TimeOrder"
	}
	return "FileOrder"
}

// SetOrder chooses the order of the events Next returns; FileOrder is the
// default. Call it before the first Next.
func (r *Reader) SetOrder(o Order) { r.order = o }

// SetLowLatency makes TimeOrder hand events out as soon as the stream's
// ordering marks allow, instead of at the next sequence point, which a
// runtime writes only every few megabytes: for live sessions, where that
// can be minutes away. Events are then released in the same order, block
// by block: after each event block, every held event no later than the
// latest event flagged IsSorted. The format guarantees that every event
// after an IsSorted one in the stream has a timestamp at least as late
// (NetTraceFormat.md, "Event TimeStamp sorting"), and the runtime flags
// at least one event in each batch it writes (every 100 ms), so an event
// waits about one batch. A corrupt stream that breaks the promise (an
// event earlier than a flagged one before it) yields the same events, but
// not in timestamp order: those already handed out cannot be taken back.
// FileOrder holds nothing back anyway. Call it before the first Next.
func (r *Reader) SetLowLatency(on bool) { r.lowLatency = on }

// sortState holds the events between two sequence points.
//
// Each held event is a small pointer-free record (heldRec), decoded from
// its header straight into the record (holdRecord), so holding a stretch
// gives the GC nothing to scan and no write barriers to run. The payloads
// stay in the stretch's event blocks and the stacks in its stack table,
// which the reader does not reuse until the stretch has been handed out: an
// event block that is used up is kept in blocks while the reader goes on in
// a spare buffer, and at the sequence point that ends the stretch the
// reader's stack table moves to a spare array (stretchIPs keeps the old
// one). Metadata pointers are kept once per stretch (metas); what only some
// events have (activity IDs, V6 label lists and the values they override,
// with the event's thread) goes to exts, and a V6 event's thread row, when
// it has no label list, to rows, once for a thread's events in a row.
//
// The runtime writes each thread's events in time order, and a block holds
// runs of one thread's events, so the held events fall into runs of
// non-decreasing timestamps that are contiguous in arrival order (an
// IsSorted event after an unsorted one of its timestamp begins a run).
// nextSorted merges the runs with a heap keyed by (timestamp, not IsSorted,
// arrival index): the same order as a stable sort by timestamp and then
// IsSorted first, without sorting.
type sortState struct {
	chunks []*[recChunk]heldRec // the held events, recChunk to a chunk
	n      int32                // how many are held
	runs   []mergeRun           // the merge heap; a run is a range of held events
	// next is the heap's second run as it was at the last sift: while the
	// top run's next event comes before it, the top stays the top and
	// release hands out the run's events without sifting.
	next mergeRun

	metas []*Metadata // the stretch's metadata; heldRec.meta indexes it
	// metaPos maps a metadata ID below 1<<16 to its index in metas, valid
	// while its epoch is metaEpoch, which changes with every stretch and
	// every change to the reader's metadata: the ID's metadata is then
	// metas[idx], without a look-up.
	metaPos   []metaSlot
	metaEpoch uint32
	exts      []heldExt // heldRec.ext-1 indexes it
	// rows are the V6 thread rows of held events without a label list,
	// whose values are otherwise their metadata's (-heldRec.ext-1
	// indexes it): a thread's events in a row share one.
	rows    []*Thread
	writers []writer // heldRec.writer indexes it

	blocks     [][]byte // the stretch's used-up blocks; heldRec.blk indexes them
	blockOffs  []int64  // their offsets in the stream
	spare      [][]byte // block buffers free for reuse
	stretchIPs []uint64 // the stack table the held events' stacks are in
	gen        uint64   // stretchIPs' number among the process's stack tables (StackKey)
	spareIPs   []uint64 // the stack table array free for reuse
	ipsMoved   bool     // this stretch's stack table has moved to the spare array

	err error // what ended the raw stream, handed out after the held events
	// reused: the buffers of a finished Reader were asked for (spent);
	// sp is what held them, kept to hand this Reader's on in.
	reused bool
	sp     *spent
	// peak: the most block buffers the Reader has held at once, the
	// used-up blocks of a stretch and the one being read.
	peak int

	// open: the stretch is still being read (no sequence point or end of
	// the stream yet). Only with SetLowLatency are events handed out of
	// an open stretch: those no later than mark, the latest IsSorted
	// timestamp seen (marked says there is one).
	open   bool
	built  int32 // held events already in runs
	mark   int64
	marked bool

	// The event read just after a sequence point, which opens the next
	// stretch.
	carry       bool
	carryRec    heldRec
	carryExt    heldExt
	carryRow    *Thread
	carryMeta   *Metadata
	carryWriter writer
}

// heldRec is one held event, without pointers, in one 64-byte cache line.
// Name, provider and event ID, version, level, opcode and keywords come
// from the metadata unless the event has an ext.
type heldRec struct {
	ts             int64
	thread         uint64
	seq            uint32
	writer         uint32 // index in writers: capture thread and processor
	meta           uint32 // index in metas
	sid            uint32
	payOff, payLen uint32 // the payload in blocks[blk]
	stkOff, stkLen uint32 // the stack in stretchIPs
	blk            int32  // index in blocks and blockOffs
	ext            int32  // index+1 in exts; 0: none; V6 without a label list: -(index+1) in rows
	hlen           uint8  // the header's length: the record starts at payOff-hlen
	sorted         bool   // the header's IsSorted flag
}

// writer is the capture thread and processor of held events. They change
// only where a compressed header says so (once per batch of a thread's
// events), so records share them.
type writer struct {
	capture uint64
	proc    uint32
}

// writerIndex returns the index in writers of (capture, proc), the last
// one's if it is the same.
func (s *sortState) writerIndex(capture uint64, proc uint32) uint32 {
	if n := len(s.writers); n > 0 && s.writers[n-1] == (writer{capture, proc}) {
		return uint32(n - 1)
	}
	s.writers = append(s.writers, writer{capture, proc})
	return uint32(len(s.writers) - 1)
}

// metaSlot is a metaPos entry.
type metaSlot struct{ idx, epoch uint32 }

// newMetaEpoch makes every metaPos entry stale.
func (s *sortState) newMetaEpoch() {
	s.metaEpoch++
	if s.metaEpoch == 0 {
		clear(s.metaPos)
		s.metaEpoch = 1
	}
}

// heldExt is what some events have beyond heldRec.
type heldExt struct {
	activity, related      clrimpl.GUID
	pid                    uint64
	keywords               uint64
	version, level, opcode uint8
	thread                 *Thread
	labels                 *LabelList
}

// mergeRun is a run of held events [pos, end) in time order; ts is the
// timestamp of event pos, and tie its place among events of that
// timestamp: pos, plus 1<<32 unless it is flagged IsSorted.
type mergeRun struct {
	ts, tie  int64
	pos, end int32
}

func (a *mergeRun) less(b *mergeRun) bool {
	return a.ts < b.ts || a.ts == b.ts && a.tie < b.tie
}

// tieOf is the tie of held event i (mergeRun).
func tieOf(h *heldRec, i int32) int64 {
	return int64(i) | int64(b2u(!h.sorted))<<32
}

// rec returns held event i.
func (s *sortState) rec(i int32) *heldRec {
	return &s.chunks[uint32(i)/recChunk][uint32(i)%recChunk]
}

// recChunk is how many held events a chunk holds (128 KiB): chunks are
// added as a stretch needs them and kept for the next, never copied.
const recChunk = 1 << 11

// add appends a held event and returns it, for the caller to fill in.
func (s *sortState) add() *heldRec {
	c := uint32(s.n) / recChunk
	if int(c) == len(s.chunks) {
		s.chunks = append(s.chunks, new([recChunk]heldRec))
	}
	h := &s.chunks[c][uint32(s.n)%recChunk]
	s.n++
	return h
}

// nextSorted hands out the held events in timestamp order, reading the
// next stretch up to a sequence point when they are used up.
func (r *Reader) nextSorted() (*Event, error) {
	s := &r.sorted
	for {
		if len(s.runs) > 0 && (!s.open || s.marked && s.runs[0].ts <= s.mark) {
			return r.release(), nil
		}
		if !s.open {
			if s.err != nil {
				s.recycle(r)
				return nil, s.err
			}
			if s.chunks == nil && !s.reused {
				s.reuse(r)
			}
			r.startStretch()
		}
		r.fillSorted()
	}
}

// spent is what a time-order Reader that has handed out its last event
// leaves for the next one (spentPool): its held-event chunks, block
// buffers, both stack table arrays and the arrays of the merge (emptied,
// their pointers cleared). A process that reads many traces one after the
// other (a dataset of thousands, a collector's rolling windows) allocates
// them once instead of once a trace; the pool lets the garbage collector
// take them back when no Reader wants them.
type spent struct {
	chunks    []*[recChunk]heldRec
	blocks    [][]byte
	list      [][]byte // an empty array for sortState.blocks
	ips, ips2 []uint64
	stackRefs []stackRef
	runs      []mergeRun
	metas     []*Metadata
	metaPos   []metaSlot
	exts      []heldExt
	writers   []writer
	blockOffs []int64
}

var spentPool sync.Pool

// maxSpent bounds the block buffers a finished Reader leaves (bytes): the
// stretches of most traces need a few MB; a huge one's are not kept.
const maxSpent = 32 << 20

// reuse takes what a finished Reader left, if any.
func (s *sortState) reuse(r *Reader) {
	s.reused = true
	sp, ok := spentPool.Get().(*spent)
	if !ok {
		return
	}
	s.sp = sp            // to hand them on in at the end
	s.chunks = sp.chunks // every field of a record is written before it is read
	if len(s.spare) == 0 {
		s.spare = sp.blocks
	} else {
		s.spare = append(s.spare, sp.blocks...)
	}
	if len(s.blocks) == 0 {
		s.blocks = sp.list[:0]
	}
	if len(r.stackRefs) == 0 && cap(sp.stackRefs) > cap(r.stackRefs) {
		r.stackRefs = sp.stackRefs[:0]
	}
	// Empty: it grows with zeros (metaIndex), so that no entry of
	// another Reader's epochs passes for one of this Reader's.
	s.metaPos = sp.metaPos[:0]
	if cap(r.blk) == 0 && len(s.spare) > 0 {
		// The first block goes into a spare buffer too.
		n := len(s.spare) - 1
		r.blk, s.spare[n] = s.spare[n][:0], nil
		s.spare = s.spare[:n]
	}
	if len(r.ips) == 0 && cap(sp.ips) > cap(r.ips) {
		r.ips = sp.ips[:0]
	}
	s.spareIPs = sp.ips2[:0]
	s.runs, s.metas, s.exts = sp.runs[:0], sp.metas[:0], sp.exts[:0]
	s.writers, s.blockOffs = sp.writers[:0], sp.blockOffs[:0]
	*sp = spent{}
}

// recycle gives what the Reader holds to the next one, once every event
// has been handed out: the last event's payload and stack are no longer
// valid (an Event is valid until the next call to Next).
func (s *sortState) recycle(r *Reader) {
	if s.chunks == nil {
		return
	}
	spentPool.Put(s.spend(r))
}

// spend takes the Reader's buffers for a spent, each once.
func (s *sortState) spend(r *Reader) *spent {
	sp := s.sp
	if sp == nil {
		sp = new(spent)
	}
	s.sp = nil
	sp.chunks = s.chunks
	bufs := append(s.spare, s.blocks...)
	clear(s.blocks)
	sp.list = s.blocks[:0]
	// The current block is the last of blocks once the stream has ended;
	// a buffer given twice would serve two blocks at once.
	if cap(r.blk) > 0 && !slices.ContainsFunc(bufs, func(b []byte) bool { return cap(b) > 0 && &b[:1][0] == &r.blk[:1][0] }) {
		bufs = append(bufs, r.blk)
	}
	// The next Reader needs as many buffers as this one held at once,
	// the biggest: more would pile up, Reader after Reader (one whose
	// first block came in a new buffer gave one more each time).
	bufs = slices.DeleteFunc(bufs, func(b []byte) bool { return cap(b) == 0 })
	slices.SortFunc(bufs, func(a, b []byte) int { return cap(b) - cap(a) })
	bufs = bufs[:min(len(bufs), max(s.peak, 1))]
	kept, n := 0, 0
	for _, b := range bufs {
		if kept+cap(b) <= maxSpent {
			bufs[n] = b[:0]
			n++
			kept += cap(b)
		}
	}
	clear(bufs[n:cap(bufs)]) // not kept: let them go
	sp.blocks = bufs[:n]
	// The two stack table arrays: the reader's and the spare one (the
	// stretch's is one of them), the bigger first.
	sp.ips, sp.ips2 = r.ips[:0], s.spareIPs[:0]
	if cap(sp.ips2) > 0 && cap(sp.ips) > 0 && &sp.ips2[:1][0] == &sp.ips[:1][0] {
		sp.ips2 = nil
	}
	if cap(sp.ips2) > cap(sp.ips) {
		sp.ips, sp.ips2 = sp.ips2, sp.ips
	}
	clear(s.metas)
	clear(s.exts)
	sp.runs, sp.metas, sp.exts = s.runs[:0], s.metas[:0], s.exts[:0]
	sp.writers, sp.blockOffs = s.writers[:0], s.blockOffs[:0]
	sp.metaPos, sp.stackRefs = s.metaPos[:0], r.stackRefs[:0]
	s.metaPos, r.stackRefs = nil, nil
	s.chunks, s.blocks, s.spare, s.blockOffs = nil, nil, nil, nil
	s.stretchIPs, s.spareIPs, s.peak = nil, nil, 0
	s.runs, s.metas, s.exts, s.writers, s.rows = nil, nil, nil, nil, nil
	r.blk, r.ips = nil, nil
	s.n = 0
	return sp
}

// release removes the earliest held event from the merge heap and fills
// r.ev from it, as decodeEvent would have. (One function, not two: a call
// costs more than the sift.)
func (r *Reader) release() *Event {
	s := &r.sorted
	h := s.runs
	top := &h[0]
	i := top.pos
	top.pos++
	sift := true
	if top.pos < top.end {
		x := s.rec(top.pos)
		top.ts, top.tie = x.ts, tieOf(x, top.pos)
		// Still before every other run's head: the heap stands.
		sift = !top.less(&s.next)
	} else {
		n := len(h) - 1
		h[0] = h[n]
		h = h[:n]
		s.runs = h
	}
	if sift {
		// Sift the root down.
		for j, n := 0, len(h); ; {
			c := 2*j + 1
			if c >= n {
				break
			}
			if c+1 < n && h[c+1].less(&h[c]) {
				c++
			}
			if !h[c].less(&h[j]) {
				break
			}
			h[j], h[c] = h[c], h[j]
			j = c
		}
		s.setNext()
	}

	x := s.rec(i)
	m := s.metas[x.meta]
	w := &s.writers[x.writer]
	ev := &r.ev
	ev.Offset = s.blockOffs[x.blk] + int64(x.payOff) - int64(x.hlen)
	ev.MetadataID = m.ID
	ev.setMeta(m)
	ev.ProviderGUID = m.ProviderGUID
	ev.ID = m.EventID
	ev.ThreadID = x.thread
	ev.CaptureThreadID = w.capture
	ev.ProcessorNumber = w.proc
	ev.SequenceNumber = x.seq
	ev.IsSorted = x.sorted
	ev.Timestamp = x.ts
	ev.StackID = x.sid
	if x.ext <= 0 {
		ev.Version = m.Version
		ev.Level = m.Level
		ev.Opcode = m.Opcode
		ev.Keywords = m.Keywords
		ev.ProcessID = uint64(r.info.ProcessID)
		ev.ActivityID = clrimpl.GUID{}
		ev.RelatedActivityID = clrimpl.GUID{}
		var t *Thread // a V6 event's thread row
		if x.ext < 0 {
			if t = s.rows[-x.ext-1]; t.ProcessID != 0 {
				ev.ProcessID = t.ProcessID
			}
		}
		ev.setThread(t, nil)
	} else {
		x := &s.exts[x.ext-1]
		ev.Version = x.version
		ev.Level = x.level
		ev.Opcode = x.opcode
		ev.Keywords = x.keywords
		ev.ProcessID = x.pid
		ev.ActivityID = x.activity
		ev.RelatedActivityID = x.related
		ev.setThread(x.thread, x.labels)
	}
	po, pe := x.payOff, x.payOff+x.payLen
	ev.Payload = s.blocks[x.blk][po:pe:pe]
	// The stack, written whether or not it changed and without a branch
	// on whether there is one: about a third of the events have none, in
	// no pattern a branch predictor learns.
	// An empty stack's offset is taken as 0: only rows with IPs are sure
	// to lie within the stretch's stack table.
	n := uint64(x.stkLen)
	so := uint64(x.stkOff) & -((n | -n) >> 63)
	st := s.stretchIPs[so : so+n : so+n]
	if n == 0 {
		st = nil
	}
	ev.Stack = st
	ev.stackKey = stackKey(s.gen, uint32(so), x.stkLen)
	return ev
}

// startStretch frees the previous stretch, which has been handed out, and
// opens the next one with the event carried over from it.
func (r *Reader) startStretch() {
	s := &r.sorted
	// The previous stretch has been handed out: its blocks are free.
	for i, b := range s.blocks {
		s.spare = append(s.spare, b)
		s.blocks[i] = nil
	}
	s.blocks, s.blockOffs = s.blocks[:0], s.blockOffs[:0]
	s.n, s.runs = 0, s.runs[:0]
	clear(s.metas)
	clear(s.exts)
	clear(s.rows)
	s.metas, s.exts, s.writers, s.rows = s.metas[:0], s.exts[:0], s.writers[:0], s.rows[:0]
	s.newMetaEpoch()
	s.ipsMoved = false
	if s.carry {
		c := s.add()
		*c = s.carryRec
		c.meta = s.metaIndex(s.carryMeta.ID, s.carryMeta)
		c.writer = s.writerIndex(s.carryWriter.capture, s.carryWriter.proc)
		switch {
		case c.ext > 0:
			s.exts = append(s.exts, s.carryExt)
			c.ext = int32(len(s.exts))
		case c.ext < 0:
			s.rows = append(s.rows, s.carryRow)
			c.ext = -int32(len(s.rows))
		}
		s.carryMeta, s.carryExt, s.carryRow = nil, heldExt{}, nil
		s.carry = false
	}
	s.open, s.built, s.marked = true, 0, false
	// Held events' stacks are in the stretch's own table (stretchIPs).
	s.gen = stackGens.Add(1)
}

// fillSorted reads raw events up to the next sequence point (or the end),
// holds them and adds them to the merge; with SetLowLatency it stops
// after each event block instead, leaving the stretch open.
func (r *Reader) fillSorted() {
	s := &r.sorted
	for {
		r.spSeen = false
		err := r.nextHeld()
		if err != nil {
			s.err = err
			// Nothing more will be read: the current block and stack
			// table can be handed out in place.
			s.blocks = append(s.blocks, r.blk)
			s.blockOffs = append(s.blockOffs, r.blkOff)
			if !s.ipsMoved {
				s.stretchIPs = r.ips[:cap(r.ips)]
			}
			s.open = false
			break
		}
		if r.spSeen && s.n > 1 {
			// The event just held came after a sequence point: everything
			// before it is complete. It opens the next stretch, where its
			// block is the first.
			s.n--
			c := &s.carryRec
			*c = *s.rec(s.n)
			c.blk = 0
			s.carryMeta = s.metas[c.meta]
			s.carryWriter = s.writers[c.writer]
			switch {
			case c.ext > 0:
				s.carryExt = s.exts[c.ext-1]
			case c.ext < 0:
				s.carryRow = s.rows[-c.ext-1]
			}
			s.carry = true
			s.open = false
			break
		}
		if r.lowLatency && r.inEvents && r.pos >= len(r.blk) {
			// The block is used up: hand out what it allows before
			// waiting for the next one.
			r.retireBlock()
			if !s.ipsMoved {
				s.stretchIPs = r.ips[:cap(r.ips)]
			}
			break
		}
	}
	// Runs: contiguous ranges of non-decreasing timestamps. Sift each new
	// run up into the heap.
	n := s.n
	for start := s.built; start < n; {
		end := start + 1
		h0 := s.rec(start)
		prev := h0.ts
		if h0.sorted && (!s.marked || prev > s.mark) {
			s.mark, s.marked = prev, true
		}
		prevSorted := h0.sorted
		for end < n {
			h := s.rec(end)
			ts := h.ts
			if ts < prev || ts == prev && h.sorted && !prevSorted {
				break
			}
			prevSorted = h.sorted
			if h.sorted && (!s.marked || ts > s.mark) {
				s.mark, s.marked = ts, true
			}
			prev = ts
			end++
		}
		s.runs = append(s.runs, mergeRun{h0.ts, tieOf(h0, start), start, end})
		h := s.runs
		for j := len(h) - 1; j > 0; {
			p := (j - 1) / 2
			if !h[j].less(&h[p]) {
				break
			}
			h[j], h[p] = h[p], h[j]
			j = p
		}
		start = end
	}
	s.built = n
	s.setNext()
}

// setNext sets next to the earliest head of the runs but the heap's top
// (its smaller child), or past every event if there is none.
func (s *sortState) setNext() {
	h := s.runs
	switch {
	case len(h) > 2 && h[2].less(&h[1]):
		s.next = h[2]
	case len(h) > 1:
		s.next = h[1]
	default:
		s.next = mergeRun{ts: math.MaxInt64, tie: math.MaxInt64}
	}
}

// nextHeld reads the next event as nextRaw does (V4 and later only) and
// holds it, keeping the blocks and the stack table that held events refer
// to from being reused. It returns io.EOF or the error that ends the
// stream.
func (r *Reader) nextHeld() error {
	if r.err != nil {
		return r.err
	}
	s := &r.sorted
	for {
		if r.inEvents {
			if r.pos < len(r.blk) {
				err := r.holdRecord()
				if err == nil {
					return nil
				}
				if err = r.recover(err); err != nil {
					r.err = err
					r.s.end()
					return err
				}
				continue
			}
			r.retireBlock()
		}
		if err := r.nextBlock(); err != nil {
			r.err = err
			r.s.end()
			return err
		}
		if r.spSeen && !s.ipsMoved && s.n > 0 {
			// The sequence point emptied the stack table; the stacks
			// that follow must not overwrite the held events' ones.
			s.stretchIPs = r.ips[:cap(r.ips)]
			r.ips = s.spareIPs[:0]
			s.spareIPs = s.stretchIPs[:0]
			s.ipsMoved = true
		}
	}
}

// retireBlock keeps the used-up event block for the held events that point
// into it, and takes a spare buffer for the next block.
func (r *Reader) retireBlock() {
	s := &r.sorted
	r.inEvents = false
	s.blocks = append(s.blocks, r.blk)
	s.blockOffs = append(s.blockOffs, r.blkOff)
	s.peak = max(s.peak, len(s.blocks)+1) // and the next block's
	r.blk = nil
	if n := len(s.spare); n > 0 {
		r.blk = s.spare[n-1][:0]
		s.spare[n-1] = nil
		s.spare = s.spare[:n-1]
	}
}

// holdRecord decodes the event record at r.pos (V4 and later) into a held
// record, as decodeEvent decodes it into r.ev, with decodeEvent's errors;
// release makes the Event. Its payload is in r.blk, which becomes
// blocks[len(blocks)] when it is used up, and its stack in r.ips.
func (r *Reader) holdRecord() error {
	start := r.pos
	var p int
	// The usual header decoded here rather than through readEventHeader
	// (a call less an event).
	ok := false
	if r.compress {
		if p, ok = r.fastHeader(start); ok {
			if r.badFast(p) {
				return r.badFastErr(start, p)
			}
			r.pos = p + int(r.hdr.payloadSize)
		}
	}
	if !ok {
		var end int
		var err error
		if p, end, _, err = r.readEventHeader(); err != nil {
			return err
		}
		r.pos = end
	}
	hd := &r.hdr
	r.tsMin, r.tsMax = min(r.tsMin, hd.ts), max(r.tsMax, hd.ts)
	s := &r.sorted
	var mi uint32
	if id := hd.metaID; int(id) < len(s.metaPos) && s.metaPos[id].epoch == s.metaEpoch {
		mi = s.metaPos[id].idx
	} else {
		m := r.lookupMeta(id)
		if m == nil {
			return r.undefinedMeta(r.blkOff + int64(start))
		}
		mi = s.metaIndex(id, m)
	}
	if d := &r.drops; d.next(hd.captureThreadID, hd.seq) {
		d.curSeq = hd.seq
	} else if err := r.eventNumber(start, p, r.blkOff+int64(start)); err != nil {
		return err
	}
	// The stack table row, found as decodeEvent finds it.
	var stkOff, stkLen uint32
	if hd.stackID != 0 {
		sr, ok := r.stackRow(hd.stackID)
		if !ok {
			return r.undefinedStack(r.blkOff + int64(start))
		}
		stkOff, stkLen = sr.off, sr.n
	}
	thread, capture := hd.threadID, hd.captureThreadID
	ext := int32(0)
	if r.ver == 6 {
		t := r.threadAt(hd.threadID)
		if t == nil {
			return r.undefinedRef(r.blkOff+int64(start), "undefined thread", "refers to thread index %d, which is not defined", hd.threadID)
		}
		thread = t.ThreadID
		capture = 0
		if ct := r.threadAt(hd.captureThreadID); ct != nil {
			capture = ct.ThreadID
		}
		if hd.labelID == 0 {
			if n := len(s.rows); n == 0 || s.rows[n-1] != t {
				s.rows = append(s.rows, t)
			}
			ext = -int32(len(s.rows))
		} else {
			l := r.labels[hd.labelID]
			if l == nil {
				return r.undefinedRef(r.blkOff+int64(start), "undefined label list", "refers to label list %d, which is not defined", hd.labelID)
			}
			m := s.metas[mi]
			x := heldExt{
				pid: uint64(r.info.ProcessID), keywords: m.Keywords, version: m.Version, level: m.Level, opcode: m.Opcode,
				thread: t, labels: l, activity: l.ActivityID, related: l.RelatedActivityID,
			}
			if t.ProcessID != 0 {
				x.pid = t.ProcessID
			}
			l.override(&x.opcode, &x.level, &x.version, &x.keywords)
			s.exts = append(s.exts, x)
			ext = int32(len(s.exts))
		}
	} else if hd.ids {
		m := s.metas[mi]
		s.exts = append(s.exts, heldExt{
			activity: hd.activity, related: hd.related, pid: uint64(r.info.ProcessID),
			keywords: m.Keywords, version: m.Version, level: m.Level, opcode: m.Opcode,
		})
		ext = int32(len(s.exts))
	}
	h := s.add()
	h.ts = hd.ts
	h.thread = thread
	h.seq = hd.seq
	h.writer = s.writerIndex(capture, hd.proc)
	h.meta = mi
	h.sid = hd.stackID
	h.payOff, h.payLen = uint32(p), hd.payloadSize
	h.stkOff, h.stkLen = stkOff, stkLen
	h.blk = int32(len(s.blocks))
	h.ext = ext
	h.hlen = uint8(p - start)
	h.sorted = hd.sorted
	return nil
}

// metaIndex returns m's index in metas, adding it if needed; id is m.ID.
// An ID below 1<<16 gets a metaPos entry for the events after it.
func (s *sortState) metaIndex(id uint32, m *Metadata) uint32 {
	if s.metaEpoch == 0 {
		s.metaEpoch = 1
	}
	if id < 1<<16 {
		if int(id) >= len(s.metaPos) {
			s.metaPos = append(s.metaPos, make([]metaSlot, int(id)+1-len(s.metaPos))...)
		}
		// An entry of an earlier epoch may still be right: it is checked.
		if p := s.metaPos[id].idx; int(p) < len(s.metas) && s.metas[p] == m {
			s.metaPos[id].epoch = s.metaEpoch
			return p
		}
		s.metas = append(s.metas, m)
		s.metaPos[id] = metaSlot{uint32(len(s.metas) - 1), s.metaEpoch}
		return uint32(len(s.metas) - 1)
	}
	for i, x := range s.metas {
		if x == m {
			return uint32(i)
		}
	}
	s.metas = append(s.metas, m)
	return uint32(len(s.metas) - 1)
}
