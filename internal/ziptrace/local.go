package ziptrace

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strings"

	"github.com/clrgo/clrevents/internal/inflate"
)

// A zip archive ends with its central directory, the list of its members:
// an archive cut short (a download or copy that stopped, a capture zipped
// as it was written) has lost it, though every member before the cut is
// still there, each after a local header of its own. Find reads such an
// archive from its local headers, front to back, as a streaming unzip
// does, so that a cut-short .nettrace.zip or .etl.zip loses only what the
// cut took, as a cut-short .nettrace does.

// Found is the trace member of an archive, ready to be read.
type Found struct {
	Name string // the member's name in the archive
	// Size is the member's uncompressed size as the archive states it,
	// -1 where it does not (a member whose sizes follow its data, found
	// from its local header), and never more than the archive's bytes
	// could inflate to (maxRatio). For a gzip file it is the size its
	// last member's trailer states (modulo 2^32): the content's where
	// there is one member. It is a hint, never trusted.
	Size int64
	// Salvaged is set when the archive's central directory could not be
	// read (the archive is cut short, most often) and the member was
	// found from its local header: its data may end early, and reading
	// it then ends with io.ErrUnexpectedEOF after the bytes that are
	// there.
	Salvaged bool
	// Gzip is set when the input is a gzip file, not a zip archive: the
	// member is its content, checked by each gzip member's trailer, and
	// its data may end early (the input cut short), as a salvaged one's.
	Gzip bool
	// Logs holds, where the archive holds several ETL logs and no other
	// trace (a Visual Studio diagnostics session: a kernel session's log
	// and user sessions' logs), every one of them in the archive's order,
	// this Found the first: they are read as one log, merged by time.
	// Nil otherwise.
	Logs []*Found
	open func() (io.ReadCloser, error)
}

// Open returns the member's uncompressed bytes. Reading them ends with
// io.EOF once all are read and their checksum (and size, where the
// archive states it) agree, an error wrapping zip.ErrChecksum or
// zip.ErrFormat where they do not (for a gzip file, gzip.ErrChecksum, or
// gzip.ErrHeader for bytes after a member that are not another), and
// io.ErrUnexpectedEOF where the archive ends inside the member. Where
// damage stops the inflater, the bytes go on from the next deflate block
// that decodes (package inflate; the failed block's are lost), and the
// error at the end names the damage.
func (f *Found) Open() (io.ReadCloser, error) { return f.open() }

// Where names the member for messages: the archive's name, then the
// member's (a gzip stream's content may have none).
func (f *Found) Where(archive string) string {
	if f.Name == "" {
		return archive
	}
	return archive + ": " + f.Name
}

// Find returns the one member of the archive ra (size bytes) whose name
// ends in one of exts (case-insensitive), read through the archive's
// central directory or, when that cannot be read, from the members' local
// headers (Found.Salvaged). A gzip file (IsGzip) is an archive of one
// member, its content, whatever its name (Found.Gzip). Errors start with
// name (the archive's). A deflated member inflates with compress/flate
// (see FindInflate).
func Find(ra io.ReaderAt, size int64, name string, exts ...string) (*Found, error) {
	return FindInflate(ra, size, name, nil, exts...)
}

