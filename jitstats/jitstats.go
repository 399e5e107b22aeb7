// Package jitstats computes what the JIT compiler did in the .NET processes
// of a trace: every method compiled, its tier, the time it took, its IL and
// native code sizes, and the inlining decisions, as PerfView's JITStats view
// gives them.
//
// Feed it every event of a trace in time order (the trace package's
// default), with Add, or with Observe for events decoded elsewhere:
//
//	a, err := jitstats.Read(r)
//	for _, p := range a.Processes() {
//		for _, m := range p.Slowest(10) {
//			fmt.Println(m.Name, m.Tier, m.JitTime)
//		}
//	}
//
// WriteText, WriteJSONLines and WriteCSV write the report of the
// processes' compiles.
//
// A method's compile time runs from its MethodJittingStarted event to the
// MethodLoad(Verbose) event for the same method on the same thread. The
// trace needs the runtime's JIT keyword (0x10) at level Verbose (5) for
// the start events and the names; at level Informational the loads alone
// give tiers and sizes but no compile times. A load with no start event
// before it is a compile only when the runtime flags its code as jitted:
// the JIT helper stubs and precompiled code it loads are not methods of
// the report (PerfView's JITStats leaves them out too). Inlining decisions need the
// JitTracing keyword (0x1000) at Verbose; methods restored from ReadyToRun
// images (R2RGetEntryPoint) need the CompilationDiagnostic keyword
// (0x2000000000). Read returns ErrNoEvents for a trace with none of
// these.
package jitstats

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/feed"
	"github.com/clrgo/clrevents/trace"
)

// Method is one compilation of a method: a method compiled at tier 0 and
// again at tier 1 is two Methods.
type Method struct {
	// MethodID identifies the method in its process (a MethodDesc address).
	MethodID uint64
	// Name is Namespace.Name(parameters), as profiles show it.
	Name string
	// Tier is the code the JIT produced; TierUnknown on runtimes before
	// .NET Core 3.0, which do not report it.
	Tier clrevents.OptimizationTier
	// Flags are the load event's method flags (Jitted, Generic, ...).
	Flags clrevents.MethodFlags
	// Start is the time of the compile's start event, or of the load when
	// the trace has no start event; ThreadID the compiling thread.
	Start    time.Time
	ThreadID int64
	// JitTime is the compile time; HasJitTime is false when the trace has
	// no start event for the compile.
	JitTime    time.Duration
	HasJitTime bool
	// ILSize is the method's IL size in bytes (from the start event; 0
	// without one); NativeSize the size of the code the JIT produced.
	ILSize, NativeSize uint32
}

// TierName is the tier as tables show it: "Unknown" for runtimes that do
// not report tiers, else the runtime's name of the tier.
func (m *Method) TierName() string { return m.Tier.String() }

// Inlining counts the inlining decisions of one process.
type Inlining struct {
	// Succeeded and Failed count the decisions.
	Succeeded, Failed int
	// Reasons counts the failures by the JIT's reason.
	Reasons map[string]int
}

// Process is the JIT activity of one process. A process ID the system
// gave again, after the process that had it exited, is another Process
// (see Analyzer.Processes).
type Process struct {
	PID int64
	// Name is the executable's name where the trace gives it (an ETW
	// trace's kernel Process events), else "".
	Name string
	// Methods are the compiled methods, in the order their code was
	// loaded.
	Methods []*Method
	// ReadyToRun counts the methods whose precompiled code was used: the
	// distinct method IDs of R2RGetEntryPoint events (a method's entry
	// point is looked up again by every thread that calls it first, and
	// again after a rejit).
	ReadyToRun int
	// Inlining sums up the inlining decisions.
	Inlining Inlining

	pending map[pendingKey]*pendingJit
	// r2r holds the method IDs ReadyToRun counts.
	r2r map[uint64]struct{}
	// last is the time of each thread's latest event the model took;
	// timed the compiles, one per thread at most, whose load the thread's
	// next event confirms (see observe).
	last  map[int64]time.Time
	timed []timedLoad
	life  *feed.Life
}

// timedLoad is a compile timed by its load at, on thread tid.
type timedLoad struct {
	tid int64
	at  time.Time
	m   *Method
}

type pendingKey struct {
	methodID uint64
	tid      int64
}

type pendingJit struct {
	start  time.Time
	prev   time.Time // the thread's event before the start (zero: none)
	ilSize uint32
	name   string
}

// Analyzer builds the JIT model of every process in a trace.
type Analyzer struct {
	procs *feed.Processes[Process]
	feed  feed.Feed
	timed int // compiles waiting for their thread's next event, in all processes
}

