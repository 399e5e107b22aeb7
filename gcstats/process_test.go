package gcstats_test

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/trace"
)

// etwLog builds a small ETW log (gcevents.etl's header, then the events
// given), as a machine-wide ETW trace brings kernel Process events and
// the runtime's beside them.
type etwLog struct {
	t      *testing.T
	real   []byte
	base   int64 // the header event's timestamp: the log's origin
	events [][]byte
}

func newETWLog(t *testing.T) *etwLog {
	t.Helper()
	real := tracetest.Bytes(t, gcevents)
	r, err := trace.NewReader(bytes.NewReader(real))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	return &etwLog{t: t, real: real, base: e.Timestamp()}
}

// ts is ms milliseconds after the log's origin, in the log's 100 ns
// units.
func (l *etwLog) ts(ms float64) int64 { return l.base + int64(ms*1e4) }

// process adds a kernel Process event (op 1 start, 2 stop) of pid.
func (l *etwLog) process(ms float64, op uint8, pid uint32, name string) {
	l.events = append(l.events, etltest.Process(op, pid, l.ts(ms), name))
}

// at adds ev at ms on thread tid of pid.
func (l *etwLog) at(ms float64, pid, tid uint32, ev clrevents.Event) {
	l.events = append(l.events, etltest.Runtime(ev, tid, pid, l.ts(ms)))
}

// gc adds a blocking GC numbered n of pid that suspends at ms, paused
// for 0.11 ms, its heap after it gen0 bytes.
func (l *etwLog) gc(ms float64, pid uint32, n uint32, gen0 uint64) {
	l.at(ms, pid, 7, &clrevents.GCSuspendEEBeginV1{Reason: clrevents.GCSuspendEEReasonSuspendForGC, Count: n})
	l.at(ms+0.001, pid, 7, &clrevents.GCSuspendEEEndV1{})
	l.at(ms+0.002, pid, 7, &clrevents.GCStartV2{Count: n})
	l.at(ms+0.1, pid, 7, &clrevents.GCEndV1{Count: n})
	l.at(ms+0.101, pid, 7, &clrevents.GCHeapStatsV2{GenerationSize0: gen0})
	l.at(ms+0.11, pid, 7, &clrevents.GCRestartEEEndV1{})
}

func (l *etwLog) analyze() *gcstats.Analyzer {
	l.t.Helper()
	log, err := etltest.Log(l.real, l.events...)
	if err != nil {
		l.t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log))
	if err != nil {
		l.t.Fatal(err)
	}
	defer r.Close()
	a, err := gcstats.Read(r)
	if err != nil {
		l.t.Fatal(err)
	}
	return a
}

// span is p's time in the trace in milliseconds from origin.
func span(p *gcstats.Process, origin time.Time) (from, to float64) {
	start, end := p.TimeInTrace()
	return msOf(start.Sub(origin)), msOf(end.Sub(origin))
}

func numbers(p *gcstats.Process) []int64 {
	var n []int64
	for _, gc := range p.GCs {
		n = append(n, gc.Number)
	}
	return n
}

// TestProcessIDReused: a process ID the system gave again, within one
// trace, is two processes, as TraceEvent's TraceProcess makes them. Kept
// as one, the second process's GC 1 was taken for the first's (a runtime
// logging its GCStart twice) and left out with its pause and heap, and
// the name and start were the first's.
func TestProcessIDReused(t *testing.T) {
	l := newETWLog(t)
	l.process(0.1, 1, 10, "first.exe")
	l.gc(1, 10, 1, 111)
	l.process(2, 2, 10, "first.exe")
	l.process(3, 1, 10, "second.exe")
	l.gc(4, 10, 1, 222)
	l.gc(6, 10, 2, 333)
	l.process(8, 2, 10, "second.exe")
	l.gc(9, 11, 1, 444) // another process, after them
	a := l.analyze()
	ps := a.Processes()
	if len(ps) != 3 {
		t.Errorf("%d processes, want 3 (pid 10 twice, 11)", len(ps))
	}
	for i, c := range []struct {
		pid      int64
		name     string
		gcs      []int64
		heap     uint64 // after GC 1
		from, to float64
	}{
		{10, "first.exe", []int64{1}, 111, 0.1, 2},
		{10, "second.exe", []int64{1, 2}, 222, 3, 8},
		{11, "", []int64{1}, 444, 0, 9.11},
	} {
		p := holding(ps, c.heap)
		if p == nil {
			t.Errorf("process %d (%s): its GC 1, heap after %d bytes, is in no process", i, c.name, c.heap)
			continue
		}
		if p != ps[min(i, len(ps)-1)] || p.PID != c.pid || p.Name != c.name || !slices.Equal(numbers(p), c.gcs) {
			t.Errorf("process %d: pid %d %q, GCs %v; want pid %d %q, GCs %v, in its place", i, p.PID, p.Name, numbers(p), c.pid, c.name, c.gcs)
		}
		if from, to := span(p, a.Origin()); !near(from, c.from) || !near(to, c.to) {
			t.Errorf("process %d (%s): in the trace from %.3f to %.3f ms, want %.3f to %.3f", i, c.name, from, to, c.from, c.to)
		}
		// Each process's pause share is over its own time: 0.11 ms a GC.
		s := p.Summary()
		if want := 100 * 0.11 * float64(len(c.gcs)) / (c.to - c.from); !near(s.PausePercent, want) {
			t.Errorf("process %d (%s): %.4f%% paused, want %.4f%%", i, c.name, s.PausePercent, want)
		}
	}
	var b strings.Builder
	if err := gcstats.WriteText(&b, a.Origin(), ps); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Process 10 (first.exe, started at 0.100 ms): 1 GCs",
		"Process 10 (second.exe, started at 3.000 ms): 2 GCs",
		"Process 11: 1 GCs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	b.Reset()
	if err := gcstats.WriteHTML(&b, a.Origin(), ps, "reused"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<h2>Process 10 (first.exe, started at 0.100 ms)</h2>") || !strings.Contains(b.String(), "<h2>Process 10 (second.exe, started at 3.000 ms)</h2>") {
		t.Errorf("the HTML report does not tell the two processes 10 apart:\n%s", b.String())
	}
}

