// Package gcstats computes the garbage collections of the .NET processes in
// a trace: each GC's generation, reason, type, pauses, duration and heap
// sizes, and per-generation summaries, as PerfView's GCStats view and
// TraceEvent's TraceManagedProcess give them.
//
// Feed it every event of a trace in time order (the trace package's
// default), with Add, or with Observe for events decoded elsewhere:
//
//	r, err := trace.Open("app.nettrace")
//	...
//	a, err := gcstats.Read(r)
//	for _, p := range a.Processes() {
//		for _, gc := range p.GCs {
//			fmt.Println(gc.Number, gc.Generation, gc.Pause)
//		}
//	}
//
// # How pauses are measured
//
// A GC's pause runs from the runtime's suspension for the GC
// (GCSuspendEEBegin with reason SuspendForGC) to the end of the restart
// (GCRestartEEEnd) on the thread that suspended. The runtime suspends for
// other reasons too (the SampleProfiler suspends for every sample, with
// reason SuspendOther, on its own thread): those suspensions are not GC
// pauses and are left out, which pairing begin and end events naively
// does not do. A background GC pauses more than once: at its start (the
// initial suspension, through the ephemeral GC that may precede it) and
// for each later suspension it asks for (reason SuspendForGCPrep); its
// Pause is their sum and Pauses their count. A foreground GC during a
// background GC is a GC of its own with its own pause.
//
// Suspensions are followed thread by thread: the runtime logs a
// suspension's begin before it waits for the runtime to be free, so a
// foreground GC's suspension may begin while the background GC's own
// suspension still holds the runtime. Its pause then counts from that
// suspension's restart, when it could begin to stop the threads, so that
// no stopped time counts in two GCs' pauses.
//
// Every GCStart of a trace is a GC. One whose suspension the trace does
// not hold (the trace began while the runtime was suspended for it) has
// no pause (HasPause is false): it is counted, never guessed.
//
// The trace needs the runtime's GC keyword (0x1) at level Informational
// (4); Read returns ErrNoEvents for a trace without GCs. The per-heap
// history events (GCPerHeapHistory, at the same keyword and level) give
// exact heap sizes before each GC, which are otherwise estimated, the
// free space each generation keeps after it (fragmentation, often from
// pinned objects), and what was allocated between two GCs, as PerfView
// counts it (GC.AllocatedExact). AllocationTick events (the same keyword
// at level Verbose, 5) give a sample of allocation volumes, which the
// report falls back on where the histories do not say (the first GC, a
// background GC's small object heap, traces without histories); without
// either, allocation is unknown (GC.HasAllocated is false).
//
// WriteText, WriteJSONLines, WriteCSV and WriteHTML write the report of
// the processes' GCs.
package gcstats

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/feed"
	"github.com/clrgo/clrevents/internal/numfmt"
	"github.com/clrgo/clrevents/trace"
)

// NumGens is the number of generations a GC reports sizes for: 0, 1 and 2,
// the large object heap (index 3) and the pinned object heap (index 4,
// .NET 5 and later).
const NumGens = 5

// Generation indexes in GC's per-generation arrays.
const (
	Gen0 = 0
	Gen1 = 1
	Gen2 = 2
	LOH  = 3
	POH  = 4
)

// GC is one garbage collection.
type GC struct {
	// Number is the GC's number in its process (GCStart's Count), from 1.
	Number int64
	// Generation is the condemned generation: 0, 1 or 2.
	Generation int
	// Reason is why the GC happened.
	Reason clrevents.GCReason
	// Type is NonConcurrentGC (blocking), BackgroundGC or ForegroundGC (a
	// blocking GC during a background one). Runtimes that do not report
	// the type (GCStart version 0) give NonConcurrentGC.
	Type clrevents.GCType

	// Start is the time of the GC's start event; PauseStart the time of the
	// suspension that began its first pause (zero without HasPause).
	Start, PauseStart time.Time
	// HasPause tells whether the trace holds the suspension the GC began
	// in. Without it (the trace began while the runtime was suspended
	// for the GC) the pause is unknown: PauseStart, Pause, Pauses,
	// Suspend and PausePercent are zero and measure nothing.
	HasPause bool
	// Pause is the time the runtime was suspended for this GC, summed over
	// its pauses; Pauses counts them (1 for a blocking GC, more for a
	// background one); Suspend is the time its suspensions took to stop
	// the threads (a background GC's summed over its pauses, as PerfView's
	// SuspendDurationMSec gives it).
	Pause   time.Duration
	Pauses  int
	Suspend time.Duration
	// Duration runs from the GC's start event to its end event.
	Duration time.Duration
	// PausePercent is the share of time paused since the previous GC, in
	// percent: Pause over Pause plus the time since the previous GC ended
	// (for a background GC, over the time from the previous GC's end to
	// this one's). It is set when the GC is complete and has a pause, and
	// is at most 100: a pause that began before the previous GC ended
	// (times a damaged trace's garbled timestamps give) is all pause.
	PausePercent float64

	// HeapBefore and HeapAfter are the heap's size in bytes before and
	// after the GC, every generation included. HeapAfter comes from
	// GCHeapStats; HeapBefore from the per-heap histories when the trace
	// has them, else it is estimated (HeapBeforeEstimated) from the
	// previous GC's sizes and the allocations since.
	HeapBefore, HeapAfter uint64
	HeapBeforeEstimated   bool
	// GenSizeBefore and GenSizeAfter are the sizes by generation (see
	// NumGens); GenSizeBefore is zero without per-heap histories.
	GenSizeBefore, GenSizeAfter [NumGens]uint64
	// Fragmentation is the free space each generation holds after the GC,
	// its free-list space and free objects summed over the heaps, from the
	// per-heap histories (as PerfView's GCStats counts it);
	// HasFragmentation is false when the trace has none for the GC.
	Fragmentation    [NumGens]uint64
	HasFragmentation bool
	// Promoted is the bytes that survived the GC, by generation they
	// were in (GCHeapStats' TotalPromotedSizeN).
	Promoted [NumGens]uint64
	// PinnedObjects is the number of pinned objects the GC saw.
	PinnedObjects uint32
	// Heaps is the number of GC heaps (more than 1 under server GC): the
	// GC's global heap history's, else the highest HeapIndex + 1 of its
	// per-heap histories; 0 when the trace has neither.
	Heaps int
	// Allocated is the bytes allocated since the previous GC, by small,
	// large and pinned object heap, as PerfView's GCStats counts them.
	// When this GC and the one before it have per-heap histories, it is
	// exact: each heap's objects before this GC less those the previous
	// GC left (AllocatedExact), but for a background GC's small object
	// heap, whose generation 0 it does not collect (the large and pinned
	// ones are exact, AllocatedExact false, known with ticks). Otherwise it
	// is what the AllocationTick events since the previous GC's heap
	// statistics count (for the trace's first GC, since the trace's
	// start): one event per about 100 KB allocated, a sample, which some
	// runtimes overcount several times over. It is unknown, not zero,
	// without either (HasAllocated) or when the trace lacks the GC's heap
	// statistics. The reports give their sum (alloc MB, allocated_bytes).
	Allocated [3]uint64
	// HasAllocated tells whether Allocated is known; AllocatedExact
	// whether it comes from the per-heap histories.
	HasAllocated, AllocatedExact bool

	// Complete tells whether the trace holds the GC's end: its end event,
	// heap statistics and, for a blocking GC, the restart after it.
	Complete bool

	ended, hasHeapStats, concurrent, restarted bool
	perHeap                                    int
	// heapObjs are the object sizes (a generation's size less its free
	// space) of each heap before and after the GC, from its per-heap
	// histories in the order they came, as PerfView pairs them with the
	// previous GC's.
	heapObjs    []heapObjs
	globalHeaps bool  // Heaps is the global history's
	tid         int64 // the thread of its start event
	// prevStats is the last GC with heap statistics when this one
	// started: what its heap before is estimated from.
	prevStats    *GC
	sinceLastEnd time.Duration
}

