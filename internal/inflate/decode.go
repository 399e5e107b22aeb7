// Package inflate decodes a deflate stream (RFC 1951) that damage has
// broken, from the next block that decodes on: for the zipped traces the
// front door reads (PerfView's .etl.zip and .nettrace.zip).
//
// Most damage to deflate data does not stop an inflater: the Huffman
// codes fall back into step within a few symbols, and the output comes
// out garbled for a while, then earlier or later than it was, which the
// format readers read past. Some damage does stop it (a code no table
// holds, a copy from before the output's start, a stored block whose
// length and complement disagree), and compress/flate and
// klauspost/compress then lose everything after it. A deflate stream is a
// chain of blocks with codes of their own, so it can be taken up again at
// the next block: Reader tries every bit position after the failed
// block's start for a block header with complete codes, whose block
// decodes to its end and whose next header is credible too, and decodes
// on from there. The failed block's output is lost; the blocks after it
// copy from the 32 KiB before them, which are lost too and stand as
// zeros, so their first copies come out wrong: damage, which the format
// readers find and skip, as they do the garbling an inflater that did not
// stop hands out.
//
// The decoder is for that recovery, not for speed: package ziptrace
// inflates with compress/flate or klauspost/compress and turns to this
// one only when that fails.
package inflate

import (
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"sync"
)

// bitReader reads the bits of a deflate stream, least significant first,
// from the bytes [base, base+size) of an io.ReaderAt, through a buffer, so
// that any bit position can be read again (the search for a block).
type bitReader struct {
	ra         io.ReaderAt
	base, size int64
	buf        []byte
	bufOff     int64 // the offset from base of buf[0]
	pos        int64 // the bit position, from base
	err        error // an error of ra, which ends the stream
}

const bitBuf = 64 << 10

// load returns the 8 bytes at byte offset i as a little-endian word,
// zeros past the end, reading them into buf when it does not hold them.
func (b *bitReader) load(i int64) uint64 {
	end := b.bufOff + int64(len(b.buf))
	if i < b.bufOff || i+8 > end && end < b.size {
		if cap(b.buf) == 0 {
			b.buf = make([]byte, 0, bitBuf)
		}
		n := max(min(int64(cap(b.buf)), b.size-i), 0)
		b.buf, b.bufOff = b.buf[:n], i
		if n > 0 {
			if got, err := b.ra.ReadAt(b.buf, b.base+i); got < len(b.buf) {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				b.err = err
				b.buf = b.buf[:got]
			}
		}
	}
	j := i - b.bufOff
	if j < 0 || j >= int64(len(b.buf)) {
		return 0
	}
	if j+8 <= int64(len(b.buf)) {
		return binary.LittleEndian.Uint64(b.buf[j:])
	}
	var w [8]byte
	copy(w[:], b.buf[j:])
	return binary.LittleEndian.Uint64(w[:])
}

// peek returns the next n bits (n ≤ 32), zeros past the end, and how
// many bits are left.
func (b *bitReader) peek(n uint) (uint32, int64) {
	w := b.load(b.pos >> 3)
	v := uint32(w>>(b.pos&7)) & (1<<n - 1)
	return v, b.size*8 - b.pos
}

// take reads n bits (n ≤ 24); ok is false when the stream ends first.
func (b *bitReader) take(n uint) (uint32, bool) {
	v, left := b.peek(n)
	if left < int64(n) {
		return 0, false
	}
	b.pos += int64(n)
	return v, true
}

// huffman is a canonical Huffman code as a table indexed by the next
// bits bits of the stream (least significant first): an entry is
// symbol<<4 | code length, 0 where no code begins with those bits.
type huffman struct {
	table []uint16
	bits  uint
}

// build makes the code of the code lengths given (0: the symbol has no
// code). A code must be complete, unless strict is false and it is one of
// the two exceptions RFC 1951 readers accept: a single code, or none (a
// block without copies).
func (h *huffman) build(lengths []uint8, strict bool) bool {
	var count [16]int
	maxLen, codes := 0, 0
	for _, l := range lengths {
		count[l]++
		maxLen = max(maxLen, int(l))
		if l != 0 {
			codes++
		}
	}
	count[0] = 0
	left := 1
	for l := 1; l <= 15; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false // over-subscribed
		}
	}
	if left != 0 && (strict || codes > 1) {
		return false // incomplete
	}
	h.bits = uint(max(maxLen, 1))
	size := 1 << h.bits
	if cap(h.table) < size {
		h.table = make([]uint16, size)
	}
	h.table = h.table[:size]
	clear(h.table)
	var next [16]int
	code := 0
	for l := 1; l <= 15; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	for sym, l := range lengths {
		if l == 0 {
			continue
		}
		c := next[l]
		next[l]++
		rev := int(bits.Reverse16(uint16(c)) >> (16 - l))
		for i := rev; i < size; i += 1 << l {
			h.table[i] = uint16(sym)<<4 | uint16(l)
		}
	}
	return true
}

// errCorrupt is wrapped by the errors of damaged deflate data. They are
// made once: the search after damage meets them at almost every bit it
// tries, and a message made there would cost more than the try.
var errCorrupt = errors.New("damaged deflate data")

var (
	errNoCode     error = corrupt("no Huffman code matches the bits")
	errType3      error = corrupt("block type 3")
	errStoredLen  error = corrupt("a stored block's length and its complement disagree")
	errCounts     error = corrupt("more than 286 literal/length or 30 distance codes")
	errCLen       error = corrupt("the code-length code is not a prefix code")
	errRepeat0    error = corrupt("a repeat of no code length")
	errRepeatPast error = corrupt("code lengths repeat past their count")
	errNoEOB      error = corrupt("the block has no end-of-block code")
	errCodes      error = corrupt("the literal/length or distance code is not a prefix code")
	errLenSym     error = corrupt("length symbol 286 or 287")
	errDistSym    error = corrupt("distance symbol 30 or 31")
)

