package ziptrace

import (
	"archive/zip"
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// A gzip file (RFC 1952) is one or more members, each a header, a deflate
// stream and an 8-byte trailer (the CRC-32 and the size modulo 2^32 of
// what the stream inflates to); what they inflate to, one after the
// other, is the file's content. A trace kept as .nettrace.gz or .etl.gz
// is read as a zipped one is: the member found here is the whole content,
// read through the same checks and the same recovery from damage that
// stops inflating (checkedReader).

// IsGzip reports whether b starts like a gzip file: its two magic bytes
// and compression method 8 (deflate, the only one defined).
func IsGzip(b []byte) bool {
	return len(b) >= 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8
}

// gzipFixed is the length of a gzip header's fixed part, and gzipTrailer
// that of a member's trailer.
const (
	gzipFixed   = 10
	gzipTrailer = 8
)

// Header flags (RFC 1952, 2.3.1).
const (
	gzipHCRC    = 1 << 1
	gzipExtra   = 1 << 2
	gzipName    = 1 << 3
	gzipComment = 1 << 4
	gzipUnknown = 0xE0 // reserved: a decoder must refuse them
)

// maxGzipName is how much of a member's stored file name is kept.
const maxGzipName = 4096

// gzipHeader is a member's header, read at off.
type gzipHeader struct {
	name string // the stored file name, "" when there is none
	data int64  // where the deflate stream begins
}

// readGzipHeader reads the header of the member at off, in an input of
// size bytes. Errors say where and wrap gzip.ErrHeader, or
// io.ErrUnexpectedEOF where the input ends inside the header.
func readGzipHeader(ra io.ReaderAt, off, size int64) (gzipHeader, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(ra, off, size-off), 4096)
	crc := crc32.NewIEEE()
	pos := off
	read := func(n int) ([]byte, error) {
		b := make([]byte, n)
		m, err := io.ReadFull(br, b)
		crc.Write(b[:m])
		pos += int64(m)
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return b, err
	}
	fail := func(format string, args ...any) (gzipHeader, error) {
		return gzipHeader{}, fmt.Errorf("gzip header at offset %d: %s: %w", off, fmt.Sprintf(format, args...), gzip.ErrHeader)
	}
	cut := func(what string) (gzipHeader, error) {
		return gzipHeader{}, fmt.Errorf("gzip header at offset %d: the input ends inside its %s: %w", off, what, io.ErrUnexpectedEOF)
	}
	fixed, err := read(gzipFixed)
	if err != nil {
		if !IsGzip(fixed[:pos-off]) && pos-off >= 3 {
			return fail("not a gzip header")
		}
		return cut("first 10 bytes")
	}
	if !IsGzip(fixed) {
		return fail("not a gzip header")
	}
	flags := fixed[3]
	if flags&gzipUnknown != 0 {
		return fail("reserved flag bits %#02x are set", flags&gzipUnknown)
	}
	var h gzipHeader
	if flags&gzipExtra != 0 {
		l, err := read(2)
		if err != nil {
			return cut("extra field's length")
		}
		n := int64(binary.LittleEndian.Uint16(l))
		// Skipped, not kept: only the checksum needs its bytes.
		if m, err := io.CopyN(crc, br, n); err != nil {
			pos += m
			return cut("extra field")
		}
		pos += n
	}
	// zstring reads a zero-terminated string, keeping its first keep
	// bytes.
	zstring := func(what string, keep int) ([]byte, error) {
		var b []byte
		for {
			c, err := br.ReadByte()
			if err != nil {
				return nil, fmt.Errorf("gzip header at offset %d: the input ends inside its %s: %w", off, what, io.ErrUnexpectedEOF)
			}
			crc.Write([]byte{c})
			pos++
			if c == 0 {
				return b, nil
			}
			if len(b) < keep {
				b = append(b, c)
			}
		}
	}
	if flags&gzipName != 0 {
		b, err := zstring("file name", maxGzipName)
		if err != nil {
			return gzipHeader{}, err
		}
		h.name = latin1(b)
	}
	if flags&gzipComment != 0 {
		if _, err := zstring("comment", 0); err != nil {
			return gzipHeader{}, err
		}
	}
	if flags&gzipHCRC != 0 {
		want := uint16(crc.Sum32())
		b, err := read(2)
		if err != nil {
			return cut("header checksum")
		}
		if got := binary.LittleEndian.Uint16(b); got != want {
			return fail("its checksum is %04x, its bytes' is %04x", got, want)
		}
	}
	h.data = pos
	return h, nil
}

// latin1 turns a gzip header's ISO 8859-1 string into UTF-8.
func latin1(b []byte) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		out = utf8.AppendRune(out, rune(c))
	}
	return string(out)
}

