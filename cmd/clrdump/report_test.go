package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/jitstats"
	"github.com/clrgo/clrevents/trace"
)

const core30 = "../../../shared/fixtures/traces/perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"

// TestReportWriters: -report writes what the report packages' writers
// write for the format, to standard output or to -o, and -pid keeps one
// process. (The reports' contents are gcstats' and jitstats' tests.)
func TestReportWriters(t *testing.T) {
	path := gcETL
	if _, err := os.Stat(core30); err == nil {
		path = core30 // GCs and JIT compiles
	}
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := gcstats.Read(r)
	name := r.Name() // the zip and its member
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	r, err = trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	jit, _ := jitstats.Read(r) // gcevents.etl has none: only the usage is checked then
	r.Close()
	type writer = func(io.Writer, time.Time, []*gcstats.Process) error
	for _, c := range []struct {
		args  []string
		write func(w io.Writer) error
	}{
		{[]string{"-report", "gc"}, func(w io.Writer) error { return gcstats.WriteText(w, gc.Origin(), gc.Processes()) }},
		{[]string{"-report", "gc", "-format", "jsonl"}, func(w io.Writer) error { return gcstats.WriteJSONLines(w, gc.Origin(), gc.Processes()) }},
		{[]string{"-report", "gc", "-format", "csv"}, func(w io.Writer) error { return gcstats.WriteCSV(w, gc.Origin(), gc.Processes()) }},
		{[]string{"-report", "gc", "-format", "html"}, func(w io.Writer) error { return gcstats.WriteHTML(w, gc.Origin(), gc.Processes(), name) }},
		{[]string{"-report", "jit"}, func(w io.Writer) error { return jitstats.WriteText(w, jit.Origin(), jit.Processes(), 10) }},
		{[]string{"-report", "jit", "-n", "2"}, func(w io.Writer) error { return jitstats.WriteText(w, jit.Origin(), jit.Processes(), 2) }},
		{[]string{"-report", "jit", "-format", "jsonl"}, func(w io.Writer) error { return jitstats.WriteJSONLines(w, jit.Origin(), jit.Processes()) }},
		{[]string{"-report", "jit", "-format", "csv"}, func(w io.Writer) error { return jitstats.WriteCSV(w, jit.Origin(), jit.Processes()) }},
	} {
		if c.args[1] == "jit" && len(jit.Processes()) == 0 {
			continue
		}
		var want bytes.Buffer
		if err := c.write(&want); err != nil {
			t.Fatal(err)
		}
		out, errs, code := dump(t, append(c.args, path)...)
		if code != exitOK || errs != "" || out != want.String() {
			t.Errorf("%v: exit %d, stderr %q, output differs from the writer's (%d bytes, want %d)", c.args, code, errs, len(out), want.Len())
		}
		file := filepath.Join(t.TempDir(), "report")
		out, _, code = dump(t, append(c.args, "-o", file, path)...)
		if got, err := os.ReadFile(file); code != exitOK || out != "" || err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%v -o: exit %d, %d bytes on stdout, file %d bytes (%v), want %d", c.args, code, len(out), len(got), err, want.Len())
		}
	}
	// -pid: one process's GCs.
	var w writer = gcstats.WriteJSONLines
	var want bytes.Buffer
	procs := gc.Processes()
	w(&want, gc.Origin(), procs[len(procs)-1:])
	out, _, _ := dump(t, "-report", "gc", "-format", "jsonl", "-pid", strconv.FormatInt(procs[len(procs)-1].PID, 10), path)
	if out != want.String() {
		t.Errorf("-pid %d: %d bytes, want %d", procs[len(procs)-1].PID, len(out), want.Len())
	}
}

