package etl

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clrgo/clrevents/internal/numfmt"
	"github.com/clrgo/clrevents/internal/timeorder"
)

// Order is the order in which a Reader delivers events.
type Order uint8

const (
	// TimeOrder merges the per-processor buffer streams by timestamp, as
	// the Windows consumer API (and so TraceEvent) does: the header
	// buffer's events first, then always the pending event with the
	// smallest timestamp across processors (ties go to the buffer earlier
	// in the file). Within one processor's stream events keep their file
	// order, but for a circular log that filled its file and wrapped,
	// whose processor's buffers are read in the order their headers'
	// times give (LogHeader.Circular). It needs random access
	// (io.ReaderAt).
	TimeOrder Order = iota
	// FileOrder delivers events as they are stored: buffer by buffer in
	// file order, each buffer's events in order (a wrapped circular
	// log's newest buffers before its oldest). It needs only an
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

// ErrTruncated is wrapped by the errors about a file that ends inside a
// buffer, or before the buffers its log header counts: the *FormatError of
// such a Damage record, and so Next's final *DamageError. It is an
// io.ErrUnexpectedEOF too (errors.Is), as a cut EventPipe trace's error
// is: code that tells a cut from other damage does it one way for both.
var ErrTruncated error = truncated{}

type truncated struct{}

func (truncated) Error() string        { return "file is truncated" }
func (truncated) Is(target error) bool { return target == io.ErrUnexpectedEOF }

// ErrDamaged is wrapped by Next's final error when parts of the log could
// not be read and were skipped (a *DamageError).
var ErrDamaged = errors.New("damaged log")

// ErrUnsupported is wrapped by errors about buffers or events in a form
// this package cannot read.
var ErrUnsupported = errors.New("unsupported")

// FormatError reports malformed or unsupported data, naming the buffer
// and, when it is about one event, the event's offset.
type FormatError struct {
	// Log names the log, in a Reader that merges several (Merge): its
	// file name, or "log N". Empty otherwise.
	Log          string
	Buffer       int   // buffer index in file order
	BufferOffset int64 // file offset of the buffer
	// EventOffset is the event's Offset (see Event.Offset), or -1.
	EventOffset int64
	// Compressed says the buffer is stored compressed: EventOffset is
	// then the buffer's offset plus the event's in the expanded buffer,
	// not a file offset.
	Compressed bool
	Err        error
}

// Error formats the error as "etl: buffer N at offset O: event at E: …";
// for a compressed buffer "…: event at byte X of the buffer expanded (it
// is stored compressed): …", which no file offset locates. In a merged
// Reader the log's name follows "etl: ".
func (e *FormatError) Error() string {
	log := ""
	if e.Log != "" {
		log = e.Log + ": "
	}
	if e.EventOffset >= 0 && e.Compressed {
		return fmt.Sprintf("etl: %sbuffer %d at offset %d: event at byte %d of the buffer expanded (it is stored compressed): %v", log, e.Buffer, e.BufferOffset, e.EventOffset-e.BufferOffset, e.Err)
	}
	if e.EventOffset >= 0 {
		return fmt.Sprintf("etl: %sbuffer %d at offset %d: event at %d: %v", log, e.Buffer, e.BufferOffset, e.EventOffset, e.Err)
	}
	return fmt.Sprintf("etl: %sbuffer %d at offset %d: %v", log, e.Buffer, e.BufferOffset, e.Err)
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// Damage is a part of the log that the reader could not read and skipped.
//
// For a buffer stored uncompressed, Offset and Length are file bytes: the
// buffer's start, or the event at fault inside it, to the end of the
// buffer (or to where reading resumed, when the next buffer header had to
// be searched for). A compressed buffer is one unit on disk: its record
// covers the whole buffer as stored, and Err names the event (an offset
// into the expanded buffer, as Event.Offset) where reading stopped; the
// events before it were delivered. Contiguous ranges make one record.
type Damage struct {
	// Log is the index of the damaged log in a Reader that merges
	// several (Merge), 0 otherwise: Buffer and Offset are in its file.
	Log    int
	Buffer int   // index in file order of the (first) buffer skipped
	Offset int64 // file offset of the first byte skipped (the buffer's start, or the event at fault inside it)
	Length int64 // bytes skipped from Offset (to the end of the buffer, or to where reading resumed)
	// Events is the events lost where known: 1 for an event left out for
	// its garbled timestamp (Length is then the event's, or 0 in a
	// compressed buffer, whose bytes the file does not hold as such), -1
	// for the rest of a buffer (ETL logs never count a buffer's events).
	// It is 0, and Length 0, only on the record of a file holding more
	// buffers than its log header counts, which skipped nothing: Buffer
	// and Offset name the first buffer beyond the count.
	Events int64
	// Missing is, on the record of a log cut short, how many buffers the
	// log header says were written beyond those the file holds (the last
	// of which may be cut short itself): their bytes are not in the
	// file, so Length does not count them. 0 otherwise.
	Missing int
	Err     *FormatError // what was wrong, naming buffer, offsets and cause
}

// DamageError is Next's final error, instead of io.EOF, when parts of the
// log were damaged and skipped; Next returns it on every call after the
// last event. errors.Is(err, ErrDamaged) holds, and errors.Is and
// errors.As also see each record's *FormatError (so errors.Is(err,
// ErrTruncated) holds when the file was cut).
type DamageError struct {
	Damage []Damage // every skipped range, in file order
	// Stopped is the error that ended the log's data early, after the
	// damage, where one did: Open's zipped log whose member failed part
	// way (a checksum, damaged compressed bytes). errors.Is sees it too.
	Stopped error
}

// Error summarises the damage in one line: how many ranges, bytes and
// events (where known) were skipped, then the first range's error, e.g.
// "etl: 2 damaged buffers skipped (131,072 bytes); the first: buffer 12 at
// offset 786432: event at 786600: …". Where some of the ranges are single
// events (left out for their garbled times) they are "damaged ranges".
func (e *DamageError) Error() string {
	if len(e.Damage) == 0 {
		return "etl: " + ErrDamaged.Error()
	}
	var bytes, events int64
	unknown, missing, notes := 0, 0, 0
	for _, d := range e.Damage {
		bytes += d.Length
		missing += d.Missing
		switch {
		case d.Length == 0 && d.Events == 0 && d.Missing == 0:
			notes++ // skipped nothing: more buffers than the header counts
		case d.Events < 0:
			unknown++
		default:
			events += d.Events
		}
	}
	if notes == len(e.Damage) && e.Damage[0].Err != nil {
		s := e.Damage[0].Err.Error()
		if e.Stopped != nil {
			s += "; then reading stopped: " + e.Stopped.Error()
		}
		return s
	}
	if len(e.Damage) == 1 && bytes == 0 && missing > 0 {
		// Cut short between two buffers: nothing in the file was
		// skipped.
		s := "etl: the log is cut short, " + numfmt.Thousands(int64(missing)) + " buffers missing at its end: " + strings.TrimPrefix(e.Damage[0].Err.Error(), "etl: ")
		if e.Stopped != nil {
			s += "; then reading stopped: " + e.Stopped.Error()
		}
		return s
	}
	// Damage is to buffers, or also to single events (garbled times).
	ranges := len(e.Damage) - notes
	what := "damaged buffer"
	if unknown < ranges {
		what = "damaged range"
	}
	s := "etl: " + what + " skipped"
	if ranges > 1 {
		s = "etl: " + strconv.Itoa(ranges) + " " + what + "s skipped"
	}
	s += " (" + numfmt.Thousands(bytes) + " bytes"
	noun := " events"
	if events == 1 {
		noun = " event"
	}
	switch {
	case unknown == 0:
		s += ", " + numfmt.Thousands(events) + noun
	case events > 0:
		s += ", at least " + numfmt.Thousands(events) + noun
	}
	if missing > 0 {
		s += "; then " + numfmt.Thousands(int64(missing)) + " buffers missing at the log's end"
	}
	s += ")"
	first := "?"
	if fe := e.Damage[0].Err; fe != nil {
		first = fe.Error()
		if len(first) > 5 && first[:5] == "etl: " {
			first = first[5:]
		}
	}
	if len(e.Damage) > 1 {
		s += "; the first: " + first
	} else {
		s += ": " + first
	}
	if e.Stopped != nil {
		s += "; then reading stopped: " + e.Stopped.Error()
	}
	return s
}

// Unwrap returns ErrDamaged and each record's *FormatError.
func (e *DamageError) Unwrap() []error {
	errs := make([]error, 0, 1+len(e.Damage))
	errs = append(errs, ErrDamaged)
	for _, d := range e.Damage {
		if d.Err != nil {
			errs = append(errs, d.Err)
		}
	}
	if e.Stopped != nil {
		errs = append(errs, e.Stopped)
	}
	return errs
}

// bufInfo locates one buffer in the file.
type bufInfo struct {
	index int
	off   int64
	size  int // bytes of the buffer present in the file
	trunc bool
	want  int64 // the size its header states
	// cut is where the next buffer begins when a search found it inside
	// the extent this buffer's header states (bytes were lost from this
	// one); 0 otherwise. Damage to this buffer ends there.
	cut int64
	// ts is the time its header gives it (TimeStamp, when it was
	// written), which orders a circular log's buffers (see scan).
	ts int64
}

// stream is one sequence of buffers read in order: one processor's in
// TimeOrder, the whole file in FileOrder.
type stream struct {
	proc       uint16
	prio       int // 0 for the header buffer, which goes first
	bufs       []bufInfo
	next       int // next entry of bufs
	info       bufInfo
	raw        []byte // the buffer as stored
	exp        []byte // header + expanded data, for compressed buffers
	buf        []byte // the events area: raw or exp, cut at the used end
	pos        int    // next event in buf
	trunc      bool   // buf is cut short by the end of the file
	compressed bool   // the buffer is stored compressed
	// fault is why buf ends early: a compressed buffer whose expansion
	// failed part way. It is reported when reading reaches it.
	fault *FormatError
	ev    Event
	has   bool  // ev holds an event not yet delivered
	need  bool  // must move to its next event before the next merge
	done  bool  // no more buffers
	key   int64 // ordering timestamp of ev
	// The timestamp of the last event taken from buffer tsBuf-1 (0: none
	// yet), which the next one in that buffer may not precede (timeOK).
	prevTS int64
	tsBuf  int
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

	// FileOrder state: the next buffer's offset and index, and the bytes
	// read from src but not consumed (look, which starts at file offset
	// lookOff; its storage is lookBuf).
	fileOff int64
	nbuf    int // also, in TimeOrder, the number of buffers scanned
	eof     bool
	look    []byte
	lookBuf []byte
	lookOff int64
	srcEOF  bool

	// What a buffer header may state, from the log header (setLimits).
	sizeLimit int64 // the largest buffer size
	usedLimit int   // the largest used (expanded) size
	// stride is BufferSize while every buffer so far has been that size in
	// an uncompressed log: a damaged buffer header is then skipped to the
	// next multiple. 0 otherwise.
	stride int64
	nproc  int        // processors, for the header checks of resync; 0: unknown
	spans  [][2]int64 // ranges a buffer's timestamp may take (resync)
	// tol is how far, in timestamp ticks (a second's worth), an event may
	// be out of order with its neighbours in a buffer before its time is
	// taken as garbled (timeOK).
	tol uint64
	// maxGap: two events of one buffer are at most this far apart (the
	// session's length, at least a minute, and tol), where the log header
	// states the session's end; 0 otherwise.
	maxGap   uint64
	resynced bool   // a buffer header was searched for: buffer counts are estimates
	scratch  []byte // TimeOrder: bytes peeked for resync
	lz       []byte // resync: the start of a candidate's expansion

	// readBufs holds, by its header but for the sequence number and its
	// first bytes (headerSum), the first buffer read with each
	// (noteBuffer): a later one with the same is a repeat. One entry per
	// buffer header read.
	readBufs map[headerSum]bufRef
	// headers counts the buffer headers read, repeats left out; over is
	// the first of them beyond the log header's BuffersWritten, if any.
	headers int
	over    *bufRef
	repeats int // buffers skipped as repeats

	expMem int // capacity of all streams' expanded buffers (TimeOrder)
	// hdrEnd is where the log header's event ends in the first buffer: a
	// search never finds a buffer before it.
	hdrEnd int64

	strict   bool
	started  bool
	damage   []Damage
	pending  error // strict: the damage reported once every event before it is out
	fatal    error // returned by every call to Next: I/O errors, strict damage
	final    error // io.EOF or a *DamageError, once finished
	finished bool
	// stopped is the error at which Open's copy of a zipped log's data
	// ended early: the final error reports it.
	stopped error

	// name is the log's file name (Open), for a merge's errors.
	name string
	// merged is set in a Reader that reads several logs as one (Merge).
	merged *merged
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
	rd := &Reader{src: r, order: FileOrder, sizeLimit: maxBufferSize, usedLimit: maxBufferSize}
	s := &stream{need: true}
	rd.streams = []*stream{s}
	if err := rd.readSeq(s); err != nil {
		return nil, err
	}
	if s.done {
		return nil, &FormatError{Buffer: 0, BufferOffset: 0, EventOffset: -1, Err: fmt.Errorf("%w: empty file", ErrTruncated)}
	}
	if err := rd.init(s); err != nil {
		return nil, err
	}
	if next, n, err := rd.checkFirst(s); err != nil {
		return nil, err
	} else if n > 0 {
		rd.fileOff, rd.nbuf = next, n
	}
	return rd, nil
}

func newReaderAt(ra io.ReaderAt, base, size int64) (*Reader, error) {
	rd := &Reader{ra: ra, base: base, size: size, order: TimeOrder, sizeLimit: maxBufferSize, usedLimit: maxBufferSize}
	if size < bufferHeaderSize {
		err := fmt.Errorf("%w: empty file", ErrTruncated)
		if size > 0 {
			err = fmt.Errorf("%w: %d bytes, too few for a buffer header", ErrTruncated, size)
		}
		return nil, &FormatError{Buffer: 0, BufferOffset: 0, EventOffset: -1, Err: err}
	}
	var hb [bufferHeaderSize]byte
	if n, err := ra.ReadAt(hb[:], base); n < len(hb) {
		return nil, &FormatError{Buffer: 0, BufferOffset: 0, EventOffset: -1, Err: readErr(err)}
	}
	bs := int64(le.Uint32(hb[0:]))
	if bs < bufferHeaderSize || bs > maxBufferSize {
		return nil, &FormatError{Buffer: 0, BufferOffset: 0, EventOffset: -1, Err: fmt.Errorf("buffer size %d is out of range [%d, %d]: not an ETL file?", bs, bufferHeaderSize, maxBufferSize)}
	}
	info := bufInfo{index: 0, off: 0, size: int(min(bs, size)), trunc: bs > size, want: bs}
	first := &stream{proc: procOf(hb[:]), prio: 0, need: true, bufs: []bufInfo{info}}
	rd.streams = []*stream{first}
	if err := rd.load(first); err != nil {
		return nil, err
	}
	if first.done {
		return nil, rd.damage[0].Err // the first buffer did not read
	}
	if err := rd.init(first); err != nil {
		return nil, err
	}
	next, n, err := rd.checkFirst(first)
	if err != nil {
		return nil, err
	}
	linked := n == 0 // the next buffer is where the first's size leads
	if linked {
		next, n = int64(info.size), 1
	}
	if err := rd.scan(next, n, linked); err != nil {
		return nil, err
	}
	return rd, nil
}

// readErr is err, or io.ErrUnexpectedEOF for a short read that gave none.
func readErr(err error) error {
	if err == nil {
		return io.ErrUnexpectedEOF
	}
	return err
}

// init decodes the log header from the first event of the first buffer,
// which s holds, and sets what the header tells about the other buffers.
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
	hsize, err := parseEvent(&s.ev, s.buf, bufferHeaderSize, 8)
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
	r.setLimits(s.info.want)
	r.hdrEnd = bufferHeaderSize + int64(align8(hsize))
	return nil
}

// checkFirst gives the first buffer, s's, once init has read the log
// header from it, the checks of its stated size every other buffer's gets
// (checkSize, and tailHeader for a size that runs past the end of the
// file): only then are the log's limits known. A size the log does not
// allow gives no way to the next buffer, which is found as resync finds
// one after any bad header, searching from the end of the log header's
// event. That event is read (it is the log's header); the rest
// of the buffer is damage, as the whole of any other buffer whose header
// states an impossible size: its events are not delivered, and the bytes
// from the log header event's end (a compressed buffer's from its start)
// to the next buffer are recorded. checkFirst returns where the next
// buffer begins and how many buffers the range from the file's start to
// there is taken to hold, or n 0 when the first buffer passes.
func (r *Reader) checkFirst(s *stream) (next int64, n int, err error) {
	info := s.info
	// The first buffer, noted for the repeats of it: it is none.
	r.noteBuffer(0, 0, info.want, s.raw[:min(info.size, resyncLookahead)])
	from := min(r.hdrEnd, int64(info.size)) // the log header event's end
	why := r.checkSize(info.want)
	if why == nil && info.trunc {
		// A size that runs past the end of the file, while a buffer
		// header follows inside it (tailHeader), after the log
		// header's event.
		if at := r.tailHeader(s.raw[from-1 : info.size]); at > 0 {
			next = from - 1 + int64(at)
			why = pastEndErr(0, info.want, int64(info.size), int(next))
		}
	}
	if why == nil {
		return 0, 0, nil
	}
	if next > 0 {
		r.resynced = true
		if r.order == FileOrder {
			r.unread(next, s.raw[next:info.size])
		}
	} else {
		if !r.hdr.Compressed() && r.sizeLimit == int64(r.hdr.BufferSize) {
			// The log's buffers are BufferSize (uncompressed); the
			// first's size is damaged, not another: the next is
			// expected at the first multiple, where a header there
			// passes the checks.
			r.stride = r.sizeLimit
		}
		if r.order == FileOrder {
			// The buffer's bytes after the log header's event go back
			// in front of the look-ahead, for the search.
			r.unread(from, s.raw[from:info.size])
		}
		next, n, err = r.resync(0, from)
		if err != nil {
			return 0, 0, &FormatError{Buffer: 0, BufferOffset: 0, EventOffset: -1, Err: err}
		}
	}
	// Only the log header's event is read.
	s.buf = s.buf[:min(len(s.buf), int(r.hdrEnd))]
	s.trunc, s.fault = false, nil
	s.info.cut = next
	if r.order == FileOrder {
		// No search for a later header starts inside this buffer (as
		// in TimeOrder, whose scan starts at next).
		s.raw = nil
	}
	d := Damage{Buffer: 0, Offset: from, Length: next - from, Events: -1,
		Err: &FormatError{Buffer: 0, BufferOffset: 0, EventOffset: -1, Compressed: s.compressed, Err: why}}
	if s.compressed {
		d.Offset, d.Length = 0, next // a compressed buffer is one unit
	}
	r.addDamage(d)
	return next, max(n, 1), nil
}

// resyncMargin widens the span a buffer's timestamp must fall in (see
// setLimits): buffers are stamped when they are flushed, which may be a
// little after the session says it stopped.
const resyncMargin = 10 * time.Minute

// setLimits derives from the log header what the other buffers' headers
// may state: a buffer is at most BufferSize (compressed, at most what
// BufferSize bytes take as literals) and uses at most BufferSize; the
// processor is below NumberOfProcessors; the buffer's timestamp (in the
// events' clock, or as a FILETIME) falls between the session's start and
// its end, widened by the session's length and at least resyncMargin.
// first is the first buffer's stated size.
func (r *Reader) setLimits(first int64) {
	h := &r.hdr
	if bs := int64(h.BufferSize); bs >= bufferHeaderSize && bs <= maxBufferSize {
		r.usedLimit = int(bs)
		if h.Compressed() {
			r.sizeLimit = min(bs+bs/8+bufferHeaderSize, maxBufferSize)
		} else {
			r.sizeLimit = bs
			if first == bs {
				r.stride = bs
			}
		}
	}
	if n := h.NumberOfProcessors; n > 0 && n <= 1<<16 {
		r.nproc = int(n)
	}
	var dur float64 // seconds
	known := !h.StartTime.IsZero() && h.EndTime.After(h.StartTime)
	if known {
		dur = h.EndTime.Sub(h.StartTime).Seconds()
	}
	margin := max(dur, resyncMargin.Seconds())
	// span returns [at - margin, at + dur + margin] in units of freq Hz,
	// open above when the end is unknown, saturating.
	span := func(at int64, freq float64) [2]int64 {
		lo := float64(at) - margin*freq
		hi := math.Inf(1)
		if known {
			hi = float64(at) + (dur+margin)*freq
		}
		clamp := func(f float64) int64 {
			if f >= math.MaxInt64 {
				return math.MaxInt64
			}
			if f <= math.MinInt64 {
				return math.MinInt64
			}
			return int64(f)
		}
		return [2]int64{clamp(lo), clamp(hi)}
	}
	r.tol = uint64(max(h.Frequency, 1))
	r.maxGap = 0
	if g := max(dur, 60) * float64(r.tol); known && g < 1<<62 {
		r.maxGap = uint64(g) + r.tol
	}
	r.spans = append(r.spans[:0], span(h.HeaderTimestamp, float64(h.Frequency)))
	if !h.StartTime.IsZero() {
		// FILETIME: 100 ns since 1601.
		ft := (h.StartTime.Unix()-fileTimeEpoch)*10_000_000 + int64(h.StartTime.Nanosecond())/100
		r.spans = append(r.spans, span(ft, 10_000_000))
	}
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
// friends it closes nothing. Next returns io.EOF after Close, or the final
// error it had returned (a damaged log's), which it returns again.
func (r *Reader) Close() error {
	var err error
	if r.merged != nil {
		err = r.closeMerged()
	}
	if !r.finished {
		r.finished, r.final = true, io.EOF
	}
	if r.closer != nil {
		c := r.closer
		r.closer = nil
		return errors.Join(err, c.Close())
	}
	return err
}

// SetStrict, called before the first Next, makes the Reader stop at the
// first damage instead of skipping it: Next returns that *FormatError, and
// again on every later call. A truncated file still yields every complete
// event before its error. In strict mode nothing is skipped, and Damage
// returns nil. Calls after the first Next do nothing.
func (r *Reader) SetStrict(on bool) {
	if !r.started {
		r.strict = on
	}
}

// Damage returns the parts of the log skipped so far, in file order (in a
// merged Reader, log by log, each record's Log saying whose). The list is
// complete once Next has returned its final error.
func (r *Reader) Damage() []Damage {
	if r.merged != nil && !r.finished {
		return r.mergedDamage()
	}
	return slices.Clone(r.damage)
}

// Next returns the next event. The *Event and its slices are valid until
// the next call.
//
// A buffer that does not read (a bad header, used size or compressed
// data, or an event that does not parse) is recorded as a Damage and
// skipped: Next delivers the buffer's events before the fault and goes on
// with the next buffer, searching for its header when the damaged one
// gives no way to it. After the last event Next returns io.EOF when
// nothing was skipped, else a *DamageError listing what was; a file cut
// short yields every complete event and a Damage wrapping ErrTruncated.
// The final error is returned again on every later call. An error
// reading the underlying file ends the log: Next returns it, as a
// *FormatError, on that and every later call. See SetStrict for a Reader
// that stops at the first damage.
func (r *Reader) Next() (*Event, error) {
	if r.merged != nil {
		return r.nextMerged()
	}
	if r.fatal != nil {
		return nil, r.fatal
	}
	if r.finished {
		return nil, r.final
	}
	if !r.started {
		r.start()
	}
	var best *stream
	for _, s := range r.streams {
		if s.need {
			if err := r.advance(s); err != nil {
				r.fatal = err
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
		r.finish()
		if r.fatal != nil {
			return nil, r.fatal
		}
		return nil, r.final
	}
	best.has = false
	best.need = true
	return &best.ev, nil
}

// start runs before the first event. In strict mode, the buffer headers a
// TimeOrder scan found damaged (or, in either order, the first buffer's:
// checkFirst) end the log there: the buffers from the first one on are
// dropped, and its error waits for the events before it.
func (r *Reader) start() {
	r.started = true
	if !r.strict || len(r.damage) == 0 {
		return
	}
	first := r.damage[0]
	r.damage = nil
	r.pending = first.Err
	if r.order == FileOrder {
		r.eof = true // the damage is in the first buffer: no more are read
	}
	for _, s := range r.streams {
		n := 0
		for n < len(s.bufs) && s.bufs[n].off < first.Offset {
			n++
		}
		s.bufs = s.bufs[:n]
	}
}

// finish decides the final error once every event is out.
func (r *Reader) finish() {
	r.finished = true
	r.checkBufferCount()
	switch {
	case r.strict && r.pending != nil:
		r.fatal = r.pending
	case len(r.damage) > 0:
		r.final = &DamageError{Damage: slices.Clone(r.damage), Stopped: r.stopped}
	case r.stopped != nil:
		r.final = r.stopped
	default:
		r.final = io.EOF
	}
}

// damaged handles a skipped range: recorded, or, in strict mode, the error
// that ends the log (returned; a truncation waits for the other events).
func (r *Reader) damaged(d Damage) error {
	if r.strict {
		if errors.Is(d.Err, ErrTruncated) {
			if r.pending == nil {
				r.pending = d.Err
			}
			return nil
		}
		return d.Err
	}
	r.addDamage(d)
	return nil
}

// inDamage reports whether offset off lies in a range recorded as damage.
func (r *Reader) inDamage(off int64) bool {
	for _, d := range r.damage {
		if d.Offset <= off && off < d.Offset+d.Length {
			return true
		}
	}
	return false
}

// sameBuffer reports whether damage records a and b are of one compressed
// buffer (at its offset, one of them an event left out: see garbledTime).
func sameBuffer(a, b Damage) bool {
	return a.Offset == b.Offset && a.Buffer == b.Buffer && (a.Length == 0 || b.Length == 0) && a.Events != 0 && b.Events != 0
}

// addDamage inserts d in file order, joining it to contiguous ranges. A
// compressed buffer's records (its events left out for their times, its
// fault) share the buffer's offset and make one: the longest's, counting
// the events of all.
func (r *Reader) addDamage(d Damage) {
	i := sort.Search(len(r.damage), func(i int) bool { return r.damage[i].Offset > d.Offset })
	if i > 0 && sameBuffer(r.damage[i-1], d) {
		a := &r.damage[i-1]
		events := a.Events + d.Events
		if a.Events < 0 || d.Events < 0 {
			events = -1
		}
		if d.Length > a.Length {
			*a = d
		}
		a.Events = events
		i--
	} else {
		r.damage = slices.Insert(r.damage, i, d)
	}
	join := func(i int) { // join record i+1 into record i if they touch
		a, b := &r.damage[i], r.damage[i+1]
		if a.Length == 0 || b.Length == 0 || a.Offset+a.Length != b.Offset {
			return
		}
		a.Length += b.Length
		if a.Events < 0 || b.Events < 0 {
			a.Events = -1
		} else {
			a.Events += b.Events
		}
		r.damage = slices.Delete(r.damage, i+1, i+2)
	}
	if i+1 < len(r.damage) {
		join(i)
	}
	if i > 0 {
		join(i - 1)
	}
}

// wrapped reports whether the log, size bytes long, may be a circular log
// whose file filled up, so that new buffers took the place of old ones: a
// circular log (LogHeader.Circular) within a buffer of its maximum size,
// or whose maximum the header does not state.
func (r *Reader) wrapped(size int64) bool {
	h := &r.hdr
	return h.Circular() && (h.MaximumFileSize == 0 || size+int64(h.BufferSize) >= int64(h.MaximumFileSize)<<20)
}

// checkBufferCount notes a file that holds fewer buffers than the log
// header says were written: it was cut (not a circular log that wrapped,
// whose count includes the buffers it overwrote). The buffers missing are counted
// on the damage that ends the file (a buffer cut short), or on a record
// of their own when the file ends cleanly between two buffers. After a
// header was searched for, the count of buffers seen is an estimate, and
// the check is not made. Repeats of a buffer (noteBuffer) are not
// counted. It also notes a file whose buffer headers, repeats left out,
// are more than the log header counts: a record that skipped nothing
// (Length and Events 0) at the first buffer beyond the count, when no
// header was searched for and that buffer was not skipped as damage.
func (r *Reader) checkBufferCount() {
	want := int(r.hdr.BuffersWritten)
	if p := r.over; p != nil && r.hdr.EndTime.After(r.hdr.StartTime) && !r.resynced && !r.inDamage(p.off) {
		// More buffers than the log header counts, repeats left out
		// (noteBuffer), in a log whose header states the session's end
		// (the count of a log still being written need not be final),
		// and where no header was searched for (the count of buffers
		// seen is then an estimate); not on a buffer skipped as damage,
		// which has its record.
		d := Damage{Buffer: p.index, Offset: p.off, Events: 0, Err: &FormatError{Buffer: p.index, BufferOffset: p.off, EventOffset: -1,
			Err: fmt.Errorf("the file holds %d buffers, more than the %d the log header says were written: from here on, buffers beyond that count were read (another log's, or repeated under another sequence number)", r.headers, want)}}
		if err := r.damaged(d); err != nil && r.pending == nil {
			r.pending = err
		}
	}
	seen := r.nbuf - r.repeats
	end := r.size
	if r.order == FileOrder {
		end = r.fileOff
	}
	if want <= 0 || seen >= want || r.resynced || r.wrapped(end) {
		// A wrapped circular log's count includes the buffers it
		// overwrote.
		return
	}
	if n := len(r.damage); n > 0 && r.damage[n-1].Offset+r.damage[n-1].Length >= end {
		r.damage[n-1].Missing = want - seen // the end is damaged already
		return
	}
	r.damaged(Damage{Buffer: seen, Offset: end, Length: 0, Events: -1, Missing: want - seen, Err: &FormatError{Buffer: seen, BufferOffset: end, EventOffset: -1,
		Err: fmt.Errorf("%w: the log header says %d buffers were written, the file holds %d", ErrTruncated, want, seen)}})
}

// advance moves s to its next event, loading buffers as needed. Damage
// is recorded on the way; an error ends the log.
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
				next := start + align8(size)
				if e.HeaderKind == MessageHeader && e.Timestamp == 0 {
					e.Timestamp = s.key // no timestamp: keep the stream's position
				} else if s.info.index == 0 && start == bufferHeaderSize {
					// The log header's event: the clock's anchor, read
					// as it is (init did), and no measure of the events
					// after it.
				} else if why := r.timeOK(s, e.Timestamp, next); why != "" {
					s.pos = next
					if err := r.garbledTime(s, start, size, why); err != nil {
						return err
					}
					continue
				} else {
					s.prevTS, s.tsBuf = e.Timestamp, s.info.index+1
				}
				e.Time = r.clk.time(e.Timestamp)
				s.key = e.Timestamp
				s.pos = next
				s.has = true
				return nil
			}
			s.pos = len(s.buf)
			if err == errEndOfBuffer {
				// Events fill a buffer up to its used size: a padding
				// marker before it is damage (the real logs show none).
				err = fmt.Errorf("padding marker %#08x at %d, before the buffer's used end %d", le.Uint32(s.buf[start:]), start, len(s.buf))
			}
			if err := r.bufferFault(s, start, err); err != nil {
				return err
			}
		}
		if s.buf != nil && (s.fault != nil || s.trunc) {
			if err := r.bufferFault(s, len(s.buf), nil); err != nil {
				return err
			}
		}
		s.buf = nil
		var err error
		if r.order == FileOrder {
			err = r.readSeq(s)
		} else {
			err = r.load(s)
		}
		if err != nil {
			return err
		}
		if s.done {
			return nil
		}
	}
}

