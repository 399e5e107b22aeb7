// Package monitor is an always-on collector for the .NET processes of a
// host: it finds them through their diagnostic sockets (as clrtrace ps
// does), keeps one monitoring session on each, turns the events into
// Prometheus metrics (package metrics) and keeps each process's code map
// current (package symbols), detaches when a process exits and picks up new
// ones within a poll interval. A process's series stay for
// Options.KeepExited (2 minutes by default) after it exits, so that the
// scrapes after its exit export what it counted since the last one
// before (a short-lived or crash-looping process is seen whole as long
// as a scrape comes within that time), then go; a new process under its
// PID replaces them at once. A process whose monitoring stream ends
// early while it still answers keeps its series (gauges included) until
// the next poll attaches it again; an attach of the same runtime instance
// (the same PID and runtime cookie, as ProcessInfo gives them) counts on
// from them, so its counters do not go back (the events of the moment
// between the two attaches are not counted), and a new process under the
// PID starts from 0. Its HTTP
// handler serves what fleets already scrape:
//
//	GET /processes                                   JSON: each process's PID, command line, runtime version, OS, architecture, attach state, events read and dropped
//	GET /metrics                                     Prometheus text: the processes' runtime metrics and the collector's own health
//	GET /debug/pprof/profile?pid=PID&seconds=N       gzipped pprof CPU profile of the next N seconds (go tool pprof reads it): the SampleProfiler's thread time, sample type wall, each sample labelled state=managed or external
//	GET /debug/pprof/allocs?pid=PID&seconds=N        allocations of the next N seconds: alloc_space in bytes and alloc_objects counting GCAllocationTick events (one per ~100 KB allocated)
//	GET /debug/pprof/mutex?pid=PID&seconds=N         lock contention of the next N seconds: contentions, and delay in nanoseconds (ContentionStart's stack)
//	GET /trace?pid=PID&seconds=N[&profile=P][&providers=SPEC]  the session's .nettrace, as clrtrace collect writes it
//
//	m := monitor.New(monitor.Options{})
//	go m.Run(ctx) // discovers and attaches until ctx ends, then stops every session
//	http.Handle("/", m.Handler())
//
// or ListenAndServe, which adds the access rules clrtrace serve applies
// (loopback only unless a bearer token is required, TLS when given).
// Without a token it serves only requests whose Host is localhost,
// 127.0.0.0/8 or ::1 (with or without a port), and answers the others
// 421: a web page whose name an attacker makes resolve to 127.0.0.1 (DNS
// rebinding) gets nothing from the user's browser. Behind a proxy or a
// name of your own, require a token.
//
// # Sessions
//
// The monitoring session enables the runtime provider's GC, JIT, loader,
// exception, contention and threading keywords (at Informational unless
// Options.RuntimeLevel says Verbose, which adds allocation ticks and JIT
// compile times) and System.Runtime's EventCounters, without stacks or
// rundown. At attach, a second short session is stopped at once for its
// rundown, which lists the methods compiled before; the runtime names the
// methods it compiles from then on (MethodLoadVerbose) only to a session
// that has its provider at Verbose, so below Verbose a third session, of
// the JIT and loader keywords alone at Verbose, names them (at Verbose the
// monitoring session's method loads do). Together they keep the process's
// code map current, so a profile window needs no rundown of its own and
// names the methods its stacks run through. A profile window's session
// also enables the JIT and loader keywords at Verbose: the runtime writes
// each session's events on its own schedule, so the other sessions may
// deliver the loads of the methods compiled near the window's end only
// after the window ends, and the window's own stream, written whole at
// its stop, names them. A session that names methods
// whose stream ends while the process still answers (a cut, not the
// process's exit) is a failure, counted under stage prime and logged; it
// is started again, with a rundown of the methods compiled in between.
// These sessions belong to the attach: when its monitoring stream ends
// they are stopped (StopTracing, the drain) before the process can be
// attached again, so a process
// whose monitoring stream ends early while it still answers, attached
// again at the next poll, has at most the three open at any time (the
// runtime allows 64 sessions at once). A window (profile or trace) is a
// session of its own for its duration; one window per process at a time
// (409 otherwise). A window needs its process attached: one not listed
// in /processes is 404; one listed as attaching, failed or detached is
// 409, naming its state and, for failed, the error.
//
// # Trace responses
//
// /trace streams the session's bytes as they come, so its status (200)
// is sent with the first of them. A failure before then is an HTTP error
// (404, 409, 500, …). After it, a client sees one of three ends: the
// body ends with the nettrace end-of-stream tag (the window ran its
// course, or the monitor stopped during it: after StopTracing the
// runtime writes the rundown and the end); the body ends cleanly without that
// tag (the process exited during the window: what it recorded until
// then, which a trace reader reads up to the cut; no failure, not
// counted); or the response is aborted (any other failure after the
// first byte: the connection is reset, with HTTP/1.1 the chunked body
// ends without its last chunk, so the client's read fails; logged, and
// counted under stage window unless it was the write to the client
// that failed). A client must take the bytes as they come: one that
// takes none for Options.TraceStall (30 s by default; a second once the
// monitor stops) has its response aborted and the failure logged, which
// ends the window and frees the process for the next one (the stream is
// not buffered for it).
//
// # Bounds
//
// Windows last 1 to Options.MaxWindow seconds (300 by default; 400 for
// other values), 30 when the request gives no seconds= (net/http/pprof's
// default) or Options.MaxWindow when that is shorter; only GET is served
// (405 otherwise), without a request body. Memory stays flat: per process, the metrics are fixed fields and
// capped label sets, the code map grows only with the code the process
// compiles, and events are handled as they come.
package monitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrgo/clrevents/diagnostics"
	"github.com/clrgo/clrevents/metrics"
	"github.com/clrgo/clrevents/symbols"
	"github.com/clrgo/clrevents/trace"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Options configure a Monitor. The zero value monitors every .NET process
// found, polling every 2 seconds.
type Options struct {
	// PIDs restricts the monitor to these processes; nil means every
	// process found.
	PIDs []int
	// Poll is the time between discoveries (0: 2 s).
	Poll time.Duration
	// CounterInterval is System.Runtime's EventCounters interval in
	// seconds (0: 1).
	CounterInterval float64
	// RuntimeLevel is the runtime provider's level in the monitoring
	// session (0: diagnostics.LevelInformational). LevelVerbose adds
	// GCAllocationTick (dotnet_gc_allocated_bytes_total) and
	// MethodJittingStarted (JIT compile times).
	RuntimeLevel uint32
	// MaxWindow bounds a profile or trace window, in whole seconds (0:
	// 300 s; less than a second is a second). A request without seconds=
	// gets 30 s, or MaxWindow when that is shorter.
	MaxWindow time.Duration
	// Drain bounds the wait for the end of a stream after StopTracing
	// (0: 10 s).
	Drain time.Duration
	// KeepExited is how long the series of a process that exited stay
	// in /metrics (0: 2 minutes, twice Prometheus's default scrape
	// interval; negative: none): the scrapes in that time export what it
	// counted after the last one before its exit.
	KeepExited time.Duration
	// TraceStall bounds how long a /trace client may take none of the
	// bytes written to it (0: 30 s): a client that stops reading loses
	// the rest of its response, so that it does not hold its process's
	// window slot; one that reads, even slowly, gets all of it as long
	// as it takes each write within the limit (a write is at most the
	// stream's buffer, 64 KiB, less what the socket holds).
	TraceStall time.Duration
	// Discover lists the processes to monitor (nil: diagnostics.Processes;
	// with PIDs, the endpoints of those processes alone, without listing
	// every process of the host).
	Discover func() ([]diagnostics.Process, error)
	// Metrics bounds the metrics kept per process.
	Metrics metrics.Options
	// Logf, when not nil, logs attaches, detaches and failures.
	Logf func(format string, args ...any)
}

// Monitor watches a host's .NET processes. Create it with New, start it
// with Run and serve its Handler.
type Monitor struct {
	o        Options
	set      *metrics.Set
	registry *prometheus.Registry

	mu      sync.Mutex
	procs   map[int]*proc
	backoff map[int]time.Time // failed attaches: not before
	// instances are the runtime instances whose metrics the Set holds,
	// by PID: changed only under mu, with the Set.
	instances map[int]*instance
	running   bool
	wg        sync.WaitGroup

	attaches, detaches atomic.Uint64
	errs               [numStages]atomic.Uint64
}

// The stages a failure is counted under.
const (
	stageAttach   = iota // ProcessInfo or the monitoring session failed to start
	stagePrime           // the rundown session at attach failed
	stageStream          // the monitoring stream ended with an error
	stageWindow          // a profile or trace window failed
	stageDiscover        // listing the processes failed
	numStages
)

var stageNames = [numStages]string{"attach", "prime", "stream", "window", "discover"}

// New returns a Monitor; Run starts it.
func New(o Options) *Monitor {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.CounterInterval <= 0 {
		o.CounterInterval = 1
	}
	if o.RuntimeLevel == 0 {
		o.RuntimeLevel = diagnostics.LevelInformational
	}
	if o.MaxWindow <= 0 {
		o.MaxWindow = 300 * time.Second
	}
	o.MaxWindow = max(o.MaxWindow, time.Second) // seconds= is a whole number from 1
	if o.Drain <= 0 {
		o.Drain = 10 * time.Second
	}
	switch {
	case o.KeepExited == 0:
		o.KeepExited = 2 * time.Minute
	case o.KeepExited < 0:
		o.KeepExited = 0
	}
	if o.TraceStall <= 0 {
		o.TraceStall = 30 * time.Second
	}
	if o.Discover == nil {
		o.Discover = diagnostics.Processes
		if len(o.PIDs) > 0 {
			o.Discover = findPIDs(o.PIDs, o.Logf)
		}
	}
	m := &Monitor{o: o, set: metrics.New(o.Metrics), registry: prometheus.NewRegistry(),
		procs: map[int]*proc{}, backoff: map[int]time.Time{}, instances: map[int]*instance{}}
	m.registry.MustRegister(m.set, (*health)(m), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry /metrics serves: the processes' metrics,
// the monitor's health and the Go runtime's and process's own. A user may
// register more collectors with it.
func (m *Monitor) Registry() *prometheus.Registry { return m.registry }

// instance is a runtime instance whose metrics the Set holds under its
// PID. They outlive an attach whose monitoring stream ends while the
// process still answers, so that the next attach of the instance counts
// on from them.
type instance struct {
	info *diagnostics.ProcessInfo
	// read and dropped are the events read and dropped by the
	// instance's attaches that ended.
	read, dropped uint64
	// exited is when the process exited, or zero: its metrics stay for
	// Options.KeepExited after it.
	exited time.Time
}

// sameInstance reports whether a and b describe the same runtime
// instance: the runtime's cookie is unique per instance (and the command
// line must agree, for a runtime that gives no cookie).
func sameInstance(a, b *diagnostics.ProcessInfo) bool {
	return a.RuntimeCookie == b.RuntimeCookie && a.CommandLine == b.CommandLine
}

// proc is a monitored process.
type proc struct {
	pid   int
	cl    *diagnostics.Client
	start time.Time

	mu    sync.Mutex // guards the fields below, and info once set
	info  *diagnostics.ProcessInfo
	name  string
	state string
	err   string

	events, dropped atomic.Uint64 // since the instance was first attached

	symMu sync.Mutex
	sym   *symbols.Map

	window atomic.Bool // a profile or trace window is running
	done   chan struct{}
}

// The attach states /processes reports.
const (
	StateAttaching = "attaching" // asking the process, starting the session
	StateAttached  = "attached"  // the monitoring session runs
	StateDetached  = "detached"  // the session ended (the process exited, or the monitor stops)
	StateFailed    = "failed"    // attaching failed (Error says why); retried after a back-off
)

func (p *proc) setState(s string, err error) {
	p.mu.Lock()
	p.state = s
	if err != nil {
		p.err = oneLine(err.Error())
	}
	p.mu.Unlock()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (m *Monitor) logf(format string, args ...any) {
	if m.o.Logf != nil {
		m.o.Logf(format, args...)
	}
}

// Run discovers processes every Options.Poll and monitors each until ctx
// ends; it then stops every session (StopTracing, the rest of the stream
// drained within Options.Drain) and returns nil once all have ended. It
// fails only when called twice at once.
func (m *Monitor) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.running {
		m.mu.Unlock()
		return errors.New("monitor: Run is already running")
	}
	m.running = true
	m.mu.Unlock()
	defer func() {
		m.wg.Wait()
		m.mu.Lock()
		m.running = false
		m.mu.Unlock()
	}()
	t := time.NewTicker(m.o.Poll)
	defer t.Stop()
	for {
		m.discover(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// findPIDs discovers the given processes alone (diagnostics.Find for
// each), logging when one is not found and when it is again.
func findPIDs(pids []int, logf func(format string, args ...any)) func() ([]diagnostics.Process, error) {
	missing := map[int]string{} // by PID, why it was not found last time
	return func() ([]diagnostics.Process, error) {
		var out []diagnostics.Process
		for _, pid := range pids {
			addr, err := diagnostics.Find(pid)
			if err != nil {
				if why := err.Error(); missing[pid] != why && logf != nil {
					logf("process %d (given with -pid): not found: %v", pid, err)
					missing[pid] = why
				}
				continue
			}
			if _, ok := missing[pid]; ok && logf != nil {
				logf("process %d (given with -pid): found at %s", pid, addr)
			}
			delete(missing, pid)
			out = append(out, diagnostics.Process{PID: pid, Address: addr})
		}
		return out, nil
	}
}

// discover attaches to the processes found that are not monitored yet.
func (m *Monitor) discover(ctx context.Context) {
	found, err := m.o.Discover()
	if err != nil {
		m.errs[stageDiscover].Add(1)
		m.logf("listing processes: %v", err)
		return
	}
	now := time.Now()
	seen := map[int]bool{}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, f := range found {
		if len(m.o.PIDs) > 0 && !slices.Contains(m.o.PIDs, f.PID) {
			continue
		}
		seen[f.PID] = true
		if old := m.procs[f.PID]; old != nil && !old.failed() || now.Before(m.backoff[f.PID]) || ctx.Err() != nil {
			continue
		}
		p := &proc{pid: f.PID, cl: diagnostics.NewClientAddress(f.PID, f.Address), start: now,
			state: StateAttaching, sym: symbols.NewMap(), done: make(chan struct{})}
		m.procs[f.PID] = p
		m.wg.Add(1)
		go m.watch(ctx, p)
	}
	for pid := range m.backoff {
		if !seen[pid] {
			delete(m.backoff, pid)
			if p := m.procs[pid]; p != nil && p.failed() {
				delete(m.procs, pid)
			}
		}
	}
	for pid, inst := range m.instances {
		p := m.procs[pid]
		switch {
		case !inst.exited.IsZero():
			if now.Sub(inst.exited) >= m.o.KeepExited && p == nil {
				m.forget(pid) // exited, and kept long enough
			}
		case !seen[pid] && (p == nil || p.failed()):
			// Kept from an attach that ended early, and gone since.
			m.forget(pid)
		}
	}
}

// forget drops the metrics of process pid. m.mu is held.
func (m *Monitor) forget(pid int) {
	m.set.Remove(int64(pid))
	delete(m.instances, pid)
}

// remove forgets p once its monitoring has ended. A process that failed
// to attach stays listed (state failed, with the error, and the back-off
// fail set) until discovery no longer finds it. The metrics of a process
// that exited stay for Options.KeepExited (discover lets them go); else
// they go with it unless keep: those of a process that still answers are
// kept for the next attach of the same runtime instance (attachMetrics),
// until discovery no longer finds the process. The Set changes under
// m.mu, as in attachMetrics, and only while p is its PID's latest
// attach: a later
// attach of the PID, which may have begun once p failed, has the PID's
// metrics from then on.
func (m *Monitor) remove(p *proc, failed, keep, exited bool) {
	m.mu.Lock()
	if m.procs[p.pid] == p {
		if !failed {
			delete(m.procs, p.pid)
		}
		switch inst := m.instances[p.pid]; {
		case inst == nil:
		case exited && m.o.KeepExited > 0:
			// Kept for the scrapes after the exit (discover lets them
			// go), or until a new process of the PID attaches.
			inst.exited = time.Now()
		case !keep:
			m.forget(p.pid)
		case !failed:
			// p counted on from the instance's earlier attaches.
			inst.read, inst.dropped = p.events.Load(), p.dropped.Load()
		}
	}
	m.mu.Unlock()
	if testHookRemoved != nil {
		testHookRemoved(p.pid)
	}
}

// testHookRemoved, when not nil, is called by remove once it has let go
// of m.mu: tests widen that moment, in which the next attach of the PID
// may begin, to show that remove has nothing left to do then.
var testHookRemoved func(pid int)

// attachMetrics returns the metrics of p's process, attached now: those
// the Set holds under its PID when they are of the same runtime instance
// (an attach again after the monitoring stream ended early while the
// process still answered), which count on from where they were; else new
// ones, in place of any of an earlier instance. It sets p's events read
// and dropped to the instance's.
func (m *Monitor) attachMetrics(p *proc, info *diagnostics.ProcessInfo) *metrics.Process {
	m.mu.Lock()
	defer m.mu.Unlock()
	inst := m.instances[p.pid]
	if inst != nil && (!inst.exited.IsZero() || !sameInstance(inst.info, info)) {
		// Another process under the PID (another runtime instance, or
		// any after one that exited, whose series were kept): the
		// earlier one's metrics make room for it.
		m.forget(p.pid)
		inst = nil
	}
	if inst == nil {
		inst = &instance{info: info}
		m.instances[p.pid] = inst
	}
	p.events.Store(inst.read)
	p.dropped.Store(inst.dropped)
	return m.set.Process(int64(p.pid), p.name)
}

func (p *proc) failed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state == StateFailed
}

// monitorConfig is the monitoring session.
func (m *Monitor) monitorConfig() diagnostics.SessionConfig {
	c := diagnostics.CountersConfig(m.o.CounterInterval)
	rt := diagnostics.Provider{Name: diagnostics.RuntimeProvider, Level: m.o.RuntimeLevel,
		Keywords: diagnostics.KeywordGC | diagnostics.KeywordJit | diagnostics.KeywordLoader |
			diagnostics.KeywordException | diagnostics.KeywordContention | diagnostics.KeywordThreading}
	c.Providers = append([]diagnostics.Provider{rt}, c.Providers...)
	c.BufferMB = 64
	return c
}

// namesConfig is the session that names the methods compiled after
// attach when the monitoring session is below Verbose: the runtime names
// a method in its load event (MethodLoadVerbose) only when the runtime
// provider is at Verbose, which for the monitoring session's keywords
// would add an allocation tick every 100 KB allocated; this session asks
// for the JIT and loader keywords alone at Verbose.
var namesConfig = diagnostics.SessionConfig{
	Providers: []diagnostics.Provider{{Name: diagnostics.RuntimeProvider, Keywords: diagnostics.KeywordJit | diagnostics.KeywordLoader, Level: diagnostics.LevelVerbose}},
	NoStacks:  true, BufferMB: 16,
}

// primeConfig is the session stopped at once for its rundown.
var primeConfig = diagnostics.SessionConfig{
	Providers: []diagnostics.Provider{{Name: diagnostics.RuntimeProvider, Keywords: diagnostics.KeywordLoader, Level: diagnostics.LevelInformational}},
	NoStacks:  true, BufferMB: 16,
}

const commandTimeout = 10 * time.Second

// stopBeforeStreamTimeout bounds sending StopTracing for a session
// closed at shutdown before its stream began.
const stopBeforeStreamTimeout = 2 * time.Second

// watch monitors p until its stream ends or ctx does.
func (m *Monitor) watch(ctx context.Context, p *proc) {
	defer m.wg.Done()
	defer close(p.done)
	failed, gone := true, false // gone: the stream ended with the process
	defer func() { m.remove(p, failed, !gone && ctx.Err() == nil, gone) }()

	c, cancel := context.WithTimeout(ctx, commandTimeout)
	info, err := p.cl.ProcessInfo(c)
	cancel()
	if err != nil {
		m.fail(p, stageAttach, err)
		return
	}
	p.mu.Lock()
	p.info, p.name = info, processName(info)
	p.mu.Unlock()

	c, cancel = context.WithTimeout(ctx, commandTimeout)
	s, err := p.cl.StartSession(c, m.monitorConfig())
	cancel()
	if err != nil {
		m.fail(p, stageAttach, err)
		return
	}
	defer s.Close()
	// A runtime begins the stream only once it runs (one suspended at
	// startup does not): the wait ends with ctx, which closes the session.
	r, err := s.ReaderContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// Shutting down: ask the runtime to drop the session too
			// (a runtime that has not begun the stream sees the closed
			// connection only when it does).
			c, cancel := context.WithTimeout(context.Background(), stopBeforeStreamTimeout)
			s.Stop(c, 0)
			cancel()
			return
		}
		m.fail(p, stageAttach, err)
		return
	}
	defer r.Close()
	mp := m.attachMetrics(p, info)
	dropped := p.dropped.Load() // by the instance's earlier attaches
	m.attaches.Add(1)
	p.setState(StateAttached, nil)
	m.logf("process %d (%s): attached: %v", p.pid, p.name, s)
	failed = false

	// Stop the session when ctx ends; a stream that does not end within
	// the drain is cut by Stop's deadline.
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			c, cancel := context.WithTimeout(context.Background(), commandTimeout)
			if err := s.Stop(c, m.o.Drain); err != nil {
				s.Close()
			}
			cancel()
		case <-stopped:
		}
	}()
	defer close(stopped)

	// Prime the code map from a rundown while the stream is read, and
	// below Verbose name the methods compiled from now on in a session
	// of their own (namesConfig), which then keeps the map. Both belong
	// to this attach: when the monitoring stream ends (the process
	// exited, or the stream ended early while the process still
	// answers, after which the next poll attaches again) they are
	// stopped (StopTracing, the drain) and waited for before watch
	// returns, so that an attach never leaves sessions behind in the
	// process (the runtime allows 64 at once).
	actx, acancel := context.WithCancel(ctx)
	var helpers sync.WaitGroup
	defer func() {
		acancel()
		helpers.Wait()
	}()
	helpers.Add(1)
	go func() {
		defer helpers.Done()
		m.prime(actx, p)
	}()
	names := m.o.RuntimeLevel < diagnostics.LevelVerbose
	if names {
		helpers.Add(1)
		go func() {
			defer helpers.Done()
			m.names(actx, p)
		}()
	}

	for {
		e, err := r.Next()
		if err != nil {
			// The process's metrics are kept for the next attach
			// while it still answers.
			exited := ctx.Err() == nil && m.exited(p)
			gone = exited
			switch {
			case err != io.EOF && exited:
				// A process that exits ends the stream without its
				// end: no error of ours.
				p.setState(StateDetached, nil)
				m.logf("process %d (%s): detached: the process exited", p.pid, p.name)
			case err != io.EOF && ctx.Err() == nil:
				m.errs[stageStream].Add(1)
				p.setState(StateDetached, err)
				m.logf("process %d (%s): detached: the stream ended early, the process still answering: %v", p.pid, p.name, err)
			default:
				p.setState(StateDetached, nil)
				m.logf("process %d (%s): detached", p.pid, p.name)
			}
			m.detaches.Add(1)
			return
		}
		p.events.Add(1)
		if !names {
			p.addCode(nil, e)
		}
		mp.Add(e)
		if d := dropped + r.Dropped(); d != p.dropped.Load() {
			p.dropped.Store(d)
		}
	}
}

