package monitor_test

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/monitor"
)

// sessionCounter counts the sessions a simulated process has open, by
// kind (the monitoring session, the one that names compiled methods, the
// others), and how those that ended ended.
type sessionCounter struct {
	mu      sync.Mutex
	live    map[string]int
	ended   map[string]int // streams that returned
	stopped map[string]int // of those, the ones StopTracing ended
	maxLive map[string]int
	maxAll  int
}

func sessionKind(req *simruntime.Collect) string {
	for _, p := range req.Providers {
		if p.Name == "System.Runtime" {
			return "monitor"
		}
	}
	for _, p := range req.Providers {
		// namesConfig: the runtime provider's JIT and loader keywords
		// alone, at Verbose.
		if p.Name == "Microsoft-Windows-DotNETRuntime" && p.Keywords == 0x18 && p.Level == 5 {
			return "names"
		}
	}
	return "other"
}

func (c *sessionCounter) begin(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live[kind]++
	c.maxLive[kind] = max(c.maxLive[kind], c.live[kind])
	all := 0
	for _, n := range c.live {
		all += n
	}
	c.maxAll = max(c.maxAll, all)
}

func (c *sessionCounter) end(kind string, stopped bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live[kind]--
	c.ended[kind]++
	if stopped {
		c.stopped[kind]++
	}
}

func (c *sessionCounter) snapshot() (live, ended, stopped, maxLive map[string]int, maxAll int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := func(m map[string]int) map[string]int {
		o := map[string]int{}
		for k, v := range m {
			o[k] = v
		}
		return o
	}
	return cp(c.live), cp(c.ended), cp(c.stopped), cp(c.maxLive), c.maxAll
}

// cutWriter fails every write once left bytes have gone through: a
// monitoring stream that ends early while its process lives on.
type cutWriter struct {
	w    io.Writer
	left int
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if len(p) >= c.left {
		n, _ := c.w.Write(p[:c.left])
		c.left -= n
		return n, io.ErrShortWrite
	}
	n, err := c.w.Write(p)
	c.left -= n
	return n, err
}

// TestReattachStopsSessions: a process whose monitoring stream ends early
// while it still answers is attached again at the next poll; each attach
// stops the sessions it started (the rundown at attach, the session that
// names compiled methods) with StopTracing before the next begins, so the
// sessions open in the process stay bounded however often that happens.
// (They were left running until the monitor stopped: one more 16 MB
// Verbose session in the process per re-attach, until its runtime refused
// any more.)
func TestReattachStopsSessions(t *testing.T) {
	h := newHost(t)
	const pid = 710001
	w := &simruntime.Workload{PID: pid}
	c := &sessionCounter{live: map[string]int{}, ended: map[string]int{}, stopped: map[string]int{}, maxLive: map[string]int{}}
	stream := func(req *simruntime.Collect, out io.Writer, stop, closed <-chan struct{}) {
		kind := sessionKind(req)
		c.begin(kind)
		defer func() {
			select {
			case <-stop:
				c.end(kind, true)
			default:
				c.end(kind, false)
			}
		}()
		if kind == "monitor" {
			out = &cutWriter{w: out, left: 64 << 10}
		}
		w.Stream(req, out, stop, closed)
	}
	srv, err := simruntime.Start(h.dir, simruntime.Config{PID: pid, Stream: stream, Entrypoint: "Sim.App", DisambigKey: pid})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.sims[pid] = &sim{srv: srv, w: w}
	h.mu.Unlock()
	s := serve(t, h, monitor.Options{CounterInterval: 0.2}, monitor.Access{})

	const attaches = 6
	waitFor(t, 30*time.Second, "attaches", func() bool {
		n, _ := series(families(t, s), "clrevents_monitor_attaches_total")
		return n >= attaches
	})
	live, ended, stopped, maxLive, maxAll := c.snapshot()
	t.Logf("after %d attaches: live %v, ended %v (stopped %v), most at once %v, %d in all", attaches, live, ended, stopped, maxLive, maxAll)
	if maxLive["names"] > 1 || maxLive["monitor"] > 1 {
		t.Errorf("at most %d naming sessions and %d monitoring sessions open at once in the process; want 1 each", maxLive["names"], maxLive["monitor"])
	}
	// A monitoring session, a naming session and the rundown at attach.
	if maxAll > 3 {
		t.Errorf("%d sessions open at once in the process; want at most 3", maxAll)
	}
	// The naming sessions of the attaches that ended were stopped, not
	// left to the connection's end.
	if ended["names"] < attaches-2 || stopped["names"] != ended["names"] {
		t.Errorf("%d naming sessions ended, %d of them by StopTracing, after %d attaches", ended["names"], stopped["names"], attaches)
	}
	if n, _ := series(families(t, s), "clrevents_monitor_errors_total", "stage", "prime"); n != 0 {
		t.Errorf("%v prime errors: stopping an attach's own sessions is no failure\n%s", n, s.logs)
	}
}

