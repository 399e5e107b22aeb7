package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/nettrace"
)

// gzipOf compresses b as gzip does, in parts members (one, as gzip(1)
// writes a file; several, as pigz -i, bgzip or cat of gzip files do),
// the first header storing name.
func gzipOf(t testing.TB, b []byte, name string, parts int) []byte {
	t.Helper()
	var buf bytes.Buffer
	for i := range parts {
		w := gzip.NewWriter(&buf)
		if i == 0 {
			w.Name = name
		}
		w.Write(b[len(b)*i/parts : len(b)*(i+1)/parts])
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// gzipCases are the traces of the gzip tests: an EventPipe trace and an
// ETL log, as the zip holding each gives them.
var gzipCases = []struct {
	path   string
	member string
	cut    error // what the end of a trace cut short wraps
	prefix bool  // file order is the order of the bytes (not ETL's, where a stack walk follows its event)
}{
	{"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", "t.nettrace", io.ErrUnexpectedEOF, true},
	{"../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", "t.etl", etl.ErrTruncated, false},
}

// TestGzip: a gzipped trace, of one member or several, through a file or
// a pipe, in either order, gives the events its zip gives; the format
// readers' own Open functions read it too.
func TestGzip(t *testing.T) {
	for _, c := range gzipCases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			plain := tracetest.Bytes(t, c.path)
			for _, order := range []Order{FileOrder, TimeOrder} {
				want := openAll(t, c.path, WithOrder(order))
				for _, parts := range []int{1, 3} {
					gz := gzipOf(t, plain, c.member, parts)
					p := filepath.Join(t.TempDir(), "x.gz")
					if err := os.WriteFile(p, gz, 0o644); err != nil {
						t.Fatal(err)
					}
					for _, how := range []string{"file", "pipe"} {
						var r *Reader
						var err error
						if how == "file" {
							r, err = Open(p, WithOrder(order))
						} else {
							r, err = NewReader(onlyReader{bytes.NewReader(gz)}, WithOrder(order))
						}
						if err != nil {
							t.Fatalf("%s, %d members, %v: %v", how, parts, order, err)
						}
						got := readAll(t, r)
						r.Close()
						if !slices.Equal(got, want) {
							t.Errorf("%s, %d members, %v: %d events differ from the zip's %d", how, parts, order, len(got), len(want))
						}
					}
				}
			}
			p := filepath.Join(t.TempDir(), "x.gz")
			if err := os.WriteFile(p, gzipOf(t, plain, c.member, 1), 0o644); err != nil {
				t.Fatal(err)
			}
			var n int
			var end error
			if c.prefix {
				nr, err := nettrace.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				n, end = tracetest.Drain(nr.Next)
				nr.Close()
			} else {
				er, err := etl.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				n, end = tracetest.Drain(er.Next)
				er.Close()
			}
			if want := len(openAll(t, c.path, WithOrder(FileOrder))); end != io.EOF || n == 0 || c.prefix && n != want {
				t.Errorf("the format reader's Open: %d events (the front door %d), then %v", n, want, end)
			}
		})
	}
}