// timeOK checks the timestamp ts of s's event whose next event starts at
// next, and returns "" or why the time cannot be right
// (timeorder.Window.Check). A buffer holds one processor's events (or one
// session's) in the order they were written, which is time order: the
// repository's logs, 186,000 events in all, hold no event earlier than
// the one before it in its buffer. So the event's neighbours are the
// buffer's (buffers need not come in time order), out of order by more
// than r.tol (a second), or apart by more than the session lasted
// (maxGap); a run of events is never taken for the right one before the
// log header's event. Events without a time (MessageHeader events whose
// time is zero) are not checked.
func (r *Reader) timeOK(s *stream, ts int64, next int) string {
	w := timeorder.Window{Prev: s.prevTS, HasPrev: s.tsBuf == s.info.index+1, Tol: r.tol, MaxGap: r.maxGap, Lowest: math.MinInt64}
	if hts, tol := r.hdr.HeaderTimestamp, int64(min(r.tol, math.MaxInt64)); hts >= math.MinInt64+tol {
		w.Lowest = hts - tol // no run before the log header's event is right
	}
	var size1 int
	if w.Next, size1, w.HasNext = peekTimestamp(s.buf, next); w.HasNext {
		w.After, _, w.HasAfter = peekTimestamp(s.buf, next+size1)
	}
	return w.Why(w.Check(ts), " in its buffer")
}

