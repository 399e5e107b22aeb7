package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/numfmt"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/nettrace"
)

const realTrace = "../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"

// liveDeadline bounds a live command's run in the tests (runLive).
const liveDeadline = time.Minute

// runLive runs a command that reads a live session, as run does, and
// asks it to finish (SIGINT's first step) if it is still running after
// liveDeadline, failing the test: a command that waits for what never
// comes (a watch -n for events a stream does not hold) fails here instead
// of holding the package until go test's timeout.
func runLive(t *testing.T, args []string, stdout, stderr io.Writer) int {
	t.Helper()
	sigs := make(chan os.Signal, 2)
	timer := time.AfterFunc(liveDeadline, func() {
		t.Errorf("clrtrace %s: still running after %v; interrupted", strings.Join(args, " "), liveDeadline)
		sigs <- os.Interrupt
		time.Sleep(5 * time.Second)
		sigs <- os.Interrupt // the second quits at once
	})
	defer timer.Stop()
	return run(sigs, args, stdout, stderr)
}

// sim starts a simulated runtime for this test process's PID in a fresh
// TMPDIR, where clrtrace looks (the .NET client's rule).
func sim(t *testing.T, cfg simruntime.Config) *simruntime.Server {
	t.Helper()
	dir, err := os.MkdirTemp("", "clrt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("TMPDIR", dir)
	cfg.PID = os.Getpid()
	s, err := simruntime.Start(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func realStream(t *testing.T) ([]byte, int) {
	t.Helper()
	data, live, err := simruntime.RealTrace(realTrace)
	if err != nil {
		t.Fatal(err)
	}
	return data, live
}

// syncBuf is a writer the test can read while clrtrace writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var pid = strconv.Itoa(os.Getpid())

func TestCollectByteIdentical(t *testing.T) {
	data, live := realStream(t)
	for _, c := range []struct {
		name       string
		maxCollect int
		args       []string
		version    string
	}{
		{"cpu-sampling", 6, nil, "started with CollectTracing\n"},
		{"gc on an older runtime", 2, []string{"-profile", "gc"}, "started with CollectTracing2 (the runtime does not know CollectTracing3: stacks are collected)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := sim(t, simruntime.Config{Trace: data, Live: live, MaxCollect: c.maxCollect})
			out := filepath.Join(t.TempDir(), "out.nettrace")
			var stderr syncBuf
			args := append([]string{"collect", "-p", pid, "-duration", "300ms", "-o", out}, c.args...)
			if code := run(nil, args, &stderr, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("wrote %d bytes, not the %d streamed", len(got), len(data))
			}
			if !strings.Contains(stderr.String(), c.version) || !strings.Contains(stderr.String(), "stopped; wrote 344314 bytes") {
				t.Fatalf("stderr: %s", stderr.String())
			}
			reqs := s.Requests()
			last := reqs[len(reqs)-1]
			if last.Set != 2 || last.ID != 1 {
				t.Fatalf("last request %d/%d, want StopTracing", last.Set, last.ID)
			}
		})
	}
}

// runUntil runs clrtrace in the background and interrupts it (SIGINT)
// once stdout holds want.
func runUntil(t *testing.T, args []string, want string) (stdout, stderr string) {
	t.Helper()
	sigs := make(chan os.Signal, 1)
	var out, errb syncBuf
	done := make(chan int, 1)
	go func() { done <- run(sigs, args, &out, &errb) }()
	deadline := time.After(20 * time.Second)
	for !strings.Contains(out.String(), want) {
		select {
		case code := <-done:
			t.Fatalf("exited %d before printing %q: %s%s", code, want, out.String(), errb.String())
		case <-deadline:
			t.Fatalf("no %q after 20s: %s", want, out.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	sigs <- os.Interrupt // the stream is still open: this output is live
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit after the stop")
	}
	return out.String(), errb.String()
}

func TestWatchLive(t *testing.T) {
	data, live := realStream(t)
	sim(t, simruntime.Config{Trace: data, Live: live, ChunkDelay: time.Millisecond})
	out, errs := runUntil(t, []string{"watch", "-p", pid, "-format", "jsonl", "-provider", "*SampleProfiler"}, `"event":"ThreadSample"`)
	if strings.Contains(out, "Rundown") {
		t.Errorf("-provider let rundown events through")
	}
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !json.Valid([]byte(line)) || !strings.Contains(line, `"provider":"Microsoft-DotNETCore-SampleProfiler"`) {
			t.Fatalf("line %d is not a SampleProfiler JSON line: %s", i+1, line)
		}
	}
	if !strings.Contains(errs, "events printed, 0 dropped") {
		t.Errorf("stderr: %s", errs)
	}
}

// TestCountersProcessExits: a process that exits while counters reads it
// (its stream cut, not stopped here) is said to have ended the session, as
// collect says it, not "the trace is cut short" alone.
func TestCountersProcessExits(t *testing.T) {
	tr, live := simruntime.CountersTrace(os.Getpid(), [][]simruntime.Counter{
		{{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 12.5}},
	})
	sim(t, simruntime.Config{Trace: tr[:live-3], Live: -1, ExitAfterLive: true})
	var out, errb bytes.Buffer
	code := runLive(t, []string{"counters", "-p", pid}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "clrtrace: process "+pid+" session ") || !strings.Contains(errb.String(), "; the runtime ended the session before the stream's end: the process exited?\n") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

func TestCounters(t *testing.T) {
	tr, live := simruntime.CountersTrace(os.Getpid(), [][]simruntime.Counter{
		{{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 12.5},
			{Name: "alloc-rate", DisplayName: "Allocation Rate", Units: "B", Increment: true, Value: 8168}},
		{{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 3}},
	})
	s := sim(t, simruntime.Config{Trace: tr, Live: live})
	out, _ := runUntil(t, []string{"counters", "-p", pid, "-interval", "2"}, row("CPU Usage (%)", "              3    "))
	for _, want := range []string{"[System.Runtime]", row("CPU Usage (%)", "             12.5  "), row("Allocation Rate (B / 1 sec)", "          8,168    ")} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Count(out, "[System.Runtime]") != 2 {
		t.Errorf("want two reports:\n%s", out)
	}
	c := s.Requests()[0].Collect
	if c == nil || c.Providers[0].Name != "System.Runtime" || c.Providers[0].Args != "EventCounterIntervalSec=2" || c.Stackwalk || c.RequestRundown {
		t.Fatalf("counters session %+v", c)
	}
}

func TestPs(t *testing.T) {
	sim(t, simruntime.Config{CommandLine: "/usr/share/dotnet/dotnet /app/web.dll"})
	var out, errb bytes.Buffer
	if code := run(nil, []string{"ps"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := pid + "  /usr/share/dotnet/dotnet /app/web.dll"; !strings.Contains(out.String(), want) {
		t.Fatalf("ps printed %q, want a line %q", out.String(), want)
	}
}

// TestErrors: each failure is one line naming the process, exit 1.
func TestErrors(t *testing.T) {
	check := func(t *testing.T, args []string, want string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(nil, args, &out, &errb)
		msg := errb.String()
		if code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, want) {
			t.Fatalf("exit %d, stderr %q; want exit 1 and one line with %q", code, msg, want)
		}
	}
	t.Run("unknown pid", func(t *testing.T) {
		check(t, []string{"collect", "-p", "2147483000", "-o", filepath.Join(t.TempDir(), "x")}, "process 2147483000: no such process")
	})
	t.Run("no socket", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		check(t, []string{"counters", "-p", "1"}, "process 1: no diagnostic socket")
	})
	t.Run("refused", func(t *testing.T) {
		dir, _ := os.MkdirTemp("", "clrt")
		defer os.RemoveAll(dir)
		t.Setenv("TMPDIR", dir)
		ln, err := net.Listen("unix", filepath.Join(dir, "dotnet-diagnostic-"+pid+"-"+strconv.FormatUint(simruntime.SocketKey(os.Getpid()), 10)+"-socket"))
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		check(t, []string{"watch", "-p", pid}, "process "+pid+": CollectTracing3: no such process: its runtime has exited, leaving its socket (dial unix")
	})
	t.Run("runtime error", func(t *testing.T) {
		sim(t, simruntime.Config{CollectError: simruntime.EFail})
		check(t, []string{"collect", "-p", pid, "-o", filepath.Join(t.TempDir(), "x")},
			"process "+pid+": CollectTracing: the runtime answered error 0x80004005 (failure)")
	})
	t.Run("usage", func(t *testing.T) {
		var out, errb bytes.Buffer
		if code := run(nil, []string{"collect", "-p", pid}, &out, &errb); code != 2 {
			t.Fatalf("missing -o: exit %d", code)
		}
		// watch's filters are clrdump's (eventfmt.AddFilterFlags).
		errb.Reset()
		if code := run(nil, []string{"watch", "-p", pid, "-keyword", "zz"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `clrtrace watch: -keyword "zz": not a number`) {
			t.Fatalf("bad -keyword: exit %d, %q", code, errb.String())
		}
		errb.Reset()
		if code := run(nil, []string{"watch", "-p", pid, "-n", "-1"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `clrtrace watch: -n -1: want a count, or 0 for all`) {
			t.Fatalf("negative -n: exit %d, %q", code, errb.String())
		}
		errb.Reset()
		if code := run(nil, []string{"collect", "-p", pid, "-o", filepath.Join(t.TempDir(), "x.nettrace"), "-duration", "-5s"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-duration -5s: a length of time, 0 for none") {
			t.Fatalf("negative -duration: exit %d, %q", code, errb.String())
		}
		// A flag the flag package rejects is said once, with the usage.
		errb.Reset()
		if code := run(nil, []string{"counters", "-p", "abc"}, &out, &errb); code != 2 || strings.Count(errb.String(), `invalid value "abc" for flag -p`) != 1 || !strings.Contains(errb.String(), "Usage of clrtrace counters") {
			t.Fatalf("bad -p: exit %d, %q", code, errb.String())
		}
	})
}

// TestWatchLimit: text output, -event on the TraceEvent name, -n: the
// session is stopped after n events.
func TestWatchLimit(t *testing.T) {
	data, live := realStream(t)
	s := sim(t, simruntime.Config{Trace: data, Live: live})
	var out, errb syncBuf
	code := runLive(t, []string{"watch", "-p", pid, "-event", "ThreadSample", "-n", "3"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], " Microsoft-DotNETCore-SampleProfiler/ThreadSample pid=") {
		t.Fatalf("output:\n%s", out.String())
	}
	// StopTracing is sent before watch ends; the runtime may take it in
	// a moment later (watch does not wait for its answer, which comes
	// after the rundown).
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		reqs := s.Requests()
		if reqs[len(reqs)-1].ID == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no StopTracing after -n: %+v", reqs)
		}
	}
}

// row is a counters line: the label, then the value column.
func row(label, value string) string {
	return "    " + label + strings.Repeat(" ", 52-len(label)) + " " + value + "\n"
}

// TestWatchReportsDrops: a gap in the sequence numbers is reported as it
// is seen, and in the summary.
func TestWatchReportsDrops(t *testing.T) {
	cpu := func(v float64, dropped uint32) simruntime.Counter {
		return simruntime.Counter{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: v, Dropped: dropped}
	}
	tr, _ := simruntime.CountersTrace(os.Getpid(), [][]simruntime.Counter{{cpu(1, 0), cpu(2, 5)}, {cpu(3, 0)}})
	sim(t, simruntime.Config{Trace: tr, Live: len(tr)})
	var out, errb syncBuf
	if code := runLive(t, []string{"watch", "-p", pid, "-n", "3"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if n := strings.Count(out.String(), "System.Runtime/EventCounters"); n != 3 {
		t.Fatalf("%d events printed:\n%s", n, out.String())
	}
	for _, want := range []string{"the runtime has dropped 5 events so far", "3 events printed, 5 dropped by the runtime"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
}

// lastLine is the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// verdictOf is what nettrace.Checker says of data.
func verdictOf(data []byte) string {
	var c nettrace.Checker
	c.Write(data)
	return c.Close().Error()
}

// TestCollectBadStreams: a stream cut short, not a trace, missing its end
// or damaged ends collect with status 1 and one line that names the
// process and says what was seen, where; the file holds exactly what was
// sent, or is not written when none of it is a trace.
func TestCollectBadStreams(t *testing.T) {
	data, live := realStream(t)
	noise := make([]byte, 50000)
	rand.NewChaCha8([32]byte{5, 6}).Read(noise)
	noise[0] = 0x3f
	cut := live + 5000 // inside the first block of the rundown
	damaged := bytes.Clone(data)
	damaged[live] = 0x3f // the tag that begins the rundown's first block
	for _, c := range []struct {
		name string
		cfg  simruntime.Config
		args []string
		kept []byte // nil: no file is written
		part bool   // the file holds a beginning of kept (at least to the fault), of SIZE
		want string // the line, from "process PID: "
		has  string // a part of it, in words the test states
	}{
		{"the process exits mid-block", simruntime.Config{Trace: data[:cut], Live: -1, ExitAfterLive: true}, nil, data[:cut], false,
			"the runtime ended the session: " + verdictOf(data[:cut]) + "; kept the " + numfmt.Size(int64(cut)) + " read so far in OUT",
			"the stream ended in the middle of an EventBlock at byte "},
		{"cut mid-block after the stop", simruntime.Config{Trace: data[:cut], Live: live}, []string{"-duration", "100ms"}, data[:cut], false,
			verdictOf(data[:cut]) + "; kept the " + numfmt.Size(int64(cut)) + " read so far in OUT",
			"the stream ended in the middle of an EventBlock at byte "},
		{"no end tag", simruntime.Config{Trace: data[:len(data)-1], Live: live}, []string{"-duration", "100ms"}, data[:len(data)-1], false,
			verdictOf(data[:len(data)-1]) + "; kept the 344 kB read so far in OUT",
			"the stream ended before the end-of-stream tag, at byte 344,313, after "},
		{"random bytes", simruntime.Config{Trace: noise, Live: -1}, nil, nil, false,
			"not a nettrace stream: it begins with " + hexStart(noise) + " …; nothing was written to OUT",
			"not a nettrace stream: it begins with 3f "},
		{"damaged", simruntime.Config{Trace: damaged, Live: -1}, nil, damaged, true,
			verdictOf(damaged) + "; kept the SIZE read so far in OUT (well-formed up to byte " + numfmt.Thousands(int64(live)) + ")",
			"the stream is not well-formed at byte " + numfmt.Thousands(int64(live)) + ": found 3f where an object (05) or the end-of-stream tag (01) should begin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := sim(t, c.cfg)
			out := filepath.Join(t.TempDir(), "out.nettrace")
			var stderr syncBuf
			args := append([]string{"collect", "-p", pid, "-o", out}, c.args...)
			begin := time.Now()
			if code := run(nil, args, &stderr, &stderr); code != 1 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if d := time.Since(begin); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			got, err := os.ReadFile(out)
			switch {
			case c.kept == nil && !os.IsNotExist(err):
				t.Fatalf("the file is still there (%d bytes, %v)", len(got), err)
			case c.part && (!bytes.HasPrefix(c.kept, got) || len(got) <= live):
				t.Fatalf("the file holds %d bytes, not a beginning of the %d sent past the fault at %d (%v)", len(got), len(c.kept), live, err)
			case c.kept != nil && !c.part && !bytes.Equal(got, c.kept):
				t.Fatalf("the file holds %d bytes, not the %d sent (%v)", len(got), len(c.kept), err)
			}
			if names := dirNames(t, filepath.Dir(out)); (c.kept == nil) != (len(names) == 0) || len(names) > 1 {
				t.Errorf("the output's directory holds %q", names)
			}
			line := lastLine(stderr.String())
			want := "clrtrace: process " + pid + ": " + strings.NewReplacer("OUT", out, "SIZE", numfmt.Size(int64(len(got)))).Replace(c.want)
			if line != want || !strings.Contains(line, c.has) {
				t.Fatalf("stderr:\n%s\nwant the last line\n%s\nholding %q", stderr.String(), want, c.has)
			}
			// A stream that is no trace, or goes bad, ends the session at
			// once: no StopTracing, no wait for -duration.
			if c.cfg.Live < 0 {
				for _, r := range s.Requests() {
					if r.Set == 2 && r.ID == 1 {
						t.Errorf("StopTracing sent")
					}
				}
			}
		})
	}
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestCollectKeepsExistingFile: a file already at -o is replaced only once
// a session has started and some of a trace has come; a session the
// runtime refuses, or a stream that is no trace, leaves it byte for byte,
// and nothing else behind.
func TestCollectKeepsExistingFile(t *testing.T) {
	data, live := realStream(t)
	noise := make([]byte, 5000)
	rand.NewChaCha8([32]byte{7}).Read(noise)
	noise[0] = 0x3f
	previous := []byte("Nettrace yesterday's trace, which must survive")
	for _, c := range []struct {
		name string
		cfg  simruntime.Config
		args []string
		code int
		want []byte // what -o holds after
		line string // a part of stderr's last line
	}{
		{"refused", simruntime.Config{CollectError: simruntime.EFail}, nil, 1, previous, "CollectTracing"},
		{"stream closed at once", simruntime.Config{Trace: data, RefuseStreams: true}, nil, 1, previous, "nothing was written to "},
		{"no trace", simruntime.Config{Trace: noise, Live: -1}, nil, 1, previous, "nothing was written to "},
		{"a trace", simruntime.Config{Trace: data, Live: live}, []string{"-duration", "100ms"}, 0, data, "wrote "},
	} {
		t.Run(c.name, func(t *testing.T) {
			sim(t, c.cfg)
			out := filepath.Join(t.TempDir(), "app.nettrace")
			if err := os.WriteFile(out, previous, 0o640); err != nil {
				t.Fatal(err)
			}
			var stderr syncBuf
			args := append([]string{"collect", "-p", pid, "-o", out}, c.args...)
			if code := run(nil, args, &stderr, &stderr); code != c.code {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if line := lastLine(stderr.String()); !strings.Contains(line, c.line) {
				t.Errorf("stderr:\n%s\nwant the last line holding %q", stderr.String(), c.line)
			}
			got, err := os.ReadFile(out)
			if err != nil || !bytes.Equal(got, c.want) {
				t.Fatalf("%s holds %d bytes (%v), want %d", out, len(got), err, len(c.want))
			}
			if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("%s: mode %v (%v), want the previous file's -rw-r-----", out, fi.Mode(), err)
			}
			if names := dirNames(t, filepath.Dir(out)); len(names) != 1 {
				t.Errorf("the output's directory holds %q", names)
			}
		})
	}
}

func hexStart(b []byte) string {
	var s []string
	for _, x := range b[:8] {
		s = append(s, fmt.Sprintf("%02x", x))
	}
	return strings.Join(s, " ")
}

// TestCollectInterruptedDrain: while collect waits for the rundown after
// StopTracing, a second SIGINT (or the first, when -duration stopped the
// session) ends it at once, with status 1 and the file kept as far as it
// came; the runtime here would never end the stream.
func TestCollectInterruptedDrain(t *testing.T) {
	data, live := realStream(t)
	for _, c := range []struct {
		name  string
		args  []string
		first bool // send a signal to stop
		hint  string
	}{
		{"second SIGINT", nil, true, "^C again to quit now"},
		{"SIGINT after -duration", []string{"-duration", "50ms"}, false, "; ^C to quit now"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sim(t, simruntime.Config{Trace: data, Live: live, StallAfterStop: true})
			out := filepath.Join(t.TempDir(), "out.nettrace")
			sigs := make(chan os.Signal, 1)
			var stderr syncBuf
			done := make(chan int, 1)
			go func() {
				done <- run(sigs, append([]string{"collect", "-p", pid, "-o", out}, c.args...), &stderr, &stderr)
			}()
			waitFor := func(cond func() bool, what string) {
				t.Helper()
				for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
					select {
					case code := <-done:
						t.Fatalf("exit %d before %s: %s", code, what, stderr.String())
					default:
					}
					if time.Now().After(deadline) {
						t.Fatalf("no %s after 20s: %s", what, stderr.String())
					}
				}
			}
			if c.first {
				// The trace is written beside out until collect ends.
				waitFor(func() bool {
					es, _ := os.ReadDir(filepath.Dir(out))
					for _, e := range es {
						if st, err := e.Info(); err == nil && st.Size() == int64(live) {
							return true
						}
					}
					return false
				}, "live part in the file")
				sigs <- os.Interrupt
			}
			waitFor(func() bool { return strings.Contains(stderr.String(), "stopping; waiting up to 30s") }, "stopping")
			if !strings.Contains(stderr.String(), c.hint) {
				t.Errorf("no %q in %s", c.hint, stderr.String())
			}
			sigs <- syscall.SIGTERM
			select {
			case code := <-done:
				if code != 1 {
					t.Fatalf("exit %d: %s", code, stderr.String())
				}
			case <-time.After(5 * time.Second):
				t.Fatal("still running 5s after the second signal")
			}
			want := "clrtrace: process " + pid + ": interrupted while waiting for the rest of the stream after StopTracing; kept the " +
				numfmt.Size(int64(live)) + " read so far in " + out + " (without the rundown, method names may be missing)"
			if line := lastLine(stderr.String()); line != want {
				t.Fatalf("last line\n%s\nwant\n%s", line, want)
			}
			t.Log(stderr.String())
			if got, _ := os.ReadFile(out); !bytes.Equal(got, data[:live]) {
				t.Fatalf("the file holds %d bytes, not the %d sent", len(got), live)
			}
		})
	}
}

// TestCollectNewerVersion: a NetTrace version the checker does not know
// is copied whole, unchecked, and collect says so.
func TestCollectNewerVersion(t *testing.T) {
	tr := []byte("Nettrace\x00\x00\x00\x00\x07\x00\x00\x00\x01\x00\x00\x00")
	tr = append(tr, bytes.Repeat([]byte{0xAB}, 100000)...)
	sim(t, simruntime.Config{Trace: tr, Live: -1, ExitAfterLive: true})
	out := filepath.Join(t.TempDir(), "out.nettrace")
	var stderr syncBuf
	if code := run(nil, []string{"collect", "-p", pid, "-o", out}, &stderr, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{
		"clrtrace: process " + pid + ": the stream was copied but not checked: NetTrace version 7.1: a version newer than this program reads (6)\n",
		"process " + pid + ": the runtime ended the session; wrote 100020 bytes to " + out + "\n",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, tr) {
		t.Fatalf("the file holds %d bytes, not the %d sent", len(got), len(tr))
	}
}

// TestCollectDrainTimeout: a runtime that never ends the stream after
// StopTracing fails collect when the drain deadline passes, and the file
// keeps what came.
func TestCollectDrainTimeout(t *testing.T) {
	data, live := realStream(t)
	sim(t, simruntime.Config{Trace: data, Live: live, StallAfterStop: true})
	defer func(d time.Duration) { drainTimeout = d }(drainTimeout)
	drainTimeout = 300 * time.Millisecond
	out := filepath.Join(t.TempDir(), "out.nettrace")
	var stderr syncBuf
	if code := run(nil, []string{"collect", "-p", pid, "-o", out, "-duration", "50ms"}, &stderr, &stderr); code != 1 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := "clrtrace: process " + pid + ": the runtime did not end the stream within 300ms of StopTracing; kept the 315 kB read so far in " + out + " (it ends before the end-of-stream tag)"
	if line := lastLine(stderr.String()); line != want {
		t.Fatalf("last line\n%s\nwant\n%s", line, want)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, data[:live]) {
		t.Fatalf("the file holds %d bytes, not the %d sent", len(got), live)
	}
}

// TestWatchInterruptedDrain: watch too quits at the second SIGINT while
// it waits for the end of the stream.
func TestWatchInterruptedDrain(t *testing.T) {
	data, live := realStream(t)
	sim(t, simruntime.Config{Trace: data, Live: live, StallAfterStop: true})
	sigs := make(chan os.Signal, 2)
	var out, stderr syncBuf
	done := make(chan int, 1)
	go func() { done <- run(sigs, []string{"watch", "-p", pid}, &out, &stderr) }()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "ThreadSample"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("nothing printed: %s", stderr.String())
		}
	}
	sigs <- os.Interrupt
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), "stopping;"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no stop: %s", stderr.String())
		}
	}
	sigs <- os.Interrupt
	select {
	case code := <-done:
		if code != 1 || lastLine(stderr.String()) != "clrtrace: process "+pid+": interrupted while waiting for the end of the stream" {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5s after the second signal")
	}
}

// TestLiveBeforeStreamBegins: a runtime that starts the session but sends
// nothing (one suspended at startup begins its stream only once resumed)
// does not hold watch or counters: the first signal stops the session
// (and what the runtime sends then is printed), the next quits at once.
func TestLiveBeforeStreamBegins(t *testing.T) {
	data, _ := realStream(t)
	for _, cmd := range []string{"watch", "counters"} {
		for _, stall := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stall=%v", cmd, stall), func(t *testing.T) {
				sim(t, simruntime.Config{Trace: data, Live: 0, StallAfterStop: stall})
				sigs := make(chan os.Signal, 2)
				var out, stderr syncBuf
				done := make(chan int, 1)
				go func() { done <- run(sigs, []string{cmd, "-p", pid}, &out, &stderr) }()
				waitText := func(what string) {
					t.Helper()
					for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), what); time.Sleep(5 * time.Millisecond) {
						if time.Now().After(deadline) {
							t.Fatalf("no %q: %s", what, stderr.String())
						}
					}
				}
				waitText("started with")
				sigs <- os.Interrupt
				if stall {
					// Stopped, the runtime still sends nothing: quit.
					waitText("stopping;")
					sigs <- os.Interrupt
				}
				select {
				case code := <-done:
					want := "interrupted while waiting for the stream to begin"
					if !stall {
						want = ""
					}
					if stall && (code != 1 || !strings.HasSuffix(lastLine(stderr.String()), want)) || !stall && code != 0 {
						t.Fatalf("exit %d: %s", code, stderr.String())
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("still running 10s after the last signal: %s", stderr.String())
				}
			})
		}
	}
}

// TestWatchDamaged: a stream damaged in the middle prints every event the
// reader could read around the damage, then says what was skipped, naming
// the offset, and exits 1.
func TestWatchDamaged(t *testing.T) {
	data, _ := realStream(t)
	bad := bytes.Clone(data)
	for i := len(bad) / 2; i < len(bad)/2+64; i++ {
		bad[i] ^= 0x5a
	}
	sim(t, simruntime.Config{Trace: bad, Live: len(bad), ExitAfterLive: true})
	var out, errb bytes.Buffer
	code := runLive(t, []string{"watch", "-p", pid, "-format", "jsonl"}, &out, &errb)
	lines := strings.Count(out.String(), "\n")
	if code != 1 || lines < 20000 || !strings.Contains(errb.String(), "damaged range") ||
		!strings.Contains(errb.String(), "events printed") || !strings.Contains(errb.String(), "at offset") {
		t.Fatalf("exit %d, %d lines, stderr %s", code, lines, errb.String())
	}
	t.Log(strings.TrimSpace(errb.String()))
}
