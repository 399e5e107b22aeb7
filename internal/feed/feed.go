// Package feed is what the analyses (gcstats, jitstats) share: taking the
// events they need from a trace, decoding only those, counting the ones
// that did not decode, and keeping the trace's processes apart.
package feed

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/numfmt"
	"github.com/clrgo/clrevents/trace"
)

// Kinds maps clrevents' event types to what they mean to an analysis (the
// analyses know those types: events of other generated packages mean
// nothing to them).
type Kinds[K comparable] map[clrimpl.EventType]K

// ByDisplayName builds Kinds from the events of the named providers whose
// TraceEvent name (task/opcode, "GC/Start") is a key of byName: every
// version of an event shares that name, so new versions need no change. A
// key that names no event of those providers is a mistake in the caller's
// table (an event renamed under it would leave the analysis without its
// events): ByDisplayName panics, when the analysis's package is
// initialised, so that every test of it fails.
func ByDisplayName[K comparable](providers []string, byName map[string]K) Kinds[K] {
	m := make(Kinds[K])
	used := make(map[string]bool, len(byName))
	for _, info := range clrevents.Events() {
		if !slices.Contains(providers, info.Provider.String()) {
			continue
		}
		if k, ok := byName[info.DisplayName]; ok {
			m[info] = k
			used[info.DisplayName] = true
		}
	}
	for name := range byName {
		if !used[name] {
			panic(fmt.Sprintf("feed.ByDisplayName: no event of %v is named %q", providers, name))
		}
	}
	return m
}

// Feed takes events from a trace for an analysis.
type Feed struct {
	// Origin is the time reports count from: the trace's start
	// (StartFrom), else the time of the first event seen.
	Origin time.Time
	// Undecoded collects the events the analysis needed that did not
	// decode.
	Undecoded trace.DecodeErrors
}

// StartFrom makes r's start (trace.Info.StartTime: EventPipe's sync
// time, an ETW log's header) the Origin, as TraceEvent's relative times
// and PerfView's GCStats and JITStats count from it; a trace that states
// no start keeps the first event's time.
func (f *Feed) StartFrom(r *trace.Reader) {
	if t := r.Info().StartTime; !t.IsZero() {
		f.Origin = t
	}
}

// Take returns e decoded when want holds its type in clrevents
// (Event.DecodeTypeIn: a newer version than clrevents has, in the tables
// or in another generated package, is the older one clrevents has), and
// false for every other event and for one that does not decode (which it
// counts).
func Take[K comparable](f *Feed, e *trace.Event, want Kinds[K]) (clrimpl.Event, bool) {
	if f.Origin.IsZero() {
		f.Origin = e.Time()
	}
	typ, ok := e.DecodeTypeIn(clrevents.Table())
	if !ok {
		return nil, false
	}
	if _, ok := want[typ]; !ok {
		return nil, false
	}
	ev, err := e.DecodeIn(clrevents.Table())
	if err != nil {
		f.Undecoded.AddEvent(e, err)
		return nil, false
	}
	return ev, true
}

// ReadAll calls add with every event of r, and returns the error that
// ended r (nil at io.EOF): after the last event it could read, as the
// trace package reads through damage (trace.ErrDamaged).
func ReadAll(r *trace.Reader, add func(*trace.Event)) error {
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		add(e)
	}
}

// Processes is an analysis's processes. A process is an instance, not a
// process ID, which the system gives to a new process once the one that
// had it has exited: an ETW kernel Process/Start for an ID that has a
// process in the analysis begins a new process, with its own start and
// exit, as TraceEvent's TraceProcess does (whose ProcessIndex tells them
// apart). Events of an ID are the latest process's that has it.
type Processes[P any] struct {
	newP   func(pid int64, life *Life) *P
	latest map[int64]*instance[P]
	all    []*instance[P]
}

// Life is a process's start and exit where the trace records them (an ETW
// trace's kernel Process/Start and Process/Stop events), else zero.
type Life struct{ Start, Exit time.Time }

type instance[P any] struct {
	pid  int64
	life Life
	p    *P // nil until the analysis takes an event of the process
}

// NewProcesses returns an empty table whose processes newP makes, when
// the analysis takes the first event of each: life is the process's,
// which the table keeps up to date.
func NewProcesses[P any](newP func(pid int64, life *Life) *P) *Processes[P] {
	return &Processes[P]{newP: newP, latest: make(map[int64]*instance[P])}
}

// Get returns the latest process of pid, made on first use.
func (t *Processes[P]) Get(pid int64) *P {
	in := t.latest[pid]
	if in == nil {
		in = t.add(pid)
	}
	if in.p == nil {
		in.p = t.newP(pid, &in.life)
	}
	return in.p
}

// Lookup returns the latest process of pid, or nil when the analysis has
// taken no event of it.
func (t *Processes[P]) Lookup(pid int64) *P {
	if in := t.latest[pid]; in != nil {
		return in.p
	}
	return nil
}

func (t *Processes[P]) add(pid int64) *instance[P] {
	in := &instance[P]{pid: pid}
	t.latest[pid] = in
	t.all = append(t.all, in)
	return in
}

// The ETW kernel's Process events, as the trace package names them.
const (
	kernelProvider                = "Windows Kernel"
	opProcessStart, opProcessStop = 1, 2
)