// peekTimestamp returns the timestamp and the aligned size of the event at
// buf[pos:], where its header makes them plain; ok is false otherwise (no
// event there, a MessageHeader event, a header that does not parse).
func peekTimestamp(buf []byte, pos int) (ts int64, size int, ok bool) {
	if pos < 0 || len(buf)-pos < 24 {
		return 0, 0, false
	}
	b := buf[pos:]
	mflags := b[3]
	if mflags&markerTraceHeader == 0 || mflags&markerMessage != 0 {
		return 0, 0, false
	}
	at := 16
	switch b[2] {
	case typePerfInfo32, typePerfInfo64:
		at, size = 8, int(le.Uint16(b[4:]))
	case typeSystem32, typeSystem64, typeCompact32, typeCompact64:
		size = int(le.Uint16(b[4:]))
	case typeFullHeader32, typeFullHeader64, typeInstance32, typeInstance64, typeEventHeader32, typeEventHeader64:
		size = int(le.Uint16(b[0:]))
	default:
		return 0, 0, false
	}
	if size < 24 || size > len(b) {
		return 0, 0, false
	}
	return int64(le.Uint64(b[at:])), align8(size), true
}

// garbledTime records the event at start in s's buffer, size bytes, as
// damage: its timestamp is garbled (why, from timeOK). Only the event is
// lost; the buffer reads on after it.
func (r *Reader) garbledTime(s *stream, start, size int, why string) error {
	info := s.info
	ts := s.ev.Timestamp
	d := Damage{Buffer: info.index, Offset: info.off + int64(start), Length: int64(size), Events: 1,
		Err: &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: info.off + int64(start), Compressed: s.compressed,
			Err: fmt.Errorf("%v event's timestamp %d %s: garbled", s.ev.HeaderKind, ts, why)}}
	if s.compressed {
		// The event's bytes are not the file's: the damage names the
		// buffer, and the error the event's offset in its expansion.
		d.Offset, d.Length = info.off, 0
	}
	return r.damaged(d)
}

