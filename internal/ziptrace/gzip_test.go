package ziptrace

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"testing"

	kflate "github.com/klauspost/compress/flate"

	"github.com/clrgo/clrevents/internal/tracetest"
)

// gz compresses data as one gzip member, with the header h.
func gz(t testing.TB, h gzip.Header, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Header = h
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readGzip finds the content of the gzip file a, named name, and reads
// it, with the inflater inflate (compress/flate's when nil).
func readGzip(t *testing.T, a []byte, name string, inflate func(io.Reader) io.ReadCloser) (*Found, []byte, error) {
	t.Helper()
	f, err := FindInflate(bytes.NewReader(a), int64(len(a)), name, inflate, ".nettrace")
	if err != nil {
		t.Fatalf("FindInflate: %v", err)
	}
	if !f.Gzip || f.Salvaged {
		t.Fatalf("Gzip %v, Salvaged %v", f.Gzip, f.Salvaged)
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	return f, got, err
}

var inflaters = []struct {
	name string
	new  func(io.Reader) io.ReadCloser
}{{"compress/flate", nil}, {"klauspost", kflate.NewReader}}

// TestGzip: a gzip file's content comes out whole with either inflater,
// named by the header's file name or the file's, and with the size its
// trailer states as a hint.
func TestGzip(t *testing.T) {
	data := content(300_000, 3)
	for _, in := range inflaters {
		for _, c := range []struct {
			h        gzip.Header
			file     string
			wantName string
		}{
			{gzip.Header{Name: "a.nettrace"}, "/x/b.nettrace.gz", "a.nettrace"},
			{gzip.Header{}, "/x/b.nettrace.GZ", "b.nettrace"},
			{gzip.Header{}, "input", ""},
			{gzip.Header{Name: "caf\u00e9.etl", Comment: "a comment", Extra: []byte("BC\x02\x00ab")}, "c.gz", "caf\u00e9.etl"},
		} {
			a := gz(t, c.h, data)
			f, got, err := readGzip(t, a, c.file, in.new)
			what := fmt.Sprintf("%s, %s %+v", in.name, c.file, c.h)
			switch {
			case err != nil:
				t.Errorf("%s: %v", what, err)
			case !bytes.Equal(got, data):
				t.Errorf("%s: %d bytes differ from the %d written", what, len(got), len(data))
			case f.Name != c.wantName:
				t.Errorf("%s: name %q, want %q", what, f.Name, c.wantName)
			case f.Size != int64(len(data)):
				t.Errorf("%s: size hint %d, want %d", what, f.Size, len(data))
			}
		}
	}
}

// TestGzipHeaderChecksum: a header's optional CRC-16 is checked.
func TestGzipHeaderChecksum(t *testing.T) {
	data := content(1000, 4)
	raw := tracetest.Deflate(t, data)
	head := []byte{0x1f, 0x8b, 8, gzipHCRC | gzipName, 0, 0, 0, 0, 0, 255}
	head = append(head, "t.nettrace\x00"...)
	sum := crc32.ChecksumIEEE(head)
	trailer := binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(data))
	trailer = binary.LittleEndian.AppendUint32(trailer, uint32(len(data)))
	for _, c := range []struct {
		crc  uint16
		want error
	}{{uint16(sum), nil}, {uint16(sum) ^ 1, gzip.ErrHeader}} {
		a := binary.LittleEndian.AppendUint16(bytes.Clone(head), c.crc)
		a = append(append(a, raw...), trailer...)
		f, err := Find(bytes.NewReader(a), int64(len(a)), "t.gz")
		if c.want != nil {
			if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), "t.gz: gzip header at offset 0: its checksum is ") {
				t.Errorf("CRC-16 %04x: %v, want %v", c.crc, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("CRC-16 %04x: %v", c.crc, err)
		}
		rc, _ := f.Open()
		got, err := io.ReadAll(rc)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("CRC-16 %04x: %d bytes, %v", c.crc, len(got), err)
		}
	}
}