// corrupt is an error of damaged deflate data (errors.Is errCorrupt),
// made without code at start-up: every program that reads traces links
// this package.
type corrupt string

func (e corrupt) Error() string        { return errCorrupt.Error() + ": " + string(e) }
func (e corrupt) Is(target error) bool { return target == errCorrupt }

// symbol decodes the next symbol of h.
func (b *bitReader) symbol(h *huffman) (int, error) {
	v, left := b.peek(h.bits)
	e := h.table[v]
	l := int64(e & 15)
	switch {
	case l == 0 && left < int64(h.bits):
		return 0, io.ErrUnexpectedEOF // the bits past the end are not zeros
	case l == 0:
		return 0, errNoCode
	case left < l:
		return 0, io.ErrUnexpectedEOF
	}
	b.pos += l
	return int(e >> 4), nil
}

// The order in which a dynamic block's header gives the code lengths of
// the code-length code.
var clenOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// Base lengths and extra bits of the length symbols 257–285, and base
// distances and extra bits of the distance symbols 0–29.
var (
	lenBase   = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra  = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase  = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// The fixed codes of block type 1, made when first needed. Symbols 286
// and 287, and distances 30 and 31, have codes but never occur: the
// decoder rejects them.
var (
	fixedLit, fixedDist huffman
	fixedOnce           sync.Once
)

func buildFixed() {
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	fixedLit.build(l[:], true)
	var d [32]uint8
	for i := range d {
		d[i] = 5
	}
	fixedDist.build(d[:], true)
}

// header is a block's header, read by readHeader.
type header struct {
	final bool
	kind  uint32 // 0 stored, 1 fixed, 2 dynamic
	n     int    // a stored block's length
	lit   *huffman
	dist  *huffman
}

// codes holds a dynamic block's codes.
type codes struct {
	clen, lit, dist huffman
	lengths         [286 + 30]uint8
}

// readHeader reads the block header at the bit reader's position. strict
// asks for what real encoders write (complete codes), for the search
// after damage.
func (b *bitReader) readHeader(c *codes, strict bool) (header, error) {
	var h header
	v, ok := b.take(3)
	if !ok {
		return h, io.ErrUnexpectedEOF
	}
	h.final, h.kind = v&1 == 1, v>>1
	switch h.kind {
	case 0:
		b.pos = (b.pos + 7) &^ 7
		n, ok := b.take(16)
		nn, ok2 := b.take(16)
		if !ok || !ok2 {
			return h, io.ErrUnexpectedEOF
		}
		if n != ^nn&0xFFFF {
			return h, errStoredLen
		}
		h.n = int(n)
		return h, nil
	case 1:
		fixedOnce.Do(buildFixed)
		h.lit, h.dist = &fixedLit, &fixedDist
		return h, nil
	case 3:
		return h, errType3
	}
	v, ok = b.take(14)
	if !ok {
		return h, io.ErrUnexpectedEOF
	}
	nlit, ndist, nclen := int(v&31)+257, int(v>>5&31)+1, int(v>>10)+4
	if nlit > 286 || ndist > 30 {
		return h, errCounts
	}
	var cl [19]uint8
	kraft := 0
	for i := range nclen {
		x, ok := b.take(3)
		if !ok {
			return h, io.ErrUnexpectedEOF
		}
		cl[clenOrder[i]] = uint8(x)
		if x != 0 {
			kraft += 1 << (7 - x)
		}
	}
	// A quick look first: most positions the search tries fail here.
	if kraft > 128 || strict && kraft != 128 || !c.clen.build(cl[:], strict) {
		return h, errCLen
	}
	l := c.lengths[:nlit+ndist]
	for i := 0; i < len(l); {
		sym, err := b.symbol(&c.clen)
		if err != nil {
			return h, err
		}
		if sym < 16 {
			l[i] = uint8(sym)
			i++
			continue
		}
		var rep uint32
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return h, errRepeat0
			}
			x, ok := b.take(2)
			if !ok {
				return h, io.ErrUnexpectedEOF
			}
			rep, val = 3+x, l[i-1]
		case 17:
			x, ok := b.take(3)
			if !ok {
				return h, io.ErrUnexpectedEOF
			}
			rep = 3 + x
		default:
			x, ok := b.take(7)
			if !ok {
				return h, io.ErrUnexpectedEOF
			}
			rep = 11 + x
		}
		if i+int(rep) > len(l) {
			return h, errRepeatPast
		}
		for ; rep > 0; rep-- {
			l[i] = val
			i++
		}
	}
	if l[256] == 0 {
		return h, errNoEOB
	}
	if !c.lit.build(l[:nlit], strict) || !c.dist.build(l[nlit:], strict) {
		return h, errCodes
	}
	h.lit, h.dist = &c.lit, &c.dist
	return h, nil
}

// copyOf reads the rest of a copy whose length symbol is sym.
func (b *bitReader) copyOf(sym int, dist *huffman) (length, d int, err error) {
	if sym > 285 {
		return 0, 0, errLenSym
	}
	x, ok := b.take(uint(lenExtra[sym-257]))
	if !ok {
		return 0, 0, io.ErrUnexpectedEOF
	}
	length = int(lenBase[sym-257]) + int(x)
	ds, err := b.symbol(dist)
	if err != nil {
		return 0, 0, err
	}
	if ds >= 30 {
		return 0, 0, errDistSym
	}
	x, ok = b.take(uint(distExtra[ds]))
	if !ok {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return length, int(distBase[ds]) + int(x), nil
}