// heapObjs are one heap's object sizes by generation before and after a
// GC.
type heapObjs struct{ before, after [NumGens]uint64 }

// TotalFragmentation is the free space of all generations after the GC.
func (gc *GC) TotalFragmentation() uint64 {
	var n uint64
	for _, v := range gc.Fragmentation {
		n += v
	}
	return n
}

// FragmentationPercent is the share of generation gen, after the GC, that
// is free space, in percent: 0 when the trace has no per-heap history for
// the GC or the generation is empty.
func (gc *GC) FragmentationPercent(gen int) float64 {
	if gen < 0 || gen >= NumGens || gc.GenSizeAfter[gen] == 0 {
		return 0
	}
	return 100 * float64(gc.Fragmentation[gen]) / float64(gc.GenSizeAfter[gen])
}

// Process is the GCs of one process. A process ID the system gave again,
// after the process that had it exited, is another Process (see
// Analyzer.Processes).
type Process struct {
	PID int64
	// Name is the executable's name where the trace gives it (an ETW
	// trace's kernel Process events), else "".
	Name string
	// GCs are the process's GCs in the order they started.
	GCs []*GC
	// Heaps is the largest number of GC heaps of its GCs (0 when
	// unknown).
	Heaps int
	// ServerGC tells whether the process runs server GC, as the runtime's
	// GCSettings event (the private provider's, at the runtime's start)
	// says; HasServerGC whether the trace has one. A server GC may run
	// one heap (GCHeapCount=1, or DATAS starting with one).
	ServerGC, HasServerGC bool
	// Allocated is the sum of the process's AllocationTick events'
	// amounts over the whole trace, by small, large and pinned object
	// heap; HasAllocated tells whether the trace has any for the process.
	// Without them it is unknown, not zero: they need the GC keyword (0x1)
	// at level Verbose (5). The ticks are the runtime's sample of what
	// was allocated, which some runtimes overcount several times over:
	// what the GCs say was allocated between them, as PerfView totals it,
	// is Summary's Allocated (the .NET Core 3.0 trace's ticks say 4,235
	// MB, its GCs 1,123).
	Allocated    [3]uint64
	HasAllocated bool

	a    *Analyzer
	life *feed.Life
	// runtimeStart is the time of the runtime's start event
	// (RuntimeInformationStart) when it was the first of the process's
	// events the model took, else zero (see TimeInTrace).
	runtimeStart time.Time
	s            state
	// Of its events, for Missing: runtime suspensions by reason (the
	// last slot: a reason the manifest does not name), allocation ticks.
	suspends [clrevents.GCSuspendEEReasonSuspendForDebuggerSweep + 2]int
	ticks    int
}

// suspension is a suspension of the runtime, from its begin event to the
// end of its restart, on the thread that asked for it.
type suspension struct {
	reason clrevents.GCSuspendEEReason
	// begin is when it began, or when the GC suspension it waited
	// behind ended (see waited); end when the threads were stopped (zero
	// until then).
	begin, end time.Time
	// gc is the last GC started in it.
	gc *GC
	// tid is the thread that asked for it.
	tid int64
}

// state is what the model needs to remember between events.
type state struct {
	open        []suspension // begun, not yet restarted: one per thread, a few at most
	lastRestart time.Time    // the end of the last GC suspension's restart
	bgc         *GC          // the background GC in progress
	lastEnd     time.Time
	// orphanEnd: the last GCEnd ended a GC whose start the trace does
	// not hold (lost, or before the trace began): the heap statistics
	// that follow are that GC's, no GC's in the model.
	orphanEnd bool
	// allocAtLastGC is Allocated at the last GC's heap statistics.
	allocAtLastGC [3]uint64
	prevStats     *GC // the last GC with heap statistics
	// lastDone is the GC completed last: a server background GC's
	// histories, which come after its end, are its.
	lastDone *GC
}