// bufferFault records the damage of s's buffer from its event at start,
// where reading stopped with err (nil at the end of the events): the
// buffer is cut short, its expansion failed, or the event did not parse.
func (r *Reader) bufferFault(s *stream, start int, err error) error {
	info := s.info
	evOff := info.off + int64(start)
	var fe *FormatError
	switch {
	case s.trunc:
		fe = &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: evOff, Err: truncErr(info)}
		if s.compressed || start >= len(s.buf) {
			fe.EventOffset = -1
		}
	case s.fault != nil:
		f := *s.fault
		f.EventOffset = evOff
		fe = &f
	case err != nil:
		fe = &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: evOff, Err: err}
	default:
		return nil
	}
	fe.Compressed = s.compressed
	s.trunc, s.fault = false, nil
	size := int64(info.size)
	if info.cut > 0 {
		size = min(size, info.cut-info.off)
	}
	d := Damage{Buffer: info.index, Offset: info.off, Length: size, Events: -1, Err: fe}
	if !s.compressed {
		at := min(int64(start), size)
		d.Offset, d.Length = info.off+at, size-at
	}
	return r.damaged(d)
}

// truncErr says that a buffer is cut short by the end of the file.
func truncErr(info bufInfo) error {
	return fmt.Errorf("%w: buffer has %d bytes in the file, its header says %d", ErrTruncated, info.size, info.want)
}