// addCode adds e to p's code map when it names or places code (the
// sessions' event handler, the Reader unused).
func (p *proc) addCode(_ *trace.Reader, e *trace.Event) {
	if symbols.IsCodeEvent(e.Name()) {
		p.symMu.Lock()
		p.sym.Add(e)
		p.symMu.Unlock()
	}
}

// prime feeds p's code map with a rundown, the methods compiled so far: a
// session stopped at once.
func (m *Monitor) prime(ctx context.Context, p *proc) {
	err := m.readSession(ctx, p, primeConfig, 0, nil, p.addCode)
	if err != nil && ctx.Err() == nil {
		m.errs[stagePrime].Add(1)
		m.logf("process %d (%s): the rundown of the methods compiled so far failed (frames compiled before may not resolve): %v", p.pid, p.name, err)
	}
}

// exited reports whether p no longer answers on its diagnostics
// channel, as a process that has exited.
func (m *Monitor) exited(p *proc) bool {
	c, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := p.cl.ProcessInfo(c)
	return err != nil
}

// names feeds p's code map with the methods compiled and the modules
// loaded while p is monitored, named (namesConfig), until ctx ends (the
// attach's: its monitoring stream ended, or the monitor stops) or the
// process does. A session that ends before then while the process still
// answers (its stream cut, or the session refused) is a failure, counted
// under stage prime and logged, and the session is started again: after
// Options.Poll, the pause doubling up to a minute while it keeps failing,
// and with a rundown once its stream has begun, which names the methods
// compiled while none ran. That loses least: ending the attach instead
// would stop the monitoring session, and the events of the time until
// the next attach with it, to start a session the attach can start
// itself.
func (m *Monitor) names(ctx context.Context, p *proc) {
	pause := m.o.Poll
	for again := false; ; again = true {
		began := time.Now()
		var rundown sync.WaitGroup
		started := func() {
			if again {
				rundown.Add(1)
				go func() {
					defer rundown.Done()
					m.prime(ctx, p)
				}()
			}
		}
		err := m.readSession(ctx, p, namesConfig, math.MaxInt64, started, p.addCode)
		rundown.Wait()
		if ctx.Err() != nil || m.exited(p) {
			return
		}
		if err == nil {
			err = errors.New("its stream ended before it was stopped")
		}
		if time.Since(began) > time.Minute {
			pause = m.o.Poll
		}
		m.errs[stagePrime].Add(1)
		m.logf("process %d (%s): the session that names compiled methods failed, the process still answering (frames compiled from now on may not resolve until it runs again, in %v): %v", p.pid, p.name, pause, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Minute)
	}
}

