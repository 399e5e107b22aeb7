package inflate

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// window is how far back a deflate copy reaches.
const window = 32 << 10

// maxBlock bounds one block's output, which Reader holds until the block
// has decoded whole (so that a block that fails hands out nothing): real
// encoders end a block after a few MB at most (zlib after 16 Ki symbols,
// 4 MiB at the very most). A larger block is taken as damage.
const maxBlock = 8 << 20

// Damage is a block that failed to decode, and where decoding took up
// again. Its offsets In are of the io.ReaderAt the stream is in (an
// archive); Out is of the output.
type Damage struct {
	// BlockIn is where the failed block begins (its first byte), FaultIn
	// where it failed, ResumeIn where the next block that decodes begins
	// (the byte that holds its first bit); -1 when none does, and the
	// rest of the stream is lost.
	BlockIn, FaultIn, ResumeIn int64
	// Out is the output offset at which the failed block's output would
	// have begun; the output after it goes on there.
	Out int64
	Err error // what the block did wrong
}

func (d *Damage) Error() string {
	then := "nothing after it decodes"
	if d.ResumeIn >= 0 {
		then = fmt.Sprintf("decoding took up again at the block at byte %d", d.ResumeIn)
	}
	what := strings.TrimPrefix(d.Err.Error(), errCorrupt.Error()+": ")
	return fmt.Sprintf("the deflate block at byte %d failed at byte %d (%s), %s", d.BlockIn, d.FaultIn, what, then)
}

func (d *Damage) Unwrap() error { return d.Err }

// Reader inflates a deflate stream from bytes [off, off+n) of an
// io.ReaderAt, reading past damage (see the package documentation).
type Reader struct {
	in      bitReader
	c       codes
	sc, sc2 codes // the search's
	skip    int64 // output before this offset is not handed out

	// out is the window (up to 32 KiB of output already handed out, or
	// zeros standing for the output a failed block took) and then the
	// output not yet handed out; outOff is out[0]'s output offset.
	out    []byte
	outOff int64
	rd     int // out[:rd] has been handed out

	final  bool // the final block has been decoded
	err    error
	damage []*Damage
	budget int // symbols the searches may still decode (skipBlock)
}

// NewReader returns a Reader of the deflate stream in bytes [off, off+n)
// of ra, which does not hand out the first skip bytes of its output: those
// an inflater that failed on the stream handed out already.
func NewReader(ra io.ReaderAt, off, n, skip int64) *Reader {
	return &Reader{in: bitReader{ra: ra, base: off, size: n}, skip: skip, budget: searchSymbols}
}

// Damage returns the damage read past so far.
func (r *Reader) Damage() []*Damage { return r.damage }

// End returns the offset in the io.ReaderAt of the byte after the final
// block (where a gzip member's trailer begins) once Read has handed out
// its output and returned io.EOF; ok is false before, and when the stream
// ended otherwise.
func (r *Reader) End() (off int64, ok bool) {
	if r.err != io.EOF {
		return 0, false
	}
	return r.in.base + (r.in.pos+7)>>3, true
}

// Read hands out the output. It ends with io.EOF after the final block,
// or with what stopped decoding: a *Damage when nothing after a failed
// block decodes, io.ErrUnexpectedEOF when the input ends before the final
// block, or the io.ReaderAt's error.
func (r *Reader) Read(p []byte) (int, error) {
	for {
		if r.rd < len(r.out) {
			n := copy(p, r.out[r.rd:])
			r.rd += n
			return n, nil
		}
		if r.err != nil {
			return 0, r.err
		}
		r.step()
	}
}

// produced is the output offset after what out holds.
func (r *Reader) produced() int64 { return r.outOff + int64(len(r.out)) }

// step decodes the next block into out, or reads past a block that fails.
// It runs only once out has been handed out.
func (r *Reader) step() {
	if r.final {
		r.err = io.EOF
		return
	}
	r.compact()
	start, from := r.in.pos, len(r.out)
	h, err := r.in.readHeader(&r.c, false)
	if err == nil {
		err = r.block(h)
	}
	switch {
	case r.in.err != nil:
		// The source failed, not the data: the block's output, decoded
		// from bits that could not be read, goes.
		r.out = r.out[:from]
		r.err = r.in.err
	case err == io.ErrUnexpectedEOF:
		r.out = r.out[:from]
		r.err = err
	case err != nil:
		r.out = r.out[:from]
		r.pass(start, err)
	default:
		r.final = h.final
		if s := r.skip - r.outOff; s > int64(r.rd) {
			r.rd = int(min(s, int64(len(r.out))))
		}
	}
}