// ErrNoEvents is the error Read returns when the trace has no GC: no
// process's GCStart event. Analyses fed event by event can tell the same
// from an empty Processes.
var ErrNoEvents = errors.New("no GC events: record the runtime provider with the GC keyword (0x1) at level Informational (4), e.g. dotnet-trace collect --providers Microsoft-Windows-DotNETRuntime:0x1:4")

// Analyzer builds the GC model of every process in a trace.
type Analyzer struct {
	procs *feed.Processes[Process]
	feed  feed.Feed
	// last is the time of the last event seen.
	last time.Time
}

// NewAnalyzer returns an empty Analyzer.
func NewAnalyzer() *Analyzer {
	a := &Analyzer{}
	a.procs = feed.NewProcesses(func(pid int64, life *feed.Life) *Process {
		// Until a GC ends, the time since the last one counts from the
		// trace's start.
		return &Process{PID: pid, a: a, life: life, s: state{lastEnd: a.feed.Origin}}
	})
	return a
}

// Read feeds every event of r to a new Analyzer and returns it, with an
// error that says what the model lacks: ErrNoEvents when r has no
// GC, joined with what the trace lost, since the model is made
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
			return a, a.Missing(-1)
		}
		return a, errors.Join(feed.NoneRead(a.Missing(-1), lost), lost)
	}
	return a, lost
}

// Missing returns nil when process pid (when pid is negative, any
// process) has a GC in the model. Otherwise it returns an error that
// errors.Is ErrNoEvents. When the trace held GC-keyword events for it, the
// error says which (runtime suspensions, by reason, and allocation ticks)
// and what their having no GCStart means: that no GC ran while the trace
// recorded, or, when some suspensions were for a GC, that the GCs' own
// events are not in the trace. When it held none, the error is
// ErrNoEvents itself, which names the keyword to record, unless pid is a
// process of its own while others have GCs: then it names those.
func (a *Analyzer) Missing(pid int64) error {
	var e noGCs
	for _, p := range a.procs.All() {
		if pid >= 0 && p.PID != pid {
			continue
		}
		if len(p.GCs) > 0 {
			return nil
		}
		for r, n := range p.suspends {
			e.suspends[r] += n
		}
		e.ticks += p.ticks
	}
	for _, n := range e.suspends {
		e.total += n
	}
	if e.total == 0 && e.ticks == 0 {
		if pid >= 0 {
			if ps := a.Processes(); len(ps) > 0 {
				pids := make([]int64, len(ps))
				for i, p := range ps {
					pids[i] = p.PID
				}
				return feed.OtherProcesses(ErrNoEvents, "no GC events", pids)
			}
		}
		return ErrNoEvents
	}
	return &e
}

// noGCs is Missing's error for a trace that held GC-keyword events but no
// GCStart.
type noGCs struct {
	suspends [len(Process{}.suspends)]int
	total    int
	ticks    int
}

func (e *noGCs) Is(target error) bool { return target == ErrNoEvents }

func (e *noGCs) Error() string {
	var b strings.Builder
	b.WriteString("no GC events: the trace holds ")
	gcs := 0
	if e.total > 0 {
		b.WriteString(numfmt.Count(int64(e.total), "runtime suspension"))
		// The reasons, the most frequent first.
		type reason struct {
			name string
			n    int
		}
		var rs []reason
		for r, n := range e.suspends {
			if n == 0 {
				continue
			}
			name := "another reason"
			if r < len(e.suspends)-1 {
				name = clrevents.GCSuspendEEReason(r).String()
				if forGC(clrevents.GCSuspendEEReason(r)) {
					gcs += n
				}
			}
			rs = append(rs, reason{name, n})
		}
		slices.SortStableFunc(rs, func(x, y reason) int { return y.n - x.n })
		b.WriteString(" (")
		for i, r := range rs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(r.name + " " + numfmt.Thousands(int64(r.n)))
		}
		b.WriteString(")")
		if gcs == 0 {
			b.WriteString(", none of them for a GC")
		} else {
			b.WriteString(", " + numfmt.Thousands(int64(gcs)) + " of them for a GC")
		}
		if e.ticks > 0 {
			b.WriteString(", and ")
		}
	}
	if e.ticks > 0 {
		b.WriteString(numfmt.Count(int64(e.ticks), "allocation tick"))
	}
	b.WriteString(", but no GCStart: ")
	if gcs == 0 {
		b.WriteString("no garbage collection ran while it recorded")
	} else {
		b.WriteString("the GCs' own events are not in it (the trace stopped before them, or they were dropped or lost to damage)")
	}
	return b.String()
}

// Add feeds one event. Events the model does not use cost a map lookup;
// the others are decoded, and one that fails to decode is counted in
// DecodeErrors and otherwise ignored. Every event moves the end of the
// trace (see Process.TimeInTrace), and the ETW kernel's Process Start
// and Stop events bound their process's time in it: a Process/Start for
// a process ID that has a process in the model begins a new process.
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
	t := e.Time()
	if t.After(a.last) {
		a.last = t
	}
	a.procs.Note(e)
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