// FindInflate is Find with the inflater of a deflated member read through
// the directory: inflate, such as klauspost/compress/flate.NewReader,
// which package trace uses (about 1.2 times as fast as compress/flate on
// the traces in testdata, with a tenth of the allocations:
// BenchmarkInflate), or compress/flate's when nil. The format readers'
// own Open functions keep compress/flate, so that they depend on nothing
// outside the standard library and clrimpl. A salvaged member always
// inflates with compress/flate, which stops where its stream ends: its
// compressed size is what it read (deflatedLen).
func FindInflate(ra io.ReaderAt, size int64, name string, inflate func(io.Reader) io.ReadCloser, exts ...string) (*Found, error) {
	var magic [3]byte
	if n, _ := ra.ReadAt(magic[:], 0); IsGzip(magic[:n]) {
		return findGzip(ra, size, name, inflate)
	}
	zr, dirErr := zip.NewReader(ra, size)
	if dirErr == nil {
		zfs, err := Members(zr, name, exts...)
		if err != nil {
			return nil, err
		}
		found := make([]*Found, len(zfs))
		for k, zf := range zfs {
			m, err := dirMember(zf)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			found[k] = &Found{Name: zf.Name, Size: sizeHint(zf.UncompressedSize64, size), open: func() (io.ReadCloser, error) { return m.open(ra, size, inflate) }}
		}
		return logs(found), nil
	}
	members, walkErr := localMembers(ra, size)
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.name
	}
	idx, files := traceMembers(names, func(i int) bool { return strings.HasSuffix(names[i], "/") }, exts)
	if len(idx) != 1 && !Several(names, idx) {
		why := fmt.Sprintf("its local headers hold %d trace files (%s), want exactly one", len(idx), strings.Join(exts, ", "))
		if len(files) > 0 {
			why += " (members: " + memberList(files) + ")"
		}
		if walkErr != nil {
			why += ": " + walkErr.Error()
		}
		return nil, fmt.Errorf("%s: zip archive: %w, and %s", name, dirErr, why)
	}
	found := make([]*Found, len(idx))
	for k, i := range idx {
		m := members[i]
		hint := int64(-1)
		if m.usize >= 0 {
			hint = sizeHint(uint64(m.usize), size)
		}
		found[k] = &Found{Name: m.name, Size: hint, Salvaged: true, open: func() (io.ReadCloser, error) { return m.open(ra, size, nil) }}
	}
	return logs(found), nil
}

// logs returns the first of found, with all of them as its Logs where
// there are several.
func logs(found []*Found) *Found {
	if len(found) > 1 {
		found[0].Logs = found
	}
	return found[0]
}

// dirMember is a member as the archive's directory describes it, read
// as a member found from its local header is (checkedReader) rather than
// through archive/zip's reader, which hands out nothing of the read that
// takes a member past its stated size: damage that inflating absorbs
// often leaves the rest of the data a few bytes longer, and that read
// held its last bytes.
func dirMember(zf *zip.File) (*localMember, error) {
	data, err := zf.DataOffset()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", zf.Name, err)
	}
	m := &localMember{
		name: zf.Name, flags: zf.Flags &^ 8, method: zf.Method, crc: zf.CRC32,
		csize: int64(min(zf.CompressedSize64, 1<<62)), usize: int64(min(zf.UncompressedSize64, 1<<62)), data: data,
		// As archive/zip: a CRC-32 of 0 in the directory is taken as
		// not given.
		noCRC: zf.CRC32 == 0,
		dir:   true,
	}
	return m, nil
}

// maxRatio is the most deflate expands its input: 258 bytes from a
// symbol of about two bits.
const maxRatio = 1032

// sizeHint is a stated uncompressed size, cut to what an archive of size
// bytes could hold, so that a false claim in a small archive does not
// size a large buffer.
func sizeHint(stated uint64, size int64) int64 {
	most := uint64(1 << 62)
	if size < 1<<62/maxRatio {
		most = uint64(max(size, 0)) * maxRatio
	}
	return int64(min(stated, most))
}

// localMember is a member as its local header describes it.
type localMember struct {
	name          string
	flags, method uint16
	crc           uint32
	// csize and usize are the compressed and uncompressed sizes, -1
	// where the header leaves them to a data descriptor after the data
	// (flag bit 3).
	csize, usize int64
	data         int64 // the offset of the member's data
	noCRC        bool  // the directory gives no CRC-32 (dirMember)
	// dir: described by the directory (dirMember), whose errors are as
	// archive/zip's reader gives them: without the member's name, and
	// io.ErrUnexpectedEOF for data that ends short of the stated size.
	dir bool
	// gzip: a gzip file's member, checked by its trailer (checkGzip).
	gzip bool
}

const (
	localSig      = 0x04034b50 // PK\x03\x04
	descriptorSig = 0x08074b50 // PK\x07\x08
	localLen      = 30
	// maxLocal bounds the members walked: a member takes at least its
	// 30-byte header, so this is an archive of 30 MB of empty ones.
	maxLocal = 1 << 20
)

