// Package feed is what the analyses (gcstats, jitstats) share: taking the
// events they need from a trace, decoding only those, and counting the
// ones that did not decode.
package feed

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
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
	// Origin is the time of the first event seen.
	Origin time.Time
	// Undecoded collects the events the analysis needed that did not
	// decode.
	Undecoded trace.DecodeErrors
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

// ByPID returns the values of m sorted by their process ID.
func ByPID[P any](m map[int64]*P) []*P {
	pids := make([]int64, 0, len(m))
	for pid := range m {
		pids = append(pids, pid)
	}
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	out := make([]*P, len(pids))
	for i, pid := range pids {
		out[i] = m[pid]
	}
	return out
}

// OtherProcesses is a report's error for a process asked for that has
// none of its events, in a trace where the processes pids have them: it
// errors.Is sentinel, and its text is what (the sentinel's subject, "no
// GC events") then the processes that have them.
func OtherProcesses(sentinel error, what string, pids []int64) error {
	return &otherProcesses{sentinel, what, pids}
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