// compact drops from out what the window no longer needs.
func (r *Reader) compact() {
	if len(r.out) < 4*window {
		return
	}
	k := len(r.out) - window
	r.outOff += int64(k)
	r.rd -= k
	r.out = r.out[:copy(r.out, r.out[k:])]
}

// grow makes room in out for n more bytes.
func (r *Reader) grow(n int) {
	if len(r.out)+n > cap(r.out) {
		r.out = append(r.out[:cap(r.out)], make([]byte, len(r.out)+n-cap(r.out))...)[:len(r.out)]
	}
}

// block decodes a block's data, after its header, into out.
func (r *Reader) block(h header) error {
	b := &r.in
	if h.kind == 0 {
		start := b.pos >> 3
		if b.size-start < int64(h.n) {
			return io.ErrUnexpectedEOF
		}
		n := len(r.out)
		r.grow(h.n)
		r.out = r.out[:n+h.n]
		if got, err := b.ra.ReadAt(r.out[n:], b.base+start); got < h.n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			b.err = err
			return err
		}
		b.pos += int64(h.n) * 8
		return nil
	}
	from := len(r.out)
	for {
		if len(r.out)-from > maxBlock {
			return fmt.Errorf("%w: a block of more than %d MiB", errCorrupt, maxBlock>>20)
		}
		sym, err := b.symbol(h.lit)
		if err != nil {
			return err
		}
		if sym < 256 {
			r.out = append(r.out, byte(sym))
			continue
		}
		if sym == 256 {
			return nil
		}
		length, dist, err := b.copyOf(sym, h.dist)
		if err != nil {
			return err
		}
		if dist > len(r.out) {
			return fmt.Errorf("%w: a copy from %d bytes back, %d bytes into the output", errCorrupt, dist, len(r.out))
		}
		n := len(r.out)
		r.grow(length)
		r.out = r.out[:n+length]
		for i := n; i < n+length; i++ {
			r.out[i] = r.out[i-dist]
		}
	}
}

// pass reads past the block that began at bit start and failed with err:
// it searches for the next block that decodes and takes up there, with
// zeros for the window the failed block's output would have been.
func (r *Reader) pass(start int64, err error) {
	b := &r.in
	d := &Damage{BlockIn: b.base + start>>3, FaultIn: b.base + b.pos>>3, ResumeIn: -1, Out: r.produced(), Err: err}
	r.damage = append(r.damage, d)
	// What the inflater before this one handed out past here stands for
	// the failed block: the output goes on after it.
	r.skip = min(r.skip, d.Out)
	at, ok := r.search(start + 1)
	if !ok {
		r.err = d
		return
	}
	d.ResumeIn = b.base + at>>3
	b.pos = at
	// Everything in out has been handed out (step runs only then): the
	// window becomes zeros, not handed out, and the output offset stays.
	r.grow(window)
	r.out = r.out[:window]
	clear(r.out)
	r.outOff, r.rd = d.Out-window, window
}

// search returns the first bit position from 'from' on where a block
// begins that real encoders write: a stored block whose length agrees
// with its complement, or a dynamic block whose three codes are complete,
// either decoding whole, and followed by a credible block header or the
// stream's end. (A fixed-code block is not taken: almost any bits decode
// as one.)
// The search gives up after maxSearch bytes with no block: real blocks
// are far shorter (a stored one at most 64 KiB). Over bytes that hold no
// block a search costs about 130 ms a MiB here (BenchmarkSearch), so
// 2 s at most; what it decodes of false candidates is bounded apart
// (searchSymbols).
func (r *Reader) search(from int64) (int64, bool) {
	kraftOnce.Do(buildKraft)
	end := min(r.in.size*8, from+maxSearch*8)
	// One word for the eight bits of a byte.
	for i := from >> 3; i*8 < end && r.in.err == nil; i++ {
		w := r.in.load(i)
		for k := uint(max(from-i*8, 0)); k < 8; k++ {
			p := i*8 + int64(k)
			if p >= end {
				break
			}
			if quick(w, k) && r.candidate(p) {
				return p, true
			}
		}
	}
	return 0, false
}

const maxSearch = 16 << 20

