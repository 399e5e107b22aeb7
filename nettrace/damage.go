package nettrace

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/clrgo/clrevents/internal/numfmt"
)

// ErrDamaged is wrapped by the error that ends a trace in which the
// reader skipped damage (see Damage).
var ErrDamaged = errors.New("damaged trace")

// Damage is a part of a trace that the reader could not read and skipped
// to go on with the rest (or, a block header's damaged version field,
// set aside to read the block; or an event block whose records' timestamps
// do not span the range its header states, read as it stands: Length 0).
// Offsets count bytes of the (decompressed) trace stream.
type Damage struct {
	// Block is the kind of block the damage is in ("EventBlock",
	// "MetadataBlock", …), "" where the stream's framing itself was lost
	// and the reader searched for the next block.
	Block string
	// Offset is the first byte skipped and Length how many were. Events
	// of one kind skipped one by one across the trace (events whose
	// metadata, stack, thread or label list is not defined) are one
	// record (whatever IDs they refer to): Offset is the first of them,
	// Length their bytes together, and Err the first's.
	Offset, Length int64
	// Events is how many events were lost, where the trace tells:
	// NetTrace V4 and later number each thread's events, and the gaps
	// the skipped range leaves in them count its events (the runtime's
	// own drops are Reader.Dropped), each gap once a later number of its
	// thread confirms the number that ends it (a number that damage
	// garbled is seldom confirmed). -1 where the trace does not tell (older
	// formats, the cut-off end of a truncated trace).
	Events int64
	// Err says what was wrong and where.
	Err *Error
}

// String formats the record as one line: where, how much, and the error.
func (d Damage) String() string {
	var b strings.Builder
	if d.Length == 0 {
		fmt.Fprintf(&b, "at offset %d", d.Offset) // nothing skipped
	} else {
		fmt.Fprintf(&b, "%d bytes at offset %d", d.Length, d.Offset)
	}
	switch {
	case d.Events == 1:
		b.WriteString(" (1 event lost)")
	case d.Events > 1:
		fmt.Fprintf(&b, " (%d events lost)", d.Events)
	}
	b.WriteString(": ")
	b.WriteString(d.Err.Error())
	return b.String()
}

// DamageError ends a trace in which the reader skipped damage: Next
// returns it after the last event it could read, instead of io.EOF (or
// instead of the error of a trace cut short, or of one that stopped the
// reading: Stopped). errors.Is(err, ErrDamaged) holds, and
// errors.Is(err, io.ErrUnexpectedEOF) too when the trace was cut short.
type DamageError struct {
	Damage []Damage
	// Stopped is the error that ended the reading before the input's end,
	// after the damage, where one did: the source's (a read error; a
	// zipped trace's checksum that does not match its bytes, when the
	// damage was in the compressed data), or a newer format. errors.Is
	// and errors.As see it too. Nil when the input was read to its end.
	Stopped *Error
}

// Error says how many ranges were skipped, how many bytes and events
// (where the trace tells), and the first damage in full:
//
//	nettrace: 2 damaged ranges skipped (65,536 bytes, 5,910 events lost); the first: 64,000 bytes at offset 1234: nettrace: EventBlock at offset …
//
// The events are the sum of the ranges' Events, "at least" that many
// where a range's count is unknown.
//
// A trace only cut short says so instead ("nettrace: the trace is cut
// short: …"): the events of its last block are read up to the cut.
func (e *DamageError) Error() string {
	var b strings.Builder
	b.WriteString("nettrace: ")
	if len(e.Damage) == 1 && e.truncated() {
		// Cut short, and nothing else: the cut block is read up to the
		// cut, not skipped.
		b.WriteString("the trace is cut short: ")
		b.WriteString(e.Damage[0].String())
	} else {
		e.writeSkipped(&b)
	}
	if e.Stopped != nil {
		b.WriteString("; then reading stopped: ")
		b.WriteString(e.Stopped.Error())
	}
	return b.String()
}

// writeSkipped writes what the damaged ranges skipped, and the first.
func (e *DamageError) writeSkipped(b *strings.Builder) {
	var bytes, events int64
	known, unknown := false, false
	for _, d := range e.Damage {
		bytes += d.Length
		if d.Events >= 0 {
			events += d.Events
			known = true
		} else {
			unknown = true
		}
	}
	switch {
	case bytes == 0 && !known:
		// Only blocks read as they stand (checkBlockRange).
		if len(e.Damage) == 1 {
			b.WriteString("1 damaged block read as it stands")
		} else {
			b.WriteString(strconv.Itoa(len(e.Damage)))
			b.WriteString(" damaged blocks read as they stand")
		}
	default:
		if len(e.Damage) == 1 {
			b.WriteString("1 damaged range skipped (")
		} else {
			b.WriteString(strconv.Itoa(len(e.Damage)))
			b.WriteString(" damaged ranges skipped (")
		}
		b.WriteString(numfmt.Thousands(bytes))
		b.WriteString(" bytes")
		if known && events > 0 {
			b.WriteString(", ")
			if unknown {
				b.WriteString("at least ")
			}
			b.WriteString(numfmt.Thousands(events))
			if events == 1 {
				b.WriteString(" event lost")
			} else {
				b.WriteString(" events lost")
			}
		}
		b.WriteString(")")
	}
	if e.truncated() {
		b.WriteString(", and the trace is cut short")
	}
	if len(e.Damage) > 0 {
		b.WriteString("; the first: ")
		b.WriteString(e.Damage[0].String())
	}
}