// TestProcessIDReusedNumbering: a process running when the trace began
// (GCs 5 and 6) exits, and its ID's next process numbers its GCs from 1.
// Kept as one, GCs 3 and 4 were said lost to damage, and the pauses of
// all four were over the second process's time alone.
func TestProcessIDReusedNumbering(t *testing.T) {
	l := newETWLog(t)
	l.gc(1, 10, 5, 111)
	l.gc(1.2, 10, 6, 112)
	l.process(2, 2, 10, "first.exe")
	l.process(3, 1, 10, "second.exe")
	l.gc(4, 10, 1, 222)
	l.gc(6, 10, 2, 333)
	a := l.analyze()
	ps := a.Processes()
	if len(ps) != 2 {
		t.Errorf("%d processes, want 2", len(ps))
	}
	for i, c := range []struct {
		gcs      []int64
		heap     uint64 // after the first GC
		from, to float64
	}{
		{[]int64{5, 6}, 111, 0, 2},
		{[]int64{1, 2}, 222, 3, 6.11},
	} {
		p := holding(ps, c.heap)
		s := p.Summary()
		if !slices.Equal(numbers(p), c.gcs) || len(s.Missing) != 0 {
			t.Errorf("process %d: GCs %v, missing %v; want GCs %v, none missing", i, numbers(p), s.Missing, c.gcs)
		}
		if from, to := span(p, a.Origin()); !near(from, c.from) || !near(to, c.to) {
			t.Errorf("process %d: in the trace from %.3f to %.3f ms, want %.3f to %.3f", i, from, to, c.from, c.to)
		}
		if want := 100 * 0.22 / (c.to - c.from); !near(s.PausePercent, want) {
			t.Errorf("process %d: %.4f%% paused, want %.4f%%", i, s.PausePercent, want)
		}
	}
	var b strings.Builder
	if err := gcstats.WriteText(&b, a.Origin(), ps); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Process 10 (first.exe, start not in the trace): 2 GCs", "Process 10 (second.exe, started at 3.000 ms): 2 GCs"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "not in the trace, though") {
		t.Errorf("GCs said lost:\n%s", out)
	}
	// The records tell the two apart by process_start_ms: -1 for the
	// process whose start the trace lacks.
	b.Reset()
	if err := gcstats.WriteCSV(&b, a.Origin(), ps); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "process_start_ms")
	var got []string
	for _, r := range rows[1:] {
		got = append(got, r[0]+"@"+r[col]+" gc "+r[1])
	}
	if want := []string{"10@-1 gc 5", "10@-1 gc 6", "10@3.000 gc 1", "10@3.000 gc 2"}; col < 0 || !slices.Equal(got, want) {
		t.Errorf("CSV records (pid@process_start_ms gc n) %q, want %q:\n%s", got, want, b.String())
	}
}

// holding returns the process of ps that has a GC that left the heap
// heapAfter bytes, or nil.
func holding(ps []*gcstats.Process, heapAfter uint64) *gcstats.Process {
	for _, p := range ps {
		for _, gc := range p.GCs {
			if gc.HeapAfter == heapAfter {
				return p
			}
		}
	}
	return nil
}

// TestRuntimeStart: without a kernel Process/Start, the runtime's own
// start event (RuntimeInformationStart) bounds the process's time in the
// trace from below, when it is the first of the process's events: an
// EventPipe session logs one as it ends, after the GCs, and a rundown's
// RuntimeInformationDCStart is a running runtime's. A kernel
// Process/Start, which comes first, is the process's start.
func TestRuntimeStart(t *testing.T) {
	l := newETWLog(t)
	l.process(0.5, 1, 23, "app.exe")
	l.at(1, 22, 7, &clrevents.RuntimeInformationDCStart{ClrInstanceID: 1})
	l.at(1, 23, 7, &clrevents.RuntimeInformationStart{ClrInstanceID: 1})
	l.gc(1.5, 21, 1, 1)
	l.at(2, 20, 7, &clrevents.RuntimeInformationStart{ClrInstanceID: 1})
	for pid := uint32(20); pid <= 23; pid++ {
		l.gc(3, pid, 2, 2)
	}
	l.at(5, 21, 7, &clrevents.RuntimeInformationStart{ClrInstanceID: 1})
	l.gc(6, 24, 1, 1)
	a := l.analyze()
	want := map[int64]float64{20: 2, 21: 0, 22: 0, 23: 0.5, 24: 0}
	for _, p := range a.Processes() {
		if from, to := span(p, a.Origin()); !near(from, want[p.PID]) || !near(to, 6.11) {
			t.Errorf("process %d: in the trace from %.3f to %.3f ms, want %.3f to 6.110", p.PID, from, to, want[p.PID])
		}
		delete(want, p.PID)
	}
	if len(want) > 0 {
		t.Errorf("processes %v missing", want)
	}
}