// tailHeader returns where, in b, the file's bytes from the start of a
// buffer whose stated size runs past the end of the file, the first
// buffer header that passes candidate's checks begins, or -1. Such a
// header means the stated size is damaged, not the file cut short: in a
// compressed log, whose buffers are stored at their own sizes, any size
// up to what BufferSize bytes take as literals passes checkSize, and one
// grown past the end of the file would otherwise lose the buffers after
// it as a truncation (the audit's F2). The search is resync's, byte by
// byte, over the bytes after the buffer's start; each offset costs a
// bounded amount of work.
func (r *Reader) tailHeader(b []byte) int {
	for i := 1; i+bufferHeaderSize <= len(b); i++ {
		if r.candidate(b[i:min(len(b), i+resyncLookahead)]) {
			return i
		}
	}
	return -1
}

// pastEndErr says that the buffer at off states a size, bs, that runs
// past the end of the file, left bytes on, while a buffer header follows
// at off+at.
func pastEndErr(off, bs, left int64, at int) error {
	return fmt.Errorf("buffer size %d runs past the end of the file (%d bytes from the buffer's start), but a buffer header follows at %d: the size is damaged, the file not cut", bs, left, off+int64(at))
}

// bufRef names a buffer read: its index, offset and sequence number.
type bufRef struct {
	index int
	off   int64
	seq   uint64
}

// headerSum is what of a buffer's first bytes noteBuffer compares to
// tell a repeat (sumHeader, of the first bytes h of a buffer of stated
// size bs): its header but for its sequence number (its sizes,
// timestamp, processor, state, flags and type) and the first 56 bytes
// after the header (the first event's header, with its time and thread),
// where the buffer holds them. Loads alone, no hashing.
type headerSum [11]uint64

func sumHeader(h []byte, bs int64) headerSum {
	var s headerSum
	s[0], s[1], s[2], s[3] = le.Uint64(h[0:]), le.Uint64(h[16:]), le.Uint64(h[40:]), le.Uint64(h[48:])
	for i := range sumWords(h, bs) {
		s[4+i] = le.Uint64(h[bufferHeaderSize+8*i:])
	}
	return s
}

// sumWords is how many 8-byte words after the header sumHeader takes of
// the first bytes h of a buffer of stated size bs: up to 7, as many as
// both hold.
func sumWords(h []byte, bs int64) int {
	n := min(int64(len(h)), bs, resyncLookahead) - bufferHeaderSize
	return int(max(0, min(n/8, int64(len(headerSum{})-4))))
}

// noteBuffer notes the buffer of index idx at off, whose stated size is
// bs and whose first bytes (up to resyncLookahead, as stored) are h, and
// returns why it is to be skipped: it repeats a buffer read before, whose
// events were delivered already (the audit's F3: a buffer repeated in the
// file delivered its events twice).
//
// A buffer repeats one read before when its header and first bytes are
// that one's (headerSum), but for the sequence number: with the same
// number (ETW numbers the buffers it writes, WMI_BUFFER_HEADER's
// SequenceNumber, unique in each of the repository's logs), or with
// another, which damage to the number, or a writer that wrote the buffer
// again, gives it, when the header states a timestamp: a real buffer's
// is the time it was flushed, and the first event's header after it has
// its own time and thread, so two buffers that agree in all of it, their
// sizes and processor too, are one. (Buffers flushed together share a
// timestamp and processor: 8 such pairs in the contention-exception log,
// 1 in the diaghub session's; none of the repository's logs, or of the
// shared fixtures', has two buffers that agree in the rest.) A writer
// that leaves the timestamps 0 (the tests') is not judged on them. A
// number seen before with another header or first
// bytes is not taken for a repeat: its events are not the other's, and
// a writer not seen here might not number its buffers.
// Each buffer costs a map entry, keyed by those 88 bytes: at most one per
// buffer header the file holds (the map is first sized for the buffers
// the log header counts, at most 1024).
func (r *Reader) noteBuffer(idx int, off, bs int64, h []byte) error {
	seq := le.Uint64(h[24:])
	sum := sumHeader(h, bs)
	p, seen := r.readBufs[sum]
	if seen && (p.seq == seq || sum[1] != 0) {
		r.repeats++
		if p.seq == seq {
			return fmt.Errorf("a repeat of buffer %d at offset %d (sequence number %d, the same header): its events were read there", p.index, p.off, seq)
		}
		return fmt.Errorf("a repeat of buffer %d at offset %d under another sequence number, %d (that one's %d): the same header, timestamp %d, and first %d bytes after the header; its events were read there", p.index, p.off, seq, p.seq, sum[1], 8*sumWords(h, bs))
	}
	if !seen {
		if r.readBufs == nil {
			// Sized for the buffers the log header counts, up to a
			// bound: the map grows as buffers are read.
			r.readBufs = make(map[headerSum]bufRef, min(max(int(r.hdr.BuffersWritten), 1), 1024))
		}
		r.readBufs[sum] = bufRef{idx, off, seq}
	}
	r.headers++
	if want := int(r.hdr.BuffersWritten); want > 0 && r.headers == want+1 {
		r.over = &bufRef{index: idx, off: off}
	}
	return nil
}

// unreadable notes the buffer of index idx at off (noteBuffer) and
// returns why it is skipped: a repeat (noteBuffer) or a processor the log
// does not have (checkProc); nil when it is read.
func (r *Reader) unreadable(idx int, off, bs int64, h []byte) error {
	if err := r.noteBuffer(idx, off, bs, h); err != nil {
		return err
	}
	return r.checkProc(h)
}

// checkProc returns why the buffer whose header is h cannot be read: its
// processor is not below the log header's NumberOfProcessors (the check
// a searched-for header gets, candidate's), or nil. Its events would be
// delivered with a processor the logging machine did not have (the
// audit's F4: 496 events of processor 65287 in a log of 8). The first
// buffer, which holds the log header, is not checked: it is read.
func (r *Reader) checkProc(h []byte) error {
	if p := int(procOf(h)); r.nproc > 0 && p >= r.nproc {
		return fmt.Errorf("processor %d is not below the log's NumberOfProcessors, %d", p, r.nproc)
	}
	return nil
}

