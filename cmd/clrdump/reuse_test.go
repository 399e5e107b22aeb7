package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
)

// TestReportReusedPID: -report with -pid of an ID two processes had in
// turn (the system gave it again) reports both, each named with its
// start, and no other process; -pid of a process without the events
// names each ID that has them once.
func TestReportReusedPID(t *testing.T) {
	real := tracetest.Bytes(t, "../../testdata/traces/gcevents.etl.zip")
	base, err := etltest.Origin(real) // 100 ns units
	if err != nil {
		t.Fatal(err)
	}
	var events [][]byte
	at := func(ms float64, pid uint32, ev clrevents.Event) {
		events = append(events, etltest.Runtime(ev, 7, pid, base+int64(ms*1e4)))
	}
	work := func(ms float64, pid uint32, n uint32) {
		at(ms, pid, &clrevents.GCSuspendEEBeginV1{Reason: clrevents.GCSuspendEEReasonSuspendForGC})
		at(ms+0.01, pid, &clrevents.GCStartV2{Count: n})
		at(ms+0.1, pid, &clrevents.GCEndV1{Count: n})
		at(ms+0.11, pid, &clrevents.GCHeapStatsV2{GenerationSize0: 100})
		at(ms+0.12, pid, &clrevents.GCRestartEEEndV1{})
		at(ms+0.2, pid, &clrevents.MethodLoadVerboseV1{MethodID: 0x10, MethodSize: 10, MethodFlags: clrevents.MethodFlagsJitted, MethodName: clrevents.UTF16Of("Main")})
	}
	events = append(events, etltest.Process(1, 10, base+1000, "app.exe"))
	work(1, 10, 1)
	events = append(events, etltest.Process(2, 10, base+20000, "app.exe"))
	events = append(events, etltest.Process(1, 10, base+30000, "app.exe"))
	work(4, 10, 1)
	work(5, 11, 1)
	log, err := etltest.Log(real, events...)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "reused.etl")
	if err := os.WriteFile(name, log, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-report", "gc"}, []string{"Process 10 (app.exe, started at 0.100 ms): 1 GCs", "Process 10 (app.exe, started at 3.000 ms): 1 GCs"}},
		{[]string{"-report", "jit"}, []string{"Process 10 (app.exe, started at 0.100 ms): 1 methods", "Process 10 (app.exe, started at 3.000 ms): 1 methods"}},
		{[]string{"-report", "gc", "-format", "html"}, []string{"<h2>Process 10 (app.exe, started at 0.100 ms)</h2>", "<h2>Process 10 (app.exe, started at 3.000 ms)</h2>"}},
	} {
		out, errs, code := dump(t, append(c.args, "-pid", "10", name)...)
		if code != exitOK || errs != "" {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errs)
		}
		for _, want := range c.want {
			if strings.Count(out, want) != 1 {
				t.Errorf("%v: no %q once in\n%s", c.args, want, out)
			}
		}
		if strings.Contains(out, "Process 11") {
			t.Errorf("%v -pid 10: process 11 reported:\n%s", c.args, out)
		}
	}
	out, _, _ := dump(t, "-report", "gc", "-format", "jsonl", "-pid", "10", name)
	if n := strings.Count(out, `"pid":10,`); n != 2 || strings.Count(out, "\n") != 2 {
		t.Errorf("jsonl -pid 10: %d lines of pid 10, want 2:\n%s", n, out)
	}
	// A process without the events names the IDs that have them, once
	// each.
	for _, report := range []string{"gc", "jit"} {
		_, errs, code := dump(t, "-report", report, "-pid", "12", name)
		if want := ": the trace has them for processes 10, 11\n"; code != exitError || !strings.HasSuffix(errs, want) {
			t.Errorf("-report %s -pid 12: exit %d, stderr %q; want 1 and ending %q", report, code, errs, want)
		}
	}
}

// TestProfileReusedPID: -profile with -pid of an ID two processes had in
// turn keeps both, each under a root frame of its own that names its
// start, as -report names them; without -pid, so does every process.
// Keyed by ID alone, the two were one root, named after the later
// process.
func TestProfileReusedPID(t *testing.T) {
	real := tracetest.Bytes(t, "../../testdata/traces/gcevents.etl.zip")
	base, err := etltest.Origin(real) // 100 ns units
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms float64) int64 { return base + int64(ms*1e4) }
	le := binary.LittleEndian
	thread := func(ms float64, pid, tid uint32) []byte { // Thread/Start
		p := le.AppendUint32(le.AppendUint32(nil, pid), tid)
		p = append(p, make([]byte, 7*8+4)...)
		return etltest.System(0x05, 1, 2, 0, 0, at(ms), p)
	}
	sample := func(ms float64, tid uint32) []byte { // PerfInfo/Sample, no stack walk
		p := le.AppendUint32(le.AppendUint64(nil, 0x400000), tid)
		p = le.AppendUint16(le.AppendUint16(p, 1), 0)
		return etltest.System(0x0F, 46, 2, 0, 0, at(ms), p)
	}
	log, err := etltest.Log(real,
		etltest.Process(3, 11, at(0), "other.exe"),
		thread(0, 11, 55),
		etltest.Process(1, 10, at(0.1), "app.exe"),
		thread(0.1, 10, 77),
		sample(0.5, 77),
		sample(0.6, 55),
		etltest.Process(2, 10, at(2), "app.exe"),
		etltest.Process(1, 10, at(3), "app.exe"),
		thread(3, 10, 88),
		sample(4, 88),
		sample(5, 88),
	)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "reused.etl")
	if err := os.WriteFile(name, log, 0o644); err != nil {
		t.Fatal(err)
	}
	first, second := "app.exe (10, started at 0.100 ms);?!? 1000000\n", "app.exe (10, started at 3.000 ms);?!? 2000000\n"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-pid", "10"}, first + second},
		{nil, first + second + "other.exe (11);?!? 1000000\n"},
	} {
		out, errs, code := dump(t, append(append([]string{"-profile", "cpu"}, c.args...), name)...)
		if code != exitOK {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errs)
		}
		if out != c.want {
			t.Errorf("-profile cpu %v:\n%s\nwant:\n%s", c.args, out, c.want)
		}
	}
}
