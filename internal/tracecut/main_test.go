package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/profile"
	"github.com/clrgo/clrevents/trace"
)

// The cut shipped in testdata, and the command that made it (also in
// testdata/PROVENANCE.md).
const (
	shippedCut = "../../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip"
	sourceLog  = "../../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip"
	cutBuffers = "0,14-16,121-129,131,146,173,175,178,191,195,198,212,214,244,245,247,248,251,253,259,267,272,273,275"
)

// TestShippedCut remakes the shipped cut from the shared trace and wants
// the same bytes: the provenance's command is what made the file.
func TestShippedCut(t *testing.T) { checkRemade(t, shippedCut, sourceLog, "-buffers", cutBuffers) }

// checkRemade runs tracecut with flags on source and wants the bytes of
// the shipped file.
func checkRemade(t *testing.T, shipped, source string, flags ...string) {
	t.Helper()
	if _, err := os.Stat(source); err != nil {
		t.Skipf("the shared trace is not beside the checkout (%v): the cut cannot be remade", err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(shipped))
	if err := run(append(flags, "-o", out, source)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("remade cut differs from %s (%d bytes, want %d): update the file or PROVENANCE.md's command", shipped, len(got), len(want))
	}
}

// TestCutReads reads the shipped cut to its end in both orders: no error
// (in particular no "the log header says N buffers were written"), and
// the buffers in the order of the list.
func TestCutReads(t *testing.T) {
	keep, err := parseList(cutBuffers)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := readLog(shippedCut)
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range []etl.Order{etl.TimeOrder, etl.FileOrder} {
		var r *etl.Reader
		if order == etl.TimeOrder {
			r, err = etl.NewReaderAt(bytes.NewReader(whole), int64(len(whole)))
		} else {
			r, err = etl.NewFileOrderReader(bytes.NewReader(whole))
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := int(r.Header().BuffersWritten); got != len(keep) {
			t.Errorf("BuffersWritten = %d, want %d", got, len(keep))
		}
		n, maxBuf := 0, 0
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("order %v, after %d events: %v", order, n, err)
			}
			n++
			maxBuf = max(maxBuf, e.Buffer)
		}
		r.Close()
		if n < 10000 || maxBuf != len(keep)-1 {
			t.Errorf("order %v: %d events in buffers up to %d, want over 10,000 in %d buffers", order, n, maxBuf, len(keep))
		}
	}
}