// checkSize returns why a buffer header's stated size is impossible, or
// nil.
func (r *Reader) checkSize(bs int64) error {
	if bs < bufferHeaderSize || bs > r.sizeLimit {
		return fmt.Errorf("buffer size %d is out of range [%d, %d]", bs, bufferHeaderSize, r.sizeLimit)
	}
	return nil
}

// noteSize keeps stride only while every buffer is BufferSize.
func (r *Reader) noteSize(bs int64) {
	if bs != r.stride {
		r.stride = 0
	}
}

// scan reads every buffer header after the first (TimeOrder), from
// offset off, the buffer of index i, and sorts the buffers into
// per-processor streams; the first buffer is a stream of its own. A
// header stating an impossible size is recorded as damage and the next
// one looked for (resync). linked says the first buffer ends at off, as
// its header says (not when checkFirst found the next buffer).
func (r *Reader) scan(off int64, i int, linked bool) error {
	var hb [resyncLookahead]byte
	byProc := map[uint16]*stream{}
	// The buffer before off (its stream and index there), while off is
	// where its header says it ends: a search for the next header starts
	// inside it (see resync).
	prev, pi := r.streams[0], 0 // the first buffer, which ends at off
	if !linked {
		prev = nil
	}
	for off < r.size {
		left := r.size - off
		if left < bufferHeaderSize {
			r.addDamage(Damage{Buffer: i, Offset: off, Length: left, Events: -1, Err: &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1,
				Err: fmt.Errorf("%w: %d bytes left, too few for a buffer header", ErrTruncated, left)}})
			i++
			break
		}
		h := hb[:min(left, resyncLookahead)]
		if n, err := r.ra.ReadAt(h, r.base+off); n < len(h) {
			return &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1, Err: readErr(err)}
		}
		bs := int64(le.Uint32(h[0:]))
		err := r.checkSize(bs)
		if err == nil && !r.candidate(h) {
			if ok, cerr := r.chained(off, bs); cerr != nil {
				return &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1, Err: cerr}
			} else if !ok {
				err = unchainedErr(off, bs)
			}
		}
		if err != nil {
			// The search starts after the header of the buffer before
			// (and after the log header's event), whose events are then
			// read only up to where it finds the next (cut).
			from := off + 1
			if prev != nil {
				from = min(off, max(prev.bufs[pi].off+bufferHeaderSize, r.hdrEnd))
			}
			next, skipped, rerr := r.resync(off, from)
			if rerr != nil {
				return &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1, Err: rerr}
			}
			if next < off {
				// The buffer before lost bytes: the next one begins
				// inside the extent its header states.
				prev.bufs[pi].cut = next
				if prev == r.streams[0] {
					// The first buffer is read already.
					prev.info.cut = next
					if !prev.compressed && len(prev.buf) > int(next-prev.info.off) {
						prev.buf = prev.buf[:next-prev.info.off]
					}
				}
			} else {
				r.addDamage(Damage{Buffer: i, Offset: off, Length: next - off, Events: -1, Err: &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1, Err: err}})
			}
			i += skipped
			off, prev = next, nil
			continue
		}
		if bs > left {
			// Its size runs past the end of the file: cut short, unless
			// a buffer header follows inside it (pastEnd).
			b, err := r.peek(off, int(left))
			if err != nil {
				return &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1, Err: err}
			}
			if at := r.tailHeader(b); at > 0 {
				r.resynced = true
				r.addDamage(Damage{Buffer: i, Offset: off, Length: int64(at), Events: -1, Err: &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1, Err: pastEndErr(off, bs, left, at)}})
				i++
				off, prev = off+int64(at), nil
				continue
			}
		}
		if err := r.unreadable(i, off, bs, h); err != nil {
			n := min(bs, left)
			r.addDamage(Damage{Buffer: i, Offset: off, Length: n, Events: -1, Err: &FormatError{Buffer: i, BufferOffset: off, EventOffset: -1, Err: err}})
			i++
			off, prev = off+n, nil
			continue
		}
		r.noteSize(bs)
		info := bufInfo{index: i, off: off, size: int(bs), want: bs, ts: int64(le.Uint64(h[16:]))}
		if bs > left {
			info.size, info.trunc = int(left), true
		}
		proc := procOf(h)
		s := byProc[proc]
		if s == nil {
			s = &stream{proc: proc, prio: 1, need: true}
			byProc[proc] = s
			r.streams = append(r.streams, s)
		}
		s.bufs = append(s.bufs, info)
		prev, pi = s, len(s.bufs)-1
		off += int64(info.size)
		i++
	}
	r.nbuf = i
	if r.wrapped(r.size) {
		// Once a circular log's file was full, each buffer took the
		// place of the oldest: a processor's buffers are read in the
		// order they were written, by the times their headers give
		// (stable: equal times keep the file's order).
		for _, s := range r.streams[1:] {
			slices.SortStableFunc(s.bufs, func(a, b bufInfo) int { return cmp.Compare(a.ts, b.ts) })
		}
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

// load reads s's next buffer that reads with ReadAt (TimeOrder),
// recording the ones that do not as damage.
func (r *Reader) load(s *stream) error {
	for s.next < len(s.bufs) {
		info := s.bufs[s.next]
		s.next++
		s.raw = grow(s.raw, info.size)
		if n, err := r.ra.ReadAt(s.raw, r.base+info.off); n < len(s.raw) {
			return &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: -1, Err: readErr(err)}
		}
		fe := r.setBuffer(s, info)
		if fe == nil {
			return nil
		}
		if err := r.damaged(Damage{Buffer: info.index, Offset: info.off, Length: int64(info.size), Events: -1, Err: fe}); err != nil {
			return err
		}
	}
	s.done = true
	return nil
}

// readSeq reads the next buffer that reads from the sequential source
// (FileOrder), recording the ones that do not as damage. The first
// buffer must read: without it there is no log header.
func (r *Reader) readSeq(s *stream) error {
	for !r.eof {
		off, idx := r.fileOff, r.nbuf
		h, err := r.peekSeq(off, resyncLookahead)
		if err != nil {
			r.eof = true
			return &FormatError{Buffer: idx, BufferOffset: off, EventOffset: -1, Err: err}
		}
		if len(h) == 0 {
			break
		}
		if len(h) < bufferHeaderSize {
			r.eof = true
			r.nbuf++
			r.fileOff += int64(len(h))
			fe := &FormatError{Buffer: idx, BufferOffset: off, EventOffset: -1,
				Err: fmt.Errorf("%w: %d bytes left, too few for a buffer header", ErrTruncated, len(h))}
			if idx == 0 {
				return fe
			}
			if err := r.damaged(Damage{Buffer: idx, Offset: off, Length: int64(len(h)), Events: -1, Err: fe}); err != nil {
				return err
			}
			break
		}
		bs := int64(le.Uint32(h))
		err = r.checkSize(bs)
		if err == nil && idx > 0 && !r.candidate(h) {
			ok, cerr := r.chained(off, bs)
			if cerr != nil {
				r.eof = true
				return &FormatError{Buffer: idx, BufferOffset: off, EventOffset: -1, Err: cerr}
			}
			if !ok {
				err = unchainedErr(off, bs)
			}
		}
		if err != nil {
			fe := &FormatError{Buffer: idx, BufferOffset: off, EventOffset: -1, Err: err}
			if idx == 0 {
				r.eof = true
				fe.Err = fmt.Errorf("%w: not an ETL file?", err)
				return fe
			}
			from := off + 1
			if p := s.info; s.raw != nil && p.off+int64(p.size) == off && len(s.raw) >= p.size {
				// The search starts inside the buffer before, which
				// may have lost bytes, after what of it was read: from
				// where reading its events stopped, or from their end
				// (a compressed buffer's damage covers it whole); its
				// bytes from there go back in front of the look-ahead.
				from = p.off + min(usedSize(s.raw), int64(p.size))
				if s.compressed {
					from = off + 1
				}
				if n := len(r.damage); n > 0 {
					if d := r.damage[n-1]; d.Offset+d.Length == off && d.Offset >= p.off {
						from = d.Offset
					}
				}
				from = min(off, max(from, p.off+bufferHeaderSize, r.hdrEnd))
				if from < off {
					r.unread(from, s.raw[from-p.off:p.size])
				}
			}
			next, skipped, rerr := r.resync(off, from)
			if rerr != nil {
				r.eof = true
				return &FormatError{Buffer: idx, BufferOffset: off, EventOffset: -1, Err: rerr}
			}
			r.nbuf += skipped
			r.fileOff = next
			if next < off {
				r.cutDamage(off, next)
				continue
			}
			if err := r.damaged(Damage{Buffer: idx, Offset: off, Length: next - off, Events: -1, Err: fe}); err != nil {
				r.eof = true
				return err
			}
			continue
		}
		// The bytes already looked at, then the rest from the source in
		// doubling steps, so a hostile size costs at most twice what is
		// there.
		have := int(min(int64(len(r.look)), bs))
		s.raw = grow(s.raw, have)
		copy(s.raw, r.look[:have])
		r.look = r.look[have:]
		r.lookOff += int64(have)
		for int64(have) < bs && !r.srcEOF {
			step := min(int(bs)-have, max(have, 4096))
			s.raw = grow(s.raw, have+step)
			n, err := io.ReadFull(r.src, s.raw[have:have+step])
			have += n
			r.lookOff += int64(n)
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				r.srcEOF = true
			} else if err != nil {
				r.eof = true
				return &FormatError{Buffer: idx, BufferOffset: off, EventOffset: -1, Err: err}
			}
		}
		s.raw = s.raw[:have]
		if int64(have) < bs && idx > 0 {
			// Its size runs past the end of the file: cut short, unless
			// a buffer header follows inside it (pastEnd).
			if at := r.tailHeader(s.raw); at > 0 {
				r.unread(off+int64(at), s.raw[at:])
				r.nbuf++
				r.fileOff = off + int64(at)
				r.resynced = true
				if err := r.damaged(Damage{Buffer: idx, Offset: off, Length: int64(at), Events: -1, Err: &FormatError{Buffer: idx, BufferOffset: off, EventOffset: -1, Err: pastEndErr(off, bs, int64(have), at)}}); err != nil {
					r.eof = true
					return err
				}
				continue
			}
		}
		if idx > 0 {
			if err := r.unreadable(idx, off, bs, s.raw); err != nil {
				r.nbuf++
				r.fileOff += int64(have)
				if err := r.damaged(Damage{Buffer: idx, Offset: off, Length: int64(have), Events: -1, Err: &FormatError{Buffer: idx, BufferOffset: off, EventOffset: -1, Err: err}}); err != nil {
					r.eof = true
					return err
				}
				continue
			}
		}
		info := bufInfo{index: idx, off: off, size: have, trunc: int64(have) < bs, want: bs}
		r.nbuf++
		r.fileOff += int64(have)
		if idx > 0 {
			r.noteSize(bs)
		}
		s.proc = procOf(s.raw)
		fe := r.setBuffer(s, info)
		if fe == nil {
			return nil
		}
		if idx == 0 {
			r.eof = true
			return fe
		}
		if err := r.damaged(Damage{Buffer: idx, Offset: off, Length: int64(have), Events: -1, Err: fe}); err != nil {
			return err
		}
	}
	r.eof = true
	s.done = true
	return nil
}