// TestGzipCut: a gzipped trace cut short (a download or copy that
// stopped) gives its events before the cut and ends as a trace cut short;
// a trailer that contradicts what was read ends the trace after all its
// events with gzip.ErrChecksum.
func TestGzipCut(t *testing.T) {
	for _, c := range gzipCases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			plain := tracetest.Bytes(t, c.path)
			whole := gzipOf(t, plain, c.member, 1)
			intact, end := readZipOffsets(t, whole, "file", FileOrder)
			if end != io.EOF || len(intact) == 0 {
				t.Fatalf("intact: %d events, then %v", len(intact), end)
			}
			prev := 0
			for _, cut := range []int{len(whole) * 3 / 10, len(whole) * 6 / 10, len(whole) * 95 / 100} {
				for _, how := range []string{"file", "pipe"} {
					got, end := readZipOffsets(t, whole[:cut], how, FileOrder)
					name := fmt.Sprintf("cut at %d of %d, %s", cut, len(whole), how)
					if c.prefix && (len(got) > len(intact) || !slices.Equal(got, intact[:len(got)])) {
						t.Fatalf("%s: the %d events read are not the intact trace's first", name, len(got))
					}
					if !c.prefix && !subset(got, intact) {
						t.Fatalf("%s: the %d events read are not all the intact trace's", name, len(got))
					}
					var de *DamageError
					if !errors.As(end, &de) || !errors.Is(end, c.cut) || len(got) <= prev || len(got) == len(intact) {
						t.Errorf("%s: %d of %d events (%d at the cut before), then %v; want more and a trace cut short", name, len(got), len(intact), prev, end)
					}
					if how == "pipe" {
						prev = len(got)
					}
				}
			}
			// The trailer cut, and changed: every event, then what the
			// trailer says. An EventPipe trace ends at its end tag, and
			// the rest of the file is read to check it; an ETL log is
			// copied out before it is read, its end being where the
			// data ends.
			trailerCut := whole[:len(whole)-3]
			badCRC := bytes.Clone(whole)
			badCRC[len(badCRC)-8] ^= 1
			for _, d := range []struct {
				name string
				data []byte
				want func(error) bool
			}{
				{"trailer cut", trailerCut, func(end error) bool {
					if c.prefix {
						return errors.Is(end, io.ErrUnexpectedEOF) && strings.Contains(end.Error(), "the gzip file is cut short: unexpected EOF")
					}
					return end == io.EOF
				}},
				{"checksum", badCRC, func(end error) bool { return errors.Is(end, gzip.ErrChecksum) }},
			} {
				for _, how := range []string{"file", "pipe"} {
					got, end := readZipOffsets(t, d.data, how, FileOrder)
					if len(got) != len(intact) || !d.want(end) {
						t.Errorf("%s, %s: %d of %d events, then %v", d.name, how, len(got), len(intact), end)
					}
				}
			}
		})
	}
}

// TestGzipErrors: what is not read says what it is.
func TestGzipErrors(t *testing.T) {
	zipped := mustRead(t, shipped[0])
	for _, c := range []struct {
		name string
		data []byte
		want string
		is   error
	}{
		{"garbage.gz", gzipOf(t, []byte(strings.Repeat("not a trace ", 20)), "", 1), "garbage.gz: garbage: " + ErrFormat.Error(), ErrFormat},
		{"zip.gz", gzipOf(t, zipped, "t.zip", 1), "zip.gz: t.zip: an archive inside an archive is not read", nil},
		{"t.nettrace.zst", append([]byte("\x28\xb5\x2f\xfd"), make([]byte, 100)...),
			"t.nettrace.zst: not a trace: the formats read are EventPipe .nettrace and .netperf, Windows ETW .etl, and a .zip or .gz holding one of them; it is compressed with zstd, which is not: decompress it first", ErrFormat},
		{"t.etl.xz", append([]byte("\xfd7zXZ\x00"), make([]byte, 100)...), "t.etl.xz: not a trace: the formats read are EventPipe .nettrace and .netperf, Windows ETW .etl, and a .zip or .gz holding one of them; it is compressed with xz, which is not: decompress it first", ErrFormat},
	} {
		p := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, fileErr := Open(p)
		_, pipeErr := NewReader(onlyReader{bytes.NewReader(c.data)}, WithName(c.name))
		for how, err := range map[string]error{"file": fileErr, "pipe": pipeErr} {
			msg := ""
			if err != nil {
				msg = strings.TrimPrefix(err.Error(), filepath.Dir(p)+string(filepath.Separator))
			}
			if msg != c.want || c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%s, %s: %v\nwant %s", c.name, how, err, c.want)
			}
		}
	}
}