// TestCutErrors: a log whose buffers do not add up is an error naming the
// buffer and its offset.
func TestCutErrors(t *testing.T) {
	whole, err := readLog(shippedCut)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Cut(whole, []int{0, 999}); err == nil || !strings.Contains(err.Error(), "buffer 999 asked for") {
		t.Errorf("a buffer past the end: %v", err)
	}
	bad := bytes.Clone(whole)
	second := int(binary.LittleEndian.Uint32(bad))
	binary.LittleEndian.PutUint32(bad[second:], 1<<30)
	if _, err := Cut(bad, []int{0}); err == nil || !strings.Contains(err.Error(), "buffer 1 at offset") {
		t.Errorf("a buffer size past the end: %v", err)
	}
	if _, err := Cut(whole[:second+10], []int{0}); err == nil || !strings.Contains(err.Error(), "too few for a buffer header") {
		t.Errorf("a cut buffer header: %v", err)
	}
	// Only the first buffer: BuffersWritten 1, and it reads.
	one, err := Cut(whole, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != second {
		t.Errorf("cut to buffer 0: %d bytes, want %d", len(one), second)
	}
	r, err := etl.NewReader(bytes.NewReader(one))
	if err != nil {
		t.Fatal(err)
	}
	if r.Header().BuffersWritten != 1 {
		t.Errorf("BuffersWritten = %d, want 1", r.Header().BuffersWritten)
	}
	for {
		if _, err := r.Next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("reading the one-buffer log: %v", err)
			}
			break
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := parseList("5, 0,2-4,3")
	if err != nil || !slices.Equal(got, []int{0, 2, 3, 4, 5}) {
		t.Errorf("parseList = %v, %v", got, err)
	}
	for _, bad := range []string{"", "a", "4-2", "-1", "1-"} {
		if _, err := parseList(bad); err == nil {
			t.Errorf("parseList(%q): no error", bad)
		}
	}
}

// TestCutProfiles: the exception and contention profiles of the shipped
// cut equal the whole trace's, frame for frame: the cut kept every event
// they use (the events, their stack walks, the code and module events
// that name the frames, the images and the process).
func TestCutProfiles(t *testing.T) {
	if _, err := os.Stat(sourceLog); err != nil {
		t.Skipf("the shared trace is not beside the checkout (%v): nothing to compare the cut with", err)
	}
	for _, kind := range []profile.Kind{profile.Exception, profile.Contention} {
		cut, whole := folded(t, shippedCut, kind), folded(t, sourceLog, kind)
		if cut != whole {
			t.Errorf("%v profile of the cut differs from the whole trace's:\n%s\nwant:\n%s", kind, cut, whole)
		}
		if !strings.Contains(cut, "PerfView!") {
			t.Errorf("%v profile of the cut has no resolved PerfView frame:\n%s", kind, cut)
		}
	}
}

func folded(t *testing.T, name string, kind profile.Kind) string {
	t.Helper()
	r, err := trace.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := profile.Build(r, profile.Options{Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := p.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The .NET Core 2.0 cut shipped in testdata, and what made it.
const (
	shippedNetPerf = "../../testdata/traces/eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip"
	sourceNetPerf  = "../../../shared/fixtures/traces/perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip"
	netPerfRecords = "1300"
)

// TestShippedNetPerfCut remakes the shipped .netperf cut from the shared
// trace and wants the same bytes.
func TestShippedNetPerfCut(t *testing.T) {
	checkRemade(t, shippedNetPerf, sourceNetPerf, "-records", netPerfRecords)
}

// TestNetPerfCutReads reads the shipped .netperf cut whole (no damage,
// the trailer found) through package trace: 1,285 events (the other 15
// records are metadata), each with its metadata, and cutting it again to
// fewer records gives its prefix and a trailer at the new end.
func TestNetPerfCutReads(t *testing.T) {
	whole, err := readMember(shippedNetPerf, ".netperf")
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(whole), trace.WithOrder(trace.FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	n, last := 0, int64(0)
	for {
		e, err := r.Next()
		if err != nil {
			if err != io.EOF {
				t.Fatalf("after %d events: %v", n, err)
			}
			break
		}
		if e.Provider() == "" {
			t.Errorf("event at %d: no provider", e.Offset())
		}
		n, last = n+1, e.Offset()
	}
	if n != 1285 {
		t.Errorf("%d events, want 1285", n)
	}
	// Cut again, to fewer records: the same bytes up to the new trailer.
	short, err := CutNetPerf(whole, 40)
	if err != nil {
		t.Fatal(err)
	}
	end := len(short) - 17
	if !bytes.Equal(short[:end], whole[:end]) || int64(end) >= last {
		t.Errorf("the 40-record cut is not a prefix of the 1300-record one (%d bytes)", end)
	}
	if got := binary.LittleEndian.Uint32(short[end+5:]); got != uint32(end) {
		t.Errorf("the trailer's first offset is %d, want %d (where it is)", got, end)
	}
	for _, c := range []struct {
		n    int
		want string
	}{
		{5000, "the trace holds 1300 records, 5000 asked for"},
	} {
		if _, err := CutNetPerf(whole, c.n); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CutNetPerf(%d): %v, want %q", c.n, err, c.want)
		}
	}
	if _, err := CutNetPerf(whole[:300], 1); err == nil {
		t.Error("a trace cut inside its first records: no error")
	}
	// A trace cut inside its last record errs; cut inside its trailer,
	// it still holds the records. None panics.
	for n := len(whole) - 17 - 40; n <= len(whole); n++ {
		if _, err := CutNetPerf(whole[:n], 1300); (err == nil) != (n >= len(whole)-17) {
			t.Errorf("1300 records of the trace cut to %d bytes (the trailer at %d): %v", n, len(whole)-17, err)
		}
	}
}

// TestPack: packing the shipped diagnostics session's logs, taken out of
// its archive, under its folder remakes the archive byte for byte (the
// provenance's last command); a pack without files, or to a name that is
// not a zip, is refused.
func TestPack(t *testing.T) {
	const shipped = "../../testdata/traces/diaghub-dotnetcore3.1-win-x64-diagsession.cut.zip"
	const folder = "diaghub-dotnetcore3.1-win-x64-diagsession"
	want, err := os.ReadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	names, logs := tracetest.Members(t, shipped)
	for i, b := range logs {
		if path.Dir(names[i]) != folder {
			t.Fatalf("member %s is not in %s/", names[i], folder)
		}
		name := filepath.Join(dir, path.Base(names[i]))
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	out := filepath.Join(dir, "out.zip")
	if err := run(append([]string{"-pack", folder, "-o", out}, files...)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("packed %d bytes, the shipped archive is %d, or they differ", len(got), len(want))
	}
	for _, args := range [][]string{{"-pack", folder, "-o", out}, {"-pack", folder, "-o", filepath.Join(dir, "out.etl"), files[0]}} {
		if err := run(args); err == nil || !strings.Contains(err.Error(), "usage: tracecut -pack") {
			t.Errorf("tracecut %v: %v, want the usage", args, err)
		}
	}
}