// TimeInTrace returns the span of the trace the process was alive in:
// from the trace's start (the Analyzer's Origin), or the process's
// start when the trace records it, to the trace's last event, or the
// process's exit when the trace records it (an ETW kernel Process/Stop
// event). The process's start is its ETW kernel Process/Start event, else
// the runtime's own start event (RuntimeInformationStart, TraceEvent's
// Runtime/Start) when it comes before any other of the process's events
// the model takes: the runtime logs it as it starts, and again when an
// EventPipe session ends, after the process's GCs (a rundown's
// RuntimeInformationDCStart, a running runtime's, is not one).
// Summary's PausePercent is measured over it.
func (p *Process) TimeInTrace() (start, end time.Time) {
	if p.a == nil {
		return time.Time{}, time.Time{}
	}
	start, end = p.a.feed.Origin, p.a.last
	began := p.life.Start
	if began.IsZero() {
		began = p.runtimeStart
	}
	if began.After(start) {
		start = began
	}
	if t := p.life.Exit; !t.IsZero() && t.Before(end) {
		end = t
	}
	if end.Before(start) {
		end = start
	}
	return start, end
}

// Origin is the time reports give times relative to: from Read, the
// trace's start (trace.Info.StartTime: an EventPipe trace's sync time,
// which comes before its first event, an ETW log's header), as PerfView's
// GCStats counts its times; else what SetOrigin set, else the time of
// the first event Add or Observe saw (zero if none).
func (a *Analyzer) Origin() time.Time { return a.feed.Origin }

// SetOrigin sets the time reports count from, for events fed by Observe.
func (a *Analyzer) SetOrigin(t time.Time) { a.feed.Origin = t }

// DecodeErrors returns nil, or an error that counts the events the model
// needed that did not decode (Add leaves them out) and gives the first few
// in full, naming each event and its offset (trace.ErrUndecoded).
func (a *Analyzer) DecodeErrors() error { return a.feed.Undecoded.Err() }

