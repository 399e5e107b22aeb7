package etl

import (
	"errors"
	"fmt"
	"io"
)

// Order is the order in which a Reader delivers events.
type Order uint8

const (
	// TimeOrder merges the per-processor buffer streams by timestamp, as
	// the Windows consumer API (and so TraceEvent) does: the header
	// buffer's events first, then always the pending event with the
	// smallest timestamp across processors (ties go to the buffer earlier
	// in the file). Within one processor's stream events keep their file
	// order. It needs random access (io.ReaderAt).
	TimeOrder Order = iota
	// FileOrder delivers events as they are stored: buffer by buffer in
	// file order, each buffer's events in order. It needs only an
	// io.Reader and holds one buffer in memory.
	FileOrder
)

// String returns "TimeOrder" or "FileOrder".
func (o Order) String() string {
	switch o {
	case TimeOrder:
		return "TimeOrder"
	case FileOrder:
		return "FileOrder"
	}
	return fmt.Sprintf("Order(%d)", uint8(o))
}

// ErrTruncated is wrapped by the error Next returns when the file ends
// inside a buffer (after every complete event has been delivered).
var ErrTruncated = errors.New("file is truncated")

// ErrUnsupported is wrapped by errors about buffers or events in a form
// this package cannot read.
var ErrUnsupported = errors.New("unsupported")

// FormatError reports malformed or unsupported data, naming the buffer
// and, when it is about one event, the event's offset.
type FormatError struct {
	Buffer       int   // buffer index in file order
	BufferOffset int64 // file offset of the buffer
	// EventOffset is the event's Offset (see Event.Offset), or -1.
	EventOffset int64
	Err         error
}

