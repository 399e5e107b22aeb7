package nettrace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/bits"

	"github.com/clrgo/clrevents/internal/readbuf"
)

// stream is a forward-only byte source that counts its offset. Small reads
// and look-ahead go through a bufio.Reader; whole blocks are copied into a
// caller-owned buffer that is grown only as bytes actually arrive, so a
// hostile length in a header cannot make us allocate more than the input
// backs.
type stream struct {
	br  *bufio.Reader // nil after end: the input reads as ended
	own *bufio.Reader // the buffer the stream was made with, until end
	off int64         // offset of the next unread byte
}

// init buffers r, with a buffer from readbuf's pool, or reads a buffered
// reader handed off to it (package trace's, which recognised the format)
// directly.
func (s *stream) init(r io.Reader) {
	if h, ok := r.(*readbuf.Handoff); ok && h.R.Size() >= readbuf.Size {
		s.br, s.own = h.R, h.R
		return
	}
	s.br = readbuf.Get(r)
	s.own = s.br
}

// end gives the stream's buffer to the next stream once the Reader's
// input has ended or failed for good (its error is sticky: it reads
// nothing more). Should anything read after all, it finds the end of the
// input, not another stream's bytes.
func (s *stream) end() {
	if s.own == nil {
		return
	}
	s.br = nil
	readbuf.Put(s.own)
	s.own = nil
}

// errShort is returned (wrapped) when the input ends inside a structure.
var errShort = io.ErrUnexpectedEOF

// ended is what a read of n bytes gets from a stream after end: err, or
// nothing for a read of nothing.
func ended(n int, err error) error {
	if n > 0 {
		return err
	}
	return nil
}

// peek returns the next n bytes without consuming them. Fewer bytes and an
// error are returned at the end of the input.
func (s *stream) peek(n int) ([]byte, error) {
	if s.br == nil {
		return nil, ended(n, io.EOF)
	}
	b, err := s.br.Peek(n)
	if err == io.EOF && len(b) > 0 {
		err = errShort
	}
	return b, err
}

// peekSome returns the next bytes without consuming them: as many as the
// buffer holds already, but at least least and at most most. It waits only
// for least bytes (fewer, and an error, at the end of the input): on a live
// session the bytes after the ones at hand may be minutes away. A search
// after damage reads on with it instead of waiting for a full window.
func (s *stream) peekSome(least, most int) ([]byte, error) {
	if s.br == nil {
		return nil, ended(least, io.EOF)
	}
	b, err := s.peek(min(max(s.br.Buffered(), least), most))
	if n := min(s.br.Buffered(), most); err == nil && n > len(b) {
		// The wait brought more than least.
		b, err = s.peek(n)
	}
	return b, err
}

// discard skips n bytes.
func (s *stream) discard(n int) error {
	if s.br == nil {
		return ended(n, errShort)
	}
	m, err := s.br.Discard(n)
	s.off += int64(m)
	if err == io.EOF {
		err = errShort
	}
	return err
}

// readSmall reads exactly len(dst) bytes (a header; len(dst) is small).
// It returns io.EOF if no byte at all was available and
// io.ErrUnexpectedEOF if the input ended part way.
func (s *stream) readSmall(dst []byte) error {
	if s.br == nil {
		return ended(len(dst), io.EOF)
	}
	n, err := io.ReadFull(s.br, dst)
	s.off += int64(n)
	return err
}

// growChunk is the first step by which readBlock grows its buffer before
// the data has been seen to exist.
const growChunk = 256 << 10

// readBlock reads exactly n bytes into buf (reusing its capacity) and
// returns buf[:n]. The buffer grows geometrically as bytes arrive, so an
// n larger than the remaining input costs at most about twice what the
// input holds. It returns io.ErrUnexpectedEOF if the input ends first,
// together with the bytes that were read.
func (s *stream) readBlock(buf []byte, n int) ([]byte, error) {
	if n < 0 {
		return buf[:0], errors.New("negative length")
	}
	if s.br == nil {
		return buf[:0], ended(n, errShort)
	}
	if cap(buf) >= n {
		buf = buf[:n]
		m, err := io.ReadFull(s.br, buf)
		s.off += int64(m)
		if err == io.EOF {
			err = errShort
		}
		return buf[:m], err
	}
	buf = buf[:0]
	for len(buf) < n {
		want := n - len(buf)
		step := max(cap(buf), growChunk)
		if want > step {
			want = step
		}
		if cap(buf)-len(buf) < want {
			c := len(buf) + want
			if c == n && c <= growChunk {
				// A whole block of at most growChunk: round the buffer
				// up to a power of two (at most twice the block), so that
				// when it is reused (time order keeps spare buffers) the
				// next block, of a size near this one, fits.
				c = 1 << bits.Len(uint(c-1))
			}
			nb := make([]byte, len(buf), c)
			copy(nb, buf)
			buf = nb
		}
		m, err := io.ReadFull(s.br, buf[len(buf):len(buf)+want])
		buf = buf[:len(buf)+m]
		s.off += int64(m)
		if err != nil {
			if err == io.EOF {
				err = errShort
			}
			return buf, err
		}
	}
	return buf, nil
}

// unread puts b back in front of the unread input (a copy: b may be
// reused), so that the next reads return it first. The reader does this
// only after damage, when bytes it read as one block turn out to hold the
// next.
func (s *stream) unread(b []byte) {
	var rest io.Reader = bytes.NewReader(nil) // after end: nothing more
	if s.br != nil {
		rest = s.br
	}
	s.br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(b)), rest), 64<<10)
	s.off -= int64(len(b))
}

// discardAll skips the rest of the input, counting it.
func (s *stream) discardAll() {
	if s.br == nil {
		return
	}
	n, _ := io.Copy(io.Discard, s.br)
	s.off += n
}
