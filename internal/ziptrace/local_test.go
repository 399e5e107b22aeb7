package ziptrace

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
)

// content is n bytes that compress somewhat, as a trace's do.
func content(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		if i%7 < 3 {
			b[i] = byte(rng.Uint32())
		} else {
			b[i] = byte(i / 64)
		}
	}
	return b
}

// member is one file of a test archive and how it is written.
type member struct {
	name  string
	data  []byte
	style string // "sizes": deflated, sizes in the local header (as PerfView writes); "descriptor": deflated, sizes after the data (as Go's zip.Writer writes); "stored": stored, sizes in the header
}

// archive writes the members and returns the archive and where each
// member's data ends (its descriptor excluded).
func archive(t testing.TB, ms ...member) ([]byte, []int64) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range ms {
		var w io.Writer
		var err error
		switch m.style {
		case "descriptor":
			w, err = zw.Create(m.name)
			if err == nil {
				_, err = w.Write(m.data)
			}
		case "sizes", "stored":
			raw, method := tracetest.Deflate(t, m.data), zip.Deflate
			if m.style == "stored" {
				raw, method = m.data, zip.Store
			}
			w, err = zw.CreateRaw(&zip.FileHeader{Name: m.name, Method: method, CRC32: crc32.ChecksumIEEE(m.data),
				CompressedSize64: uint64(len(raw)), UncompressedSize64: uint64(len(m.data))})
			if err == nil {
				_, err = w.Write(raw)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	a := buf.Bytes()
	zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64
	for _, zf := range zr.File {
		off, err := zf.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, off+int64(zf.CompressedSize64))
	}
	return a, ends
}

// readFound finds the trace in the first cut bytes of a and reads it.
func readFound(a []byte, cut int, exts ...string) (*Found, []byte, error, error) {
	f, err := Find(bytes.NewReader(a[:cut]), int64(cut), "t.zip", exts...)
	if err != nil {
		return nil, nil, nil, err
	}
	rc, err := f.Open()
	if err != nil {
		return f, nil, nil, err
	}
	defer rc.Close()
	var got bytes.Buffer
	_, readErr := io.Copy(&got, rc)
	if readErr == nil {
		readErr = io.EOF
	}
	return f, got.Bytes(), readErr, nil
}

// TestFindCutShort cuts archives of every layout at many points: where the
// trace member's local header is whole, its bytes before the cut come out
// and end with io.ErrUnexpectedEOF, or whole (checked) where the cut took
// only what follows them; where it is not, the error says why.
func TestFindCutShort(t *testing.T) {
	trace := content(300_000, 1)
	log := content(9_000, 2)
	for _, c := range []struct {
		name    string
		members []member
	}{
		{"sizes in the header", []member{{"app.nettrace", trace, "sizes"}}},
		{"sizes after the data", []member{{"app.nettrace", trace, "descriptor"}}},
		{"stored", []member{{"app.nettrace", trace, "stored"}}},
		{"a log before the trace, sizes after the data", []member{{"LogFile.txt", log, "descriptor"}, {"x/app.nettrace", trace, "descriptor"}}},
		{"a log after the trace", []member{{"app.nettrace", trace, "sizes"}, {"LogFile.txt", log, "sizes"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, ends := archive(t, c.members...)
			ti := 0
			if strings.HasSuffix(c.members[0].name, ".txt") {
				ti = 1
			}
			dataEnd := ends[ti]
			zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
			if err != nil {
				t.Fatal(err)
			}
			zfs, err := Members(zr, "t.zip", ".nettrace")
			if err != nil {
				t.Fatal(err)
			}
			zf := zfs[0]
			dataStart, err := zf.DataOffset()
			if err != nil {
				t.Fatal(err)
			}
			prev := -1
			var cuts []int
			for cut := 0; cut < len(a); cut += 1 + cut/64 {
				cuts = append(cuts, cut)
			}
			for _, cut := range append(cuts, len(a)) {
				f, got, readErr, err := readFound(a, cut, ".nettrace")
				if int64(cut) < dataStart {
					if err == nil {
						t.Fatalf("cut at %d, before the member's data (%d): found %s", cut, dataStart, f.Name)
					}
					if !strings.HasPrefix(err.Error(), "t.zip: zip archive: zip: not a valid zip file, and its local headers hold ") || !errors.Is(err, zip.ErrFormat) {
						t.Fatalf("cut at %d: %v", cut, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("cut at %d (data %d–%d): %v", cut, dataStart, dataEnd, err)
				}
				if f.Name != c.members[ti].name || f.Salvaged != (cut < len(a)) {
					t.Fatalf("cut at %d: found %q, salvaged %v", cut, f.Name, f.Salvaged)
				}
				if !bytes.HasPrefix(trace, got) {
					t.Fatalf("cut at %d: %d bytes read are not the member's first", cut, len(got))
				}
				switch {
				case int64(cut) < dataEnd:
					if readErr != io.ErrUnexpectedEOF {
						t.Fatalf("cut at %d, inside the data (%d–%d): %d bytes, then %v", cut, dataStart, dataEnd, len(got), readErr)
					}
					// All that the bytes before the cut hold comes out:
					// the content compresses evenly, so about its share.
					share := int(int64(len(trace)) * (int64(cut) - dataStart) / (dataEnd - dataStart))
					if c.members[ti].style == "stored" && len(got) != share || len(got) < share-2048 {
						t.Fatalf("cut at %d, inside the data (%d–%d): %d bytes, want about %d", cut, dataStart, dataEnd, len(got), share)
					}
				case readErr != io.EOF || len(got) != len(trace):
					t.Fatalf("cut at %d, after the data (ends at %d): %d of %d bytes, then %v", cut, dataEnd, len(got), len(trace), readErr)
				}
				if len(got) < prev {
					t.Fatalf("cut at %d: %d bytes, fewer than at an earlier cut (%d)", cut, len(got), prev)
				}
				prev = len(got)
			}
			if prev != len(trace) {
				t.Errorf("the whole archive gave %d of %d bytes", prev, len(trace))
			}
		})
	}
}

// TestFindDamagedMember: a member found from its local header is checked
// as archive/zip checks one: a changed byte is an error, not other data.
func TestFindDamagedMember(t *testing.T) {
	trace := content(100_000, 3)
	for _, style := range []string{"sizes", "stored", "descriptor"} {
		a, ends := archive(t, member{"app.nettrace", trace, style})
		a = a[:ends[0]+16] // the directory cut off
		zr, _ := Find(bytes.NewReader(a), int64(len(a)), "t.zip", ".nettrace")
		if zr == nil || !zr.Salvaged {
			t.Fatalf("%s: not salvaged: %v", style, zr)
		}
		// Stored, a byte of the data changed; deflated, the CRC, in the
		// local header or in the descriptor after the data (a changed
		// byte of deflated data more often breaks the stream, which the
		// inflater reports itself).
		bad := bytes.Clone(a)
		switch style {
		case "stored":
			bad[ends[0]-10] ^= 0x40
		case "sizes":
			bad[14] ^= 1
		case "descriptor":
			bad[ends[0]+4] ^= 1
		}
		_, got, readErr, err := readFound(bad, len(bad), ".nettrace")
		if err != nil || !errors.Is(readErr, zip.ErrChecksum) {
			t.Errorf("%s: %d bytes, %v, %v; want a checksum error", style, len(got), readErr, err)
		}
	}
}

// TestFindLocalHeaders covers what only a hand-made header has: zip64
// sizes, an encrypted member, an unknown method, a stored member whose
// size follows its data.
func TestFindLocalHeaders(t *testing.T) {
	data := []byte("Nettrace!FastSerialization.1")
	header := func(flags, method uint16, csize, usize uint32, extra []byte) []byte {
		var h [30]byte
		binary.LittleEndian.PutUint32(h[:], localSig)
		binary.LittleEndian.PutUint16(h[6:], flags)
		binary.LittleEndian.PutUint16(h[8:], method)
		binary.LittleEndian.PutUint32(h[14:], crc32.ChecksumIEEE(data))
		binary.LittleEndian.PutUint32(h[18:], csize)
		binary.LittleEndian.PutUint32(h[22:], usize)
		name := "a.nettrace"
		binary.LittleEndian.PutUint16(h[26:], uint16(len(name)))
		binary.LittleEndian.PutUint16(h[28:], uint16(len(extra)))
		return append(append(append(h[:], name...), extra...), data...)
	}
	zip64 := binary.LittleEndian.AppendUint16(nil, 1)
	zip64 = binary.LittleEndian.AppendUint16(zip64, 16)
	zip64 = binary.LittleEndian.AppendUint64(zip64, uint64(len(data)))
	zip64 = binary.LittleEndian.AppendUint64(zip64, uint64(len(data)))
	n := uint32(len(data))
	for _, c := range []struct {
		name    string
		archive []byte
		want    string // the error, "" for the data read whole
	}{
		{"zip64 sizes", header(0, zip.Store, 0xFFFFFFFF, 0xFFFFFFFF, zip64), ""},
		{"encrypted", header(1, zip.Store, n, n, nil), "a.nettrace: the member is encrypted"},
		{"method 99", header(0, 99, n, n, nil), "a.nettrace: compression method 99 is not read"},
		{"stored, size after the data", header(8, zip.Store, 0, 0, nil), "a.nettrace: a stored member whose size follows its data cannot be read without the archive's directory"},
		{"size wrong", header(0, zip.Store, n, n+1, nil), "a.nettrace: 28 bytes, the archive says 29: zip: not a valid zip file"},
	} {
		_, got, readErr, err := readFound(c.archive, len(c.archive), ".nettrace")
		switch {
		case c.want == "" && (err != nil || readErr != io.EOF || !bytes.Equal(got, data)):
			t.Errorf("%s: %q, %v, %v", c.name, got, readErr, err)
		case c.want != "" && (err == nil || err.Error() != c.want) && (readErr == nil || readErr.Error() != c.want):
			t.Errorf("%s: %v, %v; want %q", c.name, err, readErr, c.want)
		}
	}
}

// TestFindMembers: where the local headers hold no trace, or two that
// are not logs to merge, the error lists them, as Members's does; several
// ETL logs are all found.
func TestFindMembers(t *testing.T) {
	a, ends := archive(t, member{"LogFile.txt", []byte("log"), "sizes"}, member{"b.etl", []byte("etl b"), "sizes"}, member{"c.etl", []byte("etl c"), "sizes"})
	f, err := Find(bytes.NewReader(a[:ends[2]]), ends[2], "t.zip", ".etl")
	if err != nil || f.Name != "b.etl" || len(f.Logs) != 2 || f.Logs[0] != f || f.Logs[1].Name != "c.etl" || !f.Logs[1].Salvaged {
		t.Fatalf("Find of two logs from local headers: %+v, %v", f, err)
	}
	for i, want := range []string{"etl b", "etl c"} {
		rc, err := f.Logs[i].Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		if string(got) != want || err != nil {
			t.Errorf("log %d: %q, %v; want %q", i, got, err, want)
		}
	}
	b, bEnds := archive(t, member{"b.nettrace", []byte("x"), "sizes"}, member{"c.etl", []byte("etl"), "sizes"})
	_, err = Find(bytes.NewReader(b[:bEnds[1]]), bEnds[1], "t.zip", ".etl", ".nettrace")
	want := "t.zip: zip archive: zip: not a valid zip file, and its local headers hold 2 trace files (.etl, .nettrace), want exactly one (members: b.nettrace, c.etl)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	_, err = Find(bytes.NewReader(a[:ends[0]]), ends[0], "t.zip", ".nettrace")
	want = "t.zip: zip archive: zip: not a valid zip file, and its local headers hold 0 trace files (.nettrace), want exactly one (members: LogFile.txt)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	// Where the walk stops, and why.
	d, dEnds := archive(t, member{"LogFile.txt", content(5000, 6), "descriptor"}, member{"a.nettrace", []byte("x"), "sizes"})
	for _, c := range []struct {
		cut  int64
		want string
	}{
		{10, "(.nettrace), want exactly one: the archive ends inside the local header at offset 0"},
		{dEnds[0] - 10, "(.nettrace), want exactly one (members: LogFile.txt): the archive ends inside member LogFile.txt"},
	} {
		_, err := Find(bytes.NewReader(d[:c.cut]), c.cut, "t.zip", ".nettrace")
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("cut at %d: %v, want the suffix %q", c.cut, err, c.want)
		}
	}
}

// TestUntilError: the data ends at the first error; a cut is the end of
// the data, any other error is kept.
func TestUntilError(t *testing.T) {
	a, ends := archive(t, member{"a.etl", content(50_000, 4), "sizes"})
	f, err := Find(bytes.NewReader(a[:ends[0]-100]), ends[0]-100, "t.zip", ".etl")
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := f.Open()
	u, stopped := UntilError(rc)
	if b, err := io.ReadAll(u); err != nil || len(b) == 0 || stopped() != nil {
		t.Errorf("a cut: %d bytes, %v, stopped %v", len(b), err, stopped())
	}
	u, stopped = UntilError(io.MultiReader(strings.NewReader("xy"), errReader{}))
	if b, err := io.ReadAll(u); string(b) != "xy" || err != nil || stopped() != io.ErrClosedPipe {
		t.Errorf("an error: %q, %v, stopped %v", b, err, stopped())
	}
	u, stopped = UntilError(io.MultiReader(strings.NewReader("xy"), errReaderOf{io.ErrUnexpectedEOF}))
	if b, err := io.ReadAll(u); string(b) != "xy" || err != nil || stopped() != nil {
		t.Errorf("io.ErrUnexpectedEOF: %q, %v, stopped %v", b, err, stopped())
	}
}

type errReaderOf struct{ err error }

func (e errReaderOf) Read([]byte) (int, error) { return 0, e.err }

// FuzzFind: any bytes either fail to open with an error naming the archive
// or give a member whose reading ends (io.EOF or an error) without a
// panic. Seeds: small archives of each layout, whole and cut, and gzip
// files (one member, cut, two members).
func FuzzFind(f *testing.F) {
	for _, style := range []string{"sizes", "descriptor", "stored"} {
		a, ends := archive(f, member{"LogFile.txt", []byte("a log"), "descriptor"}, member{"a.nettrace", content(2000, 5), style})
		f.Add(a)
		f.Add(a[:ends[1]-100])
		f.Add(a[:ends[1]+4])
	}
	g := gz(f, gzip.Header{Name: "a.nettrace", Comment: "c"}, content(2000, 5))
	f.Add(g)
	f.Add(g[:len(g)/2])
	f.Add(append(bytes.Clone(g), g...))
	// Two logs, to be read as one.
	two, twoEnds := archive(f, member{"s/a.etl", content(1500, 6), "sizes"}, member{"s/a.kernel.etl", content(1500, 7), "descriptor"})
	f.Add(two)
	f.Add(two[:twoEnds[1]-50])
	f.Fuzz(func(t *testing.T, data []byte) {
		found, err := Find(bytes.NewReader(data), int64(len(data)), "t.zip", ".nettrace", ".etl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "t.zip: ") {
				t.Fatalf("error does not name the archive: %v", err)
			}
			return
		}
		all := []*Found{found}
		if found.Logs != nil {
			if len(found.Logs) < 2 || found.Logs[0] != found {
				t.Fatalf("Logs: %d, the first %p, want several starting with the Found %p", len(found.Logs), found.Logs[0], found)
			}
			all = found.Logs
		}
		for _, fl := range all {
			if found.Logs != nil && !strings.HasSuffix(strings.ToLower(fl.Name), ".etl") {
				t.Fatalf("log %q is not an .etl", fl.Name)
			}
			readEach(t, fl)
		}
	})
}

// readEach reads a found member as FuzzFind does, and checks its size.
func readEach(t *testing.T, found *Found) {
	rc, err := found.Open()
	if err != nil {
		return
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, io.LimitReader(rc, 1<<24))
	if err == nil && n == 1<<24 {
		return // a deflate stream can expand that far; reading it is the reader's to bound
	}
	if found.Size >= 0 && !found.Gzip && err == nil && n != found.Size { // a gzip file's is its last member's
		t.Fatalf("%d bytes read whole, the header says %d", n, found.Size)
	}
}

// TestMemberList: a message names ten members at most.
func TestMemberList(t *testing.T) {
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("m%d", i))
	}
	if got, want := memberList(names), "m0, m1, m2, m3, m4, m5, m6, m7, m8, m9 and 2 more"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := memberList(names[:2]), "m0, m1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestDescriptor: the data descriptor's forms, told apart by the
// compressed size and by what follows them.
func TestDescriptor(t *testing.T) {
	le32 := func(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
	le64 := func(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
	const n, crc = 1000, 0xCAFEF00D
	local := []byte("PK\x03\x04")
	for _, c := range []struct {
		name string
		b    []byte
		want int64
	}{
		{"32-bit, signed", append(le32(le32(le32(le32(nil, descriptorSig), crc), n), 5000), local...), 16},
		{"32-bit, unsigned", append(le32(le32(le32(nil, crc), n), 5000), local...), 12},
		{"32-bit, at the archive's end", le32(le32(le32(nil, crc), n), 5000), 12},
		// A zip64 descriptor's compressed size has the same low 32 bits:
		// what follows tells them apart.
		{"64-bit, signed", append(le64(le64(le32(le32(nil, descriptorSig), crc), n), 5<<32), []byte("PK\x01\x02")...), 24},
		{"wrong size", append(le32(le32(le32(nil, crc), n+1), 5000), local...), 0},
		{"garbage after", append(le32(le32(le32(nil, crc), n), 5000), "abcdefgh"...), 0},
	} {
		l, got := descriptor(bytes.NewReader(c.b), 0, n)
		if l != c.want || l > 0 && got != crc {
			t.Errorf("%s: length %d, CRC %08x; want %d, %08x", c.name, l, got, c.want, uint32(crc))
		}
	}
}

// TestFindSizeHint: the size an archive claims for its member is cut to
// what the archive's bytes could inflate to, whether the member is found
// through the directory or from its local header.
func TestFindSizeHint(t *testing.T) {
	data := []byte("a member of 28 bytes, stored")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "a.etl", Method: zip.Store, CRC32: crc32.ChecksumIEEE(data),
		CompressedSize64: uint64(len(data)), UncompressedSize64: 200 << 20})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	zw.Close()
	a := buf.Bytes()
	for _, cut := range []int{len(a), len(a) - 22} {
		f, err := Find(bytes.NewReader(a[:cut]), int64(cut), "t.zip", ".etl")
		if err != nil {
			t.Fatal(err)
		}
		if most := int64(cut) * maxRatio; f.Size > most || f.Size <= 0 {
			t.Errorf("cut at %d (salvaged %v): size hint %d, want at most %d", cut, f.Salvaged, f.Size, most)
		}
	}
	if got := sizeHint(1<<63, 1<<62); got != 1<<62 {
		t.Errorf("sizeHint overflows: %d", got)
	}
}

// TestFindDirectoryChecks reads members through the archive's directory
// whose data does not match it: every byte the data holds comes out (a
// reader of archive/zip handed out nothing of the read that took the data
// past its stated size, and damage that inflating absorbs often leaves
// the data longer), then an error that says what the archive says: a size
// or a CRC-32 that differ (zip.ErrFormat, zip.ErrChecksum), or
// io.ErrUnexpectedEOF for data shorter than the size, as archive/zip
// gives it. A CRC-32 of 0 in the directory is not checked, as there.
func TestFindDirectoryChecks(t *testing.T) {
	data := content(300_000, 5)
	for _, method := range []uint16{zip.Deflate, zip.Store} {
		for _, c := range []struct {
			name  string
			crc   uint32
			usize int
			is    error
			msg   string
		}{
			{"sound", crc32.ChecksumIEEE(data), len(data), io.EOF, ""},
			{"longer than stated", crc32.ChecksumIEEE(data), len(data) - 1000, zip.ErrFormat, "300000 bytes, the archive says 299000: zip: not a valid zip file"},
			{"shorter than stated", crc32.ChecksumIEEE(data), len(data) + 1, io.ErrUnexpectedEOF, "unexpected EOF"},
			{"checksum", crc32.ChecksumIEEE(data) ^ 1, len(data), zip.ErrChecksum, fmt.Sprintf("CRC-32 %08x, the archive says %08x: zip: checksum error", crc32.ChecksumIEEE(data), crc32.ChecksumIEEE(data)^1)},
			{"no checksum", 0, len(data), io.EOF, ""},
		} {
			a := tracetest.Zip(t, "a.nettrace", method, data, c.crc, uint64(c.usize))
			f, got, readErr, err := readFound(a, len(a), ".nettrace")
			name := fmt.Sprintf("%s, method %d", c.name, method)
			switch {
			case err != nil || f.Salvaged:
				t.Errorf("%s: %v (salvaged: %v)", name, err, f != nil && f.Salvaged)
			case !bytes.Equal(got, data):
				t.Errorf("%s: %d bytes came out, want all %d", name, len(got), len(data))
			case !errors.Is(readErr, c.is) || c.msg != "" && readErr.Error() != c.msg:
				t.Errorf("%s: ended with %v, want %v (%q)", name, readErr, c.is, c.msg)
			}
		}
	}
}

// TestFindReadsPastStoppedInflate damages a zipped trace's compressed
// data where the damage stops compress/flate: its member reads on from
// the next deflate block that decodes (package inflate), through the
// directory and from a local header alike, with every byte before the
// damage, and ends with an error that names the damage and breaks the
// archive's checks.
func TestFindReadsPastStoppedInflate(t *testing.T) {
	const path = "../../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	plain := tracetest.Bytes(t, path)
	zr, err := zip.NewReader(bytes.NewReader(whole), int64(len(whole)))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := zr.File[0].DataOffset()
	csize := int(zr.File[0].CompressedSize64)
	tested := 0
	for i := 1; i < 40 && tested < 3; i++ {
		at := int(data) + csize*i/40
		bad, stopped, ok := stoppingDamage(whole[:int(data)+csize], at, int(data))
		if !ok {
			continue
		}
		bad = append(bad, whole[int(data)+csize:]...)
		tested++
		for _, how := range []string{"directory", "local header"} {
			a := bad
			if how == "local header" {
				a = bad[:int(data)+csize+16] // the directory cut off
			}
			f, got, readErr, err := readFound(a, len(a), ".nettrace")
			what := fmt.Sprintf("damage at %d, %s", at, how)
			switch {
			case err != nil:
				t.Errorf("%s: %v", what, err)
			case f.Salvaged != (how == "local header"):
				t.Errorf("%s: salvaged %v", what, f.Salvaged)
			case len(got) <= len(stopped)+1<<20:
				t.Errorf("%s: %d bytes, compress/flate %d: did not read on", what, len(got), len(stopped))
			case !bytes.Equal(got[:len(stopped)/2], plain[:len(stopped)/2]):
				t.Errorf("%s: the bytes before the damage differ", what)
			case !strings.Contains(readErr.Error(), "the member's compressed data is damaged: the deflate block at byte ") ||
				!errors.Is(readErr, zip.ErrFormat) && !errors.Is(readErr, zip.ErrChecksum):
				t.Errorf("%s: ended with %v; want the damage, and the archive's checks broken", what, readErr)
			}
		}
	}
	if tested == 0 {
		t.Fatal("no damage stopped compress/flate")
	}
}

// stoppingDamage returns a copy of a with the four bytes at at set to
// 0xff, and what compress/flate inflates of the deflate stream that starts
// at from in it (and goes to a's end) before the damage stops it; ok is
// false where it does not stop it (it reads on past it, garbled, or the
// stream just ends early).
func stoppingDamage(a []byte, at, from int) (bad, stopped []byte, ok bool) {
	bad = bytes.Clone(a)
	copy(bad[at:], []byte{0xff, 0xff, 0xff, 0xff})
	stopped, err := io.ReadAll(flate.NewReader(bytes.NewReader(bad[from:])))
	return bad, stopped, err != nil && !errors.Is(err, io.ErrUnexpectedEOF)
}

// failingAt is an archive whose bytes from off on cannot be read.
type failingAt struct {
	ra  io.ReaderAt
	off int64
}

var errDisk = errors.New("disk error")

func (f failingAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.off {
		n, _ := f.ra.ReadAt(p[:max(0, f.off-off)], off)
		return n, errDisk
	}
	return f.ra.ReadAt(p, off)
}

// TestFindReadFailure: a member whose archive cannot be read part way
// ends with that error, not with damage: the reader that takes up past
// damage meets the same failure and finds no damage.
func TestFindReadFailure(t *testing.T) {
	trace := content(300_000, 9)
	a := tracetest.Zip(t, "a.nettrace", zip.Deflate, trace, crc32.ChecksumIEEE(trace), uint64(len(trace)))
	ra := failingAt{bytes.NewReader(a), int64(len(a)) / 2}
	// The directory is past the failure: the member is found from its
	// local header.
	f, err := Find(ra, int64(len(a)), "t.zip", ".nettrace")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if !errors.Is(err, errDisk) || strings.Contains(err.Error(), "damaged") || !bytes.Equal(got, trace[:len(got)]) {
		t.Errorf("%d bytes, then %v; want the bytes before the failure, then it", len(got), err)
	}
}