// peekSeq returns up to n bytes of the sequential source from file
// offset off (fewer at its end), dropping those before off; off must not
// be before what was consumed. The bytes stay valid until the look-ahead
// is next changed.
func (r *Reader) peekSeq(off int64, n int) ([]byte, error) {
	if d := off - r.lookOff; d > 0 {
		if d <= int64(len(r.look)) {
			r.look = r.look[d:]
			r.lookOff = off
		} else {
			// Read past the bytes in between.
			d -= int64(len(r.look))
			r.lookOff += int64(len(r.look))
			r.look = r.look[:0]
			if cap(r.lookBuf) < 4096 {
				r.lookBuf = make([]byte, 4096)
			}
			for d > 0 && !r.srcEOF {
				m, err := io.ReadFull(r.src, r.lookBuf[:min(d, int64(cap(r.lookBuf)))])
				d -= int64(m)
				r.lookOff += int64(m)
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					r.srcEOF = true
				} else if err != nil {
					return nil, err
				}
			}
		}
	}
	if r.lookOff < off {
		return nil, nil // the file ends before off
	}
	for len(r.look) < n && !r.srcEOF {
		// Beyond 4 KiB the look-ahead at most doubles a step, so that a
		// size read from the log costs at most twice what is there.
		want := n
		if n > 4096 {
			want = min(n, max(4096, 2*len(r.look)))
		}
		if cap(r.lookBuf) < want {
			r.lookBuf = make([]byte, want)
		}
		have := copy(r.lookBuf[:cap(r.lookBuf)], r.look)
		m, err := io.ReadFull(r.src, r.lookBuf[have:want])
		r.look = r.lookBuf[:have+m]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			r.srcEOF = true
		} else if err != nil {
			return nil, err
		}
	}
	return r.look[:min(n, len(r.look))], nil
}

// unread puts b, the file's bytes from off, back in front of the
// look-ahead (FileOrder), so that a search can go over a buffer already
// read; off+len(b) must be where the look-ahead starts. It is used only
// after damage, and copies.
func (r *Reader) unread(off int64, b []byte) {
	nb := make([]byte, len(b)+len(r.look))
	copy(nb[copy(nb, b):], r.look)
	r.lookBuf, r.look, r.lookOff = nb, nb, off
}

// cutDamage ends at next the damage recorded up to off, where a search
// found the next buffer at next, inside the buffer before off (FileOrder:
// that buffer's damage was recorded when reading it stopped). A record
// that begins at next or after is the next buffer's bytes, read as the
// one before's events: it goes, as TimeOrder, which finds the next buffer
// before reading the one before, records nothing there. (It overlapped
// the next buffer's own records: found by FuzzReader.)
func (r *Reader) cutDamage(off, next int64) {
	if n := len(r.damage); n > 0 {
		d := &r.damage[n-1]
		switch {
		case d.Offset+d.Length != off:
		case d.Offset < next:
			d.Length = next - d.Offset
		default:
			r.damage = r.damage[:n-1]
		}
	}
}

// chained reports whether the buffer at off, of stated size bs, is
// followed where its size leads by a header that passes candidate's
// checks, or by one whose sizes the log allows (sized) that is itself
// followed by another such, or whether the log ends first: asked of a
// header that fails candidate's checks. A log not seen here might fail
// one of them in every buffer (a flag or type these checks do not know),
// and its headers still lead one to the next; a damaged header's size
// seldom leads to a header, let alone to two.
func (r *Reader) chained(off, bs int64) (bool, error) {
	b, err := r.ahead(off, bs)
	if b == nil || err != nil {
		return err == nil, err
	}
	if r.candidate(b) {
		return true, nil
	}
	if !r.sized(b) {
		return false, nil
	}
	b, err = r.ahead(off, bs+int64(le.Uint32(b)))
	if b == nil || err != nil {
		return err == nil, err
	}
	return r.sized(b), nil
}

// ahead returns resyncLookahead bytes (fewer at the end) of the log from
// off+n, where off is where FileOrder's look-ahead starts, or nil when
// the log ends before a buffer header's bytes there.
func (r *Reader) ahead(off, n int64) ([]byte, error) {
	if r.order == FileOrder {
		all, err := r.peekSeq(off, int(n)+resyncLookahead)
		if err != nil || int64(len(all)) < n+bufferHeaderSize {
			return nil, err
		}
		return all[n:], nil
	}
	if off+n+bufferHeaderSize > r.size {
		return nil, nil
	}
	return r.peek(off+n, resyncLookahead)
}

// sized reports whether b, at least a buffer header's bytes, states a
// size and a used size this log allows (the first of candidate's checks).
func (r *Reader) sized(b []byte) bool {
	size, saved := int64(le.Uint32(b)), usedSize(b)
	return r.checkSize(size) == nil && saved >= bufferHeaderSize && saved <= int64(r.usedLimit) &&
		(saved <= size || le.Uint16(b[52:])&BufferFlagCompressed != 0)
}

// unchainedErr says why a header whose size passes is not taken (chained).
func unchainedErr(off, bs int64) error {
	return fmt.Errorf("buffer header fails the checks of its fields, and no buffer header follows at %d, where its size %d leads", off+bs, bs)
}

// peek returns up to n bytes of the file from offset off, fewer at its
// end, valid until the next peek. In FileOrder off only goes forward.
func (r *Reader) peek(off int64, n int) ([]byte, error) {
	if r.order == FileOrder {
		return r.peekSeq(off, n)
	}
	if off >= r.size {
		return nil, nil
	}
	n = int(min(int64(n), r.size-off))
	r.scratch = grow(r.scratch, n)
	if m, err := r.ra.ReadAt(r.scratch, r.base+off); m < n {
		return nil, readErr(err)
	}
	return r.scratch, nil
}

// Resynchronisation: how far a search for a buffer header reads at once,
// and how many bytes from a candidate's start the checks look at.
const (
	resyncChunk     = 64 << 10
	resyncLookahead = bufferHeaderSize + 56
)