// localMembers walks the local headers from the archive's start, skipping
// each member's data, until the next bytes are not a local header (the
// central directory, where the archive is whole) or the archive ends. Its
// error says why the walk stopped early, with the members found before.
func localMembers(ra io.ReaderAt, size int64) ([]*localMember, error) {
	var out []*localMember
	for off := int64(0); len(out) < maxLocal; {
		var h [localLen]byte
		if size-off < localLen {
			if off < size {
				return out, fmt.Errorf("the archive ends inside the local header at offset %d", off)
			}
			return out, nil
		}
		if _, err := ra.ReadAt(h[:], off); err != nil {
			return out, fmt.Errorf("header at offset %d: %w", off, err)
		}
		if binary.LittleEndian.Uint32(h[:]) != localSig {
			return out, nil
		}
		m := &localMember{
			flags:  binary.LittleEndian.Uint16(h[6:]),
			method: binary.LittleEndian.Uint16(h[8:]),
			crc:    binary.LittleEndian.Uint32(h[14:]),
			csize:  int64(binary.LittleEndian.Uint32(h[18:])),
			usize:  int64(binary.LittleEndian.Uint32(h[22:])),
		}
		nameLen, extraLen := int64(binary.LittleEndian.Uint16(h[26:])), int64(binary.LittleEndian.Uint16(h[28:]))
		if size-off-localLen < nameLen+extraLen {
			return out, fmt.Errorf("the archive ends inside the local header at offset %d", off)
		}
		ne := make([]byte, nameLen+extraLen)
		if _, err := ra.ReadAt(ne, off+localLen); err != nil {
			return out, fmt.Errorf("header at offset %d: %w", off, err)
		}
		m.name = string(ne[:nameLen])
		m.zip64(ne[nameLen:])
		m.data = off + localLen + nameLen + extraLen
		if m.flags&8 != 0 {
			m.csize, m.usize = -1, -1
		}
		out = append(out, m)
		if m.csize > size-m.data {
			return out, fmt.Errorf("the archive ends inside member %s", m.name)
		}
		if m.csize >= 0 {
			off = m.data + m.csize
			continue
		}
		if m.method != zip.Deflate {
			return out, fmt.Errorf("the end of member %s (stored, its size after its data) cannot be found", m.name)
		}
		// Its sizes follow its data: inflate it to find where it ends.
		n, err := deflatedLen(io.NewSectionReader(ra, m.data, size-m.data))
		if err == io.ErrUnexpectedEOF {
			return out, fmt.Errorf("the archive ends inside member %s", m.name)
		}
		if err != nil {
			return out, fmt.Errorf("member %s: %w", m.name, err)
		}
		l, _ := descriptor(ra, m.data+n, n)
		off = m.data + n + l
	}
	return out, fmt.Errorf("more than %d members", maxLocal)
}

// zip64 takes the 64-bit sizes from a local header's extra field where
// the 32-bit ones say they are there.
func (m *localMember) zip64(extra []byte) {
	for len(extra) >= 4 {
		id, n := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		extra = extra[4:]
		if n > len(extra) {
			return
		}
		if id == 0x0001 {
			f := extra[:n]
			for _, s := range []*int64{&m.usize, &m.csize} {
				if *s == 0xFFFFFFFF && len(f) >= 8 {
					*s = int64(binary.LittleEndian.Uint64(f) & (1<<63 - 1))
					f = f[8:]
				}
			}
			return
		}
		extra = extra[n:]
	}
}