// TestGzipMembers: members one after the other (as pigz -i, bgzip or cat
// of gzip files write them) read as one content; zero bytes after the
// last are padding; other bytes are an error after the content.
func TestGzipMembers(t *testing.T) {
	var a, want []byte
	for i := range 5 {
		part := content(40_000+i*1000, uint64(10+i))
		want = append(want, part...)
		a = append(a, gz(t, gzip.Header{}, part)...)
	}
	for _, in := range inflaters {
		if _, got, err := readGzip(t, a, "m.gz", in.new); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes of %d, %v", in.name, len(got), len(want), err)
		}
		padded := append(bytes.Clone(a), make([]byte, 5000)...)
		if _, got, err := readGzip(t, padded, "m.gz", in.new); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s, padded: %d bytes of %d, %v", in.name, len(got), len(want), err)
		}
		garbage := append(bytes.Clone(a), "not gzip"...)
		_, got, err := readGzip(t, garbage, "m.gz", in.new)
		if !bytes.Equal(got, want) || !errors.Is(err, gzip.ErrHeader) ||
			!strings.Contains(err.Error(), fmt.Sprintf("the 8 bytes after the gzip member that ends at offset %d are not another member", len(a))) {
			t.Errorf("%s, trailing garbage: %d bytes of %d, %v", in.name, len(got), len(want), err)
		}
	}
}

// TestGzipChecks: a trailer that does not agree with what was read ends
// the content with gzip.ErrChecksum, after all of it; an input cut short
// ends with io.ErrUnexpectedEOF after what is there.
func TestGzipChecks(t *testing.T) {
	data := content(200_000, 5)
	a := gz(t, gzip.Header{Name: "t.nettrace"}, data)
	for _, c := range []struct {
		name   string
		at     int // the byte of the trailer changed
		substr string
	}{{"CRC-32", len(a) - 8, "CRC-32 "}, {"size", len(a) - 4, "200000 bytes, the gzip trailer at offset "}} {
		bad := bytes.Clone(a)
		bad[c.at] ^= 0x40
		for _, in := range inflaters {
			_, got, err := readGzip(t, bad, "t.gz", in.new)
			if !bytes.Equal(got, data) || !errors.Is(err, gzip.ErrChecksum) || !strings.Contains(err.Error(), c.substr) {
				t.Errorf("%s, %s: %d bytes, %v", c.name, in.name, len(got), err)
			}
		}
	}
	for _, cut := range []int{len(a) - 3, len(a) - 8, len(a) / 2, 30} {
		for _, in := range inflaters {
			_, got, err := readGzip(t, a[:cut], "t.gz", in.new)
			if !errors.Is(err, io.ErrUnexpectedEOF) || !bytes.Equal(got, data[:len(got)]) || cut > len(a)-8 && len(got) != len(data) {
				t.Errorf("cut at %d of %d, %s: %d bytes, %v", cut, len(a), in.name, len(got), err)
			}
		}
	}
	for _, cut := range []int{0, 2, 5, 12} {
		b := a[:cut]
		_, err := Find(bytes.NewReader(b), int64(len(b)), "t.gz")
		if cut >= 3 && (err == nil || !strings.HasPrefix(err.Error(), "t.gz: gzip header at offset 0: the input ends inside its ")) {
			t.Errorf("header cut at %d: %v", cut, err)
		}
	}
}

// TestGzipBadHeader: headers a decoder must refuse.
func TestGzipBadHeader(t *testing.T) {
	a := gz(t, gzip.Header{}, content(1000, 6))
	bad := bytes.Clone(a)
	bad[3] |= 0x20
	_, err := Find(bytes.NewReader(bad), int64(len(bad)), "t.gz")
	if !errors.Is(err, gzip.ErrHeader) || !strings.Contains(err.Error(), "reserved flag bits 0x20 are set") {
		t.Errorf("reserved flag: %v", err)
	}
}

