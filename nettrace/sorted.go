package nettrace

import "github.com/clrgo/clrevents/clrevents"

// Order is the order in which Next delivers events.
type Order uint8

const (
	// FileOrder delivers events as the file holds them: in time order
	// within each thread, but threads interleaved by block. It costs
	// nothing beyond reading.
	FileOrder Order = iota
	// TimeOrder delivers events in timestamp order, as TraceEvent does,
	// keeping file order for equal timestamps. From NetTrace V4 on, the
	// runtime writes a sequence point once every event before it has been
	// written; the reader holds the events between two sequence points
	// and hands them out merged by timestamp. It keeps the stretch's event
	// blocks and stack table alive instead of copying payloads and stacks,
	// so memory is bounded by the largest stretch of the file between two
	// sequence points. Files before V4 have no sequence points and come in
	// file order either way.
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

// sortState holds the events between two sequence points.
//
// Each held event is a small pointer-free record (heldRec), so holding a
// stretch gives the GC nothing to scan and no write barriers to run. The
// payloads stay in the stretch's event blocks and the stacks in its stack
// table, which the reader does not reuse until the stretch has been handed
// out: an event block that is used up is kept in blocks while the reader
// goes on in a spare buffer, and at the sequence point that ends the
// stretch the reader's stack table moves to a spare array (stretchIPs
// keeps the old one). Metadata pointers are kept once per stretch (metas);
// what only some events have (activity IDs, V6 threads and label lists,
// values a label list overrides) goes to exts.
//
// The runtime writes each thread's events in time order, and a block holds
// runs of one thread's events, so the held events fall into runs of
// non-decreasing timestamps that are contiguous in arrival order. nextSorted
// merges the runs with a heap keyed by (timestamp, arrival index): the same
// order as a stable sort by timestamp, without sorting.
type sortState struct {
	chunks [][]heldRec // the held events, recChunk to a chunk, never moved
	n      int32       // how many are held
	runs   []mergeRun  // the merge heap; a run is a range of held events

	metas   []*Metadata // the stretch's metadata; heldRec.meta indexes it
	metaPos []uint32    // metadata ID → index+1 in metas (a hint, checked)
	exts    []heldExt   // heldRec.ext-1 indexes it

	blocks     [][]byte // the stretch's used-up blocks; heldRec.blk indexes them
	spare      [][]byte // block buffers free for reuse
	stretchIPs []uint64 // the stack table the held events' stacks are in
	spareIPs   []uint64 // the stack table array free for reuse
	ipsMoved   bool     // this stretch's stack table has moved to the spare array
	payCopy    []byte   // payloads that were not found in a block (never expected)
	stkCopy    []uint64 // stacks that were not found in the stack table (never expected)

	err error // what ended the raw stream, handed out after the held events

	// The event read just after a sequence point, which opens the next
	// stretch.
	carry     bool
	carryRec  heldRec
	carryExt  heldExt
	carryMeta *Metadata
	carryPay  []byte   // its payload, if it was copied
	carryStk  []uint64 // its stack, if it was copied
}

const recChunk = 1 << 11

// heldRec is one held event, without pointers. Name, provider and event
// ID, version, level, opcode and keywords come from the metadata unless
// the event has an ext.
type heldRec struct {
	ts              int64
	offset          int64
	thread, capture uint64
	meta            uint32 // index in metas
	proc, seq, sid  uint32
	payOff, payLen  uint32
	stkOff, stkLen  uint32
	blk             int32 // index in blocks; -1: payload in payCopy
	ext             int32 // index+1 in exts; 0: none
	flags           uint8
}

const (
	recSorted  = 1 << iota // the header's IsSorted flag
	recStkCopy             // the stack is in stkCopy, not in the stack table
)

// heldExt is what some events have beyond heldRec.
type heldExt struct {
	activity, related      clrevents.GUID
	pid                    uint64
	keywords               uint64
	version, level, opcode uint8
	thread                 *Thread
	labels                 *LabelList
}

// mergeRun is a run of held events [pos, end) in time order; ts is the
// timestamp of event pos.
type mergeRun struct {
	ts       int64
	pos, end int32
}

func (a *mergeRun) less(b *mergeRun) bool {
	return a.ts < b.ts || a.ts == b.ts && a.pos < b.pos
}

// rec returns held event i.
func (s *sortState) rec(i int32) *heldRec { return &s.chunks[i/recChunk][i%recChunk] }

// push appends h to the held events.
func (s *sortState) push(h *heldRec) { *s.add() = *h }

// add appends a held event and returns it, for the caller to fill in.
func (s *sortState) add() *heldRec {
	c := int(s.n / recChunk)
	if c == len(s.chunks) {
		s.chunks = append(s.chunks, make([]heldRec, recChunk))
	}
	h := &s.chunks[c][s.n%recChunk]
	s.n++
	return h
}

// nextSorted hands out the held events in timestamp order, reading the
// next stretch up to a sequence point when they are used up.
func (r *Reader) nextSorted() (*Event, error) {
	s := &r.sorted
	for {
		if len(s.runs) > 0 {
			return r.release(s.pop()), nil
		}
		if s.err != nil {
			return nil, s.err
		}
		r.fillSorted()
	}
}

// pop removes the earliest held event from the merge heap and returns its
// index.
func (s *sortState) pop() int32 {
	h := s.runs
	top := &h[0]
	i := top.pos
	top.pos++
	if top.pos < top.end {
		top.ts = s.rec(top.pos).ts
	} else {
		n := len(h) - 1
		h[0] = h[n]
		h = h[:n]
		s.runs = h
	}
	// Sift the root down.
	n := len(h)
	j := 0
	for {
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
	return i
}

// release fills r.ev from held event i.
func (r *Reader) release(i int32) *Event {
	s := &r.sorted
	h := s.rec(i)
	m := s.metas[h.meta]
	ev := &r.ev
	ev.Offset = h.offset
	ev.MetadataID = m.ID
	if ev.Metadata != m {
		// Pointer writes only when they change: while the GC runs, each
		// costs a write barrier.
		ev.Metadata = m
		ev.Provider = m.Provider
		ev.Name = m.Name
	}
	ev.ProviderGUID = m.ProviderGUID
	ev.ID = m.EventID
	ev.ThreadID = h.thread
	ev.CaptureThreadID = h.capture
	ev.ProcessorNumber = h.proc
	ev.SequenceNumber = h.seq
	ev.IsSorted = h.flags&recSorted != 0
	ev.Timestamp = h.ts
	ev.Time = r.info.TicksToTime(h.ts)
	ev.StackID = h.sid
	if h.ext == 0 {
		ev.Version = m.Version
		ev.Level = m.Level
		ev.Opcode = m.Opcode
		ev.Keywords = m.Keywords
		ev.ProcessID = uint64(r.info.ProcessID)
		ev.ActivityID = clrevents.GUID{}
		ev.RelatedActivityID = clrevents.GUID{}
		if ev.Thread != nil {
			ev.Thread = nil
		}
		if ev.Labels != nil {
			ev.Labels = nil
		}
	} else {
		x := &s.exts[h.ext-1]
		ev.Version = x.version
		ev.Level = x.level
		ev.Opcode = x.opcode
		ev.Keywords = x.keywords
		ev.ProcessID = x.pid
		ev.ActivityID = x.activity
		ev.RelatedActivityID = x.related
		ev.Thread = x.thread
		ev.Labels = x.labels
	}
	po, pe := h.payOff, h.payOff+h.payLen
	if h.blk >= 0 {
		ev.Payload = s.blocks[h.blk][po:pe:pe]
	} else {
		ev.Payload = s.payCopy[po:pe:pe]
	}
	ev.Stack = nil
	if h.stkLen > 0 {
		so, se := h.stkOff, h.stkOff+h.stkLen
		if h.flags&recStkCopy != 0 {
			ev.Stack = s.stkCopy[so:se:se]
		} else {
			ev.Stack = s.stretchIPs[so:se:se]
		}
	}
	return ev
}

// fillSorted reads raw events up to the next sequence point (or the end),
// holds them and sets up the merge.
func (r *Reader) fillSorted() {
	s := &r.sorted
	// The previous stretch has been handed out: its blocks are free.
	for i, b := range s.blocks {
		s.spare = append(s.spare, b)
		s.blocks[i] = nil
	}
	s.blocks = s.blocks[:0]
	s.n, s.runs = 0, s.runs[:0]
	clear(s.metas)
	clear(s.exts)
	s.metas, s.exts = s.metas[:0], s.exts[:0]
	s.payCopy, s.stkCopy = s.payCopy[:0], s.stkCopy[:0]
	s.ipsMoved = false
	if s.carry {
		c := &s.carryRec
		if c.blk < 0 {
			c.payOff = 0
			s.payCopy = append(s.payCopy, s.carryPay...)
		}
		if c.flags&recStkCopy != 0 {
			c.stkOff = 0
			s.stkCopy = append(s.stkCopy, s.carryStk...)
		}
		c.meta = s.metaIndex(s.carryMeta)
		s.carryMeta = nil
		if c.ext != 0 {
			s.exts = append(s.exts, s.carryExt)
			c.ext = int32(len(s.exts))
		}
		s.push(c)
		s.carryExt = heldExt{}
		s.carry = false
	}
	for {
		r.spSeen = false
		err := r.nextHeld()
		if err != nil {
			s.err = err
			// Nothing more will be read: the current block and stack
			// table can be handed out in place.
			s.blocks = append(s.blocks, r.blk)
			if !s.ipsMoved {
				s.stretchIPs = r.ips[:cap(r.ips)]
			}
			break
		}
		if r.spSeen && s.n > 1 {
			// The event just held came after a sequence point: everything
			// before it is complete. It opens the next stretch, where its
			// payload is in the first block.
			s.n--
			c := &s.carryRec
			*c = *s.rec(s.n)
			s.carryMeta = s.metas[c.meta]
			if c.blk >= 0 {
				c.blk = 0
			} else {
				s.carryPay = append(s.carryPay[:0], s.payCopy[c.payOff:c.payOff+c.payLen]...)
			}
			if c.flags&recStkCopy != 0 {
				s.carryStk = append(s.carryStk[:0], s.stkCopy[c.stkOff:c.stkOff+c.stkLen]...)
			}
			if c.ext != 0 {
				s.carryExt = s.exts[c.ext-1]
			}
			s.carry = true
			break
		}
	}
	// Runs: contiguous ranges of non-decreasing timestamps. Sift each new
	// run up into the heap.
	n := s.n
	for start := int32(0); start < n; {
		end := start + 1
		prev := s.rec(start).ts
		for end < n {
			ts := s.rec(end).ts
			if ts < prev {
				break
			}
			prev = ts
			end++
		}
		s.runs = append(s.runs, mergeRun{s.rec(start).ts, start, end})
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
				start := r.pos
				ok, err := r.decodeEvent()
				if err != nil {
					r.err = err
					return err
				}
				if ok {
					r.hold(start)
					return nil
				}
				continue
			}
			r.inEvents = false
			// The block is used up; events held from it stay valid.
			s.blocks = append(s.blocks, r.blk)
			r.blk = nil
			if n := len(s.spare); n > 0 {
				r.blk = s.spare[n-1][:0]
				s.spare[n-1] = nil
				s.spare = s.spare[:n-1]
			}
		}
		var err error
		if r.ver == 6 {
			err = r.nextV6Block()
		} else {
			err = r.nextFSObject()
		}
		if err != nil {
			r.err = err
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

// metaIndex returns m's index in metas, adding it if needed.
func (s *sortState) metaIndex(m *Metadata) uint32 {
	if m.ID < 1<<16 {
		if int(m.ID) >= len(s.metaPos) {
			s.metaPos = append(s.metaPos, make([]uint32, int(m.ID)+1-len(s.metaPos))...)
		}
		if p := s.metaPos[m.ID]; p != 0 && int(p) <= len(s.metas) && s.metas[p-1] == m {
			return p - 1
		}
		s.metas = append(s.metas, m)
		s.metaPos[m.ID] = uint32(len(s.metas))
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

// hold records r.ev, decoded from the record at start in r.blk, for the
// current stretch. Its payload is found in r.blk, which becomes
// blocks[len(blocks)] when it is used up, and its stack in r.ips.
func (r *Reader) hold(start int) {
	s := &r.sorted
	ev := &r.ev
	m := ev.Metadata
	h := s.add()
	*h = heldRec{
		ts: ev.Timestamp, offset: ev.Offset,
		thread: ev.ThreadID, capture: ev.CaptureThreadID,
		meta: s.metaIndex(m),
		proc: ev.ProcessorNumber, seq: ev.SequenceNumber, sid: ev.StackID,
		payLen: uint32(len(ev.Payload)), stkLen: uint32(len(ev.Stack)),
		blk: int32(len(s.blocks)),
	}
	if ev.IsSorted {
		h.flags |= recSorted
	}
	if ev.Thread != nil || ev.Labels != nil || !ev.ActivityID.IsZero() || !ev.RelatedActivityID.IsZero() ||
		ev.ProcessID != uint64(r.info.ProcessID) || ev.Version != m.Version || ev.Level != m.Level ||
		ev.Opcode != m.Opcode || ev.Keywords != m.Keywords {
		s.exts = append(s.exts, heldExt{
			activity: ev.ActivityID, related: ev.RelatedActivityID, pid: ev.ProcessID,
			keywords: ev.Keywords, version: ev.Version, level: ev.Level, opcode: ev.Opcode,
			thread: ev.Thread, labels: ev.Labels,
		})
		h.ext = int32(len(s.exts))
	}
	// Where the payload starts: readEventHeader puts it right after the
	// fixed header of an uncompressed record, and ends the record with it
	// in a compressed one. A pointer comparison confirms it; if it ever
	// fails, the payload is copied.
	p := r.pos - len(ev.Payload)
	if !r.compress {
		p = start + 84
		if r.ver == 6 {
			p = start + 52
		}
	}
	if len(ev.Payload) > 0 && (p < 0 || p+len(ev.Payload) > len(r.blk) || &r.blk[p] != &ev.Payload[0]) {
		p = len(s.payCopy)
		s.payCopy = append(s.payCopy, ev.Payload...)
		h.blk = -1
	}
	h.payOff = uint32(p)
	if len(ev.Stack) > 0 {
		// The stack is a row of r.ips, found as decodeEvent found it.
		o, ok := r.stackRow(ev.StackID)
		if ok && o+len(ev.Stack) <= len(r.ips) && &r.ips[o] == &ev.Stack[0] {
			h.stkOff = uint32(o)
		} else {
			h.stkOff = uint32(len(s.stkCopy))
			s.stkCopy = append(s.stkCopy, ev.Stack...)
			h.flags |= recStkCopy
		}
	}
}

// stackRow returns the offset in r.ips of stack id's row.
func (r *Reader) stackRow(id uint32) (int, bool) {
	if i := id - r.stackBase; id >= r.stackBase && int(i) < len(r.stackRefs) {
		return int(r.stackRefs[i].off), true
	}
	if sr, ok := r.stacks[id]; ok {
		return int(sr.off), true
	}
	return 0, false
}