// quick rules out most bit positions the search tries from a word or
// two of the stream: a header of type 1 or 3; a stored header whose length
// and complement, at the next byte, disagree; a dynamic header whose code
// counts are out of range, or whose code-length code (as far as the word
// holds it: 13 of up to 19 lengths) is over-subscribed or, all there, not
// complete. It runs at every bit of a search, so it has no loop: the code
// lengths' Kraft sum is four lookups in kraftTab.
//
// w holds the stream from the byte that bit k of it begins the header.
func quick(w uint64, k uint) bool {
	switch w >> (k + 1) & 3 {
	case 0:
		// The length and its complement start at the byte after the
		// header's 3 bits.
		s := w >> ((k + 3 + 7) >> 3 * 8)
		return uint16(s) == ^uint16(s>>16)
	case 1, 3:
		return false
	}
	v := w >> (k + 3) // 54 bits at least
	if v&31 > 286-257 || v>>5&31 > 30-1 {
		return false
	}
	nclen := int(v>>10&15) + 4
	v >>= 14
	v &= 1<<(3*min(nclen, 13)) - 1
	kraft := int(kraftTab[v&0xfff]) + int(kraftTab[v>>12&0xfff]) + int(kraftTab[v>>24&0xfff]) + int(kraftTab[v>>36])
	return kraft == 128 || kraft < 128 && nclen > 13
}

// kraftTab holds, for four 3-bit code lengths, their share of a complete
// 7-bit code (2^(7-len) each, 0 for an unused length); search builds it
// on first use.
var (
	kraftTab  [1 << 12]uint16
	kraftOnce sync.Once
)

func buildKraft() {
	for x := range kraftTab {
		k := 0
		for i := 0; i < 4; i++ {
			if l := x >> (3 * i) & 7; l != 0 {
				k += 1 << (7 - l)
			}
		}
		kraftTab[x] = uint16(k)
	}
}

func (r *Reader) candidate(p int64) bool {
	b := &r.in
	b.pos = p
	h, err := b.readHeader(&r.sc, true)
	if err != nil || h.kind == 1 || !r.skipBlock(h) {
		return false
	}
	if h.final {
		return r.atEnd(b.pos)
	}
	return r.credibleNext(2)
}

// skipBlock decodes a block's data without output, any copy up to the
// window back allowed, and reports whether it decoded whole.
func (r *Reader) skipBlock(h header) bool {
	b := &r.in
	if h.kind == 0 {
		if b.size-b.pos>>3 < int64(h.n) {
			return false
		}
		b.pos += int64(h.n) * 8
		return true
	}
	for n := 0; n <= maxBlock; {
		// The searches decode at most searchSymbols symbols in all: a
		// crafted stream whose many false headers each decode a long
		// way, or whose blocks fail one after another, would otherwise
		// make them quadratic.
		if r.budget--; r.budget < 0 {
			return false
		}
		sym, err := b.symbol(h.lit)
		switch {
		case err != nil:
			return false
		case sym < 256:
			n++
			continue
		case sym == 256:
			return true
		}
		length, _, err := b.copyOf(sym, h.dist)
		if err != nil {
			return false
		}
		n += length
	}
	return false
}

// searchSymbols bounds the symbols a Reader's searches decode, all
// together: about a second's work, thousands of times what the blocks of
// a real stream hold between damage and the next block. After it, what
// follows the next damage is lost. (A variable for the tests.)
var searchSymbols = 64 << 20

// credibleNext reports whether a credible block header is at the bit
// reader's position: a stored or dynamic one as search wants them, or a
// fixed one whose block decodes and is followed by one (depth more).
func (r *Reader) credibleNext(depth int) bool {
	b := &r.in
	h, err := b.readHeader(&r.sc2, true)
	switch {
	case err != nil:
		return false
	case h.kind == 2:
		return true
	case h.kind == 0:
		end := b.pos + int64(h.n)*8
		return end <= b.size*8 && (!h.final || r.atEnd(end))
	case depth == 0 || !r.skipBlock(h):
		return false
	case h.final:
		return r.atEnd(b.pos)
	}
	return r.credibleNext(depth - 1)
}

// atEnd reports whether the stream can end at bit pos: the input ends in
// its byte, or a zip record follows (a member whose length is not known
// is read to the archive's end), or a gzip member's 8-byte trailer then
// the input's end or the next member's header.
func (r *Reader) atEnd(pos int64) bool {
	b := &r.in
	next := (pos + 7) >> 3
	switch rest := b.size - next; {
	case rest == 0, rest == 8:
		return true
	case rest < 4:
		return false
	case rest >= 11 && b.load(next+8)&0xFFFFFF == 0x088B1F:
		return true
	}
	w := b.load(next)
	kind := w >> 16 & 0xFF
	return w&0xFFFF == 0x4B50 && (kind == 1 || kind == 3 || kind == 5 || kind == 6 || kind == 7)
}