// resync finds where reading goes on after the bad buffer header at off:
// the offset of the next buffer (the end of the file if there is none)
// and how many buffers the skipped range is taken to hold. In a log whose
// buffers have all been BufferSize that is the next multiple of it, where
// a header there passes the checks of candidate; otherwise (and where a
// shift moved the buffers off the multiples: damage a zipped log's
// inflating absorbed) the first offset from from where one does. from is
// off+1, or the start of the buffer before off when off is where that
// buffer's header says it ends: a buffer that lost bytes is followed by
// the next one before that end, and then next < off and skipped is 0.
// Each byte costs a bounded amount of work, and the search only goes
// forward from from.
func (r *Reader) resync(off, from int64) (next int64, skipped int, err error) {
	if r.stride > 0 {
		// The first multiple after off, and not before from (the first
		// buffer's search starts after the log header's event, which a
		// hostile log may end beyond its BufferSize).
		next = (max(off, from-1)/r.stride + 1) * r.stride
		// A buffer must begin there, unless the bytes after the damage
		// are not where they were: a zipped log's inflating decodes on
		// past damage to its compressed bytes, leaving what follows some
		// bytes earlier or later. Then the search below finds it.
		// FileOrder reads on to there; TimeOrder reads there.
		at := next
		if r.order == FileOrder {
			at = from
		}
		b, err := r.peek(at, int(next-at)+resyncLookahead)
		if err != nil {
			return 0, 0, err
		}
		if i := int(next - at); i+bufferHeaderSize > len(b) || r.candidate(b[i:]) {
			if r.order == TimeOrder && next > r.size {
				next = r.size
			}
			if r.order == FileOrder {
				// Go there, or to the end of the file if it is nearer.
				if _, err := r.peekSeq(next, bufferHeaderSize); err != nil {
					return 0, 0, err
				}
				next = min(next, r.lookOff)
			}
			return next, r.strided(off, next), nil
		}
	}
	pos := from
	for {
		b, err := r.peek(pos, resyncChunk+resyncLookahead)
		if err != nil {
			return 0, 0, err
		}
		if len(b) < bufferHeaderSize {
			r.resynced = true
			return max(off, pos+int64(len(b))), 1, nil // no header before the end
		}
		last := len(b) - resyncLookahead // candidates with the whole look-ahead
		if len(b) < resyncChunk+resyncLookahead {
			last = len(b) - bufferHeaderSize + 1 // the end of the file: each with a whole header
		}
		for i := range last {
			if r.candidate(b[i:]) {
				next := pos + int64(i)
				if next > off && r.stride > 0 && next%r.stride == 0 {
					// Where buffers are all BufferSize and the one found
					// is where one should be, the buffers skipped count.
					return next, r.strided(off, next), nil
				}
				r.resynced = true
				if next < off {
					return next, 0, nil // inside the buffer before off
				}
				return next, 1, nil
			}
		}
		pos += int64(last)
	}
}

// strided is how many buffers of BufferSize (the stride) the range from
// the bad header at off to the buffer at next is taken to hold.
func (r *Reader) strided(off, next int64) int {
	return int((next - off + r.stride - 1) / r.stride)
}

// usedSize is the bytes of a buffer that hold events, its header
// included (expanded, for a compressed buffer): the header's SavedOffset,
// or its Offset where that is 0, as some writers leave it.
func usedSize(hdr []byte) int64 {
	if saved := le.Uint32(hdr[4:]); saved != 0 {
		return int64(saved)
	}
	return int64(le.Uint32(hdr[48:]))
}

// candidate reports whether b, at least a buffer header's bytes, starts
// with a header this log could hold: a size the log allows (checkSize); a
// used size of at least a header and at most BufferSize, and not beyond
// the buffer's size unless it is compressed; known buffer flags
// (ETW_BUFFER_FLAG_*, nothing above 0x40) and type (at most
// ETW_BUFFER_TYPE_DBG_INFO); a processor below NumberOfProcessors; a
// timestamp in the span setLimits gives; and a first event whose header
// marker, type and size make sense (for a compressed buffer, in the first
// bytes of its expansion). Each check is cheap and bounded.
func (r *Reader) candidate(b []byte) bool {
	size := int64(le.Uint32(b[0:]))
	if size < bufferHeaderSize || size > r.sizeLimit {
		return false
	}
	flags := le.Uint16(b[52:])
	if flags&^0x7f != 0 || le.Uint16(b[54:]) > BufferTypeDbgInfo {
		return false
	}
	saved := usedSize(b)
	compressed := flags&BufferFlagCompressed != 0
	if saved < bufferHeaderSize || saved > int64(r.usedLimit) || !compressed && saved > size {
		return false
	}
	if r.nproc > 0 && int(procOf(b)) >= r.nproc {
		return false
	}
	ts := int64(le.Uint64(b[16:]))
	in := false
	for _, sp := range r.spans {
		if ts >= sp[0] && ts <= sp[1] {
			in = true
		}
	}
	if !in {
		return false
	}
	if saved == bufferHeaderSize {
		return true // no events
	}
	ev := b[bufferHeaderSize:]
	if compressed {
		out, _ := decompressLZ77(r.lz[:0], ev[:min(len(ev), int(size)-bufferHeaderSize)], 8)
		r.lz = out[:0]
		ev = out
	}
	return plausibleEvent(ev, saved-bufferHeaderSize)
}

// plausibleEvent reports whether b starts with an event header whose
// marker, type and size make sense for a buffer with room bytes of
// events. It looks at 8 bytes.
func plausibleEvent(b []byte, room int64) bool {
	if len(b) < 8 || b[3]&markerTraceHeader == 0 {
		return false
	}
	size := int64(le.Uint16(b[0:]))
	hsize := int64(messageHeaderSize)
	if b[3]&markerMessage == 0 {
		switch b[2] {
		case typeSystem32, typeSystem64:
			hsize, size = systemHeaderSize, int64(le.Uint16(b[4:]))
		case typeCompact32, typeCompact64:
			hsize, size = compactHeaderSize, int64(le.Uint16(b[4:]))
		case typePerfInfo32, typePerfInfo64:
			hsize, size = perfInfoHeaderSize, int64(le.Uint16(b[4:]))
		case typeFullHeader32, typeFullHeader64:
			hsize = traceHeaderSize
		case typeInstance32, typeInstance64:
			hsize = instanceHeaderSize
		case typeEventHeader32, typeEventHeader64:
			hsize = eventHeaderSize
		default:
			return false
		}
	}
	return size >= hsize && size <= room
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
// expanding it first if it is compressed. It returns why a buffer has no
// events to read. A compressed buffer whose expansion fails part way
// keeps what expanded, and s.fault says why it ends there.
func (r *Reader) setBuffer(s *stream, info bufInfo) *FormatError {
	s.info = info
	s.trunc = info.trunc
	s.fault = nil
	s.pos = bufferHeaderSize
	s.buf = nil
	raw := s.raw[:info.size]
	if info.cut > 0 {
		// The next buffer begins there (see bufInfo.cut).
		raw = raw[:min(len(raw), int(info.cut-info.off))]
	}
	fail := func(err error) *FormatError {
		s.buf, s.trunc = nil, false
		if info.trunc {
			err = fmt.Errorf("%w (%v)", truncErr(info), err)
		}
		return &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: -1, Err: err}
	}
	if len(raw) < bufferHeaderSize {
		return fail(fmt.Errorf("%d bytes, too few for a buffer header", len(raw)))
	}
	saved := int(usedSize(raw))
	flags := le.Uint16(raw[52:])
	btype := le.Uint16(raw[54:])
	stated := int(le.Uint32(raw[0:]))
	s.compressed = flags&BufferFlagCompressed != 0
	if saved < bufferHeaderSize || saved > r.usedLimit {
		return fail(fmt.Errorf("used size %d is out of range [%d, %d] (buffer type %d, flags %#x)", saved, bufferHeaderSize, r.usedLimit, btype, flags))
	}
	if s.compressed {
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
		s.buf = s.exp
		switch {
		case info.trunc:
			// The events that expanded are read; the cut is reported
			// after them.
		// A buffer whose data does not expand as the header says is
		// damaged, not of a form this package cannot read: the
		// compression is the one every compressed log uses.
		case err != nil:
			s.fault = &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: -1,
				Err: fmt.Errorf("compressed buffer (flags %#x) does not expand: %v, after %d of its %d bytes", flags, err, len(s.exp), saved)}
		case len(s.exp) != saved:
			s.fault = &FormatError{Buffer: info.index, BufferOffset: info.off, EventOffset: -1,
				Err: fmt.Errorf("compressed buffer expands to %d bytes, its header says %d", len(s.exp), saved)}
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
