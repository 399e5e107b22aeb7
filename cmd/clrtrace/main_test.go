package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
)

const realTrace = "../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"

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
			if code := run(context.Background(), args, &stderr, &stderr); code != 0 {
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

// runUntil runs clrtrace in the background and cancels it (SIGINT) once
// stdout holds want.
func runUntil(t *testing.T, args []string, want string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuf
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, &out, &errb) }()
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
	cancel() // the stream is still open: this output is live
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

func TestCounters(t *testing.T) {
	tr, live := simruntime.CountersTrace(os.Getpid(), [][]simruntime.Counter{
		{{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 12.5},
			{Name: "alloc-rate", DisplayName: "Allocation Rate", Units: "B", Increment: true, Value: 8168}},
		{{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 3}},
	})
	s := sim(t, simruntime.Config{Trace: tr, Live: live})
	out, _ := runUntil(t, []string{"counters", "-p", pid, "-interval", "2"}, row("CPU Usage (%)", 3))
	for _, want := range []string{"[System.Runtime]", row("CPU Usage (%)", 12.5), row("Allocation Rate (B / 1 sec)", 8168)} {
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
	if code := run(context.Background(), []string{"ps"}, &out, &errb); code != 0 {
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
		code := run(context.Background(), args, &out, &errb)
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
		ln, err := net.Listen("unix", filepath.Join(dir, "dotnet-diagnostic-"+pid+"-1-socket"))
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		check(t, []string{"watch", "-p", pid}, "process "+pid+": CollectTracing3: dial unix")
	})
	t.Run("runtime error", func(t *testing.T) {
		sim(t, simruntime.Config{CollectError: simruntime.EFail})
		check(t, []string{"collect", "-p", pid, "-o", filepath.Join(t.TempDir(), "x")},
			"process "+pid+": CollectTracing: the runtime answered error 0x80004005 (failure)")
	})
	t.Run("usage", func(t *testing.T) {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"collect", "-p", pid}, &out, &errb); code != 2 {
			t.Fatalf("missing -o: exit %d", code)
		}
	})
}

// TestWatchLimit: text output, -event on the TraceEvent name, -n: the
// session is stopped after n events.
func TestWatchLimit(t *testing.T) {
	data, live := realStream(t)
	s := sim(t, simruntime.Config{Trace: data, Live: live})
	var out, errb syncBuf
	code := run(context.Background(), []string{"watch", "-p", pid, "-event", "ThreadSample", "-n", "3"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], " Microsoft-DotNETCore-SampleProfiler/ThreadSample pid=") {
		t.Fatalf("output:\n%s", out.String())
	}
	reqs := s.Requests()
	if reqs[len(reqs)-1].ID != 1 {
		t.Fatalf("no StopTracing after -n: %+v", reqs)
	}
}

// row is a counters line: the label, then the value column (which
// TestFormatValue checks).
func row(label string, v float64) string {
	return "    " + label + strings.Repeat(" ", 52-len(label)) + " " + formatValue(v) + "\n"
}

// TestFormatValue: dotnet-counters' examples, with the integer part ending
// in column 15 and room for three decimals after it.
func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{
		1421893.21:  "      1,421,893.21 ",
		0.123:       "              0.123",
		-0.123:      "             -0.123",
		7:           "              7    ",
		-675430.9:   "       -675,430.9  ",
		-12675430.9: "    -12,675,430.9  ",
		0:           "              0    ",
		4.9012e25:   "     4.9012e+25   ",
	} {
		if got := formatValue(v); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestWatchReportsDrops: a gap in the sequence numbers is reported as it
// is seen, and in the summary.
func TestWatchReportsDrops(t *testing.T) {
	cpu := func(v float64, dropped uint32) simruntime.Counter {
		return simruntime.Counter{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: v, Dropped: dropped}
	}
	tr, _ := simruntime.CountersTrace(os.Getpid(), [][]simruntime.Counter{{cpu(1, 0), cpu(2, 5)}, {cpu(3, 0)}})
	sim(t, simruntime.Config{Trace: tr, Live: len(tr)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb syncBuf
	if code := run(ctx, []string{"watch", "-p", pid, "-n", "3"}, &out, &errb); code != 0 {
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
