package nettrace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/ziptrace"
)

// Block kinds, as V6 numbers them; FastSerialization objects map onto them.
const (
	kindEndOfStream  = 0
	kindTrace        = 1
	kindEvent        = 2
	kindMetadata     = 3
	kindSequencePt   = 4
	kindStack        = 5
	kindThread       = 6
	kindRemoveThread = 7
	kindLabelList    = 8
)

var v6BlockNames = [...]string{"EndOfStreamBlock", "TraceBlock", "EventBlock", "MetadataBlock",
	"SequencePointBlock", "StackBlock", "ThreadBlock", "RemoveThreadBlock", "LabelListBlock"}

// maxObjectSize bounds a FastSerialization block's declared size. The
// runtime writes blocks of at most a few hundred KB; V6 blocks cannot
// exceed 16 MiB. A larger declared size is treated as corruption.
const maxObjectSize = 1 << 28

// FastSerialization tags.
const (
	tagNullReference      = 1
	tagBeginObject        = 4
	tagBeginPrivateObject = 5
	tagEndObject          = 6
)

// evHeader is the decoded event header; in compressed blocks it carries the
// previous event's values.
type evHeader struct {
	metaID          uint32
	seq             uint32
	threadID        uint64
	captureThreadID uint64
	proc            uint32
	stackID         uint32
	ts              int64
	activity        clrimpl.GUID
	related         clrimpl.GUID
	ids             bool // activity or related is not zero
	labelID         uint32
	payloadSize     uint32
	sorted          bool
}

type stackRef struct{ off, n uint32 }

// provider is a provider name as the reader keeps it, once, and the GUID
// EventSource derives from it.
type provider struct {
	name string
	guid clrimpl.GUID
}

// providerCache holds the providers Readers have met, process-wide, a
// slot each by the hash of the name: the next Reader (a collector's next
// window, a dataset's next trace) finds a provider's name string and GUID
// there instead of making them again (a map per Reader, and SHA-1 for an
// EventSource's GUID). A slot holds the last provider hashed to it; a
// name longer than maxCachedName is not kept, so the cache holds at most
// len(providerCache) × maxCachedName bytes of names, whatever the input.
var (
	providerCache [64]atomic.Pointer[provider]
	providerSeed  = maphash.MakeSeed()
)

const maxCachedName = 256

// cachedProvider returns the provider named name, from the cache or made.
func cachedProvider(name string) *provider {
	slot := &providerCache[maphash.String(providerSeed, name)%uint64(len(providerCache))]
	if p := slot.Load(); p != nil && p.name == name {
		return p
	}
	p := &provider{name: name, guid: ProviderGUID(name)}
	if len(name) <= maxCachedName {
		slot.Store(p)
	}
	return p
}

// Reader reads events from an EventPipe trace, one at a time, in file
// order, or in time order after SetOrder. It is not safe for concurrent
// use.
type Reader struct {
	s      stream
	closer io.Closer
	// finish reads the rest of a zipped trace's member once the trace has
	// ended, and returns what the archive's checks found (openZip).
	finish func() error
	info   TraceInfo
	ver    int // 1..4, 6 (5 is read as 4)

	ev  Event
	err error // sticky

	// Metadata by ID: small IDs (V3 on) in metaByID, found without a map
	// look-up, the others (stream offsets before V3, IDs too large for
	// metaByID when they came) in meta. nmeta counts the records added.
	meta     map[uint32]*Metadata
	metaByID []*Metadata
	nmeta    int

	// The current block or object.
	blk       []byte
	blkOff    int64  // stream offset of blk[0]
	blkHdrOff int64  // stream offset of the block's header
	blkName   string // for errors
	pos       int    // next event in blk
	inEvents  bool
	// The range the events of the current V4+ event block must fall in,
	// from its header's MinTimestamp and MaxTimestamp: tsLo and the span
	// above it, held complemented (tsSpanNot), so that zeros, as a new
	// Reader has them, are no limit: a block that states none.
	tsLo      int64
	tsSpanNot uint64

	// TimeOrder (see sorted.go).
	order      Order
	lowLatency bool
	spSeen     bool // a sequence point passed since the last raw event
	sorted     sortState
	compress   bool
	endTag     bool // a FastSerialization EndObject tag follows blk
	fsKnown    bool // a block object of a version this reader reads has been read
	hdr        evHeader

	// Stack table (V4+): IPs of all stacks since the last sequence point.
	stacks    map[uint32]stackRef
	stackRefs []stackRef // stacks[stackBase+i], while IDs are contiguous
	stackBase uint32
	ipsGen    uint64 // ips' number among the process's stack tables (StackKey)
	ips       []uint64
	stackBuf  []uint64 // inline stack of the current V1–V3 event

	// V6 tables.
	threads map[uint64]*Thread
	// threadIdx mirrors threads for indexes below maxThreadIdx, the
	// small ones writers give, so an event finds its thread without a
	// map look-up (threadAt).
	threadIdx []*Thread
	labels    map[uint32]*LabelList

	drops dropCounter // dropped-event count (drops.go)
	v2    v2Shift     // V1/V2 metadata IDs after a shift (v2shift.go)

	// Damage (damage.go): what was skipped, the record kinds skipped one
	// by one, strict mode, and the error of a block the input cut short.
	damage      []Damage
	recordKinds map[string]int
	strict      bool
	cut         *Error
	// suspect: since the last damage no block has been read whole; V1/V2
	// records and V6 blocks are then read only when credible.
	suspect bool
	// phase is the stream offset, modulo 4, at which the blocks' contents
	// begin: 0 as written, another where damage that a zipped trace's
	// compression absorbed moved the bytes after it (deflate goes on
	// after most damage, one or more bytes longer or shorter). After
	// damage, the next block's padding is checked and the phase found
	// again (findPad), and each block's while the phase is not 0: a
	// phase found inside the damage (blocks moved whole) does not carry
	// into the intact blocks after it.
	phase      int64
	checkPhase bool
	backBuf    []byte  // findBack's bytes, kept for the next search
	padBuf     [3]byte // the current V3–V5 block's padding (movedBlock)
	damages    int     // addDamage calls; mark: their number when the current block began
	mark       int
	stackMark  int // damages when the last StackBlock was read (nextStackID)
	// restarted: the last StackBlock numbered its stacks from 1 while the
	// table held others, and no event block came after it (stackBlock,
	// sequencePoint).
	restarted bool
	// blkFirst is where the V4+ event block's first event starts: its
	// header states its number in full (dropCounter.stray). strays counts
	// the events of the block skipped as made up (eventNumber).
	blkFirst   int
	strays     uint32
	strayFixed bool          // a made-up capture thread was read as a known one's in the block
	borns      [8]bornThread // the last capture threads first seen (born)
	bornN      uint32
	// The version and minimum reader version the first block whose
	// version this reader reads stated (fsVerSet), which every block
	// after it states, in a trace of a version other than 3–5
	// (blockVersions); minVer is the object header's just read.
	fsVer, fsMinVer, minVer int32
	fsVerSet                bool
	// metaNext is the metadata ID after the highest defined: the next a
	// V4/V5 writer gives (metaIDFix).
	metaNext uint32
	// prints are the last event blocks read (repeatedBlock), printN how
	// many were.
	prints [blockPrints]blockPrint
	printN int
	lostTo int // the damage record the sequence numbers' next gaps count in
	// taintRec: the damage record of the event block whose sequence
	// numbers the damage tainted (drops.tainted; see untaint).
	taintRec int
	// uncounted: the event just skipped is not counted as lost where it
	// was skipped (dropCounter.skipped).
	uncounted bool

	rawSp   *rawSpent // the one NewReader took its buffers from, if any
	scratch [64]byte  // object type names
	hbuf    [48]byte  // small headers (a local array would escape to the heap)

	// Timestamp checks (after the hot fields above, whose layout the
	// per-event paths are tuned to). The session's start as the trace
	// header states it, less a millisecond (sessionFloor): no event
	// precedes it. floorOK: a block's stated range or (V1–V3) an event
	// confirmed it, so a garbled header sets none.
	floor   int64
	floorOK bool
	// tsMin and tsMax are the least and greatest timestamps of the
	// current V4+ event block's records so far; rangeCheck says that
	// they must equal the range its header states (tsStatedMin,
	// tsStatedMax) when the block ends (checkBlockRange), unless damage
	// was recorded meanwhile: noted counts the damages recorded, and
	// notedMark is its count when the block began.
	tsMin, tsMax             int64
	tsStatedMin, tsStatedMax int64
	rangeCheck               bool
	noted, notedMark         int
	// V1–V3: the last event's timestamp (hasPrevTS), which the next may
	// not precede (checkTimeV3): the runtimes that wrote them wrote their
	// events in time order.
	prevTS    int64
	hasPrevTS bool
	// syncBad: the trace header's sync time is no date (parseSyncTime),
	// to be recorded as damage with the first block.
	syncBad *Error
	// tagsBad: the tags of the stream's first object (Trace or
	// EventPipeFile) are damaged, the rest of its header right
	// (readFSTypeHeader); recorded with the first block as syncBad is.
	tagsBad *Error
	// firstBad: another field of the first object's header is damaged
	// (firstObjectFix), firstBadLen bytes at its Offset; recorded with
	// the first block as tagsBad is.
	firstBad    *Error
	firstBadLen int64
}