func (e *DamageError) truncated() bool {
	n := len(e.Damage)
	return n > 0 && e.Damage[n-1].Err.class == classTrunc
}

// Unwrap returns ErrDamaged, each damage's *Error and Stopped, so that
// errors.As finds the first and errors.Is their sentinels (ErrFormat,
// io.ErrUnexpectedEOF when the trace was cut short, the source's error).
func (e *DamageError) Unwrap() []error {
	errs := make([]error, 0, 2+len(e.Damage))
	errs = append(errs, ErrDamaged)
	for _, d := range e.Damage {
		errs = append(errs, d.Err)
	}
	if e.Stopped != nil {
		errs = append(errs, e.Stopped)
	}
	return errs
}

// SetStrict makes the reader stop at the first damage, as a reader that
// does not resynchronise would: Next returns that *Error, and again on
// every later call. Call it before the first Next.
func (r *Reader) SetStrict(on bool) { r.strict = on }

// Damage returns the damage skipped so far, in the order it was found;
// complete once Next has returned its last error. The caller must not
// modify it.
func (r *Reader) Damage() []Damage { return r.damage }

// errClass says how the reader goes on after an error.
type errClass uint8

const (
	// classBlock: the rest of the current block is skipped.
	classBlock errClass = iota
	// classRecord: the one event record is skipped; the block goes on.
	classRecord
	// classFraming: the stream is searched for the next block.
	classFraming
	// classTrunc: the input ends; the trace ends there.
	classTrunc
	// classFatal: reading cannot go on (an unsupported version, an I/O
	// error of the source).
	classFatal
)

// as sets the class of err, an *Error, and returns it.
func as(c errClass, err error) error {
	if e, ok := err.(*Error); ok {
		e.class = c
	}
	return err
}

// recover records the damage err describes and positions the reader
// where reading can go on; it returns nil when it can, else the error
// that ends the trace (err itself in strict mode).
func (r *Reader) recover(err error) error {
	e, ok := err.(*Error)
	if !ok || r.strict {
		return err
	}
	if e.class == classFatal {
		// Reading cannot go on; what was skipped before still counts.
		if len(r.damage) == 0 {
			return err
		}
		r.untaint()
		r.drops.flush()
		return &DamageError{Damage: r.damage, Stopped: e}
	}
	if r.cut != nil && e.class != classRecord {
		// The block was cut short by the end of the input: whatever went
		// wrong inside it, or after it, is the cut.
		e = r.cut
	}
	// Damage in an event block taints the block's sequence numbers (see
	// untaint); the record it is counted in takes the gaps it leaves.
	taint := r.inEvents && e.What != "metadata"
	blkEnd := r.blkOff + int64(len(r.blk))
	switch e.class {
	case classRecord:
		events := int64(1)
		if e.What == "metadata" {
			events = 0 // a metadata record; the events that need it are counted as they come
		}
		if r.uncounted {
			events, r.uncounted = 0, false // counted by the gap it leaves, if it is an event
		}
		i := r.recordDamage(e, r.blkOff+int64(r.pos)-e.Offset, events)
		if taint {
			r.taint(i)
		}
		return nil
	case classBlock:
		if r.ver <= 2 {
			// A V1/V2 record is its own block: when it does not parse, its
			// size may be what is wrong. Search from its second byte.
			r.s.unread(r.blk[min(1, len(r.blk)):])
			r.pos, r.inEvents = len(r.blk), false
			e.class = classFraming
			return r.resync(e)
		}
		at := e.Offset
		if at < r.blkOff || at > blkEnd {
			at = r.blkOff
		}
		events := int64(0)
		if e.Block == "EventBlock" || e.Block == "EventPipeFile" {
			events = -1
			if r.ver >= 4 {
				events = 0 // the gaps the skipped events leave will count them
			}
		}
		r.addDamage(Damage{Block: e.Block, Offset: at, Length: blkEnd - at, Events: events, Err: e})
		if taint {
			r.taint(len(r.damage) - 1)
		}
		fault := int(at - r.blkOff)
		r.pos = len(r.blk)
		r.checkFraming(fault)
		return nil
	case classFraming:
		if r.headerBack(e) {
			return nil
		}
		return r.resync(e)
	}
	// classTrunc: the input ends. In a block the input cut short (whose
	// whole events were read), the damage is from the event it ends in;
	// otherwise from the start of the item it ends in.
	at := e.BlockOffset
	if e.What != "" && (e.Offset < at || at == 0) {
		at = e.Offset
	}
	if r.cut != nil {
		// The input ends inside the block: a cut, or a size the damage
		// made too large. In the second case the next block is in the
		// bytes read as this one: after the fault when events of the
		// block were read, else anywhere in them.
		at, from := r.blkOff, 0
		if orig := err.(*Error); orig != r.cut {
			at, from = blkEnd, 1
			if orig.Offset >= r.blkOff && orig.Offset < blkEnd {
				at = orig.Offset
			}
		}
		fault := int(at - r.blkOff)
		if p := r.nextInside(r.blk[min(fault, len(r.blk)):], at, from); p >= 0 {
			r.cut = nil
			r.addDamage(Damage{Block: e.Block, Offset: at, Length: int64(p), Events: -1, Err: e})
			r.s.unread(r.blk[fault+p:])
			// The block is used up, but stays the current one until the
			// reader moves on: in time order, events held from it point
			// into it, and moving on keeps it for them (retireBlock)
			// instead of reading the next block over it.
			r.pos = len(r.blk)
			r.endTag = false
			return nil
		}
	}
	r.s.discardAll()
	r.addDamage(Damage{Block: e.Block, Offset: at, Length: max(r.s.off-at, 0), Events: -1, Err: e})
	return r.end()
}

