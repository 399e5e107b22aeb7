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
		if p.Name == "Microsoft-DotNETCore-SampleProfiler" {
			return "other" // a CPU window, which names its compiles too
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
	h.startWith(simruntime.Config{PID: pid, Stream: stream, Entrypoint: "Sim.App", DisambigKey: pid}, w)
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
	h.startWith(simruntime.Config{PID: pid, Stream: stream, Entrypoint: "Sim.App", DisambigKey: pid}, w)
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

// gateWriter fails every write once cut is closed: a stream that ends,
// between blocks and without its end, when the test says.
type gateWriter struct {
	w   io.Writer
	cut <-chan struct{}
}

func (g *gateWriter) Write(p []byte) (int, error) {
	select {
	case <-g.cut:
		return 0, io.ErrClosedPipe
	default:
		return g.w.Write(p)
	}
}

// startCut starts simulated process pid (its runtime instance cookie),
// whose first monitoring stream wrap wraps.
func startCut(t *testing.T, h *host, pid int, key uint64, cookie byte, w *simruntime.Workload, wrap func(io.Writer) io.Writer) *simruntime.Server {
	t.Helper()
	var monitors atomic.Int32
	stream := func(req *simruntime.Collect, out io.Writer, stop, closed <-chan struct{}) {
		if sessionKind(req) == "monitor" && monitors.Add(1) == 1 {
			out = wrap(out)
		}
		w.Stream(req, out, stop, closed)
	}
	return h.startWith(simruntime.Config{PID: pid, Stream: stream, Entrypoint: "Sim.App", DisambigKey: key, Cookie: [16]byte{cookie}}, w).srv
}

// TestReattachKeepsCounts: a process whose monitoring stream is cut
// while it lives on keeps its series: they stay in /metrics until the
// next attach, which counts on from them (the same runtime instance), so
// no counter goes back and no gauge goes missing. (The counts were
// thrown away: the series went, and came back from 0 under the same
// labels, which Prometheus takes for a reset or, past the old value by
// the next scrape, misses.)
func TestReattachKeepsCounts(t *testing.T) {
	h := newHost(t)
	const pid = 710003
	w := &simruntime.Workload{PID: pid}
	startCut(t, h, pid, pid, 1, w, func(out io.Writer) io.Writer { return &cutWriter{w: out, left: 200 << 10} })
	s := serve(t, h, monitor.Options{Poll: 500 * time.Millisecond, CounterInterval: 0.2}, monitor.Access{})
	sid := fmt.Sprint(pid)
	var events, gcs, read, reattached float64
	seen := false
	waitFor(t, 30*time.Second, "the attach after the cut, counting", func() bool {
		f := families(t, s)
		e, ok := series(f, "dotnet_events_total", "pid", sid)
		g, _ := series(f, "dotnet_gc_collections_total", "pid", sid, "generation", "gen0")
		_, heap := series(f, "dotnet_gc_heap_size_bytes", "pid", sid, "generation", "gen0")
		r, attached := series(f, "clrevents_monitor_events_read_total", "pid", sid)
		switch {
		case !ok && seen:
			t.Fatalf("process %d's series went from /metrics", pid)
		case !ok:
			return false
		case e < events || g < gcs:
			t.Fatalf("counts went back: events %v to %v, gen0 GCs %v to %v", events, e, gcs, g)
		case seen && !heap:
			t.Fatal("the heap size gauge went from /metrics")
		case attached && r < read:
			t.Fatalf("events read went back: %v to %v", read, r)
		}
		seen, events, gcs = true, e, g
		if attached {
			read = r
		}
		// Done once the next attach has counted for a while.
		if n, _ := series(f, "clrevents_monitor_attaches_total"); n < 2 || !attached {
			return false
		}
		if reattached == 0 {
			reattached = e
		}
		return e > reattached+1000
	})
	if n, _ := series(families(t, s), "clrevents_monitor_errors_total", "stage", "stream"); n != 1 {
		t.Errorf("%v stream errors; want the cut counted once\n%s", n, s.logs)
	}
}

// TestReattachNewInstance: when the process that answers under a PID
// after a monitoring stream's cut is another runtime instance (another
// cookie: the process exited and its PID was given to another), its
// counts start from 0, not from the earlier instance's.
func TestReattachNewInstance(t *testing.T) {
	h := newHost(t)
	const pid = 710004
	cut := make(chan struct{})
	old := startCut(t, h, pid, pid, 1, &simruntime.Workload{PID: pid, Rate: 20000}, func(out io.Writer) io.Writer { return &gateWriter{w: out, cut: cut} })
	t.Cleanup(func() { old.Close() })
	s := serve(t, h, monitor.Options{}, monitor.Access{})
	sid := fmt.Sprint(pid)
	var before float64
	waitFor(t, 10*time.Second, "the first instance counting", func() bool {
		before, _ = series(families(t, s), "dotnet_events_total", "pid", sid)
		return before > 20000
	})
	// Another instance under the PID, found from now on; the first still
	// answers when its stream is cut, as a process about to exit may.
	startCut(t, h, pid, pid+1, 2, &simruntime.Workload{PID: pid, Rate: 200}, func(out io.Writer) io.Writer { return out })
	close(cut)
	waitFor(t, 10*time.Second, "the second instance attached", func() bool {
		f := families(t, s)
		n, _ := series(f, "clrevents_monitor_attaches_total")
		_, ok := series(f, "dotnet_events_total", "pid", sid)
		return n >= 2 && ok
	})
	if after, _ := series(families(t, s), "dotnet_events_total", "pid", sid); after >= before {
		t.Errorf("the second instance's events %v, the first's %v: the counts went on from another process's", after, before)
	}
}

// TestReattachRemoveRace: an attach of the PID that begins as the last
// one's end is being handled keeps its series. (remove dropped the PID's
// metrics from the Set after letting go of the monitor's lock: an attach
// in between got the old metrics, which then went from the Set, and its
// series were missing from /metrics for the whole attach.)
func TestReattachRemoveRace(t *testing.T) {
	monitor.SetRemovedHook(func(int) { time.Sleep(300 * time.Millisecond) })
	t.Cleanup(func() { monitor.SetRemovedHook(nil) })
	h := newHost(t)
	const pid = 710005
	startCut(t, h, pid, pid, 1, &simruntime.Workload{PID: pid}, func(out io.Writer) io.Writer { return &cutWriter{w: out, left: 100 << 10} })
	s := serve(t, h, monitor.Options{Poll: 100 * time.Millisecond}, monitor.Access{})
	waitFor(t, 20*time.Second, "the attach after the cut", func() bool {
		n, _ := series(families(t, s), "clrevents_monitor_attaches_total")
		return n >= 2
	})
	time.Sleep(time.Second) // past the hook's pause
	f := families(t, s)
	read, _ := series(f, "clrevents_monitor_events_read_total", "pid", fmt.Sprint(pid))
	if _, ok := series(f, "dotnet_events_total", "pid", fmt.Sprint(pid)); !ok || read == 0 {
		t.Errorf("events read %v, and no dotnet_events_total: the attach's series are missing", read)
	}
}