// TestReportMissingEvents: a trace without the events names the keyword
// to enable; one whose GC-keyword events hold no GC says so instead (the
// keyword was on), and a process asked for that has none names those
// that have them.
func TestReportMissingEvents(t *testing.T) {
	_, errs, code := dump(t, "-report", "gc", small)
	if code != exitError || !strings.Contains(errs, "GC keyword (0x1) at level Informational (4)") {
		t.Errorf("gc: exit %d, stderr %q", code, errs)
	}
	_, errs, code = dump(t, "-report", "jit", gcETL)
	if code != exitError || !strings.Contains(errs, "JIT keyword (0x10) at level Verbose (5)") {
		t.Errorf("jit: exit %d, stderr %q", code, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-report", "gc", "-pid", "1", gcETL}, "process 1: no GC events: the trace has them for process 179596\n"},
		{[]string{"-report", "jit", "-pid", "5", coreclr30}, "process 5: no JIT events: the trace has them for process 10064\n"},
		{[]string{"-report", "gc", netperf20}, ": no GC events: the trace holds 70 runtime suspensions (SuspendOther 70), none of them for a GC, and 5 allocation ticks, but no GCStart: no garbage collection ran while it recorded\n"},
	} {
		_, errs, code := dump(t, c.args...)
		if code != exitError || !strings.HasSuffix(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want one line ending %q", c.args, code, errs, c.want)
		}
	}
	// The library says it with the same error.
	for _, c := range []struct {
		path string
		read func(*trace.Reader) error
		want error
	}{
		{small, func(r *trace.Reader) error { _, err := gcstats.Read(r); return err }, gcstats.ErrNoEvents},
		{gcETL, func(r *trace.Reader) error { _, err := jitstats.Read(r); return err }, jitstats.ErrNoEvents},
	} {
		r, err := trace.Open(c.path)
		if err != nil {
			t.Fatal(err)
		}
		err = c.read(r)
		r.Close()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: library error %v, want %v", c.path, err, c.want)
		}
		_, errs, _ := dump(t, "-report", map[error]string{gcstats.ErrNoEvents: "gc", jitstats.ErrNoEvents: "jit"}[c.want], c.path)
		if !strings.HasSuffix(strings.TrimSpace(errs), c.want.Error()) || strings.Count(errs, c.want.Error()) != 1 {
			t.Errorf("%s: clrdump says %q, the library %q (once)", c.path, errs, c.want)
		}
		if err != c.want {
			t.Errorf("%s: library error %#v, want %v itself: nothing else was lost", c.path, err, c.want)
		}
	}
}

func TestReportUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-report", "heap", gcETL},
		{"-report", "jit", "-format", "html", gcETL},
		{"-report", "gc", "-format", "pprof", gcETL},
		{"-report", "gc"},
	} {
		if _, _, code := dump(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// TestReportSharedTrace: the 3.0 trace's GC 1 pauses 20.865 ms, not the
// SampleProfiler's interleaved suspensions; its JIT report lists the slowest
// method first.
func TestReportSharedTrace(t *testing.T) {
	if _, err := os.Stat(core30); err != nil {
		t.Skipf("%s is not here (it comes with ../shared): %v", core30, err)
	}
	out, errs, code := dump(t, "-report", "gc", "-format", "jsonl", core30)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	first := out[:strings.IndexByte(out, '\n')]
	if !strings.Contains(first, `"pause_ms":20.865`) {
		t.Errorf("GC 1: %s", first)
	}
	if n := strings.Count(out, "\n"); n != 478 {
		t.Errorf("%d GCs, want 478", n)
	}
	out, _, code = dump(t, "-report", "jit", "-format", "jsonl", core30)
	if code != exitOK {
		t.Fatalf("jit: exit %d", code)
	}
	var m struct {
		PID        int64   `json:"pid"`
		Method     string  `json:"method"`
		Tier       string  `json:"tier"`
		JitMS      float64 `json:"jit_ms"`
		ILSize     int     `json:"il_size"`
		NativeSize int     `json:"native_size"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 53 {
		t.Errorf("%d methods, want 53", len(lines))
	}
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil || m.PID != 10064 || m.Method == "" || m.Tier == "" || m.JitMS <= 0 || m.NativeSize <= 0 {
		t.Errorf("first method %+v, %v: %s", m, err, lines[0])
	}
	text, _, _ := dump(t, "-report", "jit", "-n", "3", core30)
	if !strings.Contains(text, "Slowest 3:") || !strings.Contains(text, "System.Marvin.ComputeHash") {
		t.Errorf("jit text:\n%s", text)
	}
}