// end returns the error that ends the trace when the input has been read
// to its end: io.EOF, or a *DamageError if anything was skipped.
func (r *Reader) end() error {
	r.untaint()
	r.drops.flush()
	if f := r.finish; f != nil {
		r.finish = nil
		if err := f(); err != nil {
			e := as(classFatal, r.errf(err, "", r.s.off, "%v", err)).(*Error)
			if len(r.damage) == 0 {
				return e
			}
			return &DamageError{Damage: r.damage, Stopped: e}
		}
	}
	if len(r.damage) == 0 {
		return io.EOF
	}
	return &DamageError{Damage: r.damage}
}

// addDamage appends a record and starts a new epoch for the sequence
// numbers, whose next gaps are the record's lost events (records added
// after it by recordDamage or noteDamage count their own).
func (r *Reader) addDamage(d Damage) {
	r.noted++
	r.damage = append(r.damage, d)
	r.suspect = true
	r.checkPhase = true
	r.damages++
	r.drops.revert()
	r.newEpoch(len(r.damage) - 1)
}

// newEpoch starts a new epoch for the sequence numbers, whose next gaps
// are lost events of the damage record i.
func (r *Reader) newEpoch(i int) {
	r.lostTo = i
	r.drops.damaged()
	r.lostCounter()
}

// lostCounter makes what the drop counter counts events lost to damage
// by, in the record lostTo (lostGaps).
func (r *Reader) lostCounter() {
	if r.drops.lost == nil {
		r.drops.lost = &lostGaps{r: r}
	}
}

// taint notes damage in the current event block, recorded in the damage
// record i, for untaint; the gaps of threads last seen before earlier
// damage count in i from here.
func (r *Reader) taint(i int) {
	r.drops.tainted, r.taintRec, r.lostTo = true, i, i
	r.lostCounter()
}

// untaint runs as the reader leaves an event block, and at the end:
// when damage was found in the block, the events read from it before the
// damage may be part of it, their sequence numbers with them (a record
// that parsed with a damaged number makes a gap the runtime never left,
// and leaves its thread's number wrong). The gaps it showed, held as
// drops (dropCounter.unhold) or as events lost to earlier damage
// (lostGaps.drop), are discarded; the next gap of each thread seen in it
// counts as events lost to this damage, not as drops. (Gaps of earlier
// blocks that its numbers settled stay counted.)
//
// While gaps are held, it also makes the next event of the thread whose
// run the block ended in go through dropCounter.event, which settles or
// confirms them: the run may go on in the next block.
func (r *Reader) untaint() {
	d := &r.drops
	if d.tainted {
		d.tainted = false
		d.unhold(d.blk)
		if d.lost != nil {
			d.lost.drop(r.blkOff)
		}
		r.newEpoch(r.taintRec)
	}
	if d.curPend != 0 || d.lost != nil && len(d.lost.pending) > 0 {
		d.park()
	}
}

// startRangeCheck sets up checkBlockRange for the V4+ event block just
// begun, whose header states the range [lo, hi] (blockTimes).
func (r *Reader) startRangeCheck(lo, hi int64) {
	r.tsStatedMin, r.tsStatedMax = lo, hi
	r.tsMin, r.tsMax = math.MaxInt64, math.MinInt64
	r.notedMark, r.rangeCheck = r.noted, true
}

// checkBlockRange runs as the reader leaves a V4+ event block whose
// header states a timestamp range (startRangeCheck). The runtime states
// the least and the greatest timestamp of the block's events, exactly
// (NetTraceFormat.md; so in every block of every trace here), so records
// that decoded to another range were misread where no check of a record
// could see it, or the header's range is damaged. One flipped flag can do
// it: an activity-ID flag set on a record makes it take the 16 bytes after
// its timestamp as an activity ID, which can be the whole next record,
// and every later timestamp in the block is then short by that record's
// delta. The damage is recorded with nothing skipped (the events were
// handed out, or held, as read) and its lost events unknown (a record
// it swallowed leaves a gap in its thread's numbers that may be counted
// as a drop), and the block's sequence numbers are tainted (untaint). A
// block in which damage was found already, or that the input cut short,
// is not checked. In strict mode the error is returned, and ends the
// trace.
func (r *Reader) checkBlockRange() error {
	r.rangeCheck = false
	if r.noted != r.notedMark || r.cut != nil || r.tsMin > r.tsMax ||
		r.tsMin == r.tsStatedMin && r.tsMax == r.tsStatedMax {
		return nil
	}
	e := r.errf(ErrFormat, "event block", r.blkOff,
		"its records' timestamps span [%d, %d], where its header states [%d, %d]: a record was misread with no other sign of damage, or the header's range is damaged; its events are as read",
		r.tsMin, r.tsMax, r.tsStatedMin, r.tsStatedMax).(*Error)
	if r.strict {
		return e
	}
	// Not addDamage: the block was framed and read whole, so the next one
	// needs no proof that it is a block (suspect, which on a live
	// session would wait for the bytes of a search window).
	r.noted++
	r.damage = append(r.damage, Damage{Block: r.blkName, Offset: r.blkOff, Events: -1, Err: e})
	r.taint(len(r.damage) - 1)
	return nil
}

// minRecord is the fewest bytes an event record takes in any format (a
// compressed header of flags and a one-byte timestamp delta, no payload):
// a damaged range of n bytes lost at most n/minRecord events.
const minRecord = 2