// descriptor reads the data descriptor at off, after a member of n
// compressed bytes: its optional signature, the CRC-32, and the two sizes
// in 32 or (zip64) 64 bits. The two forms are told apart by the
// compressed size they give and by what follows (a zip record's
// signature, or the archive's end). It returns the descriptor's length
// and the CRC, or 0 where there is no descriptor that gives n.
func descriptor(ra io.ReaderAt, off, n int64) (int64, uint32) {
	var b [32]byte
	got, _ := ra.ReadAt(b[:], off)
	d := b[:got]
	if len(d) >= 4 && binary.LittleEndian.Uint32(d) == descriptorSig {
		d = d[4:]
	}
	sig := int64(got - len(d))
	// next reports whether a zip record, or the end of what was read,
	// follows a descriptor of l bytes after its signature.
	next := func(l int) bool {
		rest := d[l:]
		return len(rest) < 4 || string(rest[:2]) == "PK" && (rest[2] == 1 || rest[2] == 3 || rest[2] == 5 || rest[2] == 6)
	}
	switch {
	case len(d) >= 12 && int64(binary.LittleEndian.Uint32(d[4:])) == n&0xFFFFFFFF && next(12):
		return sig + 12, binary.LittleEndian.Uint32(d)
	case len(d) >= 20 && int64(binary.LittleEndian.Uint64(d[4:])) == n && next(20):
		return sig + 20, binary.LittleEndian.Uint32(d)
	}
	return 0, 0
}