// NewReader reads the stream header and the Trace object or block from r and
// returns a Reader positioned before the first event. It recognises the
// format from the first bytes: "Nettrace" then a zero word (V6), "Nettrace"
// then a FastSerialization header (V4/V5), or a bare FastSerialization
// header (.netperf, V1–V3). r is read sequentially and never seeked; it is
// buffered internally.
func NewReader(r io.Reader) (*Reader, error) {
	// The maps are made when first written: a small trace (a
	// collector's window, one of a dataset's thousands) needs few or none.
	rd := &Reader{}
	rd.s.init(r)
	rd.ev.info = &rd.info
	rd.info.ProcessID = -1 // until the trace says
	rd.ipsGen = stackGens.Add(1)
	if sp, ok := rawPool.Get().(*rawSpent); ok {
		rd.blk, rd.ips, rd.stackRefs = sp.blk, sp.ips, sp.stackRefs
		*sp = rawSpent{}
		rd.rawSp = sp // to carry them on at the end
	}
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Open opens a trace file: a .nettrace or .netperf file, a .zip archive
// holding exactly one of them (as PerfView stores its traces), or one of
// them gzipped (.nettrace.gz); the content is decompressed as it is read. An
// archive cut short, without its directory, is read from the member's local
// header: its events before the cut, then a *DamageError, as for a trace cut
// short. Close releases the file.
func Open(name string) (*Reader, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	var magic [4]byte
	n, _ := io.ReadFull(f, magic[:])
	if n == 4 && string(magic[:]) == "PK\x03\x04" || ziptrace.IsGzip(magic[:n]) {
		r, err := openZip(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("nettrace: %w", err)
		}
		return r, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

type multiCloser []io.Closer

// Close closes every member and returns the first error.
func (m multiCloser) Close() error {
	var first error
	for _, c := range m {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func openZip(f *os.File) (*Reader, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	zf, err := ziptrace.Find(f, st.Size(), f.Name(), ".nettrace", ".netperf")
	if err != nil {
		return nil, err
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", zf.Where(f.Name()), err)
	}
	r, err := NewReader(rc)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("%s: %w", zf.Where(f.Name()), err)
	}
	r.closer = multiCloser{rc, f}
	// The trace ends at its end tag; the archive's size and checksum are
	// checked when the rest of the member is read (end).
	r.finish = func() error { return ziptrace.Finish(rc) }
	return r, nil
}

// Close closes what Open opened. For a Reader made by NewReader it does
// nothing.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	c := r.closer
	r.closer = nil
	return c.Close()
}

// Info returns the trace header. The caller must not modify it.
func (r *Reader) Info() *TraceInfo { return &r.info }

// Metadata returns the metadata record with the given ID, if it has been
// read (and, in V6, not flushed since).
func (r *Reader) Metadata(id uint32) *Metadata { return r.lookupMeta(id) }

// errf builds an *Error for the current block.
//
// Its class (how reading goes on after it, damage.go) is classTrunc for
// an input that ends early, else classBlock unless the caller says
// otherwise with as.
func (r *Reader) errf(sentinel error, what string, at int64, format string, args ...any) error {
	e := &Error{Block: r.blkName, BlockOffset: r.blkHdrOff, What: what, Offset: at,
		Msg: fmt.Sprintf(format, args...), Err: sentinel}
	if sentinel == io.ErrUnexpectedEOF {
		e.class = classTrunc
	}
	return e
}

// sourceErr reports whether err, from a read of the input, is the
// source's own error (a failed read, a zipped trace's checksum) rather
// than the input's end.
func sourceErr(err error) bool {
	return err != nil && err != io.EOF && err != io.ErrUnexpectedEOF && err != bufio.ErrBufferFull
}

// shortErr is ioErr for a peek that returned fewer bytes than item what
// needs: the input ends there, unless the source failed (peekErr).
func (r *Reader) shortErr(peekErr error, what string, at int64, need int64) error {
	if sourceErr(peekErr) {
		return r.ioErr(peekErr, what, at, need)
	}
	return r.ioErr(io.ErrUnexpectedEOF, what, at, need)
}

// ioErr converts a read error while reading item what at offset at, of
// which the reader consumed the bytes up to r.s.off.
func (r *Reader) ioErr(err error, what string, at int64, need int64) error {
	return r.ioErrHave(err, what, at, need, r.s.off-at)
}

// ioErrHave is ioErr where the input held have bytes of the item's need.
func (r *Reader) ioErrHave(err error, what string, at, need, have int64) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		msg := "input ends inside it"
		if need > 0 {
			msg = fmt.Sprintf("needs %d bytes, the input ends after %d of them", need, have)
		}
		return r.errf(io.ErrUnexpectedEOF, what, at, "%s: %v", msg, io.ErrUnexpectedEOF)
	}
	return as(classFatal, r.errf(err, what, at, "%v", err))
}

func (r *Reader) readHeader() error {
	b, err := r.s.peek(8)
	if err != nil && len(b) == 0 {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return r.ioErr(err, "stream header", 0, 8)
	}
	if string(b) == "Nettrace" {
		r.info.Format = FormatNetTrace
		r.s.discard(8)
		w, err := r.s.peek(4)
		if err != nil {
			return r.ioErrHave(err, "stream header", 8, 4, int64(len(w)))
		}
		if binary.LittleEndian.Uint32(w) == 0 {
			return r.readV6Header()
		}
	} else {
		r.info.Format = FormatNetPerf
	}
	// FastSerialization: int32 20, "!FastSerialization.1".
	at := r.s.off
	h := r.hbuf[:24]
	if err := r.s.readSmall(h); err != nil {
		return r.ioErr(err, "stream header", at, 24)
	}
	if binary.LittleEndian.Uint32(h) != 20 || string(h[4:]) != "!FastSerialization.1" {
		return r.errf(ErrFormat, "stream header", at, "not an EventPipe trace: no Nettrace magic or FastSerialization header")
	}
	return r.readFSTrace()
}

// blockVersions checks the version (up to 2) and minimum reader version
// of the V3–V5 block object header just read against what the trace's
// writers state in every block: V3's 1 and 0, V4's and V5's 2 and 2 (so
// every capture here, from .NET Core 2.1 to .NET 8). A block that states
// others has the field damaged: the block is read as the others are, and
// the field recorded as a Damage of its 4 bytes that lost no event. The
// first block is held to the same values, so one damaged there is that
// block's damage alone, not every later block's. (A trace of another
// version, which has no blocks of this framing, is held to its first
// block's.)
func (r *Reader) blockVersions(version int32) error {
	want, wantMin := int32(2), int32(2)
	switch {
	case r.ver == 3:
		want, wantMin = 1, 0
	case r.ver == 4 || r.ver == 5:
	case !r.fsVerSet:
		r.fsVer, r.fsMinVer, r.fsVerSet = version, r.minVer, true
		return nil
	default:
		want, wantMin = r.fsVer, r.fsMinVer
	}
	for _, f := range [...]struct {
		name      string
		got, want int32
		at        int64
	}{{"object version", version, want, 3}, {"minimum reader version", r.minVer, wantMin, 7}} {
		if f.got != f.want {
			e := r.errf(ErrFormat, "object header", r.blkHdrOff, "%s %d, where a version %d trace's blocks state %d: the field is damaged; the block is read", f.name, f.got, r.ver, f.want)
			if err := r.noteDamage(e.(*Error), r.blkHdrOff+f.at, 4); err != nil {
				return err
			}
		}
	}
	return nil
}

// readFSTypeHeader reads a FastSerialization object header
//
//	BeginObject, BeginObject, NullReference, int32 version,
//	int32 minReaderVersion, int32 len, name, EndObject
//
// It returns end=true when it finds the NullReference tag that ends the
// stream instead.
func (r *Reader) readFSTypeHeader() (name []byte, version int32, end bool, err error) {
	at := r.s.off
	r.blkHdrOff = at
	r.blkName = ""
	h, peekErr := r.s.peek(maxFSHeader)
	if len(h) == 0 {
		return nil, 0, false, r.shortErr(peekErr, "object header", at, 0)
	}
	tag := h[0]
	if tag == tagNullReference {
		r.s.discard(1)
		return nil, 0, true, nil
	}
	// A header that is not one is damage to the framing; nothing is
	// consumed, so that the search for the next block starts here.
	framing := func(format string, args ...any) error {
		return as(classFraming, r.errf(ErrFormat, "object header", at, format, args...))
	}
	if len(h) < 15 {
		if tag == tagBeginObject || tag == tagBeginPrivateObject {
			r.s.discard(len(h))
			return nil, 0, false, r.shortErr(peekErr, "object header", at, 15)
		}
		return nil, 0, false, framing("bad tag %d, want %d", tag, tagBeginPrivateObject)
	}
	if (tag != tagBeginObject && tag != tagBeginPrivateObject) || h[1] != tag || h[2] != tagNullReference {
		// V3 writers (and the Trace object of some) begin objects with
		// BeginObject, the later ones with BeginPrivateObject.
		want := byte(tagBeginPrivateObject)
		if r.ver == 3 {
			want = tagBeginObject
		}
		e := framing("bad tags %d %d %d, want %d %d %d", tag, h[1], h[2], want, want, tagNullReference)
		switch {
		case r.ver == 0 && firstObjectRest(h):
			// The stream's first object, whose type name and the rest
			// of whose header are right: its tags are damaged, and the
			// trace is read (the tags recorded as a Damage of 3 bytes
			// that lost no event, with the first block).
			r.tagsBad = e.(*Error)
		case r.ver >= 3 && r.blockRest(h):
			// A block's header, right but for its tags: the block is
			// read, and the tags are a Damage of 3 bytes that lost no
			// event. (Skipped, a metadata or stack block took the
			// events of every block that refers to it.)
			e := framing("bad tags %d %d %d, want %d %d %d, before the rest of a block's header: the tags are damaged; the block is read", tag, h[1], h[2], want, want, tagNullReference)
			if err := r.noteDamage(e.(*Error), at, 3); err != nil {
				return nil, 0, false, err
			}
		default:
			return nil, 0, false, e
		}
	}
	version = int32(binary.LittleEndian.Uint32(h[3:]))
	r.minVer = int32(binary.LittleEndian.Uint32(h[7:]))
	n := binary.LittleEndian.Uint32(h[11:])
	if r.ver >= 3 && r.ver <= 5 && !knownBlockType(h, n) {
		if k, what, off, size := blockTypeFix(h, n); k != nil {
			// A block's type, but for one damaged field of it: the
			// block is read, and the field is a Damage that lost no
			// event. (Skipped, a metadata or stack block took the events
			// of every block that refers to it.)
			e := framing("%s: the field is damaged, in the header of a %s; the block is read", what, k)
			if err := r.noteDamage(e.(*Error), at+int64(off), int64(size)); err != nil {
				return nil, 0, false, err
			}
			name = append(r.scratch[:0], k...)
			r.s.discard(15 + len(k) + 1)
			return name, version, false, nil
		}
	}
	if n > 48 {
		return nil, 0, false, framing("type name length %d out of range", n)
	}
	if len(h) < 15+int(n)+1 {
		r.s.discard(len(h))
		return nil, 0, false, r.shortErr(peekErr, "object header", at, 15+int64(n)+1)
	}
	if h[15+n] != tagEndObject {
		return nil, 0, false, framing("type %q: no EndObject tag after the type", h[15:15+n])
	}
	name = append(r.scratch[:0], h[15:15+n]...)
	r.s.discard(15 + int(n) + 1)
	return name, version, false, nil
}

// knownBlockType reports whether object header h names a block type of
// V3–V5 streams in its n bytes, followed by its EndObject tag.
func knownBlockType(h []byte, n uint32) bool {
	if n > 13 || len(h) < 15+int(n)+1 || h[15+n] != tagEndObject {
		return false
	}
	for _, k := range fsBlockNames {
		if bytes.Equal(h[15:15+n], k) {
			return true
		}
	}
	return false
}

// blockTypeFix looks at an object header h whose type (length n, name,
// EndObject tag) does not check for the block type, of the known ones,
// that one damaged field or byte of it would be: its name's length (the
// name and the tag after it right), the tag after the name, or one byte
// of the name (the length and the tag right; the four names differ in
// more than one byte). It returns that type, what was wrong, and where
// the damaged bytes are in h and how many; nil when no one field
// accounts for it.
func blockTypeFix(h []byte, n uint32) (k []byte, what string, off, size int) {
	for _, k := range fsBlockNames {
		l := len(k)
		if len(h) < 15+l+1 {
			continue
		}
		name, tagOK, lenOK := h[15:15+l], h[15+l] == tagEndObject, n == uint32(l)
		switch diff := bytesDiffer(name, k); {
		case diff == 0 && tagOK && !lenOK:
			return k, fmt.Sprintf("type name length %d, not the %d of %s", n, l, k), 11, 4
		case diff == 0 && lenOK && !tagOK:
			return k, fmt.Sprintf("byte %d after the type, not its EndObject tag", h[15+l]), 15 + l, 1
		case diff == 1 && lenOK && tagOK:
			return k, fmt.Sprintf("type %q, not %s", name, k), 15 + mismatch(name, k), 1
		}
	}
	return nil, "", 0, 0
}

// bytesDiffer is how many bytes a and b (of one length) differ in.
func bytesDiffer(a, b []byte) int {
	d := 0
	for i := range a {
		if a[i] != b[i] {
			d++
		}
	}
	return d
}

// mismatch is the index of the first byte where a and b differ.
func mismatch(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

// blockRest reports whether h, an object header whose tags are not
// right, is a block's header but for them (blockHeaderAt with the tags
// put right).
func (r *Reader) blockRest(h []byte) bool {
	var c [maxFSHeader]byte
	n := copy(c[:], h)
	c[0], c[1], c[2] = tagBeginPrivateObject, tagBeginPrivateObject, tagNullReference
	return r.blockHeaderAt(c[:n], 0)
}

// nearBlockHeader reports whether h is a block's header but for its tags
// (blockRest), or but for one field of its type or its version fields,
// which readFSTypeHeader reads past (V3–V5): what may follow a block
// whose size is right.
func (r *Reader) nearBlockHeader(h []byte) bool {
	if r.blockRest(h) {
		// (Before c below, which escapes through blockTypeFix's message:
		// the usual header costs no allocation.)
		return true
	}
	var c [maxFSHeader]byte
	n := copy(c[:], h)
	c[0], c[1], c[2] = tagBeginPrivateObject, tagBeginPrivateObject, tagNullReference
	if n < 15 || r.ver < 3 || r.ver > 5 {
		return false
	}
	if knownBlockType(c[:n], le32(c[11:])) {
		return true
	}
	version, minVersion := le32(c[3:]), le32(c[7:])
	k, _, _, _ := blockTypeFix(c[:n], le32(c[11:]))
	return k != nil && (version <= 2 || r.fsKnown) && minVersion <= 2
}

// firstObjectRest reports whether h, an object header whose tags are
// not right, is right but for them as the stream's first object's: a
// version of 1 to 4, a minimum reader version no higher, and the type
// name Trace or EventPipeFile's between its length and EndObject tag.
func firstObjectRest(h []byte) bool {
	version, minVersion, n := le32(h[3:]), le32(h[7:]), int(le32(h[11:]))
	if version < 1 || version > 4 || minVersion > version || n > 48 || len(h) < 15+n+1 || h[15+n] != tagEndObject {
		return false
	}
	name := string(h[15 : 15+n])
	return name == "Trace" || name == "Microsoft.DotNet.Runtime.EventPipeFile"
}

func (r *Reader) readFSTrace() error {
	var name []byte
	var version int32
	if fix := r.firstObjectFix(); fix != nil {
		// A header a known version's but for one damaged field, followed
		// by what that version's writers write after it.
		r.blkHdrOff, r.blkName = r.s.off, ""
		r.s.discard(len(fix.hdr))
		name, version = append(r.scratch[:0], fix.name...), int32(fix.version)
	} else {
		var end bool
		var err error
		name, version, end, err = r.readFSTypeHeader()
		if err != nil {
			return err
		}
		if end {
			return r.errf(ErrFormat, "object header", r.blkHdrOff, "stream has no Trace object")
		}
	}
	r.info.ObjectVersion = int(version)
	at := r.s.off
	b := r.hbuf[:48]
	switch string(name) {
	case "Trace":
		r.blkName = "Trace"
		if version < 3 || version > 4 {
			return r.errf(ErrUnsupported, "", 0, "Trace object version %d: %v", version, ErrUnsupported)
		}
		r.ver = int(version)
		if err := r.s.readSmall(b[:48]); err != nil {
			return r.ioErr(err, "Trace fields", at, 48)
		}
		r.parseSyncTime(b[:32], at)
		r.info.PointerSize = int(int32(binary.LittleEndian.Uint32(b[32:])))
		r.info.ProcessID = int64(int32(binary.LittleEndian.Uint32(b[36:])))
		r.info.NumProcessors = int(int32(binary.LittleEndian.Uint32(b[40:])))
		r.info.ExpectedCPUSamplingRate = int64(int32(binary.LittleEndian.Uint32(b[44:])))
		r.endTag = true
	case "Microsoft.DotNet.Runtime.EventPipeFile":
		r.blkName = "EventPipeFile"
		if version < 1 || version > 2 {
			return r.errf(ErrUnsupported, "", 0, "EventPipeFile object version %d: %v", version, ErrUnsupported)
		}
		r.ver = int(version)
		// int32 forward reference (to the end of the events), then the
		// sync time fields; the events follow directly.
		if err := r.s.readSmall(b[:36]); err != nil {
			return r.ioErr(err, "EventPipeFile fields", at, 36)
		}
		r.parseSyncTime(b[4:36], at+4)
		r.info.PointerSize = 8
		r.info.NumProcessors = 1
	case "Microsoft.Diagnostics.Tracing.Etlx.TraceLog":
		// The same framing holds TraceEvent's own files, which PerfView
		// makes from the traces it opens and keeps beside them.
		return r.errf(ErrFormat, "object header", r.blkHdrOff, "an ETLX file (TraceEvent's TraceLog, made from a trace by PerfView or TraceEvent), not a trace: read the .etl or .nettrace it was made from")
	default:
		return r.errf(ErrFormat, "object header", r.blkHdrOff, "first object is %q, want Trace", name)
	}
	if r.info.PointerSize != 4 && r.info.PointerSize != 8 {
		return r.errf(ErrFormat, "Trace fields", at, "pointer size %d, want 4 or 8", r.info.PointerSize)
	}
	r.info.Version = r.ver
	r.ev.PointerSize = r.info.PointerSize
	return nil
}

// parseSyncTime reads SYSTEMTIME (8 × int16), QPC and frequency from b,
// at stream offset at. A SYSTEMTIME that is no date (a field out of its
// range, or a day of the week that is not the date's; all zeros state
// none, as test writers leave it) is garbled: it is recorded (with the
// first block, so that SetStrict applies) as a Damage of its 16 bytes
// that lost no event, since every event's wall-clock time counts from it
// (a copy of the 2.0 trace had its month moved from September to
// January, every time with it). The day of the week is taken in either
// numbering producers use: SYSTEMTIME's, from Sunday = 0 (the runtime's),
// or from Monday = 0 (one-collect's record-trace writes V6 files so); the
// format does not say which. The times are taken as they are, normalised
// as time.Date does.
func (r *Reader) parseSyncTime(b []byte, at int64) {
	f := func(i int) int { return int(int16(binary.LittleEndian.Uint16(b[2*i:]))) }
	r.info.SyncTime = time.Date(f(0), time.Month(f(1)), f(3), f(4), f(5), f(6), f(7)*1e6, time.UTC)
	r.info.SyncTimeQPC = int64(binary.LittleEndian.Uint64(b[16:]))
	r.info.QPCFrequency = int64(binary.LittleEndian.Uint64(b[24:]))
	r.info.setReciprocal()
	r.sessionFloor()
	t := r.info.SyncTime
	if binary.LittleEndian.Uint64(b) == 0 && binary.LittleEndian.Uint64(b[8:]) == 0 ||
		f(0) >= 1601 && int(t.Month()) == f(1) && t.Day() == f(3) && (int(t.Weekday()) == f(2) || (int(t.Weekday())+6)%7 == f(2)) &&
			f(4) < 24 && f(5) < 60 && f(6) < 60 && f(7) < 1000 && min(f(4), f(5), f(6), f(7)) >= 0 {
		return
	}
	// Recorded when the first block is read (nextBlock), after SetStrict.
	r.syncBad = r.errf(ErrFormat, "sync time", at, "%04d-%02d-%02d %02d:%02d:%02d.%03d, day of week %d, is no date: the events' wall-clock times may be off",
		f(0), f(1), f(3), f(4), f(5), f(6), f(7), f(2)).(*Error)
}

func (r *Reader) readV6Header() error {
	h := r.hbuf[:12]
	if err := r.s.readSmall(h); err != nil {
		return r.ioErr(err, "stream header", 8, 12)
	}
	major := binary.LittleEndian.Uint32(h[4:])
	minor := binary.LittleEndian.Uint32(h[8:])
	if major < 6 {
		return r.errf(ErrFormat, "stream header", 8, "NetTrace major version %d in a V6-style header", major)
	}
	if major > 6 {
		return r.errf(ErrUnsupported, "stream header", 8, "NetTrace major version %d: %v", major, ErrUnsupported)
	}
	r.ver = 6
	r.drops.v6 = true
	r.info.Version = 6
	r.info.MinorVersion = int(minor)
	kind, err := r.readV6Block()
	if err != nil {
		return err
	}
	if kind != kindTrace {
		return r.errf(ErrFormat, "", 0, "first block is not a TraceBlock")
	}
	c := &cursor{b: r.blk}
	tb := c.bytes(32)
	ptr := int32(c.u32())
	n := c.u32()
	if c.bad {
		return r.errf(io.ErrUnexpectedEOF, "", 0, "TraceBlock too short: %v", io.ErrUnexpectedEOF)
	}
	r.parseSyncTime(tb, r.blkOff)
	r.info.PointerSize = int(ptr)
	if ptr != 4 && ptr != 8 {
		return r.errf(ErrFormat, "", 0, "pointer size %d, want 4 or 8", ptr)
	}
	if int64(n)*2 > int64(c.left()) {
		return r.errf(ErrFormat, "", 0, "key/value count %d exceeds the block", n)
	}
	r.info.KeyValues = make(map[string]string, n)
	for i := uint32(0); i < n; i++ {
		k := c.utf8str()
		v := c.utf8str()
		if c.bad {
			return r.errf(ErrFormat, "key/value", r.blkOff+int64(c.badI), "runs past the end of the block")
		}
		r.info.KeyValues[k] = v
		switch k {
		case "HardwareThreadCount":
			if x, err := strconv.Atoi(v); err == nil {
				r.info.NumProcessors = x
			}
		case "ProcessId":
			if x, err := strconv.ParseInt(v, 10, 64); err == nil {
				r.info.ProcessID = x
			}
		case "ExpectedCPUSamplingRate":
			if x, err := strconv.ParseInt(v, 10, 64); err == nil {
				r.info.ExpectedCPUSamplingRate = x
			}
		}
	}
	r.ev.PointerSize = r.info.PointerSize
	return nil
}

// readV6Block reads a V6 block header and its content into r.blk.
func (r *Reader) readV6Block() (kind int, err error) {
	at := r.s.off
	r.blkHdrOff = at
	r.blkName = ""
	large := false // believed on its header alone: larger than the look
	if r.suspect && r.ver == 6 {
		// After damage, a block is read only when it is credible (a block
		// the search accepted, or the one after a damaged block, may
		// still be a stretch of the damage).
		b, more := r.v6Ahead(1)
		if len(b) > 0 && !r.v6BlockAt(b, at, more) && !(len(b) == 4 && le32(b) == 0) {
			return 0, as(classFraming, r.errf(ErrFormat, "block header", at, "not a credible block header"))
		}
		large = len(b) >= 4 && 4+int(le32(b)&0xFFFFFF) > len(b)
	}
	if b, _ := r.s.peek(4); len(b) == 4 && r.ver == 6 {
		// An EndOfStream header with a size is damage, or the bytes of
		// another header that damage moved (see checkFraming), unless
		// the input ends with its data: the format allows a later
		// version to put data there.
		if x := le32(b); x>>24 == kindEndOfStream && x != 0 {
			n := 4 + int(x&0xFFFFFF)
			if rest, _ := r.s.peek(n + 1); n > searchWindow || len(rest) != n {
				return 0, as(classFraming, r.errf(ErrFormat, "block header", at, "an EndOfStream block of %d bytes", x&0xFFFFFF))
			}
		}
	}
	h := r.hbuf[:4]
	if err := r.s.readSmall(h); err != nil {
		if err == io.EOF {
			return 0, r.errf(io.ErrUnexpectedEOF, "block header", at, "stream ends without an EndOfStream block: %v", io.ErrUnexpectedEOF)
		}
		return 0, r.ioErr(err, "block header", at, 4)
	}
	x := binary.LittleEndian.Uint32(h)
	size, kind := int(x&0xFFFFFF), int(x>>24)
	if kind < len(v6BlockNames) {
		r.blkName = v6BlockNames[kind]
	} else {
		r.blkName = "block kind " + strconv.Itoa(kind)
	}
	r.blkOff = r.s.off
	r.blk, err = r.s.readBlock(r.blk, size)
	if err != nil {
		return kind, r.cutBlock(kind, err, int64(size))
	}
	if large {
		return kind, r.believeLarge(at, h)
	}
	return kind, nil
}

// Next returns the next event, or io.EOF after the last one: in file
// order unless SetOrder asked for time order. The returned Event and its
// slices are valid until the next call. In file order events are not
// sorted by time: NetTrace V4+ only orders events per capture thread (see
// Event.IsSorted and the format spec).
func (r *Reader) Next() (*Event, error) {
	if r.order == TimeOrder && r.ver >= 4 {
		if s := &r.sorted; len(s.runs) > 0 && !s.open {
			// What nextSorted would do, a call sooner.
			return r.release(), nil
		}
		return r.nextSorted()
	}
	// The usual event of a NetTrace V4+ trace in file order, decoded here
	// rather than four calls down (nextRaw, decodeEvent, readEventHeader):
	// a compressed header with room for the longest one left in the block.
	if start := r.pos; r.compress && r.inEvents && r.err == nil {
		if p, ok := r.fastHeader(start); ok {
			if r.badFast(p) {
				return r.rawFailed(r.badFastErr(start, p))
			}
			r.pos = p + int(r.hdr.payloadSize)
			if ok, err := r.fillEvent(start, p, nil); err != nil {
				return r.rawFailed(err)
			} else if ok {
				return &r.ev, nil
			}
		}
	}
	return r.nextRaw()
}

// rawFailed goes on after an event that failed to decode in file order,
// as nextRaw does: past the damage, or to the end of the trace.
func (r *Reader) rawFailed(err error) (*Event, error) {
	if err = r.recover(err); err != nil {
		r.endRaw(err)
		return nil, err
	}
	return r.nextRaw()
}

// nextRaw returns the next event in file order.
func (r *Reader) nextRaw() (*Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		if r.inEvents {
			if r.pos < len(r.blk) {
				ok, err := r.decodeEvent()
				if err != nil {
					if err = r.recover(err); err != nil {
						r.endRaw(err)
						return nil, err
					}
					continue
				}
				if ok {
					return &r.ev, nil
				}
				continue
			}
			r.inEvents = false
		}
		if err := r.nextBlock(); err != nil {
			r.endRaw(err)
			return nil, err
		}
	}
}

// endRaw ends a file-order read with err, for good: the stream's buffer,
// the block buffer and the stack table go to the next Reader (rawPool).
// The last event's payload and stack were valid until this call to Next.
func (r *Reader) endRaw(err error) {
	r.err = err
	r.s.end()
	if cap(r.blk) > 0 && cap(r.blk) <= maxSpent {
		sp := r.rawSp
		if sp == nil {
			sp = new(rawSpent)
		}
		sp.blk, sp.ips, sp.stackRefs = r.blk[:0], r.ips[:0], r.stackRefs[:0]
		r.rawSp = nil
		rawPool.Put(sp)
	}
	r.blk, r.ips, r.stackRefs = nil, nil, nil
}

// rawSpent is what a file-order Reader leaves for the next Reader: the
// block buffer, grown to the biggest block it read (by doubling: twice
// that allocated, for each Reader, when each made its own), and its stack
// table. A program that reads many traces (a collector's profile windows,
// a dataset's traces) allocates them about once.
type rawSpent struct {
	blk       []byte
	ips       []uint64
	stackRefs []stackRef
}

var rawPool sync.Pool

// nextBlock reads and handles the next block, object or (V1/V2) event
// record, going on past damage as recover allows; it returns the error
// that ends the trace: io.EOF at its end, a *DamageError when damage was
// skipped, or the first error in strict mode.
func (r *Reader) nextBlock() error {
	if r.rangeCheck {
		if err := r.checkBlockRange(); err != nil {
			return err // strict
		}
	}
	r.untaint()
	if e := r.tagsBad; e != nil {
		r.tagsBad = nil
		if err := r.noteDamage(e, e.Offset, 3); err != nil {
			return err // strict
		}
	}
	if e := r.firstBad; e != nil {
		r.firstBad = nil
		if err := r.noteDamage(e, e.Offset, r.firstBadLen); err != nil {
			return err // strict
		}
	}
	if e := r.syncBad; e != nil {
		r.syncBad = nil
		if err := r.noteDamage(e, e.Offset, 16); err != nil {
			return err // strict
		}
	}
	for {
		if r.damages == r.mark {
			r.suspect = false // the previous block was read whole
		}
		r.mark = r.damages
		var err error
		switch {
		case r.ver <= 2:
			err = r.nextV2Event()
		case r.ver == 6:
			err = r.nextV6Block()
		default:
			err = r.nextFSObject()
		}
		switch {
		case err == nil:
			r.drops.release(r.blkOff)
			return nil
		case err == io.EOF:
			if r.cut != nil {
				return r.recover(r.cut)
			}
			r.drops.release(-1)
			if err := r.trailing(); err != nil {
				return err // strict
			}
			return r.end()
		}
		if err = r.recover(err); err != nil {
			return err
		}
		if r.inEvents || r.spSeen {
			// A damaged sequence point flushed the stack table before
			// its fault showed: in time order, the held events' stacks
			// must move out of it (nextHeld) before a stack block after
			// it is read into it.
			return nil
		}
	}
}

// nextV2Event reads one event record of an EventPipeFile (V1/V2) stream,
// where records follow the Trace object directly and the object's EndObject
// tag and a forward-reference table end them.
func (r *Reader) nextV2Event() error {
	at := r.s.off
	r.blkHdrOff = at
	r.blkName = "EventPipeFile"
	b, err := r.s.peek(9)
	if len(b) >= 1 && b[0] == tagEndObject && len(b) == 9 {
		n := binary.LittleEndian.Uint32(b[1:])
		if n >= 1 && n < 1<<16 && binary.LittleEndian.Uint32(b[5:]) == uint32(at) {
			// The trailer: the end tag, n forward-reference offsets, then
			// two more offsets (of the count and of the table). All of it
			// must be there for the file to be whole.
			need := 9 + 4*int(n-1) + 8
			if t, _ := r.s.peek(need); len(t) < need {
				return r.errf(io.ErrUnexpectedEOF, "trailer", at, "truncated: the EventPipeFile trailer needs %d bytes, the input ends after %d", need, len(t))
			}
			r.s.discard(need)
			return io.EOF
		}
		if r.damages > 0 {
			// After a shift the trailer's offsets are where its writer
			// put it, not where it is now: it is known by its shape.
			if t, _ := r.s.peek(9 + 4*int(min(n, 1<<16)) + 8); v2ShiftedTrailer(t) {
				r.s.discard(len(t))
				return io.EOF
			}
			// (A longer peek may move the buffered bytes: b again.)
			b, err = r.s.peek(9)
		}
	}
	if len(b) < 4 && sourceErr(err) {
		return r.ioErr(err, "event header", at, 4)
	}
	if len(b) == 0 {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return r.errf(io.ErrUnexpectedEOF, "event header", at, "events end without the EventPipeFile trailer: %v", err)
	}
	if len(b) < 4 {
		return r.errf(io.ErrUnexpectedEOF, "event header", at, "needs 4 bytes, input ends after %d: %v", len(b), io.ErrUnexpectedEOF)
	}
	size := binary.LittleEndian.Uint32(b)
	if size < 52 || size > maxObjectSize {
		return as(classFraming, r.errf(ErrFormat, "event header", at, "event size %d out of range", size))
	}
	if r.suspect {
		// After damage, a record is read only when it is credible: a
		// record the search for the next one accepted may still be a
		// stretch of the damage.
		if h, _ := r.s.peek(searchWindow); !r.v2RecordAt(h, at) {
			return as(classFraming, r.errf(ErrFormat, "event header", at, "not a credible event record"))
		}
	}
	r.blk, err = r.s.readBlock(r.blk, int(size)+4)
	if err != nil {
		e := r.ioErr(err, "event", at, int64(size)+4)
		if ce, ok := e.(*Error); ok && ce.class == classTrunc && !r.strict {
			r.blkOff, r.cut = at, ce
		}
		return e
	}
	r.blkOff = at
	r.pos = 0
	r.inEvents = true
	return nil
}

// nextFSObject reads the next FastSerialization object (V3–V5) and
// handles it; for an EventBlock it sets up event decoding.
func (r *Reader) nextFSObject() error {
	if r.endTag {
		at := r.s.off
		t, err := r.s.peek(1)
		if len(t) == 0 && sourceErr(err) {
			return r.ioErr(err, "EndObject tag", at, 1)
		}
		if len(t) == 0 {
			return r.errf(io.ErrUnexpectedEOF, "EndObject tag", at, "input ends before the object's EndObject tag: %v", err)
		}
		if t[0] != tagEndObject {
			return as(classFraming, r.errf(ErrFormat, "EndObject tag", at, "found byte %d where the object should end", t[0]))
		}
		r.s.discard(1)
		r.endTag = false
	}
	name, version, end, err := r.readFSTypeHeader()
	if err != nil {
		return err
	}
	if end {
		return io.EOF
	}
	var kind int
	switch string(name) {
	case "EventBlock":
		kind = kindEvent
	case "MetadataBlock":
		kind = kindMetadata
	case "StackBlock":
		kind = kindStack
	case "SPBlock":
		kind = kindSequencePt
	default:
		return as(classFraming, r.errf(ErrFormat, "object header", r.blkHdrOff, "unknown object type %q", name))
	}
	r.blkName = fsNames[kind]
	if uint32(version) > 2 {
		if version > 2 && version <= maxNewBlockVersion && !r.fsKnown {
			// The stream's first block: a newer writer's format.
			return as(classFatal, r.errf(ErrUnsupported, "", 0, "object version %d (this reader reads up to 2): %v", version, ErrUnsupported))
		}
		// A negative version, one no writer would take the next step
		// to, or one other than the blocks' before it (a writer does not
		// change it midway), in a header whose tags, type name and end
		// tag are right: the version field is damaged. The block is read
		// as the others were, and the field recorded.
		e := r.errf(ErrFormat, "object header", r.blkHdrOff, "object version %d, read as a block of version 2 or below", version)
		if err := r.noteDamage(e.(*Error), r.blkHdrOff+3, 4); err != nil {
			return err
		}
	} else if err := r.blockVersions(version); err != nil {
		return err // strict
	}
	r.fsKnown = true
	// int32 size, padding to a 4-byte stream offset, content.
	at := r.s.off
	h := r.hbuf[:4]
	if err := r.s.readSmall(h); err != nil {
		return r.ioErr(err, "block size", at, 4)
	}
	size := binary.LittleEndian.Uint32(h)
	var highByte *Error // the size's high byte taken for damaged
	if size > maxObjectSize {
		if size&0xFFFFFF == 0 || r.ver < 3 || r.ver > 5 {
			return as(classFraming, r.errf(ErrFormat, "block size", at, "block size %d out of range", size))
		}
		// Blocks are far smaller than 16 MiB: its high byte is damaged,
		// if the block frames with the low three (checked below).
		highByte = r.errf(ErrFormat, "block size", at, "block size %d out of range; read as %d, which frames the block: its high byte is damaged", size, size&0xFFFFFF).(*Error)
		size &= 0xFFFFFF
	}
	pad := int((4 - (r.s.off-r.phase)&3) & 3)
	padChecked := r.checkPhase || r.phase != 0
	if padChecked {
		r.checkPhase = false
		pad = r.findPad(kind, pad, size)
		r.phase = (r.s.off + int64(pad)) & 3
	}
	if pad > 0 {
		// (Kept: movedBlock may put them back.)
		if err := r.s.readSmall(r.padBuf[:pad]); err != nil {
			return r.ioErr(err, "block padding", r.s.off, int64(pad))
		}
	}
	r.blkOff = r.s.off
	r.blk, err = r.s.readBlock(r.blk, int(size))
	r.endTag = true
	if err != nil {
		if sourceErr(err) {
			return r.cutBlock(kind, err, int64(size))
		}
		// The input ends inside the block: a cut, or a size the damage
		// made too large, which the next block's header inside it shows.
		if ok, serr := r.sizeOvershoot(at, size, kind); !ok {
			if serr != nil {
				return serr // strict
			}
			return r.cutBlock(kind, err, int64(size))
		}
	} else if highByte != nil && r.framed() {
		if err := r.noteDamage(highByte, at, 4); err != nil {
			return err // strict
		}
	} else if !r.framed() {
		var ok bool
		var err error
		if !padChecked {
			ok, err = r.movedBlock(kind, size, pad)
		}
		if err == nil && !ok {
			ok, err = r.sizeOvershoot(at, size, -1)
		}
		if err == nil && !ok {
			_, err = r.sizeUndershoot(kind, at, size)
		}
		if err != nil {
			return err // strict
		}
	}
	return r.handleBlock(kind)
}

// framed reports whether the V3–V5 block just read is followed by what
// must follow it: its EndObject tag, then the next object's header or the
// stream's NullReference end, the input's last byte (or the input's end,
// which the next read finds). The next header's tags, one field of its
// type or its version fields may be damaged (nearBlockHeader):
// readFSTypeHeader reads it then, or skips it as damage of its own. (An EndObject and a
// NullReference byte inside the input are as likely as any two bytes in
// a payload: where a damaged size put the block's end on them, the block
// swallowed the next ones.)
func (r *Reader) framed() bool {
	b, _ := r.s.peek(1 + maxFSHeader)
	return len(b) == 0 || b[0] == tagEndObject && (len(b) == 1 || b[1] == tagNullReference && len(b) == 2 || r.nearBlockHeader(b[1:]))
}

// sizeOvershoot runs when the V3–V5 block just read (into r.blk, from the
// size field at stream offset at, which stated size) is not followed by
// its EndObject tag, or runs past the input's end: when the size is
// damaged, too large, the block swallowed the next blocks, and the first
// of them begins in its bytes (an EndObject tag, then a block header).
// It looks for it from the block's start, and where it finds one it
// ends the block there, puts the bytes from there back into the stream,
// records the size field as a Damage of its 4 bytes (the block is read,
// and nothing is lost to the size) and reports true. In strict mode it
// returns that damage's error instead. It leaves the block as it was and
// reports false when no header is in it (the size may be right and the
// damage after the block, or the input cut short). When the input ended
// in the block (endKind is its kind, else -1), the stream's end as its
// last two bytes, after whole records of the block, ends it too.
func (r *Reader) sizeOvershoot(at int64, size uint32, endKind int) (bool, error) {
	blk := r.blk
	ahead, _ := r.s.peek(1 + maxFSHeader)
	for i := 0; i < len(blk); i++ {
		j := bytes.IndexByte(blk[i:], tagEndObject)
		if j < 0 {
			return false, nil
		}
		i += j
		h := blk[i+1:]
		if len(h) < maxFSHeader {
			// The header may run on past the block's bytes.
			h = append(append(r.backBuf[:0], h...), ahead...)
			r.backBuf = h[:0]
		}
		// The stream's end as the input's last two bytes, after the
		// block's records: the trace's last block, whose size grew.
		streamEnd := endKind >= 0 && i+2 == len(blk) && blk[i+1] == tagNullReference && r.blockTiles(endKind, blk[:i], nil)
		if !streamEnd && !r.blockHeaderAt(h, 0) {
			continue
		}
		e := r.errf(ErrFormat, "block size", at, "block size %d runs past the block's EndObject tag at %d, %d bytes in: the size is damaged; the block ends there", size, r.blkOff+int64(i), i).(*Error)
		if err := r.noteDamage(e, at, 4); err != nil {
			return false, err
		}
		r.s.unread(blk[i:])
		r.blk = blk[:i]
		r.endTag = true
		// Damage that moved the bytes after it (a zipped trace's
		// inflating, gaining or losing bytes) shows the same way: the
		// next block's padding is checked.
		r.checkPhase = true
		return true, nil
	}
	return false, nil
}

// findPad returns the padding before the content of the block whose
// size field was just read, after damage: the one the phase gives (want)
// unless another fits the block and it does not. Padding is zeros; a
// block's EndObject tag follows its content, then the next object's
// header or the stream's NullReference end; an event or metadata block's
// content (V4 and later) begins with its header's size, 20, and flags of
// 0 or 1; a V3 one's with an event record whose sizes fit. A block too
// large to see to its end is judged by its content's start alone; one of
// another kind then keeps want.
func (r *Reader) findPad(kind, want int, size uint32) int {
	fits := func(p int) (bool, bool) { // fits, and whether that could be told
		b, _ := r.s.peek(p + int(size) + 2)
		for _, x := range b[:min(p, len(b))] {
			if x != 0 {
				return false, true
			}
		}
		events := kind == kindEvent || kind == kindMetadata
		switch {
		case events && r.ver >= 4:
			if len(b) < p+4 || le16(b[p:]) != 20 || le16(b[p+2:]) > 1 {
				return false, true
			}
		case events:
			// V3: the event records in view, their sizes and their
			// payloads' (a chain of them, so that a wrong start is not
			// taken for one).
			const hs = 56
			if len(b) < p {
				return false, true // the input ends in the padding
			}
			whole := len(b) >= p+int(size) // the view holds the whole block
			c := b[p:min(len(b), p+int(size))]
			k := 0
			for ; k < 8 && len(c) >= hs; k++ {
				total := int64(le32(c)) + 4
				if total < hs || total > int64(size) || int64(le32(c[52:]))+4 > total-hs {
					return false, true
				}
				if total > int64(len(c)) {
					if whole {
						return false, true // past the block's end
					}
					break // past the view
				}
				c = c[total:]
			}
			if k == 0 || len(c) > 0 && len(c) < hs && whole {
				return false, true
			}
		}
		if e := p + int(size); e < len(b) {
			return b[e] == tagEndObject && (e+1 == len(b) || b[e+1] == tagBeginPrivateObject || b[e+1] == tagBeginObject || b[e+1] == tagNullReference), true
		}
		return true, events
	}
	if ok, told := fits(want); ok || !told {
		return want
	}
	for p := range 4 {
		if ok, told := fits(p); p != want && ok && told {
			return p
		}
	}
	return want
}

// cutBlock handles a block the input ends inside: the events it holds
// in full are still read (unless in strict mode), then the cut is the
// trace's end.
func (r *Reader) cutBlock(kind int, err error, size int64) error {
	e := r.ioErr(err, "", r.blkOff, size) // the block's content, from blkOff
	ce, ok := e.(*Error)
	if !ok || ce.class != classTrunc || r.strict {
		return e
	}
	ce.What, ce.Offset = "block", r.blkHdrOff
	r.cut = ce
	if kind != kindEvent {
		return e
	}
	return r.handleBlock(kind)
}

// maxNewBlockVersion is the largest version the first block may have and
// be a newer writer's format rather than a damaged field: versions go up
// by one (blocks have been at 2 since .NET Core 3.0).
const maxNewBlockVersion = 16

var fsNames = [...]string{kindEvent: "EventBlock", kindMetadata: "MetadataBlock", kindStack: "StackBlock", kindSequencePt: "SPBlock"}

func (r *Reader) nextV6Block() error {
	kind, err := r.readV6Block()
	if err != nil || r.cut != nil {
		return err
	}
	switch kind {
	case kindEndOfStream:
		return io.EOF
	case kindTrace:
		return r.errf(ErrFormat, "", 0, "a second TraceBlock")
	}
	return r.handleBlock(kind)
}

// handleBlock processes the block in r.blk.
func (r *Reader) handleBlock(kind int) error {
	switch kind {
	case kindEvent:
		r.restarted = false
		if repeat, err := r.repeatedBlock(); repeat {
			return err
		}
		if r.ver == 3 {
			r.pos, r.compress = 0, false
			r.tsLo, r.tsSpanNot = 0, 0
		} else if err := r.eventBlockHeader(kind); err != nil {
			return err
		} else {
			r.blockTimes()
		}
		r.hdr = evHeader{}
		r.inEvents = true
		r.strays, r.strayFixed = 0, false
		r.drops.blockStart = r.drops.dropped
		r.drops.blk++
	case kindMetadata:
		return r.metadataBlock()
	case kindStack:
		return r.stackBlock()
	case kindSequencePt:
		return r.sequencePoint()
	case kindThread:
		return r.threadBlock()
	case kindRemoveThread:
		return r.removeThreadBlock()
	case kindLabelList:
		return r.labelListBlock()
	}
	// V6: unknown blocks are skipped.
	return nil
}

// eventBlockHeader reads the EventBlock/MetadataBlock header (V4+):
// uint16 HeaderSize, uint16 Flags, int64 MinTimestamp, int64 MaxTimestamp, …
func (r *Reader) eventBlockHeader(kind int) error {
	if len(r.blk) < 4 {
		return r.errf(ErrFormat, "block header", r.blkOff, "block of %d bytes has no header", len(r.blk))
	}
	hs := int(binary.LittleEndian.Uint16(r.blk))
	flags := binary.LittleEndian.Uint16(r.blk[2:])
	if (hs != 20 || flags != 1) && (r.ver == 4 || r.ver == 5) {
		if fhs, fflags, ok := r.standardHeader(kind, hs, flags); ok && (fhs != hs || fflags != flags) {
			e := r.errf(ErrFormat, "block header", r.blkOff, "header size %d and flags %#x, where the block reads as whole records with the %d and %#x its writers write: the fields are damaged; read so", hs, flags, fhs, fflags).(*Error)
			if err := r.noteDamage(e, r.blkOff, 4); err != nil {
				return err // strict
			}
			hs, flags = fhs, fflags
		}
	}
	if hs < 20 || hs > len(r.blk) {
		return r.errf(ErrFormat, "block header", r.blkOff, "header size %d out of range (block is %d bytes)", hs, len(r.blk))
	}
	r.pos, r.blkFirst = hs, hs
	r.compress = flags&1 != 0
	r.tsLo, r.tsSpanNot = 0, 0
	if (r.ver == 4 || r.ver == 5) && r.compress && hs < len(r.blk) && !firstFlags(kind, r.blk[hs]) {
		_, err := r.firstFlagsFix(kind)
		return err
	}
	return nil
}

// firstFlags reports whether f is flags the runtime writes in the first
// compressed header of a V4/V5 block of the kind: an event block's
// states its metadata ID, capture thread and sequence number, thread,
// stack and size (0x8f), and most often IsSorted (0xcf); a metadata
// block's its thread, size and IsSorted (0xc4), and often its capture
// thread and sequence number (0xc6). (Every block of the repository's and
// the shared traces.)
func firstFlags(kind int, f byte) bool {
	u := usualFirstFlags(kind)
	return f == u[0] || f == u[1]
}

// usualFirstFlags returns the two flags firstFlags takes for the kind,
// the more common first.
func usualFirstFlags(kind int) [2]byte {
	if kind == kindMetadata {
		return [2]byte{0xc6, 0xc4}
	}
	return [2]byte{0xcf, 0x8f}
}

// firstFlagsFix runs when a V4/V5 block's first compressed header has
// flags its writers do not write there (firstFlags), or a metadata
// block's record does not parse (the damage may have turned the usual
// flags into the other usual ones): every header after the first
// inherits the fields it sets, so when they are damaged, each record
// after it is misread and the block is lost (a metadata block takes
// every event that needs its metadata). When the block reads as whole records
// of its kind (blockTiles) with one of the usual flags and no fewer of
// them are credible (credibleRecords) than with the stated ones (a flag
// that adds 16 bytes of activity ID can swallow one record and leave the
// rest credible, their times and numbers moved together), the byte is
// what the damage changed: it is put right and recorded as a Damage of
// its byte that lost no event, and firstFlagsFix reports true. Else the
// block is read as it states.
func (r *Reader) firstFlagsFix(kind int) (bool, error) {
	at := r.blkFirst
	stated := r.blk[at]
	best, most := stated, -1 // -1: the stated flags do not tile the block
	if r.blockTiles(kind, r.blk, nil) {
		most = r.credibleRecords(kind, at, true)
	}
	for _, f := range usualFirstFlags(kind) {
		r.blk[at] = f
		if r.blockTiles(kind, r.blk, nil) {
			if n := r.credibleRecords(kind, at, true); n > most || n == most && best == stated {
				best, most = f, n
			}
		}
	}
	r.blk[at] = best
	if best == stated {
		return false, nil
	}
	e := r.errf(ErrFormat, "event header", r.blkOff+int64(at), "flags %#x in the block's first header, where the block reads as whole records with %#x, as its writers write the first: the byte is damaged; read so", stated, best)
	return true, r.noteDamage(e.(*Error), r.blkOff+int64(at), 1)
}

// standardHeader runs when a V4/V5 EventBlock's or MetadataBlock's
// header states a size other than the 20 bytes its writers write (the
// size, the flags, the least and greatest timestamp), or flags other
// than 1 (compressed headers, which the runtime writes; 0, uncompressed
// ones, is checked too): a damaged field, or a newer writer's longer
// header, which the format allows. When the block reads as whole records
// of its kind (blockTiles) with a 20-byte header and the stated flags'
// compression bit, or else with the other, and more of them are credible
// (credibleRecords) than with the stated fields, it returns those: the
// fields are what the damage changed, and the block's records are read.
// (A whole block lost to one flipped byte of a MetadataBlock's header
// would take every event that needs its metadata.)
func (r *Reader) standardHeader(kind, hs int, flags uint16) (int, uint16, bool) {
	if len(r.blk) < 20 {
		return 0, 0, false
	}
	stated := -1 // the stated fields' credible records; -1: they do not tile
	if flags <= 1 && hs >= 20 && hs <= len(r.blk) && r.blockTiles(kind, r.blk, nil) {
		stated = r.credibleRecords(kind, hs, flags&1 != 0)
	}
	for _, f := range [...]uint16{flags & 1, flags&1 ^ 1} {
		if hs == 20 && f == flags {
			continue
		}
		c := make([]byte, len(r.blk))
		copy(c, r.blk)
		binary.LittleEndian.PutUint16(c, 20)
		binary.LittleEndian.PutUint16(c[2:], f)
		if r.blockTiles(kind, c, nil) && r.credibleRecords(kind, 20, f&1 != 0) > stated {
			return 20, f, true
		}
	}
	return 0, 0, false
}

// credibleRecords counts the bytes of the records of the V4/V5 block just
// read, its header taken to be hs bytes, whose headers (compressed or not,
// as said) are credible: an event's metadata defined, its time in the
// block's stated range and its sequence number its capture thread's next
// (1 for a thread not seen), a metadata record's payload metadata that
// parses.
// Records read from a wrong start may tile the block by chance (blockTiles
// checks their structure only), but seldom make sense; bytes, not
// records, are counted, since a misread header whose payload size is lost
// reads its payload as many short records, each of which can inherit the
// fields of a credible one.
func (r *Reader) credibleRecords(kind, hs int, compressed bool) int {
	if !compressed {
		return 0 // nothing to tell them apart by but their structure
	}
	lo := int64(binary.LittleEndian.Uint64(r.blk[4:]))
	hi := int64(binary.LittleEndian.Uint64(r.blk[12:]))
	cur := cursor{b: r.blk, i: hs}
	var h evHeader
	n := 0
	var seqs map[uint64]uint32 // the capture threads' numbers in the block
	for cur.left() > 0 && !cur.bad {
		start := cur.i
		h.readCompressed(&cur, false)
		p := cur.i
		cur.bytes(int(h.payloadSize))
		if cur.bad {
			break
		}
		switch {
		case kind == kindMetadata:
			if _, err := parseMetadataV3(r.blk[p:cur.i]); err == nil {
				n += cur.i - start
			}
		case r.lookupMeta(h.metaID) != nil && (lo > hi || h.ts >= lo && h.ts <= hi):
			if seqs == nil {
				seqs = make(map[uint64]uint32)
			}
			last, ok := seqs[h.captureThreadID]
			if !ok {
				last, _ = r.drops.last(h.captureThreadID) // 0 for a thread not seen
			}
			seqs[h.captureThreadID] = h.seq
			if h.seq-last == 1 {
				n += cur.i - start
			}
		}
	}
	return n
}

// blockTimes takes the range its events' timestamps must fall in from an
// event block's header (eventBlockHeader read): the format says the header
// holds the least and the greatest. A block whose header states none (both
// zero, or the least above the greatest) is not checked. It also sets up
// checkBlockRange, which holds the block's events to that range exactly. Damage that
// garbles a block's event headers (a zipped trace whose deflate data
// decoded on past damage) can leave a timestamp out of the range, and the
// check then stops the block there; on the repository's damaged copies
// it stopped about one in twenty of the events that are not the trace's
// (TestCorruptZipSweep in package trace): most of those are real headers
// with garbled payloads.
//
// Nor does any event precede the session's start, which the trace header
// states (the repository's traces hold none before it), once the start
// proved credible: once a block's stated range began at or after it (a
// header whose start is garbled forward would otherwise make every event
// too early). A block whose header states no range, or one wholly before
// the start, takes the range from the start on; one said to begin before
// it (a garbled header's), from the start to its stated end.
func (r *Reader) blockTimes() {
	r.rangeCheck = false
	if int(binary.LittleEndian.Uint16(r.blk)) < 20 {
		return
	}
	lo := int64(binary.LittleEndian.Uint64(r.blk[4:]))
	hi := int64(binary.LittleEndian.Uint64(r.blk[12:]))
	none := lo == 0 && hi == 0 || lo > hi // the header states no range
	if !none {
		r.startRangeCheck(lo, hi)
	}
	if none || r.floorOK && hi < r.floor {
		if r.floorOK {
			r.tsLo, r.tsSpanNot = r.floor, ^(uint64(1<<63-1) - uint64(r.floor))
		}
		return
	}
	if !r.floorOK && r.floor > 0 && lo >= r.floor {
		r.floorOK = true
	}
	if r.floorOK {
		lo = max(lo, r.floor) // a range said to begin before the session's start
	}
	r.tsLo, r.tsSpanNot = lo, ^uint64(hi-lo)
}

// outOfBlock reports whether the timestamp of the header just decoded
// falls outside the block's range (blockTimes); outOfBlockErr is the error.
func (r *Reader) outOfBlock() bool { return uint64(r.hdr.ts-r.tsLo) > ^r.tsSpanNot }

// outOfBlockErr is outOfBlock's error. It gives the range the block's
// header states, read from the header again (an error is rare, a block
// is not), and, where the reader began the range at the session's start
// instead (blockTimes: a header that states no range, or one that begins
// before the start), that bound.
func (r *Reader) outOfBlockErr(start int) error {
	ts := r.hdr.ts
	var lo, hi int64
	if len(r.blk) >= 20 {
		lo, hi = int64(binary.LittleEndian.Uint64(r.blk[4:])), int64(binary.LittleEndian.Uint64(r.blk[12:]))
	}
	// Above the range, its end is the header's; below it, its start is
	// the header's unless the reader began it at the session's start.
	if ts > r.tsLo || lo <= hi && lo == r.tsLo {
		return r.hdrErr(start, "timestamp %d is outside the block's range [%d, %d] that its header states", ts, lo, hi)
	}
	states := "none"
	if lo != 0 || hi != 0 {
		states = fmt.Sprintf("[%d, %d]", lo, hi)
	}
	return r.hdrErr(start, "timestamp %d is before %d, the trace's sync time less a millisecond, where the reader begins the block's range (its header states %s)", ts, r.tsLo, states)
}

// readHeader decodes the event header at r.pos into r.hdr and returns where
// the payload starts and where the record ends. For V1–V3 records it also
// returns the inline stack bytes.
func (r *Reader) readEventHeader() (payload, end int, stack []byte, err error) {
	b := r.blk
	start := r.pos
	h := &r.hdr
	rem := len(b) - start
	switch {
	case r.ver <= 3:
		const hs = 56
		if rem < hs {
			return 0, 0, nil, r.hdrErr(start, "needs %d bytes, %d left in the block", hs, rem)
		}
		total := int64(binary.LittleEndian.Uint32(b[start:])) + 4
		if total < hs || total > int64(rem) {
			return 0, 0, nil, r.hdrErr(start, "event size %d out of range (%d bytes left in the block)", total-4, rem)
		}
		e := b[start:]
		h.metaID = binary.LittleEndian.Uint32(e[4:])
		h.threadID = uint64(binary.LittleEndian.Uint32(e[8:]))
		h.captureThreadID = h.threadID
		h.ts = int64(binary.LittleEndian.Uint64(e[12:]))
		copy(h.activity[:], e[20:36])
		copy(h.related[:], e[36:52])
		h.ids = !h.activity.IsZero() || !h.related.IsZero()
		h.payloadSize = binary.LittleEndian.Uint32(e[52:])
		end = start + int(total)
		payload = start + hs
		if int64(h.payloadSize)+4 > total-hs {
			return 0, 0, nil, r.hdrErr(start, "payload size %d exceeds the event size %d", h.payloadSize, total-4)
		}
		so := payload + int(h.payloadSize)
		sn := binary.LittleEndian.Uint32(b[so:])
		if int64(sn) > int64(end-so-4) {
			return 0, 0, nil, r.hdrErr(start, "stack size %d exceeds the event", sn)
		}
		if r.ver <= 2 && int64(sn) != int64(end-so-4) {
			// A V1/V2 record is its header, payload and stack, no more:
			// a size that says more is damaged, and may have taken in
			// the records after it.
			return 0, 0, nil, r.hdrErr(start, "event size %d is not its header, payload and stack (%d bytes)", total-4, int64(hs)+int64(h.payloadSize)+4+int64(sn)-4)
		}
		stack = b[so+4 : so+4+int(sn)]
		return payload, end, stack, nil
	case !r.compress:
		// EventSize, MetadataId, SequenceNumber, ThreadId,
		// CaptureThreadId, ProcessorNumber, StackId, TimeStamp, then
		// ActivityID, RelatedActivityID, PayloadSize (V4, V5: 80 bytes)
		// or LabelListId, PayloadSize (V6: 52); then the payload, and in
		// V4/V5 zero padding to 4 bytes, which EventSize counts.
		hs := 80
		if r.ver == 6 {
			hs = 52
		}
		if rem < hs {
			return 0, 0, nil, r.hdrErr(start, "needs %d bytes, %d left in the block", hs, rem)
		}
		e := b[start:]
		total := int64(binary.LittleEndian.Uint32(e)) + 4
		m := binary.LittleEndian.Uint32(e[4:])
		h.metaID = m & 0x7FFFFFFF
		h.sorted = m&0x80000000 == 0 // the high bit marks an event not sorted (the runtime's writer, TraceEvent)
		h.seq = binary.LittleEndian.Uint32(e[8:])
		h.threadID = binary.LittleEndian.Uint64(e[12:])
		h.captureThreadID = binary.LittleEndian.Uint64(e[20:])
		h.proc = binary.LittleEndian.Uint32(e[28:])
		h.stackID = binary.LittleEndian.Uint32(e[32:])
		h.ts = int64(binary.LittleEndian.Uint64(e[36:]))
		if r.ver == 6 {
			h.labelID = binary.LittleEndian.Uint32(e[44:])
			h.payloadSize = binary.LittleEndian.Uint32(e[48:])
		} else {
			copy(h.activity[:], e[44:60])
			copy(h.related[:], e[60:76])
			h.ids = !h.activity.IsZero() || !h.related.IsZero()
			h.payloadSize = binary.LittleEndian.Uint32(e[76:])
		}
		if int64(h.payloadSize) > total-int64(hs) || total > int64(rem) {
			return 0, 0, nil, r.hdrErr(start, "event size %d / payload size %d out of range (%d bytes left in the block)", total-4, h.payloadSize, rem)
		}
		if r.outOfBlock() {
			return 0, 0, nil, r.outOfBlockErr(start)
		}
		return start + hs, start + int(total), nil, nil
	}
	// Compressed header.
	if p, ok := r.fastHeader(start); ok {
		if r.badFast(p) {
			return 0, 0, nil, r.badFastErr(start, p)
		}
		return p, p + int(h.payloadSize), nil, nil
	}
	payload, end, err = r.compressedHeader(start)
	if err == nil && r.outOfBlock() {
		err = r.outOfBlockErr(start)
	}
	return payload, end, nil, err
}

// fastHeader decodes the compressed header at start into r.hdr with
// compressedFast when the block has room for the longest one, and returns
// where its payload starts; ok is false when it did not decode it (the
// careful decoder, compressedHeader, must). In line in its callers:
// readEventHeader, and the loops that go around it for the usual event
// (Next in file order, holdRecord in time order).
func (r *Reader) fastHeader(start int) (p int, ok bool) {
	p, ok = r.hdr.compressedFast(r.blk[start:], r.ver == 6)
	return p + start, ok
}

// badFast reports whether the header just decoded by fastHeader, whose
// payload starts at p, cannot be taken: its payload runs past the block,
// or its timestamp falls outside the block's range (outOfBlock).
// badFastErr is the error.
func (r *Reader) badFast(p int) bool {
	return int64(r.hdr.payloadSize) > int64(len(r.blk)-p) || r.outOfBlock()
}

func (r *Reader) badFastErr(start, p int) error {
	if r.outOfBlock() {
		return r.outOfBlockErr(start)
	}
	return r.hdrErr(start, "payload size %d exceeds the block (%d bytes left)", r.hdr.payloadSize, len(r.blk)-p)
}

// compressedHeader decodes the compressed event header at r.blk[start:]
// into r.hdr, checking every read: near the end of the block, and where
// compressedFast gives up.
func (r *Reader) compressedHeader(start int) (payload, end int, err error) {
	b := r.blk
	h := &r.hdr
	c := cursor{b: b, i: start}
	h.readCompressed(&c, r.ver == 6)
	if c.bad {
		if c.why != "" {
			return 0, 0, r.hdrErr(start, "%s", c.why)
		}
		return 0, 0, r.hdrErr(start, "compressed header runs past the end of the block")
	}
	if int64(h.payloadSize) > int64(len(b)-c.i) {
		return 0, 0, r.hdrErr(start, "payload size %d exceeds the block (%d bytes left)", h.payloadSize, len(b)-c.i)
	}
	return c.i, c.i + int(h.payloadSize), nil
}

// readCompressed reads the compressed event header at c into h, whose
// fields the header leaves out keep the previous header's values; c.bad
// says it ran past the end (or a varint was too long).
func (h *evHeader) readCompressed(c *cursor, v6 bool) {
	flags := c.u8()
	if flags&1 != 0 {
		h.metaID = c.varu32()
	}
	if flags&2 != 0 {
		h.seq += c.varu32() + 1
		h.captureThreadID = c.varu64()
		h.proc = c.varu32()
	} else if h.metaID != 0 {
		h.seq++
	}
	if flags&4 != 0 {
		h.threadID = c.varu64()
	}
	if flags&8 != 0 {
		h.stackID = c.varu32()
	}
	h.ts += int64(c.varu64())
	if v6 {
		if flags&16 != 0 {
			h.labelID = c.varu32()
		}
	} else {
		if flags&16 != 0 {
			h.activity = c.guid()
		}
		if flags&32 != 0 {
			h.related = c.guid()
		}
		if flags&48 != 0 {
			h.ids = !h.activity.IsZero() || !h.related.IsZero()
		}
	}
	h.sorted = flags&64 != 0
	if flags&128 != 0 {
		h.payloadSize = c.varu32()
	}
}

// maxCompressedHeader bounds a compressed event header: the flags byte,
// eight varints of at most 10 bytes and two GUIDs.
const maxCompressedHeader = 1 + 8*10 + 2*16

// compressedFast decodes the compressed event header at the start of b,
// of which it reads at most maxCompressedHeader bytes, so that no read
// can run past it, into h, and returns the payload's offset in b. It gives
// up (ok false, h untouched) when b is shorter than that, and on a varint
// longer than 8 bytes or too large for its field, leaving the header to
// the careful decoder; it does not check the payload size.
//
// The varints that are mostly one byte (metadata IDs, sequence number
// deltas, processor numbers, stack IDs, payload sizes) have their first
// byte tested in line; thread IDs and timestamp deltas, mostly two to four
// bytes long, go straight to varintLong.
func (h *evHeader) compressedFast(b []byte, v6 bool) (payload int, ok bool) {
	if len(b) < maxCompressedHeader {
		return 0, false
	}
	b = b[:maxCompressedHeader]
	flags := b[0]
	i := 1
	metaID, seq, capture, proc := h.metaID, h.seq, h.captureThreadID, h.proc
	var v uint64
	if flags&1 != 0 {
		if v, i = uint64(b[i]), i+1; v >= 0x80 {
			if v, i = varintLong(b, i-1); v > 0xFFFFFFFF {
				return 0, false
			}
		}
		metaID = uint32(v)
	}
	if flags&2 != 0 {
		if v, i = uint64(b[i]), i+1; v >= 0x80 {
			if v, i = varintLong(b, i-1); v > 0xFFFFFFFF {
				return 0, false
			}
		}
		seq += uint32(v) + 1
		if capture, i = varintLong(b, i); i < 0 {
			return 0, false
		}
		if v, i = uint64(b[i]), i+1; v >= 0x80 {
			if v, i = varintLong(b, i-1); v > 0xFFFFFFFF {
				return 0, false
			}
		}
		proc = uint32(v)
	} else if metaID != 0 {
		seq++
	}
	thread := h.threadID
	if flags&4 != 0 {
		if thread, i = varintLong(b, i); i < 0 {
			return 0, false
		}
	}
	stack := h.stackID
	if flags&8 != 0 {
		if v, i = uint64(b[i]), i+1; v >= 0x80 {
			if v, i = varintLong(b, i-1); v > 0xFFFFFFFF {
				return 0, false
			}
		}
		stack = uint32(v)
	}
	dt, i := varintLong(b, i)
	if i < 0 {
		return 0, false
	}
	label := h.labelID
	act, rel := -1, -1
	if v6 {
		if flags&16 != 0 {
			if v, i = uint64(b[i]), i+1; v >= 0x80 {
				if v, i = varintLong(b, i-1); v > 0xFFFFFFFF {
					return 0, false
				}
			}
			label = uint32(v)
		}
	} else {
		if flags&16 != 0 {
			act, i = i, i+16
		}
		if flags&32 != 0 {
			rel, i = i, i+16
		}
	}
	size := h.payloadSize
	if flags&128 != 0 {
		if v, i = uint64(b[i]), i+1; v >= 0x80 {
			if v, i = varintLong(b, i-1); v > 0xFFFFFFFF {
				return 0, false
			}
		}
		size = uint32(v)
	}
	h.metaID, h.seq, h.captureThreadID, h.proc = metaID, seq, capture, proc
	h.threadID, h.stackID, h.labelID, h.payloadSize = thread, stack, label, size
	h.ts += int64(dt)
	h.sorted = flags&64 != 0
	if act >= 0 {
		h.activity = clrimpl.GUID(b[act : act+16])
	}
	if rel >= 0 {
		h.related = clrimpl.GUID(b[rel : rel+16])
	}
	if act >= 0 || rel >= 0 {
		h.ids = !h.activity.IsZero() || !h.related.IsZero()
	}
	return i, true
}

// varintLong decodes the LEB128 value at b[i:], where at least 8 bytes
// remain, and returns the index after it. A value of up to 8 bytes is
// found without a branch on its length: the terminator is the lowest byte
// of the 8 with its top bit clear, and the 7-bit groups up to it are
// gathered by masks and shifts. For a longer one (a value of 2^56 or more: in
// practice a negative timestamp delta) it returns -1 and a value that does
// not fit 32 bits, and compressedFast leaves the header to the careful
// decoder.
func varintLong(b []byte, i int) (uint64, int) {
	w := binary.LittleEndian.Uint64(b[i:])
	m := ^w & 0x8080808080808080
	if m == 0 {
		return 1 << 63, -1
	}
	// m^(m-1): the bits up to the terminator's top bit.
	w &= (m ^ (m - 1)) & 0x7f7f7f7f7f7f7f7f
	// Close the gaps: 7-bit groups into 14-bit, 28-bit, then 56-bit ones.
	w = w&0x007f007f007f007f | w>>1&0x3f803f803f803f80
	w = w&0x00003fff00003fff | w>>2&0x0fffc0000fffc000
	w = w&0x000000000fffffff | w>>4&0x00fffffff0000000
	return w, i + bits.TrailingZeros64(m)>>3 + 1
}

func (r *Reader) hdrErr(at int, format string, args ...any) error {
	return r.errf(ErrFormat, "event header", r.blkOff+int64(at), format, args...)
}

// decodeEvent decodes the record at r.pos. It returns true when r.ev holds
// an event for the caller, false for a metadata record (V1–V3).
func (r *Reader) decodeEvent() (bool, error) {
	start := r.pos
	p, end, stack, err := r.readEventHeader()
	if err != nil {
		return false, err
	}
	r.pos = end
	if r.ver <= 3 && r.hdr.metaID != 0 {
		if err := r.checkTimeV3(start, end); err != nil {
			return false, err
		}
	}
	return r.fillEvent(start, p, stack)
}

// fillEvent makes r.ev of the record at start whose header r.hdr holds
// and whose payload starts at p (and, V1–V3, its inline stack); it
// returns false for a metadata record (V1–V3).
func (r *Reader) fillEvent(start, p int, stack []byte) (bool, error) {
	h := &r.hdr
	r.tsMin, r.tsMax = min(r.tsMin, h.ts), max(r.tsMax, h.ts)
	payload := r.blk[p : p+int(h.payloadSize) : p+int(h.payloadSize)]
	off := r.blkOff + int64(start)
	if r.ver <= 3 && h.metaID == 0 {
		var m *Metadata
		var err error
		if r.ver <= 2 {
			m, err = parseMetadataV2(payload, r.ver, uint32(off))
		} else {
			m, err = parseMetadataV3(payload)
		}
		if err != nil {
			return false, as(classRecord, r.metaErr(err, off, p))
		}
		if r.ver <= 2 {
			r.addMetadataV2(m, r.blkOff+int64(len(r.blk)))
		} else {
			r.addMetadata(m)
		}
		return false, nil
	}
	m := r.lookupMeta(h.metaID)
	if m == nil && r.ver <= 2 {
		m = r.shiftedMetaV2(h.metaID, off)
	}
	if m == nil {
		return false, r.undefinedMeta(off)
	}
	if r.ver >= 4 {
		if d := &r.drops; d.next(h.captureThreadID, h.seq) {
			d.curSeq = h.seq
		} else if err := r.eventNumber(start, p, off); err != nil {
			return false, err
		}
	}
	ev := &r.ev
	ev.Offset = off
	ev.MetadataID = h.metaID
	ev.setMeta(m)
	ev.ProviderGUID = m.ProviderGUID
	ev.ID = m.EventID
	ev.Version = m.Version
	ev.Level = m.Level
	ev.Opcode = m.Opcode
	ev.Keywords = m.Keywords
	ev.ThreadID = h.threadID
	ev.CaptureThreadID = h.captureThreadID
	ev.ProcessID = uint64(r.info.ProcessID)
	ev.ProcessorNumber = h.proc
	ev.SequenceNumber = h.seq
	ev.IsSorted = h.sorted
	ev.Timestamp = h.ts
	ev.ActivityID = h.activity
	ev.RelatedActivityID = h.related
	ev.StackID = h.stackID
	ev.Payload = payload
	ev.setThread(nil, nil)
	var st []uint64
	var key uint64 // StackKey: 0 for none and for inline stacks
	if r.ver <= 3 {
		ev.StackID = 0
		ps := r.info.PointerSize
		if len(stack)%ps != 0 {
			return false, as(classRecord, r.errf(ErrFormat, "event", off, "stack of %d bytes is not a whole number of %d-byte pointers", len(stack), ps))
		}
		r.stackBuf = appendIPs(r.stackBuf[:0], stack, ps)
		st = r.stackBuf
	} else if n := uint32(len(r.stackRefs)); n != 0 && len(r.stacks) == 0 {
		// The stack table's IDs are contiguous (the usual case): the row
		// is found without a branch on whether the event has a stack
		// (about a third of the events have none, in no pattern a branch
		// predictor learns). An ID outside the table, 0 among them, reads
		// the first row with its length cleared: no stack.
		i := h.stackID - r.stackBase // past n when the ID is below the base
		out := b2u(i >= n)
		if out&b2u(h.stackID != 0) != 0 {
			return false, r.undefinedStack(off)
		}
		in := out - 1
		s := r.stackRefs[i&in]
		s.n &= in
		st = r.ips[s.off : s.off+s.n : s.off+s.n]
		if s.n == 0 {
			st = nil
		}
		key = stackKey(r.ipsGen, s.off, s.n)
	} else if h.stackID != 0 {
		s, ok := r.stackRow(h.stackID)
		if !ok {
			return false, r.undefinedStack(off)
		}
		st = r.ips[s.off : s.off+s.n : s.off+s.n]
		key = stackKey(r.ipsGen, s.off, s.n)
	}
	ev.setStack(st)
	ev.stackKey = key
	if r.ver == 6 {
		t := r.threadAt(h.threadID)
		if t == nil {
			return false, r.undefinedRef(off, "undefined thread", "refers to thread index %d, which is not defined", h.threadID)
		}
		ev.setThread(t, nil)
		ev.ThreadID = t.ThreadID
		if t.ProcessID != 0 {
			ev.ProcessID = t.ProcessID
		}
		ev.CaptureThreadID = 0
		if ct := r.threadAt(h.captureThreadID); ct != nil {
			ev.CaptureThreadID = ct.ThreadID
		}
		ev.ActivityID = clrimpl.GUID{}
		ev.RelatedActivityID = clrimpl.GUID{}
		if h.labelID != 0 {
			l := r.labels[h.labelID]
			if l == nil {
				return false, r.undefinedRef(off, "undefined label list", "refers to label list %d, which is not defined", h.labelID)
			}
			ev.setThread(t, l)
			ev.ActivityID = l.ActivityID
			ev.RelatedActivityID = l.RelatedActivityID
			l.override(&ev.Opcode, &ev.Level, &ev.Version, &ev.Keywords)
		}
	}
	return true, nil
}

// stackRow returns the stack table's row of stack ID id, if it has one.
func (r *Reader) stackRow(id uint32) (stackRef, bool) {
	if i := id - r.stackBase; id >= r.stackBase && int(i) < len(r.stackRefs) {
		return r.stackRefs[i], true
	}
	sr, ok := r.stacks[id]
	return sr, ok
}

// undefinedStack is the error of the event at stream offset off whose
// stack ID (V4+) is in no stack block read since the last sequence point:
// the stack block was lost to damage, or the ID is damage. The event is
// skipped and counted, as one whose metadata is not defined: handed out,
// it would be a sample without its stack.
func (r *Reader) undefinedStack(off int64) error {
	return r.undefinedRef(off, "undefined stack", "refers to stack id %d, which is not defined", r.hdr.stackID)
}

// undefinedRef is the error of the event at stream offset off that
// refers to a row of another table (kind) that is not defined: it is
// skipped, and counted with the others of its kind in one Damage.
func (r *Reader) undefinedRef(off int64, kind, format string, id any) error {
	e := as(classRecord, r.errf(ErrFormat, "event", off, format, id)).(*Error)
	e.kind = kind
	return e
}

// b2u is 1 for true and 0 for false, without a branch.
func b2u(b bool) uint32 {
	var u uint32
	if b {
		u = 1
	}
	return u
}

func appendIPs(dst []uint64, b []byte, ps int) []uint64 {
	if ps == 4 {
		for i := 0; i+4 <= len(b); i += 4 {
			dst = append(dst, uint64(binary.LittleEndian.Uint32(b[i:])))
		}
		return dst
	}
	for i := 0; i+8 <= len(b); i += 8 {
		dst = append(dst, binary.LittleEndian.Uint64(b[i:]))
	}
	return dst
}

func (r *Reader) metaErr(err error, recOff int64, payloadAt int) error {
	var me *metaErr
	if errors.As(err, &me) {
		return r.errf(ErrFormat, "metadata", recOff, "%s (payload at %d)", me.msg, r.blkOff+int64(payloadAt)+int64(me.at))
	}
	return r.errf(ErrFormat, "metadata", recOff, "%v", err)
}

func (r *Reader) addMetadata(m *Metadata) {
	if m.Provider != "" {
		// One string per provider name, so that the events of a provider
		// share it (Event.setMeta).
		p := cachedProvider(m.Provider)
		m.Provider = p.name
		if m.ProviderGUID.IsZero() {
			m.ProviderGUID = p.guid
		}
	}
	wellKnownFields(m)
	universalFields(m)
	m.describe()
	r.nmeta++
	r.metaNext = max(r.metaNext, m.ID+1)
	r.putMeta(m)
}

// metaIDFix checks the ID of m, a V4/V5 metadata record whose payload is
// at r.blk[p:]: the runtime numbers its metadata 1, 2, 3, … in the order
// it writes them (every record of the repository's and the shared traces
// does), so a record defines metaNext, the ID after the highest defined.
// An ID not defined, more than 8 above metaNext (records lost to damage
// before it would make it a few above) and other than metaNext in one of
// its four bytes only is a damaged field: m takes metaNext, and the field
// is a Damage of its 4 bytes that lost no event. (Else the record would
// define an ID no event refers to, and every event of the real one would
// be lost as referring to metadata not defined.)
func (r *Reader) metaIDFix(m *Metadata, p int) error {
	want := max(r.metaNext, 1) // the first record defines 1
	x := m.ID ^ want
	if r.ver != 4 && r.ver != 5 || m.ID <= want+8 || x&0xff != x && x&0xff00 != x && x&0xff0000 != x && x&0xff000000 != x || r.lookupMeta(m.ID) != nil {
		return nil
	}
	e := r.errf(ErrFormat, "metadata", r.blkOff+int64(p), "metadata ID %d, where the next the runtime gives is %d, other in one byte only: the field is damaged; read as %d", m.ID, want, want)
	m.ID = want
	return r.noteDamage(e.(*Error), r.blkOff+int64(p), 4)
}

// redefined returns an error when m, of a V4/V5 MetadataBlock, gives an
// ID the trace defined before another meaning: the runtime gives each
// metadata an ID of its own for the session, so such a record is damage
// (a block read from a wrong start can make one of a real record's
// bytes), and the events of the ID keep its first meaning. A record that
// defines an ID again as it was (a block written twice) is no error.
func (r *Reader) redefined(m *Metadata) error {
	if r.ver != 4 && r.ver != 5 {
		return nil
	}
	old := r.lookupMeta(m.ID)
	// (m's GUID is derived from its provider's name later, when the
	// record gives none.)
	if old == nil || old.Provider == m.Provider && (m.ProviderGUID.IsZero() || old.ProviderGUID == m.ProviderGUID) && old.EventID == m.EventID &&
		old.Version == m.Version && old.Name == m.Name && len(old.Fields) == len(m.Fields) && old.Keywords == m.Keywords &&
		old.Level == m.Level && old.Opcode == m.Opcode {
		return nil
	}
	return fmt.Errorf("metadata ID %d, defined before as %s/%d (version %d), defined again as %q/%d (version %d)",
		m.ID, old.Provider, old.EventID, old.Version, m.Provider, m.EventID, m.Version)
}

// putMeta files m under m.ID.
func (r *Reader) putMeta(m *Metadata) {
	r.sorted.newMetaEpoch() // time order's IDs may now name other metadata
	// IDs are small and dense from V3 on (V1/V2 use stream offsets, which
	// go to the map); growing only up to twice the records read keeps a
	// hostile ID from costing more than the input backs.
	if int64(m.ID) < 2*int64(r.nmeta)+64 {
		if int(m.ID) >= len(r.metaByID) {
			r.metaByID = slices.Grow(r.metaByID, max(int(m.ID)+1, 16)-len(r.metaByID))
			r.metaByID = r.metaByID[:int(m.ID)+1]
		}
		r.metaByID[m.ID] = m
		return
	}
	if r.meta == nil {
		r.meta = make(map[uint32]*Metadata)
	}
	r.meta[m.ID] = m
}

// lookupMeta finds metadata by ID: in the dense slice when it is there,
// else in the map (stream-offset IDs, and IDs too large for the slice when
// they came).
func (r *Reader) lookupMeta(id uint32) *Metadata {
	if int(id) < len(r.metaByID) {
		if m := r.metaByID[id]; m != nil {
			return m
		}
	}
	return r.meta[id]
}

// metadataBlock parses every metadata record in a MetadataBlock.
func (r *Reader) metadataBlock() error {
	if r.ver == 6 {
		return r.metadataBlockV6()
	}
	if err := r.eventBlockHeader(kindMetadata); err != nil {
		return err
	}
	r.hdr = evHeader{}
	retry := (r.ver == 4 || r.ver == 5) && r.compress
	for r.pos < len(r.blk) {
		start := r.pos
		p, end, _, err := r.readEventHeader()
		var m *Metadata
		if err == nil {
			r.pos = end
			m, err = parseMetadataV3(r.blk[p : p+int(r.hdr.payloadSize)])
		}
		if err != nil && retry {
			// Damaged flags in the first header misread every record:
			// when the block reads better with the usual ones, it is
			// read again from its start with them (the records before
			// this one define again what they did).
			retry = false
			if fixed, ferr := r.firstFlagsFix(kindMetadata); fixed || ferr != nil {
				if ferr != nil {
					return ferr // strict
				}
				r.pos, r.hdr = r.blkFirst, evHeader{}
				continue
			}
		}
		if err != nil && r.pos == start {
			return err // the header
		}
		if err == nil {
			if err = r.metaIDFix(m, p); err != nil {
				return err // strict
			}
			err = r.redefined(m)
		}
		if err != nil {
			// The record's size is known: only it is lost.
			if err := r.recover(as(classRecord, r.metaErr(err, r.blkOff+int64(start), p))); err != nil {
				return err
			}
			continue
		}
		r.addMetadata(m)
	}
	return nil
}

// metadataBlockV6: uint16 HeaderSize, header, rows of {uint16 Size, row}.
func (r *Reader) metadataBlockV6() error {
	c := &cursor{b: r.blk}
	hs := c.u16()
	c.bytes(int(hs))
	if c.bad {
		return r.errf(ErrFormat, "block header", r.blkOff, "header runs past the end of the block")
	}
	for c.left() > 0 {
		at := c.i
		n := int(c.u16())
		row := c.bytes(n)
		if c.bad {
			return r.errf(ErrFormat, "metadata", r.blkOff+int64(at), "row size %d exceeds the block (%d bytes left)", n, len(r.blk)-at-2)
		}
		m, err := parseMetadataV6(row)
		if err != nil {
			// The row's size is known: only it is lost.
			r.pos = c.i
			if err := r.recover(as(classRecord, r.metaErr(err, r.blkOff+int64(at), at+2))); err != nil {
				return err
			}
			continue
		}
		r.addMetadata(m)
	}
	return nil
}

// stackBlock: uint32 FirstId, uint32 Count, Count × {uint32 Size, IPs}.
// nextStackID returns the first stack ID the next StackBlock of a V4/V5
// trace must have, or 0 where it cannot tell. The runtime numbers its
// stacks from 1 after each sequence point (which empties the table) and
// on from block to block: 1 when the table is empty, else the ID after
// the table's last. It cannot tell when damage was skipped since the last
// StackBlock (a block, or the sequence point, may be lost with it), nor
// for a table that is not contiguous, nor in V6, whose writers are many.
// (An empty block's first ID says nothing, and is not checked.)
func (r *Reader) nextStackID() uint32 {
	if r.ver < 4 || r.ver > 5 || r.stackMark != r.damages || len(r.stacks) != 0 {
		return 0
	}
	if len(r.stackRefs) == 0 {
		return 1
	}
	return r.stackBase + uint32(len(r.stackRefs))
}

func (r *Reader) stackBlock() error {
	c := &cursor{b: r.blk}
	id := c.u32()
	n := c.u32()
	if c.bad {
		return r.errf(ErrFormat, "stack block header", r.blkOff, "block of %d bytes is too short", len(r.blk))
	}
	if int64(n)*4 > int64(c.left()) {
		return r.errf(ErrFormat, "stack block header", r.blkOff, "stack count %d exceeds the block", n)
	}
	if n == 0 && c.left() > 0 {
		// No stacks, and bytes that would be theirs: the count is
		// damaged (zeroed), and the stacks are lost with it.
		return r.errf(ErrFormat, "stack block header", r.blkOff, "stack count 0, but %d bytes follow", c.left())
	}
	want := r.nextStackID()
	if n > 0 && id < want && r.repeatsStacks(c, id, n) {
		// A block written twice: its stacks are the table's already.
		e := r.errf(ErrFormat, "stack block", r.blkOff, "%d bytes that repeat stacks %d to %d, which the table holds", len(r.blk), id, id+n-1).(*Error)
		if r.strict {
			return e
		}
		r.damage = append(r.damage, Damage{Block: r.blkName, Offset: r.blkOff, Length: int64(len(r.blk)), Err: e})
		return nil
	}
	restart := id == 1 && n > 0 && r.ver >= 4 && r.ver <= 5 && (len(r.stackRefs) > 0 || len(r.stacks) > 0)
	if want != 0 && id != want && n > 0 && !restart {
		e := r.errf(ErrFormat, "stack block header", r.blkOff, "first stack ID %d, not %d, the next: the field is damaged; read as %d", id, want, want).(*Error)
		if err := r.noteDamage(e, r.blkOff, 4); err != nil {
			return err // strict
		}
		id = want
	}
	if restart {
		// The runtime numbers its stacks from 1 again only after a
		// sequence point, which empties the table: the damage took one,
		// or moved it after this block (the two swapped). The table
		// starts again here; the IPs stay where the events read so far
		// found them. A sequence point before the next event block is
		// the moved one, and keeps the table (sequencePoint).
		if want > 1 {
			e := r.errf(ErrFormat, "stack block header", r.blkOff, "first stack ID 1, not %d, the next, while the table holds stacks: a sequence point before it is lost or moved; the table starts again", want).(*Error)
			if err := r.noteDamage(e, r.blkOff, 4); err != nil {
				return err // strict
			}
		}
		clear(r.stacks)
		r.stackRefs = r.stackRefs[:0]
		r.restarted = true
	}
	r.stackMark = r.damages
	ps := r.info.PointerSize
	// Room for every IP the block can hold, at once: growing a pointer
	// at a time copies the table at each step, into memory a new
	// process has not touched yet. (make, not slices.Grow, which clears
	// the room it adds: pages the table may never use.)
	if need := len(r.ips) + len(r.blk)/ps; need > cap(r.ips) {
		ips := make([]uint64, len(r.ips), max(need, cap(r.ips)*5/4))
		copy(ips, r.ips)
		r.ips = ips
	}
	for i := uint32(0); i < n; i++ {
		at := c.i
		size := int(c.u32())
		b := c.bytes(size)
		if c.bad {
			return r.errf(ErrFormat, "stack", r.blkOff+int64(at), "stack %d: size %d exceeds the block", id, size)
		}
		if size%ps != 0 {
			return r.errf(ErrFormat, "stack", r.blkOff+int64(at), "stack %d: %d bytes is not a whole number of %d-byte pointers", id, size, ps)
		}
		if id == 0 {
			// An event's stack ID 0 is no stack, in both orders: a block
			// that numbers a stack 0 (a damaged first ID) does not make
			// it one.
			id++
			continue
		}
		o := len(r.ips)
		r.ips = appendIPs(r.ips, b, ps)
		sr := stackRef{off: uint32(o), n: uint32(len(r.ips) - o)}
		if len(r.stackRefs) == 0 && len(r.stacks) == 0 {
			r.stackBase = id
		}
		switch i := id - r.stackBase; {
		case id >= r.stackBase && int(i) < len(r.stackRefs):
			r.stackRefs[i] = sr // a redefinition
		case id >= r.stackBase && int(i) == len(r.stackRefs) && len(r.stacks) == 0:
			r.stackRefs = append(r.stackRefs, sr)
		default:
			if r.stacks == nil {
				r.stacks = make(map[uint32]stackRef)
			}
			r.stacks[id] = sr
		}
		id++
	}
	return nil
}

// repeatsStacks reports whether the n stacks from c on, numbered from id,
// are the ones the table holds under those IDs, IP for IP: a StackBlock
// written twice. c is left where it was.
func (r *Reader) repeatsStacks(c *cursor, id, n uint32) bool {
	cc := *c
	ps := r.info.PointerSize
	for i := uint32(0); i < n; i++ {
		size := int(cc.u32())
		b := cc.bytes(size)
		if cc.bad || size%ps != 0 {
			return false
		}
		have, ok := r.stackRow(id + i)
		if !ok {
			return false
		}
		if int(have.n)*ps != size {
			return false
		}
		ips := r.ips[have.off : have.off+have.n]
		for j := range ips {
			var v uint64
			if ps == 8 {
				v = binary.LittleEndian.Uint64(b[j*8:])
			} else {
				v = uint64(binary.LittleEndian.Uint32(b[j*4:]))
			}
			if ips[j] != v {
				return false
			}
		}
	}
	return true
}

// sequencePoint flushes the stack (and V6 label list) tables, and in V6
// the thread and metadata tables when its flags say so.
func (r *Reader) sequencePoint() error {
	r.drops.moved = false
	r.drops.hold(r.blkOff, r.drops.dropped)
	if r.restarted {
		// The StackBlock just before it, with no event block between,
		// numbered its stacks from 1 while the table held others: this
		// sequence point came before it when written (the two were
		// swapped), and the table the events after it need is that
		// block's. Nor does it end a stretch in time order: the events
		// held refer to the table it would flush.
		r.restarted = false
	} else {
		r.spSeen = true
		clear(r.stacks)
		r.stackRefs = r.stackRefs[:0]
		r.ips = r.ips[:0]
		r.ipsGen = stackGens.Add(1) // the rows are written again
	}
	if r.ver != 6 {
		if len(r.blk) < 12 {
			return r.errf(ErrFormat, "", 0, "sequence point of %d bytes is too short", len(r.blk))
		}
		// uint64 timestamp, uint32 count, count × {uint64 capture
		// thread ID, uint32 sequence number}.
		n := binary.LittleEndian.Uint32(r.blk[8:])
		for i, at := uint32(0), 12; i < n && at+12 <= len(r.blk); i, at = i+1, at+12 {
			r.drops.checkpoint(binary.LittleEndian.Uint64(r.blk[at:]), binary.LittleEndian.Uint32(r.blk[at+8:]))
		}
		r.drops.pointEpoch = r.drops.epoch
		return nil
	}
	clear(r.labels)
	c := &cursor{b: r.blk}
	c.u64()
	flags := c.u32()
	n := c.u32()
	for i := uint32(0); i < n && !c.bad; i++ {
		th := c.varu64()
		seq := c.varu32()
		if !c.bad {
			r.drops.checkpoint(th, seq)
		}
	}
	if c.bad {
		return r.errf(ErrFormat, "", 0, "sequence point runs past the end of the block at %d", r.blkOff+int64(c.badI))
	}
	if flags&1 != 0 {
		clear(r.threads)
		clear(r.threadIdx)
		r.drops.forget(0, true)
	}
	if flags&2 != 0 {
		clear(r.meta)
		clear(r.metaByID)
		r.sorted.newMetaEpoch()
	}
	return nil
}

// threadBlock (V6): rows of {uint16 Size; varuint64 Index; {uint8 Kind; …}*}.
func (r *Reader) threadBlock() error {
	c := &cursor{b: r.blk}
	for c.left() > 0 {
		at := c.i
		n := int(c.u16())
		row := c.bytes(n)
		if c.bad {
			return r.errf(ErrFormat, "thread", r.blkOff+int64(at), "row size %d exceeds the block", n)
		}
		rc := &cursor{b: row}
		t := &Thread{Index: rc.varu64()}
	row:
		for rc.left() > 0 && !rc.bad {
			switch k := rc.u8(); k {
			case 1:
				t.Name = rc.utf8str()
			case 2:
				t.ProcessID = rc.varu64()
			case 3:
				t.ThreadID = rc.varu64()
			case 4:
				key := rc.utf8str()
				v := rc.utf8str()
				if t.Attributes == nil {
					t.Attributes = make(map[string]string)
				}
				t.Attributes[key] = v
			default:
				// A kind a later minor version added: its size is not
				// known, but the row's is, so the row ends here.
				break row
			}
		}
		if rc.bad {
			return r.errf(ErrFormat, "thread", r.blkOff+int64(at), "row runs past its size at %d", r.blkOff+int64(at+2+rc.badI))
		}
		if r.threads == nil {
			r.threads = make(map[uint64]*Thread)
		}
		r.threads[t.Index] = t
		if t.Index < maxThreadIdx {
			if n := int(t.Index) + 1; n > len(r.threadIdx) {
				r.threadIdx = append(r.threadIdx, make([]*Thread, n-len(r.threadIdx))...)
			}
			r.threadIdx[t.Index] = t
		}
		r.drops.declare(t.Index)
	}
	return nil
}

// maxThreadIdx bounds the thread indexes threadIdx holds (a slice of at
// most 32 KiB whatever the input says); writers number threads from 1.
const maxThreadIdx = 1 << 12

// threadAt returns the V6 thread table row idx, nil if there is none.
func (r *Reader) threadAt(idx uint64) *Thread {
	if idx < uint64(len(r.threadIdx)) {
		return r.threadIdx[idx]
	}
	return r.threads[idx]
}

// removeThreadBlock (V6): {varuint64 Index, varuint32 SequenceNumber}*.
func (r *Reader) removeThreadBlock() error {
	r.drops.hold(r.blkOff, r.drops.dropped)
	c := &cursor{b: r.blk}
	for c.left() > 0 {
		idx := c.varu64()
		seq := c.varu32()
		if c.bad {
			return r.errf(ErrFormat, "thread", r.blkOff+int64(c.badI), "entry runs past the end of the block")
		}
		r.drops.checkpoint(idx, seq)
		r.drops.forget(idx, false)
		delete(r.threads, idx)
		if idx < uint64(len(r.threadIdx)) {
			r.threadIdx[idx] = nil
		}
	}
	return nil
}

// labelListBlock (V6): uint32 FirstIndex, uint32 Count, Count label lists.
func (r *Reader) labelListBlock() error {
	c := &cursor{b: r.blk}
	idx := c.u32()
	n := c.u32()
	if c.bad {
		return r.errf(ErrFormat, "label list header", r.blkOff, "block of %d bytes is too short", len(r.blk))
	}
	if int64(n) > int64(c.left()) {
		return r.errf(ErrFormat, "label list header", r.blkOff, "count %d exceeds the block", n)
	}
	for i := uint32(0); i < n; i++ {
		at := c.i
		l := &LabelList{}
		for {
			kf := c.u8()
			switch kf & 0x7F {
			case 1:
				l.ActivityID, l.HasActivityID = c.guid(), true
			case 2:
				l.RelatedActivityID, l.HasRelatedActivityID = c.guid(), true
			case 3:
				l.TraceID, l.HasTraceID = c.guid(), true
			case 4:
				l.SpanID, l.HasSpanID = c.u64(), true
			case 5:
				k := c.utf8str()
				v := c.utf8str()
				l.Other = append(l.Other, Label{Key: k, String: v})
			case 6:
				k := c.utf8str()
				v := c.varu64()
				l.Other = append(l.Other, Label{Key: k, Int: int64(v>>1) ^ -int64(v&1), IsInt: true})
			case 7:
				l.Opcode, l.HasOpcode = c.u8(), true
			case 8:
				l.Keywords, l.HasKeywords = c.u64(), true
			case 9:
				l.Level, l.HasLevel = c.u8(), true
			case 10:
				l.Version, l.HasVersion = c.u8(), true
			default:
				if !c.bad {
					return r.errf(ErrFormat, "label list", r.blkOff+int64(at), "unknown label kind %d", kf&0x7F)
				}
			}
			if c.bad {
				return r.errf(ErrFormat, "label list", r.blkOff+int64(at), "runs past the end of the block")
			}
			if kf&0x80 != 0 {
				break
			}
		}
		if r.labels == nil {
			r.labels = make(map[uint32]*LabelList)
		}
		r.labels[idx] = l
		idx++
	}
	return nil
}