// findGzip is Find for a gzip file: its content is the one member found,
// named by the file name its first header stores or, where it stores
// none, by name's last element without ".gz" (and "" where name does not
// end in ".gz": a stream's content has no name of its own). The
// extensions a zip's member must have do not apply: a gzip file has no
// list of members to choose from, and the format reader reads what the
// content is.
func findGzip(ra io.ReaderAt, size int64, name string, inflate func(io.Reader) io.ReadCloser) (*Found, error) {
	h, err := readGzipHeader(ra, 0, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	mname := h.name
	if base := filepath.Base(name); mname == "" && strings.HasSuffix(strings.ToLower(base), ".gz") {
		mname = base[:len(base)-3]
	}
	// The last member's trailer states its size modulo 2^32: the whole
	// content's where the file has one member (as gzip writes them) and
	// under 4 GiB. Only a hint.
	hint := int64(-1)
	var isize [4]byte
	if size-h.data >= gzipTrailer {
		if _, err := ra.ReadAt(isize[:], size-4); err == nil {
			hint = sizeHint(uint64(binary.LittleEndian.Uint32(isize[:])), size)
		}
	}
	return &Found{Name: mname, Size: hint, Gzip: true, open: func() (io.ReadCloser, error) {
		g := &gzipReader{ra: ra, size: size, inflate: inflate}
		g.member(h)
		return g, nil
	}}, nil
}

// gzipReader reads a gzip file's members one after the other. A member
// read on past damage (checkedReader.rec) ends at its final block, where
// its trailer and the next member begin: the members after it are read
// as the others are, and the damage is the error at the end.
type gzipReader struct {
	ra      io.ReaderAt
	size    int64
	inflate func(io.Reader) io.ReadCloser
	cur     *checkedReader
	damaged error // the first damaged member's error, for the end
	err     error
}

// member starts reading the member whose header is h.
func (g *gzipReader) member(h gzipHeader) {
	m := &localMember{name: h.name, method: zip.Deflate, csize: -1, usize: -1, data: h.data, gzip: true}
	rc, _ := m.open(g.ra, g.size, g.inflate) // a deflated member opens without error
	g.cur = rc.(*checkedReader)
}

func (g *gzipReader) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.cur.Read(p)
	switch {
	case err == io.EOF:
		// The member checked: another may follow its trailer.
		err = g.next(g.cur.m.data + g.cur.cr.n + gzipTrailer)
	case err != nil && g.cur.rec != nil:
		// Read on past damage: the next member, if any, follows the
		// final block's trailer.
		if end, ok := g.cur.rec.End(); ok {
			if g.damaged == nil {
				g.damaged = err
			}
			err = g.next(end + gzipTrailer)
		}
	}
	switch {
	case g.damaged == nil, err == nil, err == g.damaged:
	case err == io.EOF:
		err = g.damaged // the content's end after damage: the damage is its error
	default:
		err = fmt.Errorf("%w; after it, %w", g.damaged, err)
	}
	g.err = err
	return n, err
}

// next starts the member at off, if there is one: it returns io.EOF at
// the end of the input (or of zero bytes that pad it, which gzip(1)
// ignores too), nil when a member begins, and an error for anything else.
func (g *gzipReader) next(off int64) error {
	if off >= g.size {
		return io.EOF
	}
	h, err := readGzipHeader(g.ra, off, g.size)
	if err == nil {
		g.cur.Close()
		g.member(h)
		return nil
	}
	if allZero(g.ra, off, g.size) {
		return io.EOF
	}
	return fmt.Errorf("the %d bytes after the gzip member that ends at offset %d are not another member: %w", g.size-off, off, err)
}

// allZero reports whether bytes [off, size) of ra are all zero.
func allZero(ra io.ReaderAt, off, size int64) bool {
	var b [4096]byte
	for off < size {
		n, err := ra.ReadAt(b[:min(int64(len(b)), size-off)], off)
		for _, c := range b[:n] {
			if c != 0 {
				return false
			}
		}
		if n == 0 && err != nil {
			return false
		}
		off += int64(n)
	}
	return true
}

func (g *gzipReader) Close() error { return g.cur.Close() }

// checkGzip checks a member's trailer, after the deflate stream of cr.n
// bytes: io.EOF where its CRC-32 and size agree with what was read.
func (c *checkedReader) checkGzip() error {
	if c.rec != nil {
		// Read on past damage: where the stream ends, and so the
		// trailer, is not known; the damage is the error.
		return gzip.ErrChecksum
	}
	at := c.m.data + c.cr.n
	var t [gzipTrailer]byte
	if n, _ := c.ra.ReadAt(t[:], at); n < gzipTrailer {
		return io.ErrUnexpectedEOF
	}
	crc, size := binary.LittleEndian.Uint32(t[:]), binary.LittleEndian.Uint32(t[4:])
	switch {
	case c.crc.Sum32() != crc:
		return fmt.Errorf("CRC-32 %08x, the gzip trailer at offset %d says %08x: %w", c.crc.Sum32(), at, crc, gzip.ErrChecksum)
	case uint32(c.n) != size:
		return fmt.Errorf("%d bytes, the gzip trailer at offset %d says %d (modulo 2^32): %w", c.n, at, size, gzip.ErrChecksum)
	}
	return io.EOF
}
