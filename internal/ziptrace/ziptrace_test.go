package ziptrace

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func zipOf(t *testing.T, names ...string) *zip.Reader {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(n))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

func TestMembers(t *testing.T) {
	zfs, err := Members(zipOf(t, "gcevents/", "gcevents/LogFile.txt", "gcevents/PerfViewData.ETL"), "a.zip", ".etl")
	if err != nil || len(zfs) != 1 || zfs[0].Name != "gcevents/PerfViewData.ETL" {
		t.Fatalf("Members: %v, %v", zfs, err)
	}
	// Several logs (a diagnostics session's) are all found, in the
	// archive's order.
	zfs, err = Members(zipOf(t, "s/", "s/a.etl", "s/a.kernel.1.etl", "s/readme.txt", "s/a.user_paged.1.ETL"), "a.zip", ".nettrace", ".etl")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, zf := range zfs {
		got = append(got, zf.Name)
	}
	if want := []string{"s/a.etl", "s/a.kernel.1.etl", "s/a.user_paged.1.ETL"}; !slices.Equal(got, want) {
		t.Errorf("Members of a diagnostics session: %v, want %v", got, want)
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"LogFile.txt"}, "a.zip: zip archive holds 0 trace files (.nettrace, .etl), want exactly one (members: LogFile.txt)"},
		{[]string{"x.etl", "y.nettrace"}, "a.zip: zip archive holds 2 trace files (.nettrace, .etl), want exactly one (members: x.etl, y.nettrace)"},
		{[]string{"x.nettrace", "y.nettrace"}, "a.zip: zip archive holds 2 trace files (.nettrace, .etl), want exactly one (members: x.nettrace, y.nettrace)"},
	} {
		if _, err := Members(zipOf(t, c.names...), "a.zip", ".nettrace", ".etl"); err == nil || err.Error() != c.want {
			t.Errorf("Members(%v): %v, want %q", c.names, err, c.want)
		}
	}
}

// onlyReader hides everything but Read.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestSpool(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1000) // 10,000 bytes
	for _, c := range []struct {
		name   string
		memMax int64
		hint   int64
		inFile bool
	}{
		{"memory", 1 << 20, -1, false},
		{"memory, exact claim", 1 << 20, 10000, false},
		{"memory, false small claim", 1 << 20, 10, false},
		{"file, false huge claim", 1 << 20, 1 << 40, true},
		{"file", 4096, -1, true},
		{"file at the limit", 9999, -1, true},
		{"memory at the limit", 10000, -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sp, err := Spool(onlyReader{bytes.NewReader(data)}, c.hint, c.memMax, dir, "in")
			if err != nil {
				t.Fatal(err)
			}
			if sp.Size != int64(len(data)) {
				t.Fatalf("size %d", sp.Size)
			}
			got := make([]byte, len(data))
			if _, err := sp.ReadAt(got, 0); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("ReadAt: %v", err)
			}
			if _, isFile := sp.ReaderAt.(*os.File); isFile != c.inFile {
				t.Errorf("spooled to a file: %v, want %v", isFile, c.inFile)
			}
			// The file's name is gone at once (but on Windows): a
			// process that ends without Close leaves nothing.
			if files, _ := os.ReadDir(dir); len(files) != 0 && runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
				t.Errorf("%d files in the temporary folder while the copy is open, want none", len(files))
			}
			if err := sp.Close(); err != nil {
				t.Fatal(err)
			}
			if files, _ := os.ReadDir(dir); len(files) != 0 {
				t.Errorf("Close left %d files", len(files))
			}
		})
	}
	// A read error names the input.
	_, err := Spool(io.MultiReader(bytes.NewReader(data), errReader{}), -1, 1<<20, t.TempDir(), "pipe")
	if err == nil || !strings.HasPrefix(err.Error(), "pipe: ") {
		t.Errorf("read error: %v", err)
	}
}

// TestSpoolMemoryBound: a long stream of unknown size costs at most the
// buffer's doublings up to memMax+1 bytes (under 2×memMax in all), never a
// buffer past memMax, before it goes to a file.
func TestSpoolMemoryBound(t *testing.T) {
	const memMax = 4 << 20
	src := io.LimitReader(zeros{}, 5*memMax)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sp, err := Spool(src, -1, memMax, t.TempDir(), "in")
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if sp.Size != 5*memMax {
		t.Fatalf("size %d", sp.Size)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*memMax+(1<<20) {
		t.Errorf("spooling allocated %d bytes, want under %d", got, 2*memMax+(1<<20))
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrClosedPipe }
