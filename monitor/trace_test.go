package monitor_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
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
	h.startWith(simruntime.Config{PID: pid, Stream: stream, Entrypoint: "Sim.App", DisambigKey: uint64(pid)}, w)
	s := serve(t, h, monitor.Options{CounterInterval: 0.2}, monitor.Access{})
	attached(t, s, pid)
	return s
}

// stuckGet sends GET path to the server at url on a connection with a
// small receive buffer and never reads the answer: a client that stopped
// reading (a pager left open, a hung script).
func stuckGet(t *testing.T, url, path string) net.Conn {
	t.Helper()
	addr := strings.TrimPrefix(url, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr)
	return c
}

// TestTraceClientStalls: a /trace client that stops reading loses its
// response once it has taken nothing for Options.TraceStall, which frees
// its process's window slot; and it does not hold the shutdown. (It held
// the slot for as long as it stayed connected, every later window of the
// process 409, and the shutdown waited the server's whole timeout.)
func TestTraceClientStalls(t *testing.T) {
	t.Run("slot", func(t *testing.T) {
		h := newHost(t)
		const pid = 720004
		sm := h.start(pid, &simruntime.Workload{Rate: 200000})
		s := serve(t, h, monitor.Options{TraceStall: time.Second}, monitor.Access{})
		attached(t, s, pid)
		stuckGet(t, s.url, fmt.Sprintf("/trace?pid=%d&seconds=2", pid))
		start := time.Now()
		waitFor(t, 5*time.Second, "the trace window's session", func() bool {
			for _, r := range sm.srv.Requests() {
				for _, p := range collectProviders(r) {
					if p == "Microsoft-DotNETCore-SampleProfiler" {
						return true
					}
				}
			}
			return false
		})
		waitFor(t, 20*time.Second, "a window after the stuck trace's", func() bool {
			code, _ := get(t, fmt.Sprintf("%s/debug/pprof/mutex?pid=%d&seconds=1", s.url, pid))
			return code == 200
		})
		t.Logf("the next window ran %v after the 2 s trace window began", time.Since(start).Round(time.Millisecond))
		if l := s.logs.String(); !strings.Contains(l, "the client took none of the trace for 1s") || !strings.Contains(l, "response aborted") {
			t.Errorf("logs:\n%s", l)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		h := newHost(t)
		const pid = 720005
		h.start(pid, &simruntime.Workload{Rate: 200000})
		s := serve(t, h, monitor.Options{}, monitor.Access{})
		attached(t, s, pid)
		stuckGet(t, s.url, fmt.Sprintf("/trace?pid=%d&seconds=1", pid))
		time.Sleep(3 * time.Second) // the window is over; its client takes nothing
		start := time.Now()
		s.stop()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("ListenAndServe: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no return within 30 s of the end")
		}
		s.done <- nil // for the cleanup
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the shutdown took %v with a trace client that reads nothing; want it not to wait for that client", d)
		}
	})
}

// collectProviders names the providers of r, when it starts a session.
func collectProviders(r simruntime.Request) []string {
	if r.Collect == nil {
		return nil
	}
	var names []string
	for _, p := range r.Collect.Providers {
		names = append(names, p.Name)
	}
	return names
}