// noteDamage records damage that loses nothing: n bytes at off whose
// value the reader set aside to read on (a block header's version). In
// strict mode it returns e instead, which ends the trace.
func (r *Reader) noteDamage(e *Error, off, n int64) error {
	if r.strict {
		return e
	}
	r.noted++
	r.damage = append(r.damage, Damage{Block: e.Block, Offset: off, Length: n, Err: e})
	return nil
}

// recordDamage adds one skipped record of size n, holding events events,
// to the record of its kind (its message), or starts that record; it
// returns the record's index.
func (r *Reader) recordDamage(e *Error, n, events int64) int {
	r.noted++
	kind := e.kind
	if kind == "" {
		kind = e.Msg
	}
	if i, ok := r.recordKinds[kind]; ok {
		d := &r.damage[i]
		d.Length += n
		d.Events += events
		return i
	}
	if r.recordKinds == nil {
		r.recordKinds = make(map[string]int)
	}
	r.recordKinds[kind] = len(r.damage)
	r.damage = append(r.damage, Damage{Block: e.Block, Offset: e.Offset, Length: n, Events: events, Err: e})
	return len(r.damage) - 1
}

// FastSerialization framing (V3–V5): an object header is
//
//	BeginPrivateObject, BeginPrivateObject, NullReference,
//	int32 version, int32 minReaderVersion, int32 len, name, EndObject
//
// and each object ends with an EndObject tag. After damage the reader
// looks for the next header, whose block names are few and known.
const maxFSHeader = 15 + 48 + 1

var fsBlockNames = [][]byte{[]byte("EventBlock"), []byte("MetadataBlock"), []byte("StackBlock"), []byte("SPBlock")}

// blockHeaderAt reports whether b begins with the header of a block
// object this reader knows; b must hold maxFSHeader bytes unless the input
// ends sooner. Once the stream has blocks the reader read, a header right
// but for its version is one too (its version field damaged:
// nextFSObject reads the block and records the field).
func (r *Reader) blockHeaderAt(b []byte, _ int64) bool { return blockHeader(b, r.fsKnown) }

