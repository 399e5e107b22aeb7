package trace

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestComplete checks which inputs NewReader takes for all there is
// (read as Open reads a file) and which for streams that may be live.
func TestComplete(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.nettrace")
	if err := os.WriteFile(file, []byte("Nettrace"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	ir, iw := io.Pipe()
	defer iw.Close()
	for _, c := range []struct {
		name string
		src  io.Reader
		want bool
	}{
		{"bytes.Reader", bytes.NewReader(nil), true},
		{"strings.Reader", strings.NewReader(""), true},
		{"regular file", f, true},
		{"os.Pipe", pr, false},
		{"io.Pipe", ir, false},
		{"bufio.Reader over bytes", bufio.NewReader(bytes.NewReader(nil)), false},
	} {
		if got := complete(c.src); got != c.want {
			t.Errorf("%s: complete %v, want %v", c.name, got, c.want)
		}
	}
}

// TestNewReaderCompleteSameOrder reads the .NET Core 3.0 trace in time
// order from memory (a stretch between sequence points at a time), from
// a pipe (each event as soon as the IsSorted marks allow) and with Open:
// the same events in the same order.
func TestNewReaderCompleteSameOrder(t *testing.T) {
	zipped, err := os.ReadFile("../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	if err != nil {
		t.Fatal(err)
	}
	data := unzipOne(t, zipped)
	type ev struct {
		TS     int64
		Thread int64
		ID     uint16
		Offset int64
	}
	read := func(r *Reader, err error) []ev {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []ev
		for {
			e, err := r.Next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ev{e.Timestamp(), e.ThreadID(), e.ID(), e.Offset()})
		}
	}
	mem := read(NewReader(bytes.NewReader(data), WithOrder(TimeOrder)))
	pr, pw := io.Pipe()
	go func() { pw.Write(data); pw.Close() }()
	piped := read(NewReader(pr, WithOrder(TimeOrder)))
	file := filepath.Join(t.TempDir(), "t.nettrace")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	opened := read(Open(file, WithOrder(TimeOrder)))
	if len(mem) < 100000 {
		t.Fatalf("%d events from memory, want the trace's 105,540", len(mem))
	}
	if d := cmp.Diff(mem, piped); d != "" {
		t.Errorf("from memory and from a pipe (-memory +pipe):\n%s", d)
	}
	if d := cmp.Diff(mem, opened); d != "" {
		t.Errorf("from memory and with Open (-memory +Open):\n%s", d)
	}
}