// Note keeps what e says when it is an ETW kernel Process/Start or
// Process/Stop event: the start of a process, a new one when the
// analysis has one of that ID already, or the exit of the latest process
// of the ID.
func (t *Processes[P]) Note(e *trace.Event) {
	op := e.Opcode()
	if op != opProcessStart && op != opProcessStop || e.Provider() != kernelProvider {
		return
	}
	pid := e.ProcessID()
	in := t.latest[pid]
	switch e.Name() {
	case "Process/Start":
		if in == nil || in.p != nil {
			in = t.add(pid)
		}
		// Of an ID the analysis has no event of, the process before
		// leaves nothing to keep: this is its start.
		in.life = Life{Start: e.Time()}
	case "Process/Stop":
		if in == nil {
			in = t.add(pid) // running when the trace began
		}
		in.life.Exit = e.Time()
	}
}

// All returns the processes the analysis took events of, by process ID,
// and the processes of one ID in the order they started.
func (t *Processes[P]) All() []*P {
	ins := make([]*instance[P], 0, len(t.all))
	for _, in := range t.all {
		if in.p != nil {
			ins = append(ins, in)
		}
	}
	// t.all is in the order the processes began.
	slices.SortStableFunc(ins, func(a, b *instance[P]) int { return cmp.Compare(a.pid, b.pid) })
	out := make([]*P, len(ins))
	for i, in := range ins {
		out[i] = in.p
	}
	return out
}

// OtherProcesses is a report's error for a process asked for that has
// none of its events, in a trace where the processes pids have them (by
// ID, as Processes.All gives them: an ID two processes had is named
// once): it
// errors.Is sentinel, and its text is what (the sentinel's subject, "no
// GC events") then the processes that have them.
func OtherProcesses(sentinel error, what string, pids []int64) error {
	return &otherProcesses{sentinel, what, slices.Compact(slices.Clone(pids))}
}

type otherProcesses struct {
	sentinel error
	what     string
	pids     []int64
}

func (e *otherProcesses) Is(target error) bool { return target == e.sentinel }

func (e *otherProcesses) Error() string {
	var b strings.Builder
	b.WriteString(e.what + ": the trace has them for process")
	if len(e.pids) > 1 {
		b.WriteString("es")
	}
	for i, pid := range e.pids {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(" " + strconv.FormatInt(pid, 10))
		if i == 9 && len(e.pids) > 10 {
			b.WriteString(" and " + numfmt.Count(int64(len(e.pids)-10), "other"))
			break
		}
	}
	return b.String()
}

// ProcessTitle names a process in a report: "Process 1234", with its
// executable's name where the trace gives it ("Process 1234 (app.exe)"),
// "Process (not recorded)" for -1, a trace that does not say (.NET Core
// 2.0's).
func ProcessTitle(pid int64, name string) string {
	t := "Process " + strconv.FormatInt(pid, 10)
	if pid == -1 {
		t = "Process (not recorded)"
	}
	if name != "" {
		t += " (" + name + ")"
	}
	return t
}

// Titled is what a report names a process by: its ID, its executable's
// name ("" when the trace does not give it) and its start (Life.Start).
type Titled struct {
	PID   int64
	Name  string
	Start time.Time
}

// Titles names the processes of a report, each as ProcessTitle does; a
// process whose ID another of them has too (the system gives an exited
// process's ID to a new one) is told apart by its start, in milliseconds
// from origin: "Process 10 (app.exe, started at 3.000 ms)", or "Process
// 10 (app.exe, start not in the trace)".
func Titles(origin time.Time, ps []Titled) []string {
	n := make(map[int64]int, len(ps))
	for _, p := range ps {
		n[p.PID]++
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		name := p.Name
		if n[p.PID] > 1 {
			if name != "" {
				name += ", "
			}
			name += numfmt.Started(origin, p.Start)
		}
		out[i] = ProcessTitle(p.PID, name)
	}
	return out
}

// Usable returns nil when the models (GC, JIT) can be built from r's
// events, else an error that says why not, naming the trace: they need
// every event from the start (r not read from yet); they pair events
// across threads, so they need them in time order; and they know
// the runtime's events by clrevents' types, so r must decode with
// clrevents' table (a Reader made WithEvents with a table of one's own
// and not clrevents' decodes the runtime's events as that table's
// types, and a model would find none).
func Usable(r *trace.Reader) error {
	if r.Started() {
		return fmt.Errorf("%s: the Reader has handed out events already, and the model needs every event from the trace's start: give it a Reader opened anew", r.Name())
	}
	if o := r.Order(); o != trace.TimeOrder {
		return fmt.Errorf("%s: the events come in %v order; the model needs them in time order (trace.WithOrder(trace.TimeOrder), the default)", r.Name(), o)
	}
	if !slices.Contains(r.Tables(), clrevents.Table()) {
		return fmt.Errorf("%s: the Reader decodes with tables that do not include clrevents' (trace.WithEvents), whose types the model looks for: add clrevents.Table() to them", r.Name())
	}
	return nil
}

// NoneRead is err, a report's error for a trace none of whose events it
// reads (it errors.Is the report's sentinel, and its text begins with
// what it lacks, "no GC events: …"), when the reading lost events (lost,
// the error that ended it or events that did not decode, which the
// caller joins after it): its text then says first that the lost events
// may have held them, where err alone would only advise recording them.
// It errors.Is err. Without lost, or without err, it is err.
func NoneRead(err, lost error) error {
	if err == nil || lost == nil {
		return err
	}
	return &noneRead{err}
}

type noneRead struct{ err error }

func (e *noneRead) Unwrap() error { return e.err }

func (e *noneRead) Error() string {
	what, rest, _ := strings.Cut(e.err.Error(), ": ")
	return what + " in what was read: the events the trace lost (below) may have held them; if they did not, " + rest
}
