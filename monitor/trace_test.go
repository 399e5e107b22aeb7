package monitor_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/monitor"
	"github.com/clrgo/clrevents/trace"
)

// TestTraceProcessExits: a process that exits during a trace window gives
// the trace recorded until then: 200, a body that ends cleanly where the
// process stopped (without the end-of-stream tag, which a reader reports
// after the events), and no window error counted, as for a profile
// window.
func TestTraceProcessExits(t *testing.T) {
	h := newHost(t)
	h.start(720001, &simruntime.Workload{})
	s := serve(t, h, monitor.Options{CounterInterval: 0.2}, monitor.Access{})
	attached(t, s, 720001)
	time.AfterFunc(time.Second, func() { h.exit(720001) })
	resp, err := http.Get(s.url + "/trace?pid=720001&seconds=5")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err != nil {
		t.Fatalf("%d, reading the body: %v (%d bytes)", resp.StatusCode, err, len(b))
	}
	r, err := trace.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err = r.Next()
		if err != nil {
			break
		}
		n++
	}
	if n == 0 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("the trace of a process that exited after 1 s: %d events, then %v; want events, then the trace cut short", n, err)
	}
	if c, _ := series(families(t, s), "clrevents_monitor_errors_total", "stage", "window"); c != 0 {
		t.Errorf("%v window errors for a trace window cut short by its process's exit\n%s", c, s.logs)
	}
	if !strings.Contains(s.logs.String(), "cut short by the process's exit") {
		t.Errorf("logs:\n%s", s.logs)
	}
}

// TestTraceStreamFails: a trace window whose stream ends early while the
// process still answers is a failure after the status was sent: the
// response is aborted, so the client's read of the body fails (it ended
// cleanly, as a process's exit ends it), and the failure is counted.
func TestTraceStreamFails(t *testing.T) {
	s := cutWindows(t, 720002)
	resp, err := http.Get(s.url + "/trace?pid=720002&seconds=5")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err == nil {
		t.Errorf("%d, %d bytes, reading the body: %v; want 200 and a failed read", resp.StatusCode, len(b), err)
	}
	waitFor(t, 5*time.Second, "the window error counted", func() bool {
		c, _ := series(families(t, s), "clrevents_monitor_errors_total", "stage", "window")
		return c == 1
	})
	if l := s.logs.String(); !strings.Contains(l, "trace of process 720002: process 720002: the trace window's stream failed after") || !strings.Contains(l, "response aborted") {
		t.Errorf("logs:\n%s", l)
	}
}

// TestProfileStreamFails: a profile window whose stream ends early while
// the process still answers is an error (500), counted, not the profile
// of what came, as a window cut short by the process's exit is.
func TestProfileStreamFails(t *testing.T) {
	s := cutWindows(t, 720003)
	resp, err := http.Get(s.url + "/debug/pprof/profile?pid=720003&seconds=5")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(b), "process 720003") {
		t.Errorf("%d %q; want 500 naming the process", resp.StatusCode, b)
	}
	waitFor(t, 5*time.Second, "the window error counted", func() bool {
		c, _ := series(families(t, s), "clrevents_monitor_errors_total", "stage", "window")
		return c == 1
	})
}

// cutWindows serves a monitor of one simulated process, pid, attached,
// whose window sessions (those with the SampleProfiler: a CPU profile, a
// cpu-sampling trace) are cut after 32 KiB while the process lives on.
func cutWindows(t *testing.T, pid int) *server {
	h := newHost(t)
	w := &simruntime.Workload{PID: pid}
	stream := func(req *simruntime.Collect, out io.Writer, stop, closed <-chan struct{}) {
		for _, p := range req.Providers {
			if p.Name == "Microsoft-DotNETCore-SampleProfiler" {
				out = &cutWriter{w: out, left: 32 << 10} // a window's session: cut
			}
		}
		w.Stream(req, out, stop, closed)
	}
	srv, err := simruntime.Start(h.dir, simruntime.Config{PID: pid, Stream: stream, Entrypoint: "Sim.App", DisambigKey: uint64(pid)})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.sims[pid] = &sim{srv: srv, w: w}
	h.mu.Unlock()
	s := serve(t, h, monitor.Options{CounterInterval: 0.2}, monitor.Access{})
	attached(t, s, pid)
	return s
}