// Error formats the error as "etl: buffer N at offset O: event at E: …".
func (e *FormatError) Error() string {
	if e.EventOffset >= 0 {
		return fmt.Sprintf("etl: buffer %d at offset %d: event at %d: %v", e.Buffer, e.BufferOffset, e.EventOffset, e.Err)
	}
	return fmt.Sprintf("etl: buffer %d at offset %d: %v", e.Buffer, e.BufferOffset, e.Err)
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// bufInfo locates one buffer in the file.
type bufInfo struct {
	index int
	off   int64
	size  int // bytes of the buffer present in the file
	trunc bool
}

// stream is one sequence of buffers read in order: one processor's in
// TimeOrder, the whole file in FileOrder.
type stream struct {
	proc  uint16
	prio  int // 0 for the header buffer, which goes first
	bufs  []bufInfo
	next  int // next entry of bufs
	info  bufInfo
	raw   []byte // the buffer as stored
	exp   []byte // header + expanded data, for compressed buffers
	buf   []byte // the events area: raw or exp, cut at the used end
	pos   int    // next event in buf
	trunc bool   // buf is cut short by the end of the file
	ev    Event
	has   bool  // ev holds an event not yet delivered
	need  bool  // must move to its next event before the next merge
	done  bool  // no more buffers
	key   int64 // ordering timestamp of ev
}

// Reader reads events from an ETL file.
type Reader struct {
	src    io.Reader   // FileOrder
	ra     io.ReaderAt // TimeOrder
	base   int64       // offset of the file in ra
	size   int64       // file size, TimeOrder
	closer io.Closer
	order  Order

	hdr LogHeader
	clk clock
	ptr int // the log's pointer size, 4 or 8

	streams []*stream

	// FileOrder state.
	fileOff int64
	nbuf    int
	eof     bool

	expMem   int   // capacity of all streams' expanded buffers (TimeOrder)
	deferred error // truncation, reported when everything else is read
	finished bool
}

// NewReader returns a Reader over an ETL file. If r is also an
// io.ReaderAt and an io.Seeker (an *os.File, *bytes.Reader, …) the file
// starts at r's current offset and events come in TimeOrder; otherwise r
// is read once, front to back, and events come in FileOrder. NewReader
// reads and decodes the first buffer's log header.
func NewReader(r io.Reader) (*Reader, error) {
	if ra, ok := r.(io.ReaderAt); ok {
		if sk, ok := r.(io.Seeker); ok {
			cur, err1 := sk.Seek(0, io.SeekCurrent)
			end, err2 := sk.Seek(0, io.SeekEnd)
			if err1 == nil && err2 == nil {
				if _, err := sk.Seek(cur, io.SeekStart); err != nil {
					return nil, fmt.Errorf("etl: %w", err)
				}
				return newReaderAt(ra, cur, end-cur)
			}
		}
	}
	return NewFileOrderReader(r)
}

// NewReaderAt returns a Reader that delivers events in TimeOrder from the
// size bytes of ra starting at offset 0.
func NewReaderAt(ra io.ReaderAt, size int64) (*Reader, error) {
	return newReaderAt(ra, 0, size)
}

// NewFileOrderReader returns a Reader that reads r front to back once and
// delivers events in FileOrder.
func NewFileOrderReader(r io.Reader) (*Reader, error) {
	rd := &Reader{src: r, order: FileOrder}
	s := &stream{need: true}
	rd.streams = []*stream{s}
	if err := rd.readSeq(s); err != nil {
		return nil, err
	}
	if err := rd.init(s); err != nil {
		return nil, err
	}
	return rd, nil
}

func newReaderAt(ra io.ReaderAt, base, size int64) (*Reader, error) {
	rd := &Reader{ra: ra, base: base, size: size, order: TimeOrder}
	if err := rd.scan(); err != nil {
		return nil, err
	}
	first := rd.streams[0]
	if err := rd.load(first); err != nil {
		return nil, err
	}
	if err := rd.init(first); err != nil {
		return nil, err
	}
	return rd, nil
}

// init decodes the log header from the first event of the first buffer,
// which s holds.
func (r *Reader) init(s *stream) error {
	fail := func(err error) error {
		if s.trunc {
			// The first buffer is cut short: the header event is missing
			// or incomplete because the file is truncated.
			err = fmt.Errorf("%w: %v", ErrTruncated, err)
		}
		return &FormatError{Buffer: 0, BufferOffset: 0, EventOffset: -1, Err: fmt.Errorf("no log file header: %w", err)}
	}
	if len(s.buf) < bufferHeaderSize {
		return &FormatError{Buffer: 0, BufferOffset: 0, EventOffset: -1, Err: fmt.Errorf("%w: empty file", ErrTruncated)}
	}
	_, err := parseEvent(&s.ev, s.buf, bufferHeaderSize, 8)
	if err == errEndOfBuffer {
		err = errors.New("the first buffer holds no events")
	}
	if err != nil {
		return fail(err)
	}
	e := &s.ev
	if e.HeaderKind != SystemHeader || e.HookID != 0 {
		return fail(fmt.Errorf("first event is a %v with hook id %#04x, not the EventTrace header", e.HeaderKind, e.HookID))
	}
	if err := parseLogHeader(&r.hdr, e.Payload, e.PointerSize); err != nil {
		return fail(err)
	}
	r.hdr.HeaderTimestamp = e.Timestamp
	r.hdr.HeaderProcessID = e.ProcessID
	r.hdr.HeaderThreadID = e.ThreadID
	r.hdr.HeaderVersion = uint16(e.Version)
	r.hdr.DataLen = len(e.Payload)
	r.clk = newClock(&r.hdr)
	r.ptr = e.PointerSize
	if r.hdr.PointerSize == 4 || r.hdr.PointerSize == 8 {
		r.ptr = int(r.hdr.PointerSize)
	}
	return nil
}

// Header returns the log header. The value belongs to the Reader.
func (r *Reader) Header() *LogHeader { return &r.hdr }

// Order reports the order in which events are delivered.
func (r *Reader) Order() Order { return r.order }

// RelativeMSec converts a raw timestamp to milliseconds since the header
// event, the session start as TraceEvent reports it
// (TimeStampRelativeMSec). Like TraceEvent it clamps earlier times to 0.
func (r *Reader) RelativeMSec(ts int64) float64 {
	d := ts - r.hdr.HeaderTimestamp
	if d < 0 {
		d = 0
	}
	return float64(d) * 1000 / float64(r.hdr.Frequency)
}

// Close closes what Open opened; for Readers made with NewReader and
// friends it closes nothing.
func (r *Reader) Close() error {
	r.finished = true
	if r.closer != nil {
		c := r.closer
		r.closer = nil
		return c.Close()
	}
	return nil
}

// Next returns the next event, or io.EOF after the last one. The *Event
// and its slices are valid until the next call. A malformed buffer or
// event gives a *FormatError; calling Next again continues with the next
// buffer. A truncated file gives every complete event, then an error
// wrapping ErrTruncated, then io.EOF.
func (r *Reader) Next() (*Event, error) {
	if r.finished {
		return nil, io.EOF
	}
	var best *stream
	for _, s := range r.streams {
		if s.need {
			if err := r.advance(s); err != nil {
				return nil, err
			}
			s.need = false
		}
		if !s.has {
			continue
		}
		if best == nil || s.prio < best.prio || s.prio == best.prio && (s.key < best.key || s.key == best.key && s.info.index < best.info.index) {
			best = s
		}
	}
	if best == nil {
		r.finished = true
		if r.deferred == nil {
			r.checkBufferCount()
		}
		if r.deferred != nil {
			return nil, r.deferred
		}
		return nil, io.EOF
	}
	best.has = false
	best.need = true
	return &best.ev, nil
}

// checkBufferCount notes a file that ends cleanly between two buffers but
// holds fewer buffers than the log header says were written: it was cut.
func (r *Reader) checkBufferCount() {
	want := int(r.hdr.BuffersWritten)
	seen := r.nbuf
	if r.order == TimeOrder {
		seen = 0
		for _, s := range r.streams {
			seen += len(s.bufs)
		}
	}
	if want > 0 && seen < want {
		end := r.size
		if r.order == FileOrder {
			end = r.fileOff
		}
		r.deferred = &FormatError{Buffer: seen, BufferOffset: end, EventOffset: -1,
			Err: fmt.Errorf("%w: the log header says %d buffers were written, the file holds %d", ErrTruncated, want, seen)}
	}
}

// advance moves s to its next event, loading buffers as needed. On error
// s stays marked for advancing, so the next call carries on.
func (r *Reader) advance(s *stream) error {
	for {
		if s.buf != nil && s.pos < len(s.buf) {
			start := s.pos
			size, err := parseEvent(&s.ev, s.buf, start, r.ptr)
			if err == nil {
				e := &s.ev
				e.Offset = s.info.off + int64(start)
				e.Buffer = s.info.index
				e.ProcessorNumber = s.proc
				if e.HeaderKind == MessageHeader && e.Timestamp == 0 {
					e.Timestamp = s.key // no timestamp: keep the stream's position
				}
				e.Time = r.clk.time(e.Timestamp)
				s.key = e.Timestamp
				s.pos = start + align8(size)
				s.has = true
				return nil
			}
			s.pos = len(s.buf)
			if err != errEndOfBuffer {
				if s.trunc {
					r.noteTruncated(s)
					continue
				}
				return &FormatError{Buffer: s.info.index, BufferOffset: s.info.off, EventOffset: s.info.off + int64(start), Err: err}
			}
		}
		if s.trunc {
			r.noteTruncated(s)
		}
		s.buf = nil
		if r.order == FileOrder {
			if err := r.readSeq(s); err != nil {
				return err
			}
		} else if err := r.load(s); err != nil {
			return err
		}
		if s.done {
			return nil
		}
		s.pos = bufferHeaderSize
	}
}

func (r *Reader) noteTruncated(s *stream) {
	s.trunc = false
	if r.deferred == nil {
		r.deferred = &FormatError{Buffer: s.info.index, BufferOffset: s.info.off, EventOffset: -1,
			Err: fmt.Errorf("%w: buffer has %d bytes in the file, its header says more", ErrTruncated, s.info.size)}
	}
}

// scan reads every buffer header (TimeOrder) and sorts the buffers into
// per-processor streams; the first buffer becomes a stream of its own.
func (r *Reader) scan() error {
	var hb [bufferHeaderSize]byte
	byProc := map[uint16]*stream{}
	for off, i := int64(0), 0; off < r.size; i++ {
		left := r.size - off
		if left < bufferHeaderSize {
			r.deferred = &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1,
				Err: fmt.Errorf("%w: %d bytes left, too few for a buffer header", ErrTruncated, left)}
			break
		}
		if n, err := r.ra.ReadAt(hb[:], r.base+off); n < len(hb) {
			return &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1, Err: err}
		}
		bs := int64(le.Uint32(hb[0:]))
		if bs < bufferHeaderSize || bs > maxBufferSize {
			if i == 0 {
				return &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1, Err: fmt.Errorf("buffer size %d is out of range [%d, %d]: not an ETL file?", bs, bufferHeaderSize, maxBufferSize)}
			}
			// Without a size there is no way to the next buffer.
			r.deferred = &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1, Err: fmt.Errorf("buffer size %d is out of range [%d, %d]; the rest of the file is unreadable", bs, bufferHeaderSize, maxBufferSize)}
			break
		}
		info := bufInfo{index: i, off: off, size: int(bs)}
		if bs > left {
			info.size, info.trunc = int(left), true
		}
		proc := procOf(hb[:])
		var s *stream
		if i == 0 {
			s = &stream{proc: proc, prio: 0, need: true}
			r.streams = append(r.streams, s)
		} else if s = byProc[proc]; s == nil {
			s = &stream{proc: proc, prio: 1, need: true}
			byProc[proc] = s
			r.streams = append(r.streams, s)
		}
		s.bufs = append(s.bufs, info)
		off += int64(info.size)
	}
	if len(r.streams) == 0 {
		if r.deferred != nil {
			return r.deferred
		}
		return &FormatError{Buffer: 0, BufferOffset: 0, EventOffset: -1, Err: fmt.Errorf("%w: empty file", ErrTruncated)}
	}
	return nil
}

