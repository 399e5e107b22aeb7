package nettrace

import (
	"cmp"
	"slices"
)

// Order is the order in which Next delivers events.
type Order uint8

const (
	// FileOrder delivers events as the file holds them: in time order
	// within each thread, but threads interleaved by block. It costs
	// nothing beyond reading.
	FileOrder Order = iota
	// TimeOrder delivers events in timestamp order, as TraceEvent does.
	// From NetTrace V4 on, the runtime writes a sequence point once every
	// event before it has been written; the reader holds the events
	// between two sequence points (copies of their payloads and stacks,
	// in buffers it reuses), sorts them by timestamp, keeping each
	// thread's order for equal timestamps, and hands them out. Memory is
	// bounded by the largest stretch of the file between two sequence
	// points. Files before V4 have no sequence points and come in file
	// order either way.
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
type sortState struct {
	held    []heldEvent
	idx     []sortKey
	pos     int
	payload []byte   // arena of the held events' payloads
	stacks  []uint64 // arena of their stacks
	err     error    // what ended the raw stream, handed out after the held events

	// The event read just after a sequence point, which opens the next
	// stretch, with its own reused buffers.
	carry    bool
	carryEv  Event
	carryPay []byte
	carryStk []uint64
}

// sortKey orders a held event: by timestamp, then by arrival.
type sortKey struct {
	ts int64
	i  int32
}

// heldEvent is an event copied out of the reader, with its payload and
// stack as ranges of the arenas.
type heldEvent struct {
	ev                   Event
	payOff, payLen       int
	stackOff, stackCount int
}

// nextSorted hands out the held events in timestamp order, reading the
// next stretch up to a sequence point when they are used up.
func (r *Reader) nextSorted() (*Event, error) {
	s := &r.sorted
	for {
		if s.pos < len(s.idx) {
			h := &s.held[s.idx[s.pos].i]
			s.pos++
			r.ev = h.ev
			r.ev.Payload = s.payload[h.payOff : h.payOff+h.payLen : h.payOff+h.payLen]
			r.ev.Stack = nil
			if h.stackCount > 0 {
				r.ev.Stack = s.stacks[h.stackOff : h.stackOff+h.stackCount : h.stackOff+h.stackCount]
			}
			return &r.ev, nil
		}
		if s.err != nil {
			return nil, s.err
		}
		r.fillSorted()
	}
}

// fillSorted reads raw events up to the next sequence point (or the end),
// copies them into the arenas and sorts them.
func (r *Reader) fillSorted() {
	s := &r.sorted
	s.held, s.payload, s.stacks = s.held[:0], s.payload[:0], s.stacks[:0]
	if s.carry {
		s.hold(&s.carryEv, s.carryPay, s.carryStk)
		s.carry = false
	}
	for {
		r.spSeen = false
		ev, err := r.nextRaw()
		if err != nil {
			s.err = err
			break
		}
		if r.spSeen && len(s.held) > 0 {
			// ev came after a sequence point: everything held is
			// complete. ev opens the next stretch.
			s.carryEv = *ev
			s.carryPay = append(s.carryPay[:0], ev.Payload...)
			s.carryStk = append(s.carryStk[:0], ev.Stack...)
			s.carry = true
			break
		}
		s.hold(ev, ev.Payload, ev.Stack)
	}
	// Sort compact keys; the index breaks ties, so the order is stable
	// (each thread's events keep their file order) without a stable sort.
	s.idx = s.idx[:0]
	for i := range s.held {
		s.idx = append(s.idx, sortKey{s.held[i].ev.Timestamp, int32(i)})
	}
	slices.SortFunc(s.idx, func(a, b sortKey) int {
		if c := cmp.Compare(a.ts, b.ts); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	s.pos = 0
}

// hold copies ev, its payload and its stack into the arenas.
func (s *sortState) hold(ev *Event, payload []byte, stack []uint64) {
	h := heldEvent{ev: *ev, payOff: len(s.payload), payLen: len(payload), stackOff: len(s.stacks), stackCount: len(stack)}
	h.ev.Payload, h.ev.Stack = nil, nil
	s.payload = append(s.payload, payload...)
	s.stacks = append(s.stacks, stack...)
	s.held = append(s.held, h)
}
