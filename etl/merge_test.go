package etl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/tracetest"
)

// diagZip is a cut of a Visual Studio diagnostics session: four logs
// (a merged kernel log, the kernel session's, and two user sessions')
// written side by side by one collection (testdata/PROVENANCE.md).
const diagZip = "../testdata/traces/diaghub-dotnetcore3.1-win-x64-diagsession.cut.zip"

// diagLogs returns the file names and bytes of diagZip's logs, in its
// order.
func diagLogs(t testing.TB) (names []string, logs [][]byte) {
	t.Helper()
	names, logs = tracetest.Members(t, diagZip)
	for i := range names {
		names[i] = path.Base(names[i])
	}
	return names, logs
}

// mergeOf merges Readers of logs.
func mergeOf(t testing.TB, logs [][]byte) *Reader {
	t.Helper()
	var readers []*Reader
	for _, b := range logs {
		readers = append(readers, mustReader(t, b))
	}
	r, err := Merge(readers...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// logged is an event of a merged read with the log it came from.
type logged struct {
	log int
	ev
}

func readLogged(t testing.TB, r *Reader) ([]logged, error) {
	t.Helper()
	var out []logged
	for {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, logged{e.Log, copyEvent(e)})
	}
}

// TestMergeDiagSession: the four logs of a diagnostics session read as
// one hold every event of each, each log's in its own order, all of them
// in time order with ties in the order of the logs; every Time is
// reckoned from the earliest log's start.
func TestMergeDiagSession(t *testing.T) {
	names, logs := diagLogs(t)
	if len(logs) != 4 {
		t.Fatalf("%s holds %d logs, want 4", diagZip, len(logs))
	}
	var alone [][]ev
	for _, b := range logs {
		alone = append(alone, readAll(t, mustReader(t, b)))
	}
	r := mergeOf(t, logs)
	got, err := readLogged(t, r)
	if err != io.EOF {
		t.Fatalf("after %d events: %v", len(got), err)
	}
	per := make([][]ev, len(logs))
	from := map[int]bool{}
	switches := 0
	for i, e := range got {
		per[e.log] = append(per[e.log], e.ev)
		from[e.log] = true
		if i == 0 {
			continue
		}
		p := got[i-1]
		if e.TS < p.TS || e.TS == p.TS && e.log < p.log {
			t.Fatalf("event %d (log %d, time %d) comes after event %d (log %d, time %d)", i, e.log, e.TS, i-1, p.log, p.TS)
		}
		if e.log != p.log {
			switches++
		}
	}
	for i := range logs {
		if len(per[i]) != len(alone[i]) {
			t.Errorf("%s: %d events merged, %d alone", names[i], len(per[i]), len(alone[i]))
			continue
		}
		for j := range per[i] {
			if !equalEv(per[i][j], alone[i][j]) {
				t.Errorf("%s: event %d differs merged from alone", names[i], j)
				break
			}
		}
	}
	if len(from) != 4 || switches < 100 {
		t.Errorf("events came from %d logs, switching %d times; the logs interleave (4 logs, hundreds of switches)", len(from), switches)
	}

	// The header is the session's; the logs' own are in Logs.
	hs := r.Logs()
	if len(hs) != 4 {
		t.Fatalf("Logs: %d headers", len(hs))
	}
	h := r.Header()
	var buffers uint32
	for _, lh := range hs {
		buffers += lh.BuffersWritten
		if lh.StartTime.Before(h.StartTime) || lh.HeaderTimestamp < h.HeaderTimestamp || lh.EndTime.After(h.EndTime) {
			t.Errorf("a log starts %v (header event at %d), ends %v: the merged header says %v (%d) to %v", lh.StartTime, lh.HeaderTimestamp, lh.EndTime, h.StartTime, h.HeaderTimestamp, h.EndTime)
		}
	}
	if h.BuffersWritten != buffers || h.StartTime != hs[1].StartTime || h.HeaderTimestamp != hs[0].HeaderTimestamp {
		t.Errorf("merged header: %d buffers, start %v, header event %d; want %d, the kernel log's %v and the first log's %d",
			h.BuffersWritten, h.StartTime, h.HeaderTimestamp, buffers, hs[1].StartTime, hs[0].HeaderTimestamp)
	}
	if r.RelativeMSec(got[0].TS) != 0 || r.Order() != TimeOrder {
		t.Errorf("the first event is at %v ms, order %v", r.RelativeMSec(got[0].TS), r.Order())
	}
}

// equalEv compares two events' facts.
func equalEv(a, b ev) bool {
	return reflect.DeepEqual(a, b)
}

// TestMergeTime: an event's Time in a merged log counts from the merged
// header, as TraceEvent's do: the earliest start paired with the earliest
// header event.
func TestMergeTime(t *testing.T) {
	_, logs := diagLogs(t)
	r := mergeOf(t, logs)
	c := newClock(r.Header())
	n := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := c.time(e.Timestamp); !e.Time.Equal(want) {
			t.Fatalf("event %d of log %d: time %v, want %v", n, e.Log, e.Time, want)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no events")
	}
	// Alone, the user session's log reckons from its own start, which
	// its header states 4.8 µs off the kernel log's clock.
	u := mustReader(t, logs[3])
	e, err := u.Next()
	if err != nil {
		t.Fatal(err)
	}
	if d := e.Time.Sub(c.time(e.Timestamp)); d < 4*time.Microsecond || d > 6*time.Microsecond {
		t.Errorf("the user log's header event alone at %v, merged at %v: %v apart, want 4.8 µs", e.Time, c.time(e.Timestamp), d)
	}
}

// TestOpenMerges: Open reads a diagnostics session's archive, and a log
// with the logs written beside it, as one; NewReader on the file reads
// the file alone.
func TestOpenMerges(t *testing.T) {
	names, logs := diagLogs(t)
	r, err := Open(diagZip)
	if err != nil {
		t.Fatal(err)
	}
	fromZip, err := readLogged(t, r)
	if err != io.EOF {
		t.Fatal(err)
	}
	r.Close()

	dir := t.TempDir()
	for i, b := range logs {
		if err := os.WriteFile(filepath.Join(dir, names[i]), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Files that are not the logs' siblings are left alone.
	for _, other := range []string{"diaghub.etlx", "diaghub.kernel.1.etl.bak", "other.kernel.etl", "diaghub.rundown.etl"} {
		if err := os.WriteFile(filepath.Join(dir, other), []byte("not a log"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err = Open(filepath.Join(dir, "diaghub.etl"))
	if err != nil {
		t.Fatal(err)
	}
	fromDir, err := readLogged(t, r)
	if err != io.EOF {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if len(fromDir) != len(fromZip) || len(r.Logs()) != 4 {
		t.Fatalf("from the folder %d events of %d logs, from the archive %d", len(fromDir), len(r.Logs()), len(fromZip))
	}
	for i := range fromZip {
		if fromDir[i].log != fromZip[i].log || !equalEv(fromDir[i].ev, fromZip[i].ev) {
			t.Fatalf("event %d differs between the folder and the archive", i)
		}
	}

	// A log beside it that does not read stops the open, and says why it
	// was read.
	if err := os.WriteFile(filepath.Join(dir, "diaghub.clrRundown.etl"), []byte("not a log"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(filepath.Join(dir, "diaghub.etl"))
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "diaghub.clrRundown.etl")+": ") || !strings.HasSuffix(err.Error(), "(a log beside "+filepath.Join(dir, "diaghub.etl")+", which is read with it, as TraceEvent reads them)") {
		t.Errorf("a broken log beside: %v", err)
	}
	os.Remove(filepath.Join(dir, "diaghub.clrRundown.etl"))

	// Another log of the session has no siblings of its own.
	r, err = Open(filepath.Join(dir, "diaghub.user_paged.1.etl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Logs()); n != 1 {
		t.Errorf("diaghub.user_paged.1.etl opens %d logs, want 1", n)
	}
	r.Close()
}

func TestSiblings(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"X.etl", "X.kernel.etl", "x.Kernel.2.ETL", "X.clrRundown.etl", "X.user_paged.1.etl", "X.etlx", "X.kernel.etl.bak", "Y.kernel.etl", "X.rundown.etl", "X.clr"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "X.user.etl"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Siblings(filepath.Join(dir, "X.etl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	want := []string{"X.etl", "X.kernel.etl", "x.Kernel.2.ETL", "X.clrRundown.etl", "X.user_paged.1.etl"}
	if !slices.Equal(got, want) {
		t.Errorf("Siblings: %q, want %q", got, want)
	}
	for _, name := range []string{"X.etl.zip", filepath.Join(dir, "X.kernel.etl")} {
		if got, err := Siblings(name); err != nil || len(got) != 1 || got[0] != name {
			t.Errorf("Siblings(%s): %q, %v; want itself alone", name, got, err)
		}
	}
}

// TestMergeDamage: damage in one log loses only what it touched there;
// the other logs' events all come, and the final error names the log.
// Strict, the damage ends the merged log, named the same way.
func TestMergeDamage(t *testing.T) {
	names, logs := diagLogs(t)
	const hit = 3 // the user session's log
	bad := bytes.Clone(logs[hit])
	// Buffer 2's used size past the buffer: the buffer does not read.
	const bs = 65536
	binary.LittleEndian.PutUint32(bad[2*bs+4:], 1<<30)
	open := func(strict bool) *Reader {
		var readers []*Reader
		for i, b := range logs {
			if i == hit {
				b = bad
			}
			l := mustReader(t, b)
			l.SetName(names[i])
			readers = append(readers, l)
		}
		r, err := Merge(readers...)
		if err != nil {
			t.Fatal(err)
		}
		r.SetStrict(strict)
		return r
	}
	alone := readAll(t, mustReader(t, logs[hit]))
	r := open(false)
	got, err := readLogged(t, r)
	var de *DamageError
	if !errors.As(err, &de) || len(de.Damage) != 1 {
		t.Fatalf("final error %v, want a DamageError of one range", err)
	}
	d := de.Damage[0]
	if d.Log != hit || d.Buffer != 2 || d.Offset != 2*bs || d.Err.Log != names[hit] || !strings.Contains(err.Error(), "etl: damaged buffer skipped (65,536 bytes): "+names[hit]+": buffer 2 at offset 131072") {
		t.Errorf("damage %+v, error %q", d, err)
	}
	if ds := r.Damage(); len(ds) != 1 || ds[0].Log != hit {
		t.Errorf("Damage: %+v", ds)
	}
	n := make([]int, len(logs))
	for _, e := range got {
		n[e.log]++
	}
	lost := 0
	for _, e := range alone {
		if e.Buffer == 2 {
			lost++
		}
	}
	for i := range logs {
		want := len(readAll(t, mustReader(t, logs[i])))
		if i == hit {
			want -= lost
		}
		if n[i] != want {
			t.Errorf("%s: %d events, want %d", names[i], n[i], want)
		}
	}

	r = open(true)
	got, err = readLogged(t, r)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Log != names[hit] || fe.Buffer != 2 || !strings.HasPrefix(err.Error(), "etl: "+names[hit]+": buffer 2 at offset 131072") {
		t.Errorf("strict: %v after %d events, want the FormatError of %s's buffer 2", err, len(got), names[hit])
	}
	if _, again := r.Next(); again != err {
		t.Errorf("strict: the next call returns %v, want the same error", again)
	}
}

// TestMergeErrors: Merge says why logs cannot be merged.
func TestMergeErrors(t *testing.T) {
	_, logs := diagLogs(t)
	gc := gcETL(t)
	if _, err := Merge(); err == nil {
		t.Error("Merge(): no error")
	}
	read := mustReader(t, logs[0])
	read.Next()
	fileOrder := mustFileOrder(t, logs[1])
	fileOrder.SetName("k.etl")
	sys := bytes.Clone(gc)
	for _, c := range []struct {
		logs []*Reader
		want string
	}{
		{[]*Reader{mustReader(t, logs[1]), read}, "etl: Merge: log 1 has been read from already"},
		{[]*Reader{mustReader(t, logs[0]), fileOrder}, "etl: Merge: k.etl is read in FileOrder; merging needs each log in TimeOrder (an io.ReaderAt)"},
		{[]*Reader{mustReader(t, logs[0]), systemClock(t, sys)}, "etl: Merge: log 0 and log 1 are on different clocks (QPC at 10000000 Hz, system time): their timestamps do not compare"},
	} {
		if _, err := Merge(c.logs...); err == nil || err.Error() != c.want {
			t.Errorf("Merge: %v, want %q", err, c.want)
		}
	}
	m, err := Merge(mustReader(t, logs[0]), mustReader(t, logs[1]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(m, mustReader(t, logs[2])); err == nil || !strings.Contains(err.Error(), "is a merge of logs itself") {
		t.Errorf("Merge of a merge: %v", err)
	}
}

// systemClock returns a Reader of log b with its header's clock type
// changed to system time.
func systemClock(t *testing.T, b []byte) *Reader {
	t.Helper()
	r := mustReader(t, b)
	r.hdr.ClockType = ClockSystemTime
	return r
}

// TestMergeAllocs: merging adds no allocation per event.
func TestMergeAllocs(t *testing.T) {
	_, logs := diagLogs(t)
	r := mergeOf(t, logs)
	for range 100 { // past the first buffers' allocations
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if a := testing.AllocsPerRun(500, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}); a > 0.05 {
		t.Errorf("%.2f allocations per merged event, want 0 but a buffer's", a)
	}
}

// BenchmarkMerge reads the diagnostics session's four logs merged, and
// (sub-benchmark alone) each log by itself: merging's cost is the
// difference.
func BenchmarkMerge(b *testing.B) {
	_, logs := diagLogs(b)
	read := func(r *Reader) int {
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				return n
			}
			n++
		}
	}
	b.Run("merged", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			read(mergeOf(b, logs))
		}
	})
	b.Run("alone", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, l := range logs {
				read(mustReader(b, l))
			}
		}
	})
}