// TestGzipReadsPastStoppedInflate: damage that stops inflating is read
// past from the next deflate block that decodes, as in a zip member, and
// the content ends with the damage named.
func TestGzipReadsPastStoppedInflate(t *testing.T) {
	plain := tracetest.Bytes(t, "../../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	a := gz(t, gzip.Header{Name: "t.nettrace"}, plain)
	tested := 0
	for i := 1; i < 40 && tested < 3; i++ {
		at := 30 + (len(a)-40)*i/40
		bad, stopped, ok := stoppingDamage(a, at, 21)
		if !ok {
			continue
		}
		tested++
		for _, in := range inflaters {
			_, got, err := readGzip(t, bad, "t.gz", in.new)
			what := fmt.Sprintf("damage at %d, %s", at, in.name)
			switch {
			case len(got) <= len(stopped)+1<<20:
				t.Errorf("%s: %d bytes, compress/flate %d: did not read on", what, len(got), len(stopped))
			case !bytes.Equal(got[:len(stopped)/2], plain[:len(stopped)/2]):
				t.Errorf("%s: the bytes before the damage differ", what)
			case !namesDamage(err):
				t.Errorf("%s: ended with %v; want the damage", what, err)
			}
		}
	}
	if tested == 0 {
		t.Fatal("no damage stopped compress/flate")
	}
}

// TestGzipRealTrace: the repository's traces, gzipped, come out byte for
// byte (both inflaters stop where each member's stream ends, so that its
// trailer is found).
func TestGzipRealTrace(t *testing.T) {
	for _, path := range []string{
		"../../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip",
		"../../testdata/traces/gcevents.etl.zip",
	} {
		if _, err := os.Stat(path); err != nil {
			t.Fatal(err)
		}
		plain := tracetest.Bytes(t, path)
		for _, level := range []int{gzip.BestSpeed, gzip.BestCompression} {
			var buf bytes.Buffer
			w, _ := gzip.NewWriterLevel(&buf, level)
			w.Write(plain)
			w.Close()
			for _, in := range inflaters {
				if _, got, err := readGzip(t, buf.Bytes(), "t.gz", in.new); err != nil || !bytes.Equal(got, plain) {
					t.Errorf("%s, level %d, %s: %d bytes of %d, %v", path, level, in.name, len(got), len(plain), err)
				}
			}
		}
	}
}

// TestGzipMembersAfterDamage: damage that stops inflating one member of
// several loses only what that member's recovery loses: the members after
// it come out whole, and the content ends with the damage named.
func TestGzipMembersAfterDamage(t *testing.T) {
	plain := tracetest.Bytes(t, "../../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	const parts = 5
	var a []byte
	var starts []int // where each member begins
	for i := range parts {
		starts = append(starts, len(a))
		a = append(a, gz(t, gzip.Header{}, plain[len(plain)*i/parts:len(plain)*(i+1)/parts])...)
	}
	tail := plain[len(plain)*2/parts:] // the content of the members after the second
	tested := 0
	for i := 1; i < 20 && tested < 3; i++ {
		at := starts[1] + 20 + (starts[2]-starts[1]-40)*i/20
		bad, _, ok := stoppingDamage(a, at, starts[1]+10)
		if !ok {
			continue
		}
		tested++
		for _, in := range inflaters {
			_, got, err := readGzip(t, bad, "t.gz", in.new)
			what := fmt.Sprintf("damage at %d, %s", at, in.name)
			switch {
			case !bytes.HasPrefix(got, plain[:len(plain)/parts]):
				t.Errorf("%s: the first member's content differs", what)
			case !bytes.HasSuffix(got, tail):
				t.Errorf("%s: %d bytes, the last %d not the members' after the damaged one", what, len(got), len(tail))
			case !namesDamage(err):
				t.Errorf("%s: ended with %v; want the damage", what, err)
			}
		}
	}
	if tested == 0 {
		t.Fatal("no damage stopped compress/flate")
	}
}

// namesDamage reports whether err ends a gzip file's content read past
// damage: it names the damaged deflate block and breaks the trailer's
// check.
func namesDamage(err error) bool {
	return err != nil && strings.Contains(err.Error(), "the member's compressed data is damaged: the deflate block at byte ") &&
		errors.Is(err, gzip.ErrChecksum)
}