// countReader counts the bytes flate takes from it. flate reads a reader
// that has ReadByte byte by byte, never past its stream's end, so the
// count is the compressed length.
type countReader struct {
	br *bufio.Reader
	n  int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.br.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countReader) ReadByte() (byte, error) {
	b, err := c.br.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// deflatedLen inflates the deflate stream at the start of r, discarding
// its output, and returns its compressed length.
func deflatedLen(r io.Reader) (int64, error) {
	cr := &countReader{br: bufio.NewReaderSize(r, 32<<10)}
	if _, err := io.Copy(io.Discard, flate.NewReader(cr)); err != nil {
		return 0, err
	}
	return cr.n, nil
}

// open reads the member's data from the archive, as far as it goes,
// inflating with inflate (compress/flate's when nil).
func (m *localMember) open(ra io.ReaderAt, size int64, inflate func(io.Reader) io.ReadCloser) (io.ReadCloser, error) {
	if m.flags&1 != 0 {
		return nil, fmt.Errorf("%s: the member is encrypted", m.name)
	}
	end, short := size, m.csize > size-m.data
	if m.csize >= 0 && !short {
		end = m.data + m.csize
	}
	sec := io.NewSectionReader(ra, m.data, end-m.data)
	c := &checkedReader{m: m, ra: ra, crc: crc32.NewIEEE(), end: end}
	switch m.method {
	case zip.Store:
		if m.csize < 0 {
			return nil, fmt.Errorf("%s: a stored member whose size follows its data cannot be read without the archive's directory", m.name)
		}
		c.r, c.short = sec, short
	case zip.Deflate:
		if inflate == nil {
			inflate = flate.NewReader
		}
		if m.dir {
			// Its length is known: nothing to count.
			c.fr = inflate(sec)
		} else {
			c.cr = &countReader{br: bufio.NewReaderSize(sec, 32<<10)}
			c.fr = inflate(c.cr)
		}
		c.r = c.fr
	default:
		return nil, fmt.Errorf("%s: compression method %d is not read", m.name, m.method)
	}
	return c, nil
}

// checkedReader reads a member found from its local header, and checks
// its CRC-32 and size at the end where the archive gives them.
type checkedReader struct {
	m     *localMember
	ra    io.ReaderAt
	r     io.Reader
	fr    io.ReadCloser // the inflater, for deflated members
	cr    *countReader  // what it has read, for deflated members
	short bool          // a stored member the archive ends inside
	crc   hash.Hash32
	n     int64
	err   error
	// end is where the member's compressed data ends in the archive (its
	// end, where the size is not known). rec reads on past damage that
	// stopped the inflater (inflate.Reader), from the next deflate block
	// that decodes.
	end int64
	rec *inflate.Reader
}

func (c *checkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.crc.Write(p[:n])
	c.n += int64(n)
	switch {
	case err == io.EOF && c.rec != nil:
		err = c.recovered(nil)
	case err == io.EOF && c.short:
		err = io.ErrUnexpectedEOF
	case err == io.EOF:
		err = c.check()
	case err != nil && c.rec != nil:
		err = c.recovered(err)
	case err != nil && c.fr != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		// Damage stopped the inflater: read on from the next block that
		// decodes, after the bytes handed out.
		c.rec = inflate.NewReader(c.ra, c.m.data, c.end-c.m.data, c.n)
		c.r = c.rec
		err = nil
	}
	c.err = err
	return n, err
}

// recovered is the error that ends a member read on past damage (err:
// what ended the reading after it, nil for the end of the data): the
// damage, then the archive's checks, which it breaks, where the archive
// gives them.
func (c *checkedReader) recovered(err error) error {
	ds := c.rec.Damage()
	if len(ds) == 0 {
		// Where the inflater stopped, this one found no damage: a
		// failure to read the archive (err again), or data the other
		// would not take, checked as any is.
		if err == nil {
			err = c.check()
		}
		return err
	}
	var b strings.Builder
	b.WriteString("the member's compressed data is damaged: ")
	for i, d := range ds {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(d.Error())
	}
	if err == nil {
		if err = c.check(); err == io.EOF {
			err = zip.ErrFormat // the sizes are not given: the damage is the error
		}
	}
	return fmt.Errorf("%s: %w", b.String(), err)
}

// check compares what was read with the sizes and CRC-32 the archive
// gives, and returns io.EOF where they agree.
func (c *checkedReader) check() error {
	m := c.m
	if m.gzip {
		return c.checkGzip()
	}
	want, known := m.crc, m.flags&8 == 0 && !m.noCRC
	if !known && c.cr != nil && c.rec == nil {
		var l int64
		l, want = descriptor(c.ra, m.data+c.cr.n, c.cr.n)
		known = l > 0
	}
	name := m.name + ": "
	if m.dir {
		name = ""
	}
	switch {
	case m.dir && m.usize >= 0 && c.n < m.usize && c.rec == nil:
		return io.ErrUnexpectedEOF // as archive/zip gives it (read past damage, it is the damage's)
	case m.usize >= 0 && c.n != m.usize:
		return fmt.Errorf("%s%d bytes, the archive says %d: %w", name, c.n, m.usize, zip.ErrFormat)
	case known && c.crc.Sum32() != want:
		return fmt.Errorf("%sCRC-32 %08x, the archive says %08x: %w", name, c.crc.Sum32(), want, zip.ErrChecksum)
	}
	return io.EOF
}

func (c *checkedReader) Close() error {
	if c.fr != nil {
		return c.fr.Close()
	}
	return nil
}

// Finish reads the rest of a member (an EventPipe trace's reader stops at
// the trace's end tag) so that its size and CRC-32 are checked, and
// returns what the checks found: nil, or an error saying what differs.
func Finish(member io.Reader) error {
	_, err := io.Copy(io.Discard, member)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	if _, ok := member.(*gzipReader); ok {
		return fmt.Errorf("the gzip file is cut short: %w", err)
	}
	return fmt.Errorf("the member's data ends before the size the archive gives: %w", err)
}

// UntilError returns r with its first error read as the end of its data,
// and a function that returns that error: nil for the end of the data
// or a member cut short by its archive (io.ErrUnexpectedEOF), which the
// reader of a copy finds as that of a trace cut short; else what stopped
// the data (a checksum, damaged compressed bytes), for that reader to
// report once it has read what came before. For a member that is copied
// out before it is read (an ETL log).
func UntilError(r io.Reader) (io.Reader, func() error) {
	u := &untilError{r: r}
	return u, func() error { return u.err }
}

type untilError struct {
	r   io.Reader
	err error
}

func (u *untilError) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	switch {
	case err == nil, err == io.EOF:
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = io.EOF
	default:
		u.err, err = err, io.EOF
	}
	return n, err
}

func hasExt(name string, exts []string) bool {
	lower := strings.ToLower(name)
	for _, e := range exts {
		if strings.HasSuffix(lower, e) {
			return true
		}
	}
	return false
}

// memberList joins names for a message, the first ten of them.
func memberList(names []string) string {
	const most = 10
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
}