// TestNamesSessionCut: the session that names compiled methods, cut while
// its process lives on, is a failure, counted under stage prime and
// logged, and is started again with a rundown, so that a profile still
// names the methods compiled after the cut. (It was neither counted nor
// logged nor restarted: every method compiled after the cut was ?!? in
// profiles for the rest of the attach.)
func TestNamesSessionCut(t *testing.T) {
	h := newHost(t)
	const pid = 710002
	w := &simruntime.Workload{PID: pid, JitMethods: 3000}
	c := &sessionCounter{live: map[string]int{}, ended: map[string]int{}, stopped: map[string]int{}, maxLive: map[string]int{}}
	var namesStarted atomic.Int32
	stream := func(req *simruntime.Collect, out io.Writer, stop, closed <-chan struct{}) {
		kind := sessionKind(req)
		c.begin(kind)
		defer c.end(kind, false)
		if kind == "names" && namesStarted.Add(1) == 1 {
			out = &cutWriter{w: out, left: 6 << 10}
		}
		w.Stream(req, out, stop, closed)
	}
	srv, err := simruntime.Start(h.dir, simruntime.Config{PID: pid, Stream: stream, Entrypoint: "Sim.App", DisambigKey: pid})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.sims[pid] = &sim{srv: srv, w: w}
	h.mu.Unlock()
	s := serve(t, h, monitor.Options{}, monitor.Access{})
	attached(t, s, pid)
	waitFor(t, 10*time.Second, "the cut counted and the session started again", func() bool {
		n, _ := series(families(t, s), "clrevents_monitor_errors_total", "stage", "prime")
		live, _, _, _, _ := c.snapshot()
		return n == 1 && live["names"] == 1 && namesStarted.Load() == 2
	})
	if l := s.logs.String(); !strings.Contains(l, "the session that names compiled methods failed, the process still answering") {
		t.Errorf("logs:\n%s", l)
	}
	time.Sleep(time.Second) // methods compiled after the restart
	code, b := get(t, fmt.Sprintf("%s/debug/pprof/profile?pid=%d&seconds=2", s.url, pid))
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	p, names := functions(t, b)
	unresolved := 0
	for _, x := range p.Sample {
		if len(x.Location) > 0 && len(x.Location[0].Line) > 0 && strings.Contains(x.Location[0].Line[0].Function.Name, "?!?") {
			unresolved++
		}
	}
	if unresolved > 0 || !strings.Contains(names, "Sim.App.Generated.Step") {
		t.Errorf("%d of %d samples with an unresolved leaf after the naming session's cut; functions:\n%s", unresolved, len(p.Sample), names)
	}
	if ps := processes(t, s)[pid]; ps.State != monitor.StateAttached {
		t.Errorf("state %s (%s)", ps.State, ps.Error)
	}
}