// blockHeader is blockHeaderAt, the version up to 2 unless anyVersion.
func blockHeader(b []byte, anyVersion bool) bool {
	if len(b) < 15 || b[0] != tagBeginPrivateObject && b[0] != tagBeginObject || b[1] != b[0] || b[2] != tagNullReference {
		return false
	}
	version := le32(b[3:])
	minVersion := le32(b[7:])
	n := le32(b[11:])
	if version > 2 && !anyVersion || minVersion > 2 || n < 7 || n > 13 || len(b) < 15+int(n)+1 || b[15+n] != tagEndObject {
		return false
	}
	name := b[15 : 15+n]
	for _, k := range fsBlockNames {
		if bytes.Equal(name, k) {
			return true
		}
	}
	return false
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// checkFraming runs after damage inside a block of a V3–V5 stream: when
// the block's stated size is right, its EndObject tag follows, then the
// next object's header or the stream's end. When it is not, the size was
// part of the damage: the next object may be inside the bytes read as the
// block, and is put back into the stream; failing that, the next read
// finds no EndObject tag and searches the stream.
func (r *Reader) checkFraming(fault int) {
	if r.ver == 6 {
		// V6: the next block header must be credible; when it is not,
		// the damaged block's size may be too large, and the next block
		// inside the bytes read as this one. The search starts there.
		at := r.s.off
		if b, more := r.v6Ahead(1); len(b) > 0 && !r.v6BlockAt(b, at, more) {
			// Or too small: bytes taken out of it (damage that a
			// zipped trace's inflating absorbed, before the fault
			// showed) ran it into the next block, whose header is in
			// its last bytes, before the fault or after it.
			k := len(r.damage) - 1
			if r.findBack(r.damage[k].Err, r.blk, r.blkOff, true) {
				// (findBack appended a record: r.damage may have moved.)
				d := &r.damage[k]
				d.Length = max(0, min(d.Length, r.damage[k+1].Offset-d.Offset))
				return
			}
			back := r.blk[min(max(fault, 0)+1, len(r.blk)):]
			r.damage[len(r.damage)-1].Length -= int64(len(back))
			r.s.unread(back)
		}
		return
	}
	if r.ver != 3 && r.ver != 4 {
		return
	}
	b, _ := r.s.peek(1 + maxFSHeader)
	if len(b) == 0 || b[0] == tagEndObject && (len(b) == 1 || b[1] == tagNullReference || r.blockHeaderAt(b[1:], 0)) {
		return
	}
	blk := r.blk[max(fault, 0):]
	for i := 0; i+1 < len(blk); i++ {
		if blk[i] == tagEndObject && r.blockHeaderAt(blk[i+1:], 0) {
			back := len(blk) - i
			d := &r.damage[len(r.damage)-1]
			d.Length -= int64(back)
			r.s.unread(blk[i:])
			return
		}
	}
}

// headerBack handles a V3–V5 block read whole, without a fault, that is
// not followed by its EndObject tag: the damage took bytes out of it (a
// zipped trace's compression decodes on past damage, one or more bytes
// short), so its stated size ran into the next block, whose header then
// begins in the block's last bytes. Searching on from there would miss
// it. It looks for that header from the block's end back (findBack) and
// reports whether it found one. (V6: checkFraming.)
func (r *Reader) headerBack(e *Error) bool {
	blk, off := r.blk, r.blkOff
	if s := &r.sorted; len(blk) == 0 && len(s.blocks) > 0 {
		// Time order: the block is held for its events (retireBlock).
		blk, off = s.blocks[len(s.blocks)-1], s.blockOffs[len(s.blocks)-1]
	}
	if r.ver < 3 || r.ver > 5 || e.What != "EndObject tag" || e.Offset != off+int64(len(blk)) || len(blk) == 0 {
		return false
	}
	return r.findBack(e, blk, off, false)
}

// findBack looks for the next block's header in the last searchBack bytes
// of blk, the block at stream offset off just read, and on into the
// stream, from the end back; where it finds one it puts the bytes from
// there back into the stream and records the run-over as damage (e
// describes what found it wrong), and reports true. It looks into the
// stream only as far as each judgement needs: the next block's header
// (V3–V5), or what look.v6 takes (V6), no more than searchWindow bytes.
func (r *Reader) findBack(e *Error, blk []byte, off int64, v6 bool) bool {
	from := max(0, len(blk)-searchBack)
	l := look{s: &r.s, pre: blk[from:], buf: r.backBuf[:0]}
	defer func() { r.backBuf = l.buf[:0] }()
	w := len(l.pre) + searchWindow
	for i := len(l.pre) - 1; i >= 0; i-- {
		var found bool
		if v6 {
			found = l.v6Credible(i, w)
		} else {
			h := l.first(i + 1 + maxFSHeader)
			found = h[i] == tagEndObject && r.blockHeaderAt(h[i+1:], 0)
		}
		if found {
			ce := *e
			ce.Msg = fmt.Sprintf("the block's stated size runs %d bytes past its end, into the next block", len(l.pre)-i)
			r.addDamage(Damage{Block: e.Block, Offset: off + int64(from+i), Length: int64(len(l.pre) - i), Err: &ce})
			r.s.unread(blk[from+i:])
			r.endTag = !v6
			return true
		}
	}
	return false
}

// searchBack bounds how far findBack looks back into a block: further
// than the bytes a damaged deflate stream gains or loses.
const searchBack = 4 << 10

// resync searches the stream for where reading can go on after damage to
// its framing: the next block header in a V3–V6 stream, the next event
// record in a V1/V2 one. It records the bytes passed over as damage.
//
// From V3 on it searches the bytes at hand (stream.peekSome) and waits
// only for the bytes a judgement needs: a live session's next bytes may
// be minutes away. Whether bytes hold a V3–V5 block header is in their
// first maxFSHeader bytes; a V6 block is judged on the blocks look.v6
// takes, within the searchWindow bytes from where the round of the search
// began. V1/V2 streams (files of .NET Core 2, never live) are searched
// a window at a time: a record there is credible only when the window
// holds it and the one after it.
func (r *Reader) resync(e *Error) error {
	at := e.Offset
	if at < 0 || at > r.s.off {
		at = r.s.off
	}
	// The bytes from the fault to the current position were read already;
	// the search starts at the byte after the fault's own.
	for {
		var b []byte
		var err error
		if r.ver <= 2 {
			b, err = r.s.peek(searchWindow)
		} else {
			b, err = r.s.peekSome(maxFSHeader+1, searchWindow)
		}
		i := 0
		for ; i+maxFSHeader <= len(b) || err != nil && i < len(b); i++ {
			var ok bool
			switch {
			case r.ver <= 2:
				ok = r.v2RecordAt(b[i:], r.s.off+int64(i))
			case r.ver == 6:
				if len(b)-i >= 4 && v6Kind(le32(b[i:])) {
					l := look{s: &r.s}
					ok = l.v6Credible(i, searchWindow)
					b, _ = r.s.peek(len(b)) // the look may have moved the buffer's bytes
				}
			default:
				ok = r.blockHeaderAt(b[i:], 0)
			}
			if ok {
				r.s.discard(i)
				// From V4 on, the gaps the skipped range leaves in the
				// threads' numbers count its events (addDamage starts
				// their epoch).
				events := int64(-1)
				if r.ver >= 4 {
					events = 0
				}
				r.addDamage(Damage{Offset: at, Length: r.s.off - at, Events: events, Err: e})
				r.endTag = false
				return nil
			}
		}
		if err != nil || len(b) < maxFSHeader {
			// The input ends (or the source fails): the rest was damage.
			r.s.discard(len(b))
			r.addDamage(Damage{Offset: at, Length: r.s.off - at, Events: -1, Err: e})
			if sourceErr(err) {
				return r.recover(r.ioErr(err, "", r.s.off, 0))
			}
			return r.end()
		}
		r.s.discard(i)
	}
}

// searchWindow is the most of the stream a search after damage looks at
// from where it stands (a V1/V2 search all of it at once); it fits the
// stream's buffer.
const searchWindow = 60 << 10

// v2RecordAt reports whether b, at stream offset off of a V1/V2 stream,
// begins with a credible event record, or with the EventPipeFile trailer:
// a record's size is exactly its header, payload and stack, it refers to
// metadata already read (or is metadata), its timestamp is within a day
// before the trace's sync time and a month after it, and b holds it and
// the header of the record after it, which is credible too (a record
// larger than b is not believed: after damage, a record is read only
// when the next one confirms it). A metadata record's ID is its offset,
// so the record after it may refer to it.
func (r *Reader) v2RecordAt(b []byte, off int64) bool {
	return r.v2Record(b, off, 1, 0)
}

func (r *Reader) v2Record(b []byte, off int64, depth int, pending uint32) bool {
	if len(b) >= 9 && b[0] == tagEndObject {
		if n := le32(b[1:]); n >= 1 && n < 1<<16 && int64(le32(b[5:])) == off {
			return true
		}
	}
	if len(b) < 56 {
		return false
	}
	total := int64(le32(b)) + 4
	if total < 60 || total > int64(len(b)) {
		return false
	}
	meta := le32(b[4:])
	if meta != 0 && meta != pending && r.lookupMeta(meta) == nil {
		return false
	}
	pay := int64(le32(b[52:]))
	if 56+pay+4 > total || meta == 0 && pay == 0 {
		return false
	}
	if 56+pay+4+int64(le32(b[56+pay:])) != total {
		return false
	}
	ts := int64(le32(b[12:])) | int64(le32(b[16:]))<<32
	f, t0 := r.info.QPCFrequency, r.info.SyncTimeQPC
	if meta != 0 && f > 0 && (ts < t0-86400*f || ts > t0+31*86400*f) {
		return false
	}
	if depth == 0 {
		return true
	}
	next := b[total:]
	if len(next) == 0 {
		return true // the input ends after it
	}
	if meta == 0 {
		pending = uint32(off)
	}
	return r.v2Record(next, off+total, depth-1, pending) || len(next) < 56 && len(next) < 9
}

// v6BlockAt reports whether b, at stream offset off of a V6 stream, begins
// with a credible block: a kind this reader knows (not a second
// TraceBlock), content that starts as that kind's does, and a credible
// header after it (or the EndOfStream block ending the input) unless the
// input ends there. more says whether the input goes on past b: a block
// that runs past b is then credible on its own header and the content b
// holds (producers write blocks of 100 KB and 1 MiB, larger than what
// the reader looks at at once), and readV6Block checks the header after
// it once it has read it. Otherwise a block larger than b is not
// believed. V6 blocks carry no marks, so after damage the reader
// believes a block only when it passes these checks.
func (r *Reader) v6BlockAt(b []byte, off int64, more bool) bool {
	return v6Block(b, 1, false, more)
}

// v6Ahead returns the stream's next bytes, as many as v6Block needs to
// judge the block there and depth more after it (look.v6), and whether
// the input may go on past them. On a live session a look as far as the
// search window waits until the runtime has written as much, which may
// take minutes (a session of counters alone writes a few hundred bytes a
// second); this one waits only for the blocks it judges.
func (r *Reader) v6Ahead(depth int) (b []byte, more bool) {
	l := look{s: &r.s}
	return l.v6(0, depth, searchWindow)
}

// look is a view of bytes already taken from the stream (pre) followed by
// the stream's next ones, which it peeks only as far as it is asked to:
// what a judgement after damage needs, and no more, so that on a live
// session it waits only for those bytes.
type look struct {
	s     *stream
	pre   []byte
	buf   []byte // pre, then the stream bytes peeked so far (when pre is not empty)
	ended bool   // buf holds the rest of the input
}

// first returns the view's first n bytes, fewer where the input ends; it
// waits for those bytes alone (stream.peekSome). The slice is valid until
// the next call, or the next read from the stream.
func (l *look) first(n int) []byte {
	k := len(l.pre)
	switch {
	case n <= k:
		return l.pre[:n]
	case k == 0:
		b, _ := l.s.peek(n)
		return b
	case n > len(l.buf) && !l.ended:
		a, err := l.s.peekSome(n-k, searchWindow)
		l.buf = append(append(l.buf[:0], l.pre...), a...)
		l.ended = err != nil
	}
	return l.buf[:min(n, len(l.buf))]
}

// v6 returns the view's bytes from its start to the end of what v6Block
// needs to judge the block at start and depth more after it: to the end
// of the last of them, or of the header or first bytes that condemn one
// (or an EndOfStream header and the byte after it, which tells whether
// the input ends with it), but no further than w, the end of the window
// the judgement stands for; more says the input may go on past them.
// v6Block decides on b[start:] as it would on the window's bytes from
// start.
func (l *look) v6(start, depth, w int) (b []byte, more bool) {
	for pos := start; ; depth-- {
		n := min(pos+4, w)
		if b = l.first(n); len(b) < n || n == w {
			return b, len(b) == w
		}
		x := le32(b[pos:])
		switch {
		case x == 0:
			b = l.first(n + 1)
			return b, len(b) > n
		case !v6Kind(x):
			return b, true
		}
		// The content's first bytes, which may condemn the block alone
		// (v6Content): a header that damage or a search made up is let go
		// without waiting for the bytes it states.
		size := int(x & 0xFFFFFF)
		p := min(n+min(size, v6Lead), w)
		if b = l.first(p); len(b) < p {
			return b, false // the input ends in them
		}
		if !v6Content(int(x>>24), size, b[n:p]) {
			return b, true
		}
		pos = n + size
		if depth == 0 || pos >= w {
			n = min(pos, w)
			b = l.first(n)
			return b, len(b) == n
		}
	}
}

// v6Credible reports whether the view holds a credible V6 block at
// start, judged as v6BlockAt judges one on the window that ends at w
// (look.v6), after a look at its header alone.
func (l *look) v6Credible(start, w int) bool {
	if h := l.first(start + 4); len(h) < start+4 || !v6Kind(le32(h[start:])) {
		return false
	}
	b, more := l.v6(start, 1, w)
	return v6Block(b[start:], 1, false, more)
}

// v6Kind reports whether x, a V6 block header, names a kind of block this
// reader knows and a size other than 0, as a credible header must: the
// check v6Block makes of a header alone.
func v6Kind(x uint32) bool {
	size, kind := x&0xFFFFFF, int(x>>24)
	return kind >= kindEvent && kind <= kindLabelList && size != 0
}

// v6Block checks the block at b and, depth more deep, the ones after it;
// end says whether the EndOfStream block is credible here (after a
// credible block, not on its own: zeros end many a cut block).
func v6Block(b []byte, depth int, end, more bool) bool {
	if len(b) < 4 {
		return false
	}
	x := le32(b)
	size, kind := int(x&0xFFFFFF), int(x>>24)
	if x == 0 {
		return end && len(b) == 4 // EndOfStream: the last 4 bytes
	}
	// An empty block is legal for some kinds, but believing one would
	// take zeros before a 6 or a 7 for a block; passing it over loses
	// nothing.
	if !v6Kind(x) || 4+size > len(b) && !more {
		return false
	}
	c := b[4:]
	if len(c) > size {
		c = c[:size]
	}
	if !v6Content(kind, size, c) {
		return false
	}
	if depth == 0 || 4+size >= len(b) {
		return true
	}
	return v6Block(b[4+size:], depth-1, true, more)
}

// v6Content reports whether c, the first bytes of a V6 block's content
// (all of them, or as many as a look holds), starts as its kind's does. It
// looks at no more than the first v6Lead bytes.
func v6Content(kind, size int, c []byte) bool {
	switch kind {
	case kindEvent:
		// HeaderSize counts itself; then Flags (1: compressed headers).
		if len(c) < 4 {
			return false
		}
		if hs := int(le16(c)); hs < 20 || hs > size || le16(c[2:]) > 1 {
			return false
		}
	case kindMetadata:
		// HeaderSize does not count itself, and is 0 in what writers write.
		if len(c) < 2 || 2+int(le16(c)) > size {
			return false
		}
	case kindStack, kindLabelList:
		if size < 8 || len(c) >= 8 && int64(le32(c[4:])) > int64(size-8) {
			return false
		}
	case kindSequencePt:
		if size < 16 || len(c) >= 16 && le32(c[8:]) > 3 {
			return false
		}
	}
	return true
}

// v6Lead is how many of a block's first bytes v6Content looks at.
const v6Lead = 16

// believeLarge decides, after damage, on the block just read at stream
// offset at (header h) that was larger than v6BlockAt could look at, and
// credible on its header: it stands once the header after it is credible
// too (or the input ends there). When that one is not, the block's bytes
// go back into the stream and the search for the next block goes on from
// the byte after at.
func (r *Reader) believeLarge(at int64, h []byte) error {
	if b, more := r.v6Ahead(0); len(b) == 0 || v6Block(b, 0, true, more) {
		return nil
	}
	n := len(r.blk)
	r.s.unread(append(append([]byte(nil), h[1:]...), r.blk...))
	r.blk = r.blk[:0]
	return as(classFraming, r.errf(ErrFormat, "block header", at, "not a credible block header: the bytes after its %d bytes are no block header", n))
}

// undefinedMeta is the error of the event whose header, at stream offset
// off, was just read into r.hdr and refers to metadata the reader does
// not have: the metadata was lost to damage, or the header is damage.
// From V4 on, a header whose sequence number is not the next of its
// capture thread (or the first, 1, of a thread not seen) is taken for
// damage: in a block of compressed headers, each header inherits the
// fields the one before it set (thread, capture thread, sequence number)
// and adds its time to that one's, so every later event of the block
// would come out with a garbled thread or a time moved by up to the
// block's span, and the rest of the block is lost with it: on 48 garbled
// copies of the .NET Core 3.0 trace, each of the 115,558 events this
// leaves out had come out with a time other than the intact trace's.
// Otherwise the event alone is lost.
func (r *Reader) undefinedMeta(off int64) error {
	h := &r.hdr
	if r.ver >= 4 && r.compress && !r.drops.fits(h.captureThreadID, h.seq) {
		return as(classBlock, r.errf(ErrFormat, "event", off,
			"refers to metadata id %d, which is not defined, with sequence number %d, not its thread's next: a damaged header, whose fields the block's later headers inherit", h.metaID, h.seq))
	}
	if r.ver >= 4 {
		r.uncounted = !r.drops.skipped(h.captureThreadID, h.seq)
	}
	return r.undefinedRef(off, "undefined metadata", "refers to metadata id %d, which is not defined", h.metaID)
}

// eventNumber notes the capture thread and sequence number of the event
// whose header, at r.blk[start:] (stream offset off), was just read into
// r.hdr, when it is not its thread's next (the readers' inline check), or
// returns the error of a made-up one.
//
// A compressed header naming a capture thread that a garbled header made
// up (dropCounter.stray) whose number is a known thread's next, and no
// other's, has the capture thread field damaged (its later headers inherit it until
// one states a thread again): it and they are that thread's, and read
// so (a block's first header too). Another, not a block's first,
// is skipped alone and counted with the others (its real thread's next
// number shows the gap). But when a
// known thread's number then jumps by more than the events so skipped,
// the numbers of the block were moved from the damaged header on (a
// header read from other bytes, whose later headers inherit its fields
// and add their times to its): the rest of the block is lost with it,
// rather than read with other times and numbers.
func (r *Reader) eventNumber(start, p int, off int64) error {
	h, d := &r.hdr, &r.drops
	stray := r.compress && d.stray(h.captureThreadID, h.seq)
	if stray {
		switch th, ok := d.nextOf(h.seq); {
		case ok && r.bornHere(th):
			// The thread whose next number this is was first seen in
			// this block or the one before: the damage may have changed
			// its first header's field instead, making it up (the headers
			// that inherit it reach no further), and this is the real
			// thread. Nothing tells which; this one is read as it states.
			stray = false
		case ok:
			// A known thread's next number, and no other's: the capture
			// thread field is what the damage changed, and the headers
			// after it that inherit it. The event is that thread's, and
			// so are theirs (r.hdr passes it on); the field is recorded
			// once a block.
			if !r.strayFixed {
				r.strayFixed = true
				e := r.errf(ErrFormat, "event", off, "capture thread %d, not seen before, with sequence number %d, capture thread %d's next: the field is damaged; read as %d, in the headers after it that inherit it too", h.captureThreadID, h.seq, th, th).(*Error)
				if err := r.noteDamage(e, off, int64(p-start)); err != nil {
					return err // strict
				}
			}
			h.captureThreadID = th
			d.event(th, h.seq)
			return nil
		}
	}
	if r.compress && start != r.blkFirst {
		if stray {
			r.strays++
			r.uncounted = true // its thread's gap counts it
			e := r.errf(ErrFormat, "event", off, "capture thread %d, not seen before, first comes with sequence number %d, %d above the number before it: a session numbers each thread's events from 1; a damaged header", h.captureThreadID, h.seq, h.seq-d.curSeq).(*Error)
			e.kind = "made-up capture thread"
			return as(classRecord, e)
		}
		if last, ok := d.last(h.captureThreadID); r.strays > 0 && ok && h.seq-last-1 > r.strays {
			return as(classBlock, r.errf(ErrFormat, "event", off,
				"capture thread %d comes with sequence number %d, %d after its last, past the %d events of made-up threads skipped before it in the block: the block's numbers and times were moved from the damaged header on", h.captureThreadID, h.seq, h.seq-last, r.strays))
		}
	}
	if _, seen := d.last(h.captureThreadID); !seen {
		r.born(h.captureThreadID)
	}
	d.event(h.captureThreadID, h.seq)
	return nil
}

// bornThread is a capture thread first seen in event block blk (the
// drop counter's numbering).
type bornThread struct {
	th  uint64
	blk uint32
}

// born notes capture thread th as first seen in the current event block
// (the last few such threads are remembered).
func (r *Reader) born(th uint64) {
	r.borns[r.bornN%uint32(len(r.borns))] = bornThread{th, r.drops.blk}
	r.bornN++
}

// bornHere reports whether capture thread th was first seen in the
// current event block or the one before it (as far as born remembers):
// the blocks a header's made-up capture thread can reach, since each
// block's first header states its thread in full.
func (r *Reader) bornHere(th uint64) bool {
	for _, b := range r.borns[:min(int(r.bornN), len(r.borns))] {
		if b.th == th && r.drops.blk-b.blk <= 1 {
			return true
		}
	}
	return false
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

// nextInside looks for the next credible block (V1/V2: event record) in
// b, bytes at stream offset off read as part of a damaged block, and
// returns where it starts (for V3–V5, where the EndObject tag before it
// is), or -1. It looks from b[from] on.
func (r *Reader) nextInside(b []byte, off int64, from int) int {
	for i := max(from, 1); i < len(b); i++ {
		switch {
		case r.ver <= 2:
			if r.v2RecordAt(b[i:], off+int64(i)) {
				return i
			}
		case r.ver == 6:
			if r.v6BlockAt(b[i:], off+int64(i), false) { // the input ends in b
				return i
			}
		default:
			if b[i-1] == tagEndObject && r.blockHeaderAt(b[i:], 0) {
				return i - 1
			}
		}
	}
	return -1
}

// blockPrints is how many of the last event blocks repeatedBlock
// remembers.
const blockPrints = 64

// printLen is how many of an event block's first bytes its print hashes:
// a V4–V6 block's header (its time range) and its first event's header,
// which states the event's thread, sequence number and time in full; a
// V3 block's first event record.
const printLen = 128

// blockPrint is what repeatedBlock remembers of an event block: its
// length, a hash of its first bytes, and where it is.
type blockPrint struct {
	n   int
	h   uint64
	off int64
}

var printSeed = maphash.MakeSeed()

// repeatedBlock reports whether the event block just read repeats one of
// the last blockPrints event blocks, byte for byte as far as their
// lengths and first bytes tell: no two blocks of a trace share those (a
// thread's events carry rising numbers and times), and EventPipe blocks
// carry no checksum, so a block that a fault in storage or in a copy
// wrote twice would hand its events out twice. Such a block is skipped
// and recorded as damage that lost no events; err is non-nil in strict
// mode, and for the caller to return. It does not disturb the counts of
// dropped events: the block's numbers are not read.
func (r *Reader) repeatedBlock() (bool, error) {
	p := blockPrint{n: len(r.blk), h: maphash.Bytes(printSeed, r.blk[:min(len(r.blk), printLen)]), off: r.blkOff}
	for i := range min(r.printN, blockPrints) {
		if q := r.prints[i]; q.n == p.n && q.h == p.h {
			e := r.errf(ErrFormat, "event block", r.blkOff, "%d bytes that repeat the event block at offset %d", p.n, q.off).(*Error)
			if r.strict {
				return true, e
			}
			// Not addDamage: nothing was lost, and the blocks around it
			// are whole.
			r.damage = append(r.damage, Damage{Block: r.blkName, Offset: r.blkOff, Length: int64(p.n), Err: e})
			r.pos, r.inEvents = len(r.blk), false
			return true, nil
		}
	}
	r.prints[r.printN%blockPrints] = p
	r.printN++
	return false, nil
}