// NewAnalyzer returns an empty Analyzer.
func NewAnalyzer() *Analyzer {
	return &Analyzer{procs: feed.NewProcesses(func(pid int64, life *feed.Life) *Process {
		return &Process{PID: pid, pending: make(map[pendingKey]*pendingJit), last: make(map[int64]time.Time), Inlining: Inlining{Reasons: map[string]int{}}, life: life}
	})}
}

// ErrNoEvents is the error Read returns when the trace has no JIT
// activity: no compiled method, ReadyToRun method used or inlining
// decision in any process. Analyses fed event by event can tell the same
// from an empty Processes.
var ErrNoEvents = errors.New("no JIT events: record the runtime provider with the JIT keyword (0x10) at level Verbose (5), e.g. dotnet-trace collect --providers Microsoft-Windows-DotNETRuntime:0x10:5")

// Read feeds every event of r to a new Analyzer and returns it, with an
// error that says what the model lacks: ErrNoEvents when r has no
// JIT activity, joined with what the trace lost, since the model is made
// of every event read: the error that ended r (a damaged or truncated
// trace, trace.ErrDamaged) and the events it needed that did not decode
// (DecodeErrors); when the trace lost events, the text of its
// ErrNoEvents says first that they may have held what it lacks. It reads
// nothing, and says why, from a Reader whose
// events do not come in time order (trace.WithOrder) or that does not
// decode with clrevents' table (trace.WithEvents). The Analyzer is never
// nil.
func Read(r *trace.Reader) (*Analyzer, error) {
	a := NewAnalyzer()
	if err := feed.Usable(r); err != nil {
		return a, err
	}
	a.feed.StartFrom(r)
	readErr := feed.ReadAll(r, a.Add)
	lost := errors.Join(readErr, a.DecodeErrors())
	if len(a.Processes()) == 0 {
		if lost == nil {
			return a, ErrNoEvents
		}
		return a, errors.Join(feed.NoneRead(ErrNoEvents, lost), lost)
	}
	return a, lost
}

// Missing returns nil when process pid (when pid is negative, any
// process) has JIT activity in the model; otherwise an error that
// errors.Is ErrNoEvents: for a process without any when others have
// some, one that names them, else ErrNoEvents itself, which names the
// keyword to record.
func (a *Analyzer) Missing(pid int64) error {
	ps := a.Processes()
	var pids []int64
	for _, p := range ps {
		if pid < 0 || p.PID == pid {
			return nil
		}
		pids = append(pids, p.PID)
	}
	if len(pids) > 0 {
		return feed.OtherProcesses(ErrNoEvents, "no JIT events", pids)
	}
	return ErrNoEvents
}

// Add feeds one event; events the model does not use cost a map lookup
// (and one more while a compile waits for its thread's next event, which
// confirms its time: see Observe). An ETW kernel Process/Start for a
// process ID that has a process in the model begins a new process.
func (a *Analyzer) Add(e *trace.Event) {
	if ev, ok := feed.Take(&a.feed, e, kinds); ok {
		if err := a.observe(e.Time(), e.ProcessID(), e.ThreadID(), ev); err != nil {
			a.feed.Undecoded.AddEvent(e, err)
		}
		if p := a.procs.Lookup(e.ProcessID()); p != nil && p.Name == "" {
			p.Name = e.ProcessName()
		}
		return
	}
	a.procs.Note(e)
	if a.timed > 0 {
		// Any event of a thread confirms the compile it timed last (or
		// shows its load's time garbled), not only the JIT's.
		if p := a.procs.Lookup(e.ProcessID()); p != nil && len(p.timed) > 0 {
			if _, err := a.confirm(p, e.ThreadID(), e.Time()); err != nil {
				a.feed.Undecoded.AddEvent(e, err)
			}
		}
	}
}

// Origin is the time reports give times relative to: from Read, the
// trace's start (trace.Info.StartTime: an EventPipe trace's sync time,
// which comes before its first event, an ETW log's header), as PerfView's
// JITStats counts its times; else what SetOrigin set, else the time of
// the first event Add or Observe saw (zero if none).
func (a *Analyzer) Origin() time.Time { return a.feed.Origin }

// SetOrigin sets the time reports count from, for events fed by Observe.
func (a *Analyzer) SetOrigin(t time.Time) { a.feed.Origin = t }

// DecodeErrors returns nil, or an error that counts the events the model
// needed that did not decode (Add leaves them out) and gives the first few
// in full, naming each event and its offset (trace.ErrUndecoded).
func (a *Analyzer) DecodeErrors() error { return a.feed.Undecoded.Err() }

