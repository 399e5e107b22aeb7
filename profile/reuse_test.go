package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/trace"
)

// reuseLog makes the kernel events of a machine-wide ETW log, at times
// in milliseconds from the log's origin (its first event, which is the
// profile's start).
type reuseLog struct {
	t      *testing.T
	base   int64 // the origin, in the log's clock (100 ns units)
	events [][]byte
}

func newReuseLog(t *testing.T) *reuseLog {
	base, err := etltest.Origin(tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip"))
	if err != nil {
		t.Fatal(err)
	}
	l := &reuseLog{t: t, base: base}
	// An image of every process 10 and 11, loaded before the trace.
	l.events = append(l.events,
		imageEventAt(base, 10, app, 0x10000, `\Device\HarddiskVolume2\app\app.exe`),
		imageEventAt(base, 10, ntdll, 0x100000, `\Device\HarddiskVolume2\Windows\System32\ntdll.dll`),
		imageEventAt(base, 11, app, 0x10000, `\Device\HarddiskVolume2\app\app.exe`))
	return l
}

func (l *reuseLog) at(ms float64) int64 { return l.base + int64(ms*1e4) }

// process logs a kernel Process event: op 1 Start, 2 Stop, 3 DCStart.
func (l *reuseLog) process(ms float64, op uint8, pid uint32, name string) {
	l.events = append(l.events, etltest.Process(op, pid, l.at(ms), name))
}

// thread logs a kernel Thread/Start of thread tid in process pid.
func (l *reuseLog) thread(ms float64, pid, tid uint32) {
	l.events = append(l.events, kev(l.at(ms), gThread, opStart, kkpl().u32(pid).u32(tid).ptrs(0, 0, 0, 0, 0, 0, 0).u32(0)))
}

// sample logs a kernel CPU sample of thread tid at address ip, without a
// stack walk (its stack is the address alone).
func (l *reuseLog) sample(ms float64, tid uint32, ip uint64) {
	l.events = append(l.events, kev(l.at(ms), gPerfInfo, opSampledProfile, kkpl().ptrs(ip).u32(tid).u16(1).u16(0)))
}

// walk logs the kernel's stack walk of the sample of thread tid in
// process pid at ms (just after it), its frames innermost first.
func (l *reuseLog) walk(ms float64, pid, tid uint32, frames ...uint64) {
	l.events = append(l.events, kev(l.at(ms)+1, gStackWalk, opStack, kkpl().u64(uint64(l.at(ms))).u32(pid).u32(tid).ptrs(frames...)))
}

// build feeds the log to a CPU profile of processes pids (nil: every
// process).
func (l *reuseLog) build(t *testing.T, pids ...int64) *Profile {
	t.Helper()
	b := NewBuilder(Options{PIDs: pids}, 0, 10_000_000)
	feed(t, b, l.events...)
	p, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readOrder returns the times (ms from the origin) of the log's kernel
// samples in the order a reader gives them, as the profile reads them.
func (l *reuseLog) readOrder() []float64 {
	l.t.Helper()
	log, err := etltest.Log(tracetest.Bytes(l.t, "../testdata/traces/gcevents.etl.zip"), l.events...)
	if err != nil {
		l.t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log), trace.WithOrder(trace.ThreadOrder))
	if err != nil {
		l.t.Fatal(err)
	}
	var out []float64
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			l.t.Fatal(err)
		}
		if e.Name() == "PerfInfo/Sample" {
			out = append(out, float64(e.Timestamp()-l.base)/1e4)
		}
	}
}

// procSamples counts a profile's samples by process, "pid@start ms".
func procSamples(p *Profile) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Samples {
		out[procLabel(p, s.PID, s.ProcessStart)] += s.Values[0]
	}
	return out
}

// procLabel is "pid@start" (ms from the profile's start), "pid@-" for a
// start not in the trace.
func procLabel(p *Profile, pid, start int64) string {
	if start == 0 {
		return fmt.Sprintf("%d@-", pid)
	}
	return fmt.Sprintf("%d@%.3f", pid, float64(start-p.StartNanos)/1e6)
}

// pprofRoots sums a pprof profile's samples (their count) by their root
// frame and "process" label.
func pprofRoots(t *testing.T, p *Profile) map[string]int64 {
	t.Helper()
	pp := writersAgree(t, p)
	out := map[string]int64{}
	for _, s := range pp.Sample {
		root := s.Location[len(s.Location)-1].Line[0].Function.Name
		out[root+" process="+strings.Join(s.Label["process"], ",")] += s.Value[0]
	}
	return out
}

const ms = 1_000_000 // a kernel sample's value: the default interval, 1 ms