// Processes returns the processes that had GCs (GCStart events), by
// process ID, and those of one ID (the system gives an exited process's
// ID to a new one) in the order they started.
func (a *Analyzer) Processes() []*Process {
	var out []*Process
	for _, p := range a.procs.All() {
		if len(p.GCs) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// Observe feeds one decoded event that happened at t in process pid on
// thread tid. Events must come in time order. The event is not retained.
// The model knows clrevents' types: a value of another generated
// package's is ignored.
// The first event observed is the Origin unless SetOrigin set one, and
// each moves the end of the trace (see Process.TimeInTrace).
//
// An event whose values no runtime writes (trace.ErrNotCredible) is left
// out and counted in DecodeErrors: a GCStart of a generation above 2, a
// size larger than an address space (clrevents.MaxAllocationBytes) in
// the heap statistics, a per-heap history or an allocation tick, and
// times out of their order (a GC's end before its start, a GC's start
// before its suspension began, a suspension's end or a restart before
// the suspension or the GC began), which a damaged trace's garbled
// payloads and timestamps give.
func (a *Analyzer) Observe(t time.Time, pid, tid int64, ev clrimpl.Event) {
	if err := a.observe(t, pid, tid, ev); err != nil {
		a.feed.Undecoded.Add(fmt.Errorf("%s at %s in process %d: %w", ev.Descriptor().Name, t.Format(time.RFC3339Nano), pid, err))
	}
}

func (a *Analyzer) observe(t time.Time, pid, tid int64, ev clrimpl.Event) error {
	if a.feed.Origin.IsZero() {
		a.feed.Origin = t
	}
	if t.After(a.last) {
		a.last = t
	}
	ce, ok := ev.(clrevents.Event)
	if !ok {
		return nil
	}
	k := kinds[ce.Info()]
	if k == kNone {
		return nil
	}
	if err := credible(ce); err != nil {
		return err
	}
	first := a.procs.Lookup(pid) == nil
	p := a.procs.Get(pid)
	switch k {
	case kRuntimeStart:
		if first {
			p.runtimeStart = t
		}
	case kSuspendBegin:
		if f, ok := ev.(clrevents.GCSuspendEEEvent); ok {
			r := f.GCSuspendEEFields().Reason
			p.suspends[min(int(r), len(p.suspends)-1)]++
			p.suspendBegin(t, tid, r)
		}
	case kSuspendEnd:
		return p.suspendEnd(t, tid)
	case kRestartEnd:
		return p.restartEnd(t, tid)
	case kStart:
		if f, ok := ev.(clrevents.GCStartEvent); ok {
			return p.start(t, tid, f.GCStartFields())
		}
	case kEnd:
		if f, ok := ev.(clrevents.GCEndEvent); ok {
			gc := p.ending(int64(f.GCEndFields().Count))
			p.s.orphanEnd = gc == nil
			if gc != nil {
				if t.Before(gc.Start) {
					return fmt.Errorf("%w: the GC's end is %v before its start", trace.ErrNotCredible, gc.Start.Sub(t))
				}
				gc.Duration = t.Sub(gc.Start)
				gc.ended = true
			}
		}
	case kHeapStats:
		if f, ok := ev.(clrevents.GCHeapStatsEvent); ok {
			p.heapStats(t, f.GCHeapStatsFields())
		}
	case kGlobalHistory:
		if f, ok := ev.(clrevents.GCGlobalHeapEvent); ok {
			p.globalHistory(f.GCGlobalHeapFields())
		}
	case kPerHeapHistory:
		return p.perHeapHistory(ce)
	case kSettings:
		if f, ok := ev.(clrevents.GCSettingsEvent); ok {
			if s := f.GCSettingsFields(); s.HasServerGC {
				p.ServerGC, p.HasServerGC = s.ServerGC, true
			}
		}
	case kAllocTick:
		if f, ok := ev.(clrevents.GCAllocationTickEvent); ok {
			p.ticks++
			p.allocTick(f.GCAllocationTickFields())
		}
	}
	return nil
}

// credible checks what the model takes from an event's payload: a
// generation the GC has and sizes an address space can hold.
func credible(ev clrevents.Event) error {
	switch f := ev.(type) {
	case clrevents.GCStartEvent:
		if d := f.GCStartFields().Depth; d > Gen2 {
			return fmt.Errorf("%w: Depth %d is not a generation a GC collects (0 to 2)", trace.ErrNotCredible, d)
		}
	case clrevents.GCHeapStatsEvent:
		h := f.GCHeapStatsFields()
		return sizes("heap statistics", h.GenerationSize0, h.GenerationSize1, h.GenerationSize2, h.GenerationSize3, h.GenerationSize4,
			h.TotalPromotedSize0, h.TotalPromotedSize1, h.TotalPromotedSize2, h.TotalPromotedSize3, h.TotalPromotedSize4,
			h.TotalHeapSize(), h.TotalPromoted())
	case clrevents.GCAllocationTickEvent:
		if err := f.GCAllocationTickFields().CheckAmount(); err != nil {
			return fmt.Errorf("%w: allocation tick: %v", trace.ErrNotCredible, err)
		}
	case clrevents.GCGlobalHeapEvent:
		if n := f.GCGlobalHeapFields().NumHeaps; n > maxHeaps {
			return fmt.Errorf("%w: NumHeaps %d: the GC makes %d heaps at most", trace.ErrNotCredible, n, maxHeaps)
		}
	case *clrevents.GCPerHeapHistoryV3:
		return heapIndex(f.HeapIndex)
	case *clrevents.GCPerHeapHistory:
		return heapIndex(f.HeapIndex)
	}
	return nil
}

// maxHeaps is the most GC heaps a runtime makes: one per processor, of
// 1,024 at most (the GC's MAX_SUPPORTED_CPUS on 64-bit hosts).
const maxHeaps = 1024

// heapIndex checks a per-heap history's heap index.
func heapIndex(i uint32) error {
	if i >= maxHeaps {
		return fmt.Errorf("%w: HeapIndex %d: the GC makes %d heaps at most", trace.ErrNotCredible, i, maxHeaps)
	}
	return nil
}

// sizes returns an ErrNotCredible error when a size is larger than an
// address space holds.
func sizes(what string, v ...uint64) error {
	for _, n := range v {
		if n > clrevents.MaxAllocationBytes {
			return fmt.Errorf("%w: %s: a size of %d bytes, more than an address space holds", trace.ErrNotCredible, what, n)
		}
	}
	return nil
}

// current is the GC that events about "the GC" refer to: the last one
// started if it is not complete, else the background GC in progress.
func (p *Process) current() *GC {
	if n := len(p.GCs); n > 0 && !p.GCs[n-1].Complete {
		return p.GCs[n-1]
	}
	return p.s.bgc
}

// ending is the GC a GCEnd event with count ends: the latest GC of that
// number not yet ended among the few that can be in progress together (a
// background GC, a foreground GC, the ephemeral GC before a background
// one), or nil when the trace does not hold its start.
func (p *Process) ending(count int64) *GC {
	for i, n := len(p.GCs)-1, 0; i >= 0 && n < 4; i, n = i-1, n+1 {
		if gc := p.GCs[i]; gc.Number == count && !gc.ended {
			return gc
		}
	}
	if gc := p.s.bgc; gc != nil && gc.Number == count && !gc.ended {
		return gc
	}
	return nil
}

// forGC reports whether a suspension's reason is a GC's.
func forGC(r clrevents.GCSuspendEEReason) bool {
	return r == clrevents.GCSuspendEEReasonSuspendForGC || r == clrevents.GCSuspendEEReasonSuspendForGCPrep
}

// opened returns the open suspension of thread tid, or nil.
func (s *state) opened(tid int64) *suspension {
	for i := range s.open {
		if s.open[i].tid == tid {
			return &s.open[i]
		}
	}
	return nil
}

// close forgets the open suspension of thread tid.
func (s *state) close(tid int64) {
	for i := range s.open {
		if s.open[i].tid == tid {
			s.open = append(s.open[:i], s.open[i+1:]...)
			return
		}
	}
}

func (p *Process) suspendBegin(t time.Time, tid int64, reason clrevents.GCSuspendEEReason) {
	// Suspensions for other reasons (the sampling profiler, the
	// debugger, a thread abort, ...) are not GC pauses, but a GC may
	// start inside one. A thread that begins again without its restart
	// in the trace starts afresh.
	s := &p.s
	s.close(tid)
	s.open = append(s.open, suspension{reason: reason, begin: t, tid: tid})
}

// waited moves the begin of a GC suspension to the end of the restart of
// the GC suspension it waited behind: the runtime logs the begin before
// it takes the lock that one holds, so a foreground GC's suspension can
// begin while the background GC's (SuspendForGCPrep) is still on. A GC
// suspension's restart between another's begin and its restart can only
// be that one's. Suspensions for other reasons are left alone, as
// TraceEvent leaves them.
//
// A restart after the suspension's threads had stopped cannot be one it
// waited behind (only a garbled time puts it there), and moves nothing.
func (s *state) waited(sus *suspension) {
	if forGC(sus.reason) && s.lastRestart.After(sus.begin) && (sus.end.IsZero() || !s.lastRestart.After(sus.end)) {
		sus.begin = s.lastRestart
	}
}

func (p *Process) suspendEnd(t time.Time, tid int64) error {
	s := &p.s
	sus := s.opened(tid)
	if sus == nil || !forGC(sus.reason) {
		return nil
	}
	s.waited(sus)
	if t.Before(sus.begin) {
		return fmt.Errorf("%w: the suspension ends %v before it began", trace.ErrNotCredible, sus.begin.Sub(t))
	}
	sus.end = t
	if sus.reason == clrevents.GCSuspendEEReasonSuspendForGCPrep && s.bgc != nil && s.bgc.HasPause {
		s.bgc.Suspend += t.Sub(sus.begin)
	}
	return nil
}

func (p *Process) restartEnd(t time.Time, tid int64) error {
	s := &p.s
	sus := s.opened(tid)
	if sus == nil {
		// The restart of a suspension the trace does not hold: it ends a
		// GC started on this thread whose pause is unknown.
		if gc := p.current(); gc != nil && !gc.HasPause && gc.tid == tid && gc.Type != clrevents.GCTypeBackgroundGC {
			return p.restarted(gc, t)
		}
		return nil
	}
	closed := *sus
	sus = &closed
	if !forGC(sus.reason) && sus.gc == nil {
		s.close(tid)
		return nil
	}
	s.waited(sus)
	if t.Before(sus.begin) {
		// Which of the two times is garbled is unknown: the suspension
		// stays open for a restart that ends it after it began.
		return fmt.Errorf("%w: the restart ends %v before the suspension began", trace.ErrNotCredible, sus.begin.Sub(t))
	}
	if gc := sus.gc; gc != nil {
		if err := restartAfter(gc, t); err != nil {
			return err // the same: the suspension stays open
		}
	}
	s.close(tid)
	if forGC(sus.reason) {
		s.lastRestart = t
	}
	if sus.reason == clrevents.GCSuspendEEReasonSuspendForGCPrep {
		// A later pause of the background GC in progress.
		if gc := s.bgc; gc != nil && gc.HasPause {
			gc.Pause += t.Sub(sus.begin)
			gc.Pauses++
		}
		return nil
	}
	gc := sus.gc
	if gc == nil {
		// A suspension for a GC that logged no start: the later pauses
		// of a concurrent GC of a runtime that does not report GC types
		// (.NET Framework 2.0-era events) are those.
		gc = p.current()
		if gc == nil || gc.Type == clrevents.GCTypeBackgroundGC {
			return nil
		}
	}
	return p.restarted(gc, t)
}

// restarted ends the pause of gc, blocking or the initial one of a
// concurrent GC, with a restart at t; a restart before the GC began is
// not credible and changes nothing.
func (p *Process) restarted(gc *GC, t time.Time) error {
	if err := restartAfter(gc, t); err != nil {
		return err
	}
	if gc.HasPause {
		gc.Pause = t.Sub(gc.PauseStart)
		gc.Pauses = 1
	}
	switch {
	case gc.Type == clrevents.GCTypeBackgroundGC:
		// The initial pause; the background GC goes on.
	case !gc.ended && gc.hasHeapStats:
		// A GC whose end was lost: its heap statistics came before the
		// restart, as a blocking GC's do (a concurrent GC's come after
		// its end, after the restart).
		gc.restarted = true
		p.complete(gc)
	case !gc.ended:
		// A restart before the GC's end: a concurrent GC of a runtime
		// that does not report GC types. Its pauses add up like a
		// background GC's, from its first suspension (as TraceEvent
		// counts them), and it ends with its heap statistics.
		gc.concurrent = true
	default:
		gc.restarted = true
		if gc.hasHeapStats {
			p.complete(gc)
		}
	}
	return nil
}

// restartAfter checks that a restart at t comes after gc began: the GC
// runs inside its pause.
func restartAfter(gc *GC, t time.Time) error {
	bound := gc.Start
	if gc.HasPause && gc.PauseStart.After(bound) {
		bound = gc.PauseStart
	}
	if t.Before(bound) {
		return fmt.Errorf("%w: the restart ends %v before its GC began", trace.ErrNotCredible, bound.Sub(t))
	}
	return nil
}

// suspensionFor is the open suspension a GC starting on thread tid runs
// in: the thread's own, else the GC suspension that holds the runtime
// (the one whose threads are stopped, else the latest begun), or nil.
func (s *state) suspensionFor(tid int64) *suspension {
	if sus := s.opened(tid); sus != nil {
		return sus
	}
	var best *suspension
	for i := range s.open {
		sus := &s.open[i]
		if sus.reason != clrevents.GCSuspendEEReasonSuspendForGC {
			continue
		}
		if best == nil || !sus.end.IsZero() && best.end.IsZero() ||
			sus.end.IsZero() == best.end.IsZero() && sus.begin.After(best.begin) {
			best = sus
		}
	}
	return best
}

// dropStale forgets the open suspensions that earlier GCs ran in, but
// the one a GC starting on thread tid runs in: a GC runs while the
// runtime is suspended for it, and the runtime restarts before it
// suspends for the next one, so their restarts are not in the trace
// (damage, or a dropped buffer, lost them). Waiting on for them matched
// a later restart on the same thread, seconds and many GCs on, and gave
// the GC that pause. Their pauses are unknown (HasPause false); a GC
// that had ended, with its heap statistics, is complete.
func (p *Process) dropStale(tid int64) {
	s := &p.s
	keep := s.suspensionFor(tid)
	open := s.open[:0]
	for i := range s.open {
		sus := &s.open[i]
		gc := sus.gc
		if gc == nil || sus == keep {
			open = append(open, *sus)
			continue
		}
		gc.HasPause, gc.PauseStart = false, time.Time{}
		gc.Pause, gc.Pauses, gc.Suspend = 0, 0, 0
		if gc.ended && gc.Type != clrevents.GCTypeBackgroundGC {
			gc.restarted = true
			if gc.hasHeapStats {
				p.complete(gc)
			}
		}
	}
	s.open = open
}

func (p *Process) start(t time.Time, tid int64, f clrevents.GCStartFields) error {
	s := &p.s
	n := len(p.GCs)
	if n > 0 && p.GCs[n-1].Number == int64(f.Count) {
		// Some runtimes log two start events per GC (two versions of
		// the event); the first one counts.
		return nil
	}
	p.dropStale(tid)
	sus := s.suspensionFor(tid)
	if sus != nil {
		s.waited(sus)
		if t.Before(sus.begin) {
			// The GC runs inside the suspension.
			return fmt.Errorf("%w: the GC starts %v before the suspension it runs in began", trace.ErrNotCredible, sus.begin.Sub(t))
		}
	}
	gc := &GC{
		Number:     int64(f.Count),
		Generation: int(f.Depth),
		Reason:     f.Reason,
		Type:       f.Type,
		Start:      t,
		tid:        tid,
		prevStats:  s.prevStats,
	}
	if gc.Reason == clrevents.GCReasonPMFullGC {
		if cur := p.current(); cur != nil {
			p.complete(cur)
		}
	}
	if sus != nil {
		sus.gc = gc
		gc.HasPause = true
		ephemeralBeforeBGC := n > 0 && p.GCs[n-1].Type == clrevents.GCTypeBackgroundGC &&
			!p.GCs[n-1].Complete && gc.Type == clrevents.GCTypeNonConcurrentGC
		if ephemeralBeforeBGC || gc.Reason == clrevents.GCReasonPMFullGC || !forGC(sus.reason) {
			// The background GC's suspension is its; the ephemeral GC's
			// pause counts from its start (as TraceEvent counts it). So
			// does a GC's inside a suspension for another reason.
			gc.PauseStart = t
		} else {
			gc.PauseStart = sus.begin
			end := sus.end
			if end.IsZero() || end.After(t) {
				// No end, or one after the GC began, which only a garbled
				// time gives (the GC starts once the threads stopped):
				// the suspension took until the GC's start at most.
				end = t
			}
			gc.Suspend = end.Sub(sus.begin)
		}
	}
	p.GCs = append(p.GCs, gc)
	if gc.Type == clrevents.GCTypeBackgroundGC {
		s.bgc = gc
		// Its initial suspension is a pause of its own, counted: when an
		// ephemeral GC before it takes the restart, its later pauses
		// (GCPrep) add to this one.
		gc.Pause = gc.Suspend
		if gc.Suspend > 0 {
			gc.Pauses = 1
		}
	}
	return nil
}

func (p *Process) heapStats(t time.Time, f clrevents.GCHeapStatsFields) {
	s := &p.s
	orphan := s.orphanEnd
	s.orphanEnd = false
	// The statistics of a GC whose end came without its start (its
	// GCStart lost) are not the current GC's: taken as a background GC's,
	// they ended it with another GC's sizes, before its last pauses. They
	// still mark a GC's end, for the next GC's allocations and pause
	// share.
	if gc := p.current(); gc != nil && !orphan {
		gc.hasHeapStats = true
		gc.GenSizeAfter = [NumGens]uint64{f.GenerationSize0, f.GenerationSize1, f.GenerationSize2, f.GenerationSize3, f.GenerationSize4}
		gc.Promoted = [NumGens]uint64{f.TotalPromotedSize0, f.TotalPromotedSize1, f.TotalPromotedSize2, f.TotalPromotedSize3, f.TotalPromotedSize4}
		gc.HeapAfter = f.TotalHeapSize()
		gc.PinnedObjects = f.PinnedObjectCount
		for i := range gc.Allocated {
			gc.Allocated[i] = p.Allocated[i] - s.allocAtLastGC[i]
		}
		gc.HasAllocated = p.HasAllocated
		if !s.lastEnd.IsZero() {
			if gc.Type == clrevents.GCTypeBackgroundGC {
				gc.sinceLastEnd = t.Sub(s.lastEnd)
			} else {
				gc.sinceLastEnd = gc.PauseStart.Sub(s.lastEnd)
			}
		}
		p.estimateHeapBefore(gc)
		s.prevStats = gc
		// A background GC ends with its heap statistics; so does a
		// concurrent GC of the older runtimes.
		if gc.Type == clrevents.GCTypeBackgroundGC && s.bgc != nil {
			p.complete(s.bgc)
			s.bgc = nil
		} else if gc.concurrent || gc.restarted {
			p.complete(gc)
		}
	}
	s.allocAtLastGC = p.Allocated
	s.lastEnd = t
}

// estimateHeapBefore sets HeapBefore when the per-heap histories did not,
// as PerfView estimates it: the sizes after the last GC with heap
// statistics before this one began (for a background GC, the GC before
// it, not one that ran during it), generation 0 grown by what was
// allocated since, and the large and pinned object heaps at least as
// large as this GC left them (a GC of generation 0 or 1 does not shrink
// them, so what they hold after it they held before).
func (p *Process) estimateHeapBefore(gc *GC) {
	if gc.perHeap > 0 {
		return
	}
	gc.HeapBeforeEstimated = true
	gen0 := gc.Allocated[0]
	prev := gc.prevStats
	if prev == nil {
		gc.HeapBefore = gen0
		return
	}
	after := prev.GenSizeAfter
	gc.HeapBefore = max(gen0, after[Gen0]) + after[1] + after[Gen2] +
		max(after[3], gc.GenSizeAfter[3]) + max(after[4], gc.GenSizeAfter[4])
}

func (p *Process) globalHistory(f clrevents.GCGlobalHeapFields) {
	gc := p.current()
	if gc == nil {
		// Server background GCs log their histories after the end.
		gc = p.s.lastDone
	}
	n := int(f.NumHeaps)
	if gc != nil && n > 0 {
		gc.Heaps = n
		gc.globalHeaps = true
	}
	p.Heaps = max(p.Heaps, n)
}

// perHeapHistory adds one heap's sizes before the GC. The runtime
// provider's version 3 and the private provider's raw layout (.NET
// Framework) carry them in per-generation arrays of different shapes.
func (p *Process) perHeapHistory(ev clrevents.Event) error {
	gc := p.current()
	if gc == nil {
		gc = p.s.lastDone // as globalHistory
	}
	if gc == nil {
		return nil
	}
	before, frag := gc.GenSizeBefore, gc.Fragmentation
	var objs heapObjs
	add := func(i int, v genHistory) error {
		// Each value at most an address space, added to sums that are
		// (the check below), cannot wrap them.
		if err := sizes("per-heap history", v.sizeBefore, v.freeListBefore, v.freeObjBefore, v.sizeAfter, v.freeListAfter, v.freeObjAfter); err != nil {
			return err
		}
		before[i] += v.sizeBefore
		frag[i] += v.freeListAfter + v.freeObjAfter
		objs.before[i] = sub0(v.sizeBefore, v.freeListBefore+v.freeObjBefore)
		objs.after[i] = sub0(v.sizeAfter, v.freeListAfter+v.freeObjAfter)
		return nil
	}
	var heap uint32
	switch e := ev.(type) {
	case *clrevents.GCPerHeapHistoryV3:
		heap = e.HeapIndex
		for i := 0; i < min(e.Values.Len(), NumGens); i++ {
			v := e.Values.At(i)
			if err := add(i, genHistory{v.SizeBefore, v.FreeListBefore, v.FreeObjBefore, v.SizeAfter, v.FreeListAfter, v.FreeObjAfter}); err != nil {
				return err
			}
		}
	case *clrevents.GCPerHeapHistory:
		heap = e.HeapIndex
		for i := 0; i < min(e.Values.Len(), NumGens); i++ {
			v := e.Values.At(i)
			if err := add(i, genHistory{v.SizeBefore, v.FreeListBefore, v.FreeObjBefore, v.SizeAfter, v.FreeListAfter, v.FreeObjAfter}); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	gc.heapObjs = append(gc.heapObjs, objs)
	// The GC's heap must fit an address space too.
	var total, free uint64
	for i := range before {
		total += before[i]
		free += frag[i]
	}
	if err := sizes("per-heap histories of the GC", total, free); err != nil {
		return err
	}
	gc.GenSizeBefore, gc.Fragmentation = before, frag
	if !gc.globalHeaps {
		gc.Heaps = max(gc.Heaps, int(heap)+1)
		p.Heaps = max(p.Heaps, gc.Heaps)
	}
	gc.perHeap++
	gc.HasFragmentation = true
	gc.HeapBefore = total
	gc.HeapBeforeEstimated = false
	return nil
}

// genHistory is one generation's sizes in a per-heap history.
type genHistory struct {
	sizeBefore, freeListBefore, freeObjBefore, sizeAfter, freeListAfter, freeObjAfter uint64
}

// sub0 is a-b, or 0 when b is larger.
func sub0(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// allocatedFromHistories makes gc's allocation exact when it and the GC
// before it have per-heap histories, as PerfView's GCStats counts it
// (TraceGC.GetUserAllocated): for the small object heap (generation 0),
// the large and the pinned one, each heap's objects before this GC less
// those the previous GC left on the heap of its place in the list. A GC
// of generation 0 does not update the large and pinned object heaps'
// sizes after it, so where it gives none its sizes before stand. A
// background GC's generation 0 keeps the AllocationTick count. PerfView
// adds the heaps' differences as they come, negative ones too; a total
// below zero is 0 here.
func (p *Process) allocatedFromHistories(gc *GC) {
	if len(gc.heapObjs) == 0 {
		return
	}
	i := p.indexOf(gc)
	if i <= 0 || len(p.GCs[i-1].heapObjs) == 0 {
		return
	}
	prev := p.GCs[i-1]
	for k, gen := range [3]int{Gen0, 3, 4} {
		if gen == Gen0 && gc.Type == clrevents.GCTypeBackgroundGC {
			continue
		}
		var total int64
		for h, cur := range gc.heapObjs {
			var was uint64
			if h < len(prev.heapObjs) {
				was = prev.heapObjs[h].after[gen]
				if gen != Gen0 && was == 0 && prev.Generation < 1 {
					was = prev.heapObjs[h].before[gen]
				}
			}
			total += int64(cur.before[gen]) - int64(was)
		}
		gc.Allocated[k] = uint64(max(total, 0))
	}
	if gc.Type != clrevents.GCTypeBackgroundGC {
		// A background GC's stays as the ticks make it: known with
		// them, sampled for its generation 0.
		gc.HasAllocated, gc.AllocatedExact = true, true
	}
}

// indexOf is gc's index in p.GCs (-1 when it is not there), searched
// from the end, where the GCs being completed are.
func (p *Process) indexOf(gc *GC) int {
	i := len(p.GCs) - 1
	for i >= 0 && p.GCs[i] != gc {
		i--
	}
	return i
}

func (p *Process) allocTick(f clrevents.GCAllocationTickFields) {
	amount := f.Amount()
	p.HasAllocated = true
	switch f.AllocationKind {
	case clrevents.GCAllocationKindSmall:
		p.Allocated[0] += amount
	case clrevents.GCAllocationKindLarge:
		p.Allocated[1] += amount
	default:
		p.Allocated[2] += amount
	}
}

// complete marks gc complete and works out the figures that need its
// neighbours.
func (p *Process) complete(gc *GC) {
	if gc.Complete {
		return
	}
	gc.Complete = true
	p.s.lastDone = gc
	p.allocatedFromHistories(gc)
	if !gc.HasPause {
		return
	}
	if gc.Type == clrevents.GCTypeBackgroundGC {
		// From the end of the GC before it to this one's end.
		i := p.indexOf(gc)
		from := p.GCs[0].Start
		if i > 0 {
			prev := p.GCs[i-1]
			from = prev.Start.Add(prev.Duration)
		}
		if total := gc.Start.Add(gc.Duration).Sub(from); total > 0 {
			gc.PausePercent = min(100, 100*float64(gc.Pause)/float64(total))
		}
		return
	}
	if total := gc.Pause + max(0, gc.sinceLastEnd); total > 0 {
		gc.PausePercent = 100 * float64(gc.Pause) / float64(total)
	}
}