// Processes returns the processes with JIT activity (a compiled method, a
// ReadyToRun method used or an inlining decision), by process ID, and
// those of one ID (the system gives an exited process's ID to a new one)
// in the order they started.
func (a *Analyzer) Processes() []*Process {
	var out []*Process
	for _, p := range a.procs.All() {
		if len(p.Methods) > 0 || p.ReadyToRun > 0 || p.Inlining.Succeeded+p.Inlining.Failed > 0 {
			out = append(out, p)
		}
	}
	return out
}

// Life returns the process's start and exit where the trace records them
// (an ETW trace's kernel Process/Start and Process/Stop events), else
// zero times.
func (p *Process) Life() (start, exit time.Time) {
	if p.life == nil {
		return time.Time{}, time.Time{}
	}
	return p.life.Start, p.life.Exit
}

// Observe feeds one decoded event that happened at t in process pid on
// thread tid. Events must come in time order. The event is not retained.
// The model knows clrevents' types: a value of another generated
// package's is ignored.
//
// A thread's events come in time order, which a damaged trace's garbled
// timestamp breaks (trace.ErrNotCredible; counted in DecodeErrors): a
// method's load earlier than the start of its compile on the same thread
// is left out, and the start waits for a load that comes after it; a
// compile whose load is later than the thread's next event, or whose start
// is earlier than the thread's event before it, while the other two
// events are in order, keeps its method but has no compile time.
func (a *Analyzer) Observe(t time.Time, pid, tid int64, ev clrimpl.Event) {
	if err := a.observe(t, pid, tid, ev); err != nil {
		a.feed.Undecoded.Add(fmt.Errorf("%s at %s in process %d: %w", ev.Descriptor().Name, t.Format(time.RFC3339Nano), pid, err))
	}
}

func (a *Analyzer) observe(t time.Time, pid, tid int64, ev clrimpl.Event) error {
	if a.feed.Origin.IsZero() {
		a.feed.Origin = t // as gcstats' Observe: reports count from it
	}
	ce, ok := ev.(clrevents.Event)
	if !ok {
		return nil
	}
	k := kinds[ce.Info()]
	if k == kNone {
		return nil
	}
	p := a.procs.Get(pid)
	prev := p.last[tid]
	p.last[tid] = t
	credible, garbled := a.confirm(p, tid, t)
	if garbled != nil {
		prev = credible
	}
	n := len(p.timed)
	err := p.observe(t, tid, prev, k, ev)
	a.timed += len(p.timed) - n
	return errors.Join(garbled, err)
}

// confirm settles the compile that thread tid's previous event timed, with
// the thread's next event, at t: a load later than t, while t is after
// the compile's start, has the garbled time, and the compile's time is
// unknown (an error says so; credible is then the thread's latest time
// before t that is not garbled).
func (a *Analyzer) confirm(p *Process, tid int64, t time.Time) (credible time.Time, err error) {
	for i, l := range p.timed {
		if l.tid != tid {
			continue
		}
		p.timed = slices.Delete(p.timed, i, i+1)
		a.timed--
		if t.Before(l.at) && !t.Before(l.m.Start) {
			l.m.JitTime, l.m.HasJitTime = 0, false
			return l.m.Start, fmt.Errorf("%w: the load of %s, %v after this event of its thread, ends a compile that started before it: the load's time is garbled, the compile's time unknown",
				trace.ErrNotCredible, l.m.Name, l.at.Sub(t))
		}
		break
	}
	return time.Time{}, nil
}

func (p *Process) observe(t time.Time, tid int64, prev time.Time, k kind, ev clrimpl.Event) error {
	switch k {
	case kJitStart:
		if e, ok := ev.(clrevents.MethodJittingStartedEvent); ok {
			f := e.MethodJittingStartedFields()
			p.pending[pendingKey{f.MethodID, tid}] = &pendingJit{
				start:  t,
				prev:   prev,
				ilSize: f.MethodILSize,
				name:   methodName(f.MethodNamespace, f.MethodName, f.MethodSignature),
			}
		}
	case kLoad:
		switch e := ev.(type) {
		case clrevents.MethodLoadUnloadVerboseEvent:
			f := e.MethodLoadUnloadVerboseFields()
			return p.load(t, tid, f.MethodID, f.MethodSize, f.MethodFlags, f.OptimizationTier(),
				methodName(f.MethodNamespace, f.MethodName, f.MethodSignature))
		case clrevents.MethodLoadUnloadEvent:
			f := e.MethodLoadUnloadFields()
			return p.load(t, tid, f.MethodID, f.MethodSize, f.MethodFlags, f.OptimizationTier(), "")
		}
	case kR2R:
		if e, ok := ev.(clrevents.R2RGetEntryPointEvent); ok {
			if p.r2r == nil {
				p.r2r = make(map[uint64]struct{})
			}
			p.r2r[e.R2RGetEntryPointFields().MethodID] = struct{}{}
			p.ReadyToRun = len(p.r2r)
		}
	case kInlineOK:
		p.Inlining.Succeeded++
	case kInlineFailed:
		p.Inlining.Failed++
		var reason string
		switch e := ev.(type) {
		case *clrevents.MethodJitInliningFailed:
			reason = e.FailReason.String()
		case *clrevents.MethodJitInliningFailedAnsi:
			reason = e.FailReason.String()
		}
		p.Inlining.Reasons[reason]++
	}
	return nil
}