// procOf returns the processor of a buffer from its header.
func procOf(h []byte) uint16 {
	if le.Uint16(h[52:])&BufferFlagProcessorIndex != 0 {
		return le.Uint16(h[40:])
	}
	return uint16(h[40])
}

// load reads s's next buffer with ReadAt (TimeOrder).
func (r *Reader) load(s *stream) error {
	if s.next >= len(s.bufs) {
		s.done = true
		return nil
	}
	info := s.bufs[s.next]
	s.next++
	s.raw = grow(s.raw, info.size)
	if n, err := r.ra.ReadAt(s.raw, r.base+info.off); n < len(s.raw) {
		return &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: -1, Err: err}
	}
	return r.setBuffer(s, info)
}

// readSeq reads the next buffer from the sequential source (FileOrder).
func (r *Reader) readSeq(s *stream) error {
	if r.eof {
		s.done = true
		return nil
	}
	info := bufInfo{index: r.nbuf, off: r.fileOff}
	s.raw = grow(s.raw, bufferHeaderSize)
	n, err := io.ReadFull(r.src, s.raw)
	if err == io.EOF {
		r.eof, s.done = true, true
		return nil
	}
	if err != nil {
		r.eof, s.done = true, true
		if err == io.ErrUnexpectedEOF {
			r.deferred = &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: -1,
				Err: fmt.Errorf("%w: %d bytes left, too few for a buffer header", ErrTruncated, n)}
			if info.index == 0 {
				return r.deferred
			}
			return nil
		}
		return &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: -1, Err: err}
	}
	bs := int(le.Uint32(s.raw[0:]))
	if bs < bufferHeaderSize || bs > maxBufferSize {
		r.eof, s.done = true, true
		return &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: -1,
			Err: fmt.Errorf("buffer size %d is out of range [%d, %d]; the rest of the file is unreadable", bs, bufferHeaderSize, maxBufferSize)}
	}
	// Read the rest in doubling steps, so a hostile size costs at most
	// twice what is there.
	have := bufferHeaderSize
	for have < bs {
		step := min(bs-have, max(have, 4096))
		s.raw = grow(s.raw, have+step)
		n, err := io.ReadFull(r.src, s.raw[have:have+step])
		have += n
		if err != nil {
			r.eof = true
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				info.trunc = true
				break
			}
			return &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: -1, Err: err}
		}
	}
	s.raw = s.raw[:have]
	info.size = have
	r.nbuf++
	r.fileOff += int64(have)
	s.proc = procOf(s.raw)
	return r.setBuffer(s, info)
}