// readSession runs a session of cfg on p for d (0: stopped at once; it
// also ends with ctx), calling started (when not nil) once its stream has
// begun and fn for each event, until the stream ends.
// stopAfter stops session s once d has passed or ctx is done (StopTracing,
// then the drain; closing it if that fails), unless the returned function
// is called first.
func (m *Monitor) stopAfter(ctx context.Context, s *diagnostics.Session, d time.Duration) (cancelStop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-done:
			return
		}
		c, cancel := context.WithTimeout(context.Background(), commandTimeout)
		if err := s.Stop(c, m.o.Drain); err != nil {
			s.Close()
		}
		cancel()
	}()
	return func() { close(done) }
}

func (m *Monitor) readSession(ctx context.Context, p *proc, cfg diagnostics.SessionConfig, d time.Duration, started func(), fn func(*trace.Reader, *trace.Event)) error {
	c, cancel := context.WithTimeout(ctx, commandTimeout)
	s, err := p.cl.StartSession(c, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer s.Close()
	r, err := s.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	defer m.stopAfter(ctx, s, d)()
	if started != nil {
		started()
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		fn(r, e)
	}
}

// fail marks p failed and sets its back-off at once, under m.mu: a
// discovery that sees it failed sees the back-off too (it saw the
// failure first, and attached again at once).
func (m *Monitor) fail(p *proc, stage int, err error) {
	m.errs[stage].Add(1)
	m.mu.Lock()
	m.backoff[p.pid] = time.Now().Add(5 * m.o.Poll)
	p.setState(StateFailed, err)
	m.mu.Unlock()
	m.logf("process %d: %s failed: %v", p.pid, stageNames[stage], err)
}

// processName is the process's name for the metrics' process label: the
// entry assembly, else the command line's first word without its path.
func processName(info *diagnostics.ProcessInfo) string {
	if info.EntrypointAssembly != "" {
		return info.EntrypointAssembly
	}
	f := strings.Fields(info.CommandLine)
	if len(f) == 0 {
		return ""
	}
	name := filepath.Base(strings.ReplaceAll(f[0], `\`, "/"))
	return strings.TrimSuffix(name, filepath.Ext(name))
}

// ProcessState is a monitored process as /processes reports it.
type ProcessState struct {
	PID            int    `json:"pid"`
	Name           string `json:"name"`
	CommandLine    string `json:"commandLine"`
	RuntimeVersion string `json:"runtimeVersion"`
	OS             string `json:"os"`
	Architecture   string `json:"architecture"`
	// State is StateAttaching, StateAttached, StateDetached or
	// StateFailed; Error says why a session failed or ended early.
	State         string    `json:"state"`
	Error         string    `json:"error,omitempty"`
	EventsRead    uint64    `json:"eventsRead"`
	EventsDropped uint64    `json:"eventsDropped"`
	Since         time.Time `json:"since"`
}

// Processes returns the processes monitored now, by PID.
func (m *Monitor) Processes() []ProcessState {
	m.mu.Lock()
	ps := make([]*proc, 0, len(m.procs))
	for _, p := range m.procs {
		ps = append(ps, p)
	}
	m.mu.Unlock()
	sort.Slice(ps, func(i, j int) bool { return ps[i].pid < ps[j].pid })
	out := make([]ProcessState, 0, len(ps))
	for _, p := range ps {
		p.mu.Lock()
		st := ProcessState{PID: p.pid, Name: p.name, State: p.state, Error: p.err,
			EventsRead: p.events.Load(), EventsDropped: p.dropped.Load(), Since: p.start}
		if i := p.info; i != nil {
			st.CommandLine, st.RuntimeVersion, st.OS, st.Architecture = i.CommandLine, i.ClrProductVersion, i.OS, i.Arch
		}
		p.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// attached returns process pid if its monitoring session runs; else
// ErrNotMonitored for a process not listed, or ErrNotAttached naming the
// state of one listed (and the error of one that failed).
func (m *Monitor) attached(pid int) (*proc, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.procs[pid]
	if p == nil {
		return nil, fmt.Errorf("process %d: %w", pid, ErrNotMonitored)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.state == StateAttached:
		return p, nil
	case p.state == StateAttaching:
		return nil, fmt.Errorf("process %d: %w: it is %s (try again in a moment)", pid, ErrNotAttached, p.state)
	case p.err != "":
		return nil, fmt.Errorf("process %d: %w: it is %s: %s", pid, ErrNotAttached, p.state, strings.TrimPrefix(p.err, fmt.Sprintf("process %d: ", pid)))
	default:
		return nil, fmt.Errorf("process %d: %w: it is %s", pid, ErrNotAttached, p.state)
	}
}

// health is the monitor's own metrics.
type health Monitor

var (
	descSessions = prometheus.NewDesc("clrevents_monitor_sessions", "Monitoring sessions running.", nil, nil)
	descAttaches = prometheus.NewDesc("clrevents_monitor_attaches_total", "Monitoring sessions started.", nil, nil)
	descDetaches = prometheus.NewDesc("clrevents_monitor_detaches_total", "Monitoring sessions ended (the process exited, or the session ended).", nil, nil)
	descErrors   = prometheus.NewDesc("clrevents_monitor_errors_total", "Failures, by stage: attach, prime (the rundown at attach, or the session that names the methods compiled after it), stream (a monitoring stream that ended without its end while its process still answers: damage; a process that exits is no failure), window (a window that gave no profile or trace; one cut short by its process's exit gives what it recorded and is no failure), discover.", []string{"stage"}, nil)
	descRead     = prometheus.NewDesc("clrevents_monitor_events_read_total", "Events read from the process's monitoring session.", []string{"pid", "process"}, nil)
	descDropped  = prometheus.NewDesc("clrevents_monitor_events_dropped_total", "Events the runtime dropped from the process's monitoring session (its buffer was full).", []string{"pid", "process"}, nil)
)

func (h *health) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSessions, descAttaches, descDetaches, descErrors, descRead, descDropped} {
		ch <- d
	}
}

func (h *health) Collect(ch chan<- prometheus.Metric) {
	m := (*Monitor)(h)
	attached := 0
	for _, st := range m.Processes() {
		if st.State != StateAttached {
			continue
		}
		attached++
		pid := fmt.Sprint(st.PID)
		ch <- prometheus.MustNewConstMetric(descRead, prometheus.CounterValue, float64(st.EventsRead), pid, st.Name)
		ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(st.EventsDropped), pid, st.Name)
	}
	ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(attached))
	ch <- prometheus.MustNewConstMetric(descAttaches, prometheus.CounterValue, float64(m.attaches.Load()))
	ch <- prometheus.MustNewConstMetric(descDetaches, prometheus.CounterValue, float64(m.detaches.Load()))
	for i := range m.errs {
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(m.errs[i].Load()), stageNames[i])
	}
}