// load records a method's code. A load without a start event on the
// same thread is a compile only when the runtime flags the code as
// jitted; other loads (rundown-less precompiled code, helpers) are not
// compiles.
func (p *Process) load(t time.Time, tid int64, id uint64, size uint32, flags clrevents.MethodFlags, tier clrevents.OptimizationTier, name string) error {
	k := pendingKey{id, tid}
	pj := p.pending[k]
	if pj == nil && flags&clrevents.MethodFlagsJitted == 0 {
		return nil
	}
	if pj != nil && t.Before(pj.start) {
		return fmt.Errorf("%w: the method's code is loaded %v before its compile started on the same thread", trace.ErrNotCredible, pj.start.Sub(t))
	}
	m := &Method{
		MethodID:   id,
		Name:       name,
		Tier:       tier,
		Flags:      flags,
		Start:      t,
		ThreadID:   tid,
		NativeSize: size,
	}
	var err error
	if pj != nil {
		delete(p.pending, k)
		m.Start = pj.start
		m.ILSize = pj.ilSize
		if m.Name == "" {
			m.Name = pj.name
		}
		if pj.start.Before(pj.prev) && !t.Before(pj.prev) {
			// The start is earlier than the thread's event before it,
			// which the load is not.
			err = fmt.Errorf("%w: the compile's start is %v before its thread's previous event: its time is garbled, the compile's time unknown",
				trace.ErrNotCredible, pj.prev.Sub(pj.start))
		} else {
			m.JitTime = t.Sub(pj.start)
			m.HasJitTime = true
			p.timed = append(p.timed, timedLoad{tid, t, m})
		}
	}
	p.Methods = append(p.Methods, m)
	return err
}

// methodName is Namespace.Name followed by the signature from its '(' on
// (the return type before it left out), as profiles show methods.
func methodName(ns, name, sig clrevents.UTF16) string {
	var b strings.Builder
	if s := ns.String(); s != "" {
		b.WriteString(s)
		b.WriteByte('.')
	}
	b.WriteString(name.String())
	s := sig.String()
	if i := strings.IndexByte(s, '('); i >= 0 {
		b.WriteString(s[i:])
	}
	return b.String()
}

// Slowest returns the n methods that took longest to compile, slowest
// first (all of them when n <= 0).
func (p *Process) Slowest(n int) []*Method {
	ms := make([]*Method, 0, len(p.Methods))
	for _, m := range p.Methods {
		if m.HasJitTime {
			ms = append(ms, m)
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].JitTime > ms[j].JitTime })
	if n > 0 && len(ms) > n {
		ms = ms[:n]
	}
	return ms
}

// TierSummary sums up the methods of one tier.
type TierSummary struct {
	Tier clrevents.OptimizationTier
	// Count is the number of methods; Timed how many of them have a
	// compile time.
	Count, Timed int
	// JitTime is their compile time.
	JitTime time.Duration
	// ILSize and NativeSize sum their sizes.
	ILSize, NativeSize uint64
}

// Summary sums up a process's JIT activity.
type Summary struct {
	// Tiers sums up by tier, in the runtime's tier order, only tiers with
	// methods; All every method.
	Tiers []TierSummary
	All   TierSummary
	// Pending counts compiles the trace holds the start of but not the
	// end.
	Pending int
}

// Summary sums up the process's methods.
func (p *Process) Summary() Summary {
	var byTier [8]TierSummary
	var s Summary
	for _, m := range p.Methods {
		t := &s.All
		t.add(m)
		if int(m.Tier) < len(byTier) {
			bt := &byTier[m.Tier]
			bt.Tier = m.Tier
			bt.add(m)
		}
	}
	for _, t := range byTier {
		if t.Count > 0 {
			s.Tiers = append(s.Tiers, t)
		}
	}
	s.Pending = len(p.pending)
	return s
}

func (t *TierSummary) add(m *Method) {
	t.Count++
	if m.HasJitTime {
		t.Timed++
		t.JitTime += m.JitTime
	}
	t.ILSize += uint64(m.ILSize)
	t.NativeSize += uint64(m.NativeSize)
}