// Limits on compressed buffers: one may expand to at most
// maxExpandFloor + maxExpandRatio times its compressed size (real ETW
// buffers compress 3 to 10 times), and in TimeOrder, where every
// processor's current buffer is held, all expanded buffers together to at
// most maxExpandTotal bytes.
const (
	maxExpandFloor = 64 << 10
	maxExpandRatio = 256
	maxExpandTotal = 1 << 30
)

// grow returns b resized to n bytes, reusing its storage when it can.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	nb := make([]byte, n, max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}

// setBuffer validates the buffer in s.raw and points s.buf at its events,
// expanding it first if it is compressed.
func (r *Reader) setBuffer(s *stream, info bufInfo) error {
	s.info = info
	s.trunc = info.trunc
	s.pos = bufferHeaderSize
	raw := s.raw[:info.size]
	fail := func(err error) error {
		s.buf = nil
		if info.trunc {
			r.noteTruncated(s)
			return nil
		}
		return &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: -1, Err: err}
	}
	if len(raw) < bufferHeaderSize {
		return fail(fmt.Errorf("%w: %d bytes, too few for a buffer header", ErrTruncated, len(raw)))
	}
	saved := int(le.Uint32(raw[4:]))
	flags := le.Uint16(raw[52:])
	btype := le.Uint16(raw[54:])
	stated := int(le.Uint32(raw[0:]))
	if saved == 0 {
		saved = int(le.Uint32(raw[48:])) // Offset
	}
	if saved < bufferHeaderSize || saved > maxBufferSize {
		return fail(fmt.Errorf("used size %d is out of range (buffer type %d, flags %#x)", saved, btype, flags))
	}
	if flags&BufferFlagCompressed != 0 {
		// Bound what a few compressed bytes may claim to expand to, and
		// what all the streams' expanded buffers may hold at once.
		packed := len(raw) - bufferHeaderSize
		if saved > maxExpandFloor+maxExpandRatio*packed && !info.trunc {
			return fail(fmt.Errorf("compressed buffer of %d bytes claims to expand to %d, more than %d times its size", packed, saved, maxExpandRatio))
		}
		// The expansion buffer grows as output arrives, not to the size
		// the header claims, so a claim the data does not back costs
		// nothing; what all streams hold at once is bounded.
		before := cap(s.exp)
		s.exp = append(grow(s.exp, bufferHeaderSize)[:0], raw[:bufferHeaderSize]...)
		var err error
		s.exp, err = decompressLZ77(s.exp, raw[bufferHeaderSize:], saved)
		if r.order == TimeOrder {
			r.expMem += cap(s.exp) - before
			if r.expMem > maxExpandTotal {
				return fail(fmt.Errorf("expanded buffers held at once reach %d bytes, over the %d-byte limit", r.expMem, maxExpandTotal))
			}
		}
		if err != nil && !info.trunc {
			return fail(fmt.Errorf("%w: compressed buffer (flags %#x): %v", ErrUnsupported, flags, err))
		}
		if len(s.exp) != saved && !info.trunc {
			return fail(fmt.Errorf("%w: compressed buffer expands to %d bytes, its header says %d", ErrUnsupported, len(s.exp), saved))
		}
		s.buf = s.exp
		if len(s.exp) < saved {
			s.trunc = true
		}
		return nil
	}
	if saved > stated {
		return fail(fmt.Errorf("used size %d exceeds the buffer size %d", saved, stated))
	}
	if saved > len(raw) {
		// Truncated: read the complete events that are there.
		saved = len(raw)
	}
	s.buf = raw[:saved]
	return nil
}