// TestProcessIDReused: process 10 (first.exe) starts, is sampled and
// exits; the system gives its ID to second.exe, which is sampled too. The
// profile has two processes of ID 10, each with its own samples, name,
// start and root frame, in every writer; Options.PIDs of 10 keeps both.
// Keyed by ID alone, the five samples were one process's, under the
// later's name, "second.exe (10)".
func TestProcessIDReused(t *testing.T) {
	l := newReuseLog(t)
	l.process(0, 3, 11, "other.exe") // running before the trace
	l.thread(0, 11, 55)
	l.process(0.1, 1, 10, "first.exe")
	l.thread(0.1, 10, 77)
	l.sample(0.5, 77, app+0x10)
	l.sample(1.5, 77, ntdll+0x10)
	l.sample(1.6, 55, app+0x10)
	l.process(2, 2, 10, "first.exe")
	l.process(3, 1, 10, "second.exe")
	l.thread(3, 10, 88)
	l.sample(4, 88, app+0x10)
	l.sample(5, 88, app+0x10)
	l.sample(6, 88, ntdll+0x10)

	for _, pids := range [][]int64{nil, {10}} {
		t.Run(fmt.Sprint(pids), func(t *testing.T) {
			p := l.build(t, pids...)
			first, second := "first.exe (10, started at 0.100 ms)", "second.exe (10, started at 3.000 ms)"
			wantFolded := map[string]int64{
				first + ";app!?":       ms,
				first + ";ntdll!?":     ms,
				second + ";app!?":      2 * ms,
				second + ";ntdll!?":    ms,
				"other.exe (11);app!?": ms,
			}
			wantProcs := []Process{
				{10, p.StartNanos + 100_000, "first.exe"},
				{10, p.StartNanos + 3_000_000, "second.exe"},
				{11, 0, "other.exe"},
			}
			wantSamples := map[string]int64{"10@0.100": 2, "10@3.000": 3, "11@-": 1}
			wantRoots := map[string]int64{first + " process=first.exe": 2, second + " process=second.exe": 3, "other.exe (11) process=other.exe": 1}
			if pids != nil {
				delete(wantFolded, "other.exe (11);app!?")
				wantProcs = wantProcs[:2]
				delete(wantSamples, "11@-")
				delete(wantRoots, "other.exe (11) process=other.exe")
			}
			if diff := cmp.Diff(wantProcs, p.Processes); diff != "" {
				t.Errorf("processes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSamples, procSamples(p)); diff != "" {
				t.Errorf("samples by process (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantFolded, p.Folded()); diff != "" {
				t.Errorf("folded (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantRoots, pprofRoots(t, p)); diff != "" {
				t.Errorf("pprof samples by root frame and process label (-want +got):\n%s", diff)
			}
			// The samples are in process order: the first process's, then
			// the second's.
			for i := 1; i < len(p.Samples); i++ {
				a, b := p.Samples[i-1], p.Samples[i]
				if a.PID > b.PID || a.PID == b.PID && a.ProcessStart > b.ProcessStart {
					t.Errorf("sample %d (process %d started %d) after one of process %d started %d", i, b.PID, b.ProcessStart, a.PID, a.ProcessStart)
				}
			}
			// The ID's name is its latest process's, as it was.
			if got := p.ProcessNames[10]; got != "second.exe" {
				t.Errorf("ProcessNames[10] = %q, want the latest process's, second.exe", got)
			}
			// speedscope: a profile of each process's thread, named with
			// its process.
			var ss bytes.Buffer
			if err := p.WriteSpeedscope(&ss); err != nil {
				t.Fatal(err)
			}
			var f ssFile
			if err := json.Unmarshal(ss.Bytes(), &f); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, pr := range f.Profiles {
				names = append(names, pr.Name)
			}
			wantNames := []string{"cpu: " + first + ", thread 77", "cpu: " + second + ", thread 88", "cpu: other.exe (11), thread 55"}
			if pids != nil {
				wantNames = wantNames[:2]
			}
			if diff := cmp.Diff(wantNames, names); diff != "" {
				t.Errorf("speedscope profiles (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProcessIDReusedReadOrder: the profile reads each thread's events
// in order, not the trace's, and a sample read before the second
// process's Process/Start may be later than it: the sample is of the
// process live at its time. Here thread 77 is the first process's and,
// its ID given again too, the second's; one of its samples (4.5 ms)
// comes in the log before the second's start (3 ms), and a sample of
// thread 99 (4.2 ms) comes before the Thread event that says its
// process: it learns it from its stack walk, at Finish.
func TestProcessIDReusedReadOrder(t *testing.T) {
	l := newReuseLog(t)
	l.process(0.1, 1, 10, "first.exe")
	l.thread(0.1, 10, 77)
	l.sample(0.2, 77, app+0x10)
	l.sample(4.5, 77, ntdll+0x10) // the second process's
	l.sample(0.3, 77, ntdll+0x10)
	l.process(2, 2, 10, "first.exe")
	l.process(3, 1, 10, "second.exe")
	l.thread(3, 10, 77)
	l.sample(4, 77, app+0x10)
	l.sample(4.2, 99, app+0x10) // its process not known yet: its walk says it
	l.walk(4.2, 10, 99, app+0x10)
	l.thread(4.3, 10, 99)
	if got, want := l.readOrder(), []float64{0.2, 4.5, 0.3, 4, 4.2}; !cmp.Equal(got, want) {
		t.Fatalf("samples read at %v ms, want %v: the log does not test what it should", got, want)
	}
	p := l.build(t)
	first, second := "first.exe (10, started at 0.100 ms)", "second.exe (10, started at 3.000 ms)"
	want := map[string]int64{
		first + ";app!?":    ms,
		first + ";ntdll!?":  ms,
		second + ";app!?":   2 * ms,
		second + ";ntdll!?": ms,
	}
	if diff := cmp.Diff(want, p.Folded()); diff != "" {
		t.Errorf("folded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{first + " process=first.exe": 2, second + " process=second.exe": 3}, pprofRoots(t, p)); diff != "" {
		t.Errorf("pprof samples by root frame and process label (-want +got):\n%s", diff)
	}
	// Thread 77 of each process is a thread of its own.
	var threads []string
	for _, s := range p.Samples {
		threads = append(threads, fmt.Sprintf("%s/%d", procLabel(p, s.PID, s.ProcessStart), s.TID))
	}
	if want := []string{"10@0.100/77", "10@0.100/77", "10@3.000/77", "10@3.000/77", "10@3.000/99"}; !cmp.Equal(threads, want) {
		t.Errorf("samples' processes and threads %v, want %v", threads, want)
	}
}

// TestProcessIDReusedSameName: a program started again under the ID it
// had: the two processes have one name, and their root frames tell them
// apart by their starts, in a profile of that ID alone too (two
// processes, so rooted). A process running before the trace has no start
// in it: named by its DCStart, or unnamed when the log lacks one.
func TestProcessIDReusedSameName(t *testing.T) {
	for _, c := range []struct {
		name        string
		dcStart     bool // the first process is named by a DCStart
		first, then string
	}{
		{"started in the trace", false, "app.exe (10, started at 0.100 ms)", "app.exe (10, started at 3.000 ms)"},
		{"running before, DCStart", true, "app.exe (10, start not in the trace)", "app.exe (10, started at 3.000 ms)"},
		{"running before, no DCStart", false, "process 10 (start not in the trace)", "app.exe (10, started at 3.000 ms)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newReuseLog(t)
			switch {
			case c.dcStart:
				l.process(0, 3, 10, "app.exe")
			case strings.Contains(c.first, "started"):
				l.process(0.1, 1, 10, "app.exe")
			}
			l.thread(0.1, 10, 77)
			l.sample(0.5, 77, app+0x10)
			l.process(2, 2, 10, "app.exe")
			l.process(3, 1, 10, "app.exe")
			l.thread(3, 10, 88)
			l.sample(4, 88, app+0x10)
			l.sample(5, 88, app+0x10)
			p := l.build(t, 10)
			want := map[string]int64{c.first + ";app!?": ms, c.then + ";app!?": 2 * ms}
			if diff := cmp.Diff(want, p.Folded()); diff != "" {
				t.Errorf("folded (-want +got):\n%s", diff)
			}
			label := "app.exe"
			if !c.dcStart && !strings.Contains(c.first, "started") {
				label = "" // the trace names the process before it not
			}
			roots := map[string]int64{c.first + " process=" + label: 1, c.then + " process=app.exe": 2}
			if diff := cmp.Diff(roots, pprofRoots(t, p)); diff != "" {
				t.Errorf("pprof samples by root frame and process label (-want +got):\n%s", diff)
			}
			if len(p.Processes) != 2 || (p.Processes[0].Start == 0) != strings.Contains(c.first, "not in the trace") || p.Processes[1].Start == 0 {
				t.Errorf("processes %+v", p.Processes)
			}
		})
	}
}

// TestProcessStartedOnce: a process that starts in the trace, and whose
// ID no other process has, is named as before, without its start; its
// samples have its start.
func TestProcessStartedOnce(t *testing.T) {
	l := newReuseLog(t)
	l.process(0, 3, 11, "other.exe")
	l.thread(0, 11, 55)
	l.sample(0.5, 55, app+0x10)
	l.process(3, 1, 10, "app.exe")
	l.thread(3, 10, 88)
	l.sample(4, 88, app+0x10)
	p := l.build(t)
	want := map[string]int64{"app.exe (10);app!?": ms, "other.exe (11);app!?": ms}
	if diff := cmp.Diff(want, p.Folded()); diff != "" {
		t.Errorf("folded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Process{{10, p.StartNanos + 3_000_000, "app.exe"}, {11, 0, "other.exe"}}, p.Processes); diff != "" {
		t.Errorf("processes (-want +got):\n%s", diff)
	}
	if got := procSamples(p); got["10@3.000"] != 1 {
		t.Errorf("samples by process %v", got)
	}
}
