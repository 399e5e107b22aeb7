// Package profile builds profiles from .NET runtime traces: CPU and thread
// time from the SampleProfiler's ThreadSample events (EventPipe) or the
// kernel's CPU samples and stack walks (ETW, see "CPU in an ETW trace"
// below), allocations from
// GCAllocationTick and AllocationSampled, lock contention from
// ContentionStart/Stop and exceptions from ExceptionThrown, each sample with
// its managed stack resolved by package symbols. An allocation's stack ends
// in a frame naming the type it allocated ("Type System.String"), a throw's
// in one naming the exception ("Throw(System.IO.FileNotFoundException)"),
// as PerfView's stacks do (symbols.Label frames), where the event names
// them (GCAllocationTick from version 2, AllocationSampled, ExceptionThrown
// from version 1). A process with both allocation events is profiled from
// its AllocationSampled events alone (see Alloc). A Profile writes itself as
// pprof (what go tool pprof reads), folded stacks (as pyroscope and
// FlameGraph read them) and speedscope JSON.
//
//	r, err := trace.Open("app.nettrace")
//	…
//	p, err := profile.Build(r, profile.Options{Kind: profile.CPU})
//	…
//	err = p.WriteFolded(os.Stdout)
//
// The zero Options build a CPU profile of every process in the trace;
// Options.PIDs picks some.
//
// Build works on any source the front door reads (a file, a pipe, a live
// stream) and any format; it reads the trace once and resolves the stacks at
// the end, when the rundown has listed every method. It needs each thread's
// events in order, not the whole trace's: a reader in thread order
// (trace.WithOrder(trace.ThreadOrder): an EventPipe trace's stored order,
// an ETW log's time order) builds the same profile without the cost of
// merging an EventPipe trace by time, and is what clrdump uses.
//
// # CPU and thread time
//
// The SampleProfiler samples every managed thread about once a millisecond
// and says whether the thread was in managed code (Managed) or outside it
// (External: native code, waiting, sleeping). The time between two samples
// of a thread is attributed to the second sample's stack, as
// pyroscope-io/dotnetdiag's profiler does: per thread, a run of managed
// samples counts the time since the previous managed sample, a run of
// external samples the time since the previous external one, and a switch
// between the two counts on the side the thread came from; samples before
// the trace's sync time are dropped. With ManagedOnly, time outside managed
// code is left out, and no time goes to an External sample's stack: the
// while from a thread's Managed sample to its External one goes to the
// managed stack it was seen in, as PerfView's thread time gives it (the
// pyroscope golden profiles come out the same: their five such whiles
// each end at the same stack). Values are nanoseconds.
//
// A thread the runtime does not see in managed code is not sampled at all
// (its sampler walks managed stacks only), so a thread parked in a native
// wait for seconds has no samples then, and the whole while goes to its
// next sample's stack, as dotnetdiag gives it (PerfView gives it to the
// stack before).
//
// Such a profile is the threads' time, not the processors': its values
// are samples/count and wall/nanoseconds (ThreadTimeSampleTypes; pprof's
// sample and period type "wall", where kernel and universal samples give
// "cpu"), and each Sample has the State its samples were in, Managed or
// External, pprof's string label "state" ("managed" or "external": go
// tool pprof -tagfocus=state=managed shows the time in managed code). The
// folded stacks and speedscope have no state: a thread's stack is one
// entry whatever its samples' states.
//
// # CPU in an ETW trace
//
// A kernel session (PerfView's default) samples every processor once a
// millisecond, or at the interval the trace's PerfInfo/CollectionStart
// gives (in a log that has none, the old interval of its last
// PerfInfo/SetInterval, which a session logs as it stops), and walks each sample's stack. Each sample counts that interval
// once (its Count field, which Microsoft documents as not used, is not
// read: TraceEvent does not either) on the stack the kernel walked: the
// kernel-mode frames, then the user-mode ones, whether the walk came whole
// (StackWalk/Stack) or as keys of cached stacks that a later KeyDelete or
// KeyRundown (or an earlier KeyCreate) defines; a sample whose walk never
// came has its sampled address alone. A sample names its thread, and the
// kernel's Thread events its process (-1 when the trace does not say).
// The idle processors are thread 0 of process 0, whose samples have no
// stack walk. Native frames resolve to their image (symbols.Native); a run
// of frames in one image is one frame. ManagedOnly keeps the samples whose
// innermost frame is a managed method.
//
// # CPU in a universal trace
//
// A machine-wide collection on Linux that writes the universal providers
// (PerfView's UniversalProviders.md) gives its CPU samples as
// Universal.Events "cpu" events: a process, a thread, the stack the
// collector walked (native and managed frames alike) and a Value, the
// sample's weight. A CPU profile counts that Value, as PerfView's CPU view
// does: its values are samples/count and cpu/samples, not nanoseconds,
// which such a trace does not give. When the runtime's SampleProfiler
// samples are in the trace too, the collector's are profiled instead of
// them: they cover every process and native code. The frames resolve
// through the trace's Universal.System events (package symbols): jitted
// methods by the names the runtime's perf maps give them, other code to
// its mapped file, whose pprof mapping keeps the file's range, offset and
// build ID for pprof to find its symbols by.
//
// # Frames and processes
//
// A frame prints as module!Namespace.Method(Signature), module!? for
// native code in an image the trace names, and ?!? when nothing the trace
// holds covers its address; a run of ?!? frames is one frame, as PerfView
// shows it. The same stacks go to every writer.
//
// When a profile's samples come from more than one process (an ETW trace
// of a whole machine), every writer starts each stack with a frame naming
// its process, so that processes do not merge and idle time reads as
// idle: "Idle (0)" and "test.exe (3644)" where the trace names the
// executable, "process 3644" where it does not, "process unknown" for
// samples whose process the trace does not say. That frame is the root of
// a folded stack, the outermost location of a pprof sample (a function of
// that name, without a mapping) and the first frame of a speedscope
// sample. A profile of one process has no such frame: its stacks are the
// same whether or not Options.PIDs picked it.
//
// # Processes of one ID
//
// Windows gives an exited process's ID to a new process soon after, and
// a machine-wide ETW log may hold both. They are two processes, as
// TraceEvent's TraceProcess makes them: a kernel Process/Start begins a
// new process of its ID, with its own name and start, and a
// Process/DCStart (the rundown) names one running before the trace.
// Each sample is of the process of its ID live at the sample's time (the
// latest to start before it; before the ID's first Process/Start, the
// one running before the trace, unnamed when no DCStart names it), and
// says which by its ProcessStart; Profile.Processes names each. The
// writers start the stacks of each with a frame of its own, which names
// its start where another process of its ID has samples too, from the
// profile's start as the GC and JIT reports name them: "app.exe (10,
// started at 3.000 ms)", "process 10 (start not in the trace)".
// Options.PIDs keeps every process of an ID it lists.
package profile

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/symbols"
	"github.com/clrgo/clrevents/trace"
)

// Kind is what a profile measures.
type Kind uint8

const (
	// CPU is where threads spent their time: from an ETW log, the
	// kernel's CPU samples (pprof type "cpu"); from an EventPipe trace,
	// the runtime's samples of every managed thread, running or waiting
	// (thread time, pprof type "wall", each sample labelled "state").
	CPU Kind = iota
	// Alloc is where memory was allocated: the runtime's allocation
	// ticks (GCAllocationTick, about one every 100 KB; .NET 10's
	// AllocationSampled), as objects and bytes, each stack ending in the
	// type allocated. The bytes are the ticks' amounts, as PerfView's GC
	// Heap Alloc view sums them: the runtime's sample of what was
	// allocated, which some runtimes overcount several times over (the
	// .NET Core 3.0 trace's ticks say 4,235 MB where its GCs' heap
	// histories say 1,123: gcstats' Summary.Allocated); the objects are
	// an estimate from AllocationSampled (each sample weighed up by its
	// chance of being taken), but from GCAllocationTick the count of
	// ticks: a tick stands for about 100 KB of objects and does not say
	// how many, so there alloc_objects counts ticks, not objects. A
	// process whose trace has both (the GC keyword at Verbose and the
	// AllocationSampling keyword) is counted from its AllocationSampled
	// events alone, which the runtime's design doc asks profilers to
	// prefer: its GCAllocationTick events are left out, rather than
	// counting its allocations twice.
	Alloc
	// Contention is where threads waited for locks: the runtime's
	// ContentionStart and ContentionStop events, as waits and the time
	// waited.
	Contention
	// Exception is where exceptions were thrown, each stack ending in the
	// exception's type.
	Exception
)

var kindNames = []string{"cpu", "alloc", "contention", "exception"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// ParseKind reads "cpu", "alloc", "contention" or "exception".
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if s == n {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown profile %q (want cpu, alloc, contention or exception)", s)
}

// ValueType is a sample value's type and unit, as pprof names them.
type ValueType struct {
	Type, Unit string
}

// SampleTypes returns the kind's values, as Go's profiles name them: the
// last is the main one (pprof's default, and the folded value). CPU's are
// those of CPU time, samples/count and cpu/nanoseconds (an ETW log's
// kernel samples); a CPU profile of EventPipe's SampleProfiler samples has
// ThreadTimeSampleTypes instead, and one of a universal trace's samples
// samples/count and cpu/samples.
func (k Kind) SampleTypes() []ValueType {
	switch k {
	case CPU:
		return []ValueType{{"samples", "count"}, {"cpu", "nanoseconds"}}
	case Alloc:
		return []ValueType{{"alloc_objects", "count"}, {"alloc_space", "bytes"}}
	case Contention:
		return []ValueType{{"contentions", "count"}, {"delay", "nanoseconds"}}
	}
	return []ValueType{{"exceptions", "count"}}
}

// ThreadTimeSampleTypes returns the values of a CPU profile of the
// SampleProfiler's samples (EventPipe), which are the threads' time,
// running or waiting, not the processors': samples/count and
// wall/nanoseconds.
func ThreadTimeSampleTypes() []ValueType {
	return []ValueType{{"samples", "count"}, {"wall", "nanoseconds"}}
}

// State is what the runtime said of a thread it sampled: a SampleProfiler
// sample (EventPipe) is of a thread in managed code or outside it.
type State uint8

const (
	// StateNone is the state of every sample but a SampleProfiler one.
	StateNone State = iota
	// StateManaged is a thread in managed code.
	StateManaged
	// StateExternal is a thread outside managed code: in native code,
	// or waiting in the runtime or the OS.
	StateExternal
)

// String is "managed", "external", or "" for StateNone: the value of a
// pprof sample's label "state".
func (s State) String() string {
	switch s {
	case StateManaged:
		return "managed"
	case StateExternal:
		return "external"
	}
	return ""
}

// missing says what a trace lacks for a kind, and what to enable.
func (k Kind) missing() string {
	switch k {
	case CPU:
		return "no SampleProfiler ThreadSample events with stacks (EventPipe: enable the Microsoft-DotNETCore-SampleProfiler provider), no kernel CPU samples (ETW: enable the kernel's Profile flag with stack walks, as PerfView collect does) and no Universal.Events cpu samples (a machine-wide Linux collection)"
	case Alloc:
		return "no GCAllocationTick or AllocationSampled events with stacks; enable the Microsoft-Windows-DotNETRuntime provider with the GC keyword (0x1) at level 5 (verbose), or the AllocationSampling keyword (0x80000000000) on .NET 10+"
	case Contention:
		return "no ContentionStart/ContentionStop events; enable the Microsoft-Windows-DotNETRuntime provider with the Contention keyword (0x4000)"
	}
	return "no ExceptionThrown events; enable the Microsoft-Windows-DotNETRuntime provider with the Exception keyword (0x8000)"
}

// Options choose the profile. The zero value is a CPU profile of every
// process in the trace.
type Options struct {
	Kind Kind
	// ManagedOnly leaves out CPU time outside managed code, and never puts
	// time on a SampleProfiler External sample's stack. (A universal
	// trace's samples are kept whole: its symbols do not say which code
	// is managed.)
	ManagedOnly bool
	// PIDs keeps the samples of these processes only (every process
	// that had a listed ID, where the system gave it again: see
	// "Processes of one ID"); nil (or empty) keeps every process. In an
	// ETW trace, process 0 is the idle processors (the kernel's Idle
	// process), and -1 picks the samples whose process the trace does
	// not say.
	PIDs []int64
	// Map, when not nil, is the code map the stacks resolve through, kept
	// by someone else: a live collector's monitoring session, which saw
	// the process's rundown and keeps its method loads, so that a short
	// profiling window needs no rundown of its own. The trace's own
	// method, module and image events are then left out of it. Finish
	// reads and writes it (unresolved addresses become frames), and the
	// Profile's writers read it: keep other goroutines off it meanwhile.
	// Nil builds a map from the trace's events.
	Map *symbols.Map
}

// Sample is one aggregated sample: the values of one stack on one thread
// (in one State).
type Sample struct {
	PID, TID int64
	// ProcessStart is the start of the sample's process in Unix
	// nanoseconds, where the trace records it (an ETW kernel
	// Process/Start), else 0: with PID it tells apart two processes of
	// one ID (see "Processes of one ID" in the package doc), and it is
	// the process's Start in Profile.Processes.
	ProcessStart int64
	Stack        symbols.StackID
	// State is, in a CPU profile of SampleProfiler samples, the state
	// the runtime gave the samples (StateManaged or StateExternal): a
	// thread's samples of one stack in each state are two Samples.
	// StateNone in other profiles.
	State State
	// Values has one value per SampleType.
	Values []int64
}

// Profile is a built profile.
type Profile struct {
	Kind Kind
	// SampleTypes are the samples' values (Kind.SampleTypes; a CPU
	// profile of SampleProfiler samples has ThreadTimeSampleTypes).
	SampleTypes []ValueType
	// Samples in a stable order: by process (PID, then ProcessStart),
	// thread, then first appearance.
	Samples []Sample
	// Map resolved the frames; Stacks interns them, root first.
	Map    *symbols.Map
	Stacks *symbols.Stacks
	// Events is the number of events that made samples.
	Events int
	// ExternalSamples and ManagedSamples count a CPU profile's
	// SampleProfiler samples by their type: the runtime samples every
	// managed thread, running or not, and External is a thread outside
	// managed code (in native code, or waiting in the runtime or the OS).
	// Such a profile is the threads' time, what PerfView's Thread Time
	// view shows, not the processors'. Both 0 for other sources (an ETW
	// trace's kernel samples are CPU time).
	ExternalSamples, ManagedSamples int
	// StartNanos and DurationNanos give the trace's span (Unix nanoseconds
	// and nanoseconds), to its last event: from its start as the trace
	// states it from Build (where that is before the first event), from
	// the earliest event's time from a Builder's Finish.
	StartNanos, DurationNanos int64
	// PeriodNanos is the sampling interval of a CPU profile where the
	// trace states it: an ETW log's kernel CPU samples (PerfInfo's
	// CollectionStart or SetInterval, or the kernel's default of 1 ms); 0 otherwise
	// (EventPipe's samples are weighed by the time between a thread's
	// samples, not by one period). pprof shows it as the Period.
	PeriodNanos int64
	// Name is the trace's name.
	Name string
	// ProcessNames are the executables' names by process ID, where the
	// trace gives them (an ETW trace's kernel Process events, a universal
	// trace's Universal.System events); nil when none. Of an ID the trace
	// gave to more than one process, it holds the latest's name: Processes
	// names each.
	ProcessNames map[int64]string
	// Processes are the processes the samples are of, one for each PID
	// and ProcessStart of theirs, in the samples' order (by ID, then
	// start), each with its executable's name where the trace gives it.
	// A machine-wide ETW log may hold two processes of one ID (see
	// "Processes of one ID" in the package doc): they are two entries.
	Processes []Process
}

// raw is a sample as read: its stack not yet resolved.
type raw struct {
	ts     int64
	v1     int64
	stack  uint32 // index into the raw stack table
	thread uint32 // index into Builder.threadKeys
	// The first value is 1 but for allocations (Builder.v0s).
}

// chunk is how many raws a block of Builder.raws holds: growing by blocks
// copies nothing.
const chunk = 4096

// raws holds the samples as read, in blocks.
type raws struct {
	blocks [][]raw
	n      int
}

func (rs *raws) add(r raw) int {
	if rs.n%chunk == 0 {
		blk, ok := rawBlocks.Get().(*[]raw)
		if !ok {
			blk = new([]raw)
			*blk = make([]raw, 0, chunk)
		}
		rs.blocks = append(rs.blocks, (*blk)[:0])
	}
	b := &rs.blocks[len(rs.blocks)-1]
	*b = append(*b, r)
	rs.n++
	return rs.n - 1
}

func (rs *raws) at(i int) *raw { return &rs.blocks[i/chunk][i%chunk] }

// rawBlocks keeps the blocks of finished builds (Build's) for the next:
// a program that builds many profiles (a collector's windows, a dataset
// of traces) does not make a block of 160 KiB for each.
var rawBlocks sync.Pool

// release gives rs's blocks to the next build; rs is empty after.
func (rs *raws) release() {
	for i, blk := range rs.blocks {
		blk = blk[:0]
		rawBlocks.Put(&blk)
		rs.blocks[i] = nil
	}
	rs.blocks, rs.n = rs.blocks[:0], 0
}

type threadKey struct{ pid, tid int64 }

type threadSlot struct {
	k  threadKey
	i  uint32
	ok bool
}

// cpuThread is the attribution state of one thread, dotnetdiag's: the
// relative times (+1 ns, so that 0 is none) of the last external and
// managed samples; the sign of lastExternal tells the thread's state (0
// none yet, < 0 managed, > 0 external).
type cpuThread struct {
	lastExternal, lastManaged int64
	// before is lastExternal and lastManaged before the latest sample,
	// and latestRaw the raw that sample made (+1; 0 none), for taking it
	// back when its time turns out garbled forward (see cpu); rejected
	// is the time of the thread's last sample left out (0: the last one
	// was kept).
	before    [2]int64
	latestRaw int
	rejected  int64
	// The thread's last raw stack (+1; 0 none): a thread often stays in
	// one place, and comparing is cheaper than hashing.
	lastStack uint32
	// With ManagedOnly, the stack of the thread's latest Managed sample
	// (+1; 0 none), which the time until an External sample goes to.
	managedStack uint32
}

type pending struct {
	ts    int64
	stack uint32
	ok    bool
	// ETW: the ContentionStart had no stack of its own; a walk of it may
	// come after it.
	ref  trace.StackRef
	walk bool
}

// Builder builds a profile from events fed one at a time; Build does it
// for a whole trace.
type Builder struct {
	o Options
	m *symbols.Map
	// The events of interest that Options.PIDs left out, by process.
	others map[int64]int

	raws       raws
	threadIdx  map[threadKey]uint32
	threadKeys []threadKey
	pid0       int64            // the first thread's process
	tidIdx     map[int64]uint32 // thread indices of pid0's threads
	rawTable   []uint32         // open addressing: raw stack ID+1, 0 empty
	rawHashes  []uint64         // by raw stack ID
	rawPIDs    []int64          // by raw stack ID
	rawIPs     []uint64
	rawOffs    []uint32
	// rawLeaf is, by raw stack ID, the label its samples end in (an
	// index in labelTexts, plus one), 0 for none; nil while no stack has
	// one. Labels name what an allocation made or a throw threw.
	rawLeaf []uint32
	// rawStates is, by raw stack ID, the State of its samples; nil while
	// no stack has one (a raw stack of SampleProfiler samples is one
	// stack in one state).
	rawStates []State
	// labelTexts are the labels' texts, and labelIdx their indices by
	// the UTF-16 name they were made from, after the label's prefix
	// (labelKey is where the key is built).
	labelTexts []string
	labelIdx   map[string]uint32
	labelKey   []byte

	// Recent threads, direct-mapped by thread ID: most samples find
	// their thread here without a map lookup.
	tcache [64]threadSlot
	// skeys maps a sample's trace.Event.StackKey to its raw stack,
	// direct-mapped (stackSlot), made at the first sample with a key: a
	// sample whose stack the table has seen under its key finds its raw
	// stack without hashing or comparing its addresses.
	skeys   []stackSlot
	keyless bool // tests: samples' StackKeys are not used

	// What each kind of event is to the builder, by schema entry.
	classes map[*clrevents.EventInfo]class
	// recent caches classes' answers by the type's address: a trace's
	// events are of a few types.
	recent [16]struct {
		info *clrevents.EventInfo
		c    class
	}

	origin     int64 // clock ticks at the trace's sync time
	freq       int64
	nsPerTick  int64       // 1e9/freq when freq divides a second, else 0
	cpuThreads []cpuThread // by thread index
	takenBack  int         // raws left out after they were made
	contention map[threadKey]pending
	stops      []int64 // by raw: when the contention ended, its place in time
	v0s        []int64 // by raw: the first value of an allocation
	// SampleProfiler samples by type (Profile.ExternalSamples).
	externalSamples, managedSamples int
	first, last                     int64
	seen                            bool
	// at is the time of the first event fed, whose Timestamp is atTS:
	// the profile's start is the earliest's time from them.
	at   time.Time
	atTS int64

	// ETW: the contention a ContentionStop ended, for addETW.
	stopped pending
	// ETW: the kernel's CPU samples and their stacks (kernel.go), and its
	// Process/Start and DCStart events (process.go).
	k          kstate
	procEvents []procEvent
	// threadProcs is, by thread index, the thread's process: set at
	// Finish (assignProcesses) where the trace has kernel Process
	// events, nil for a thread of an ID that has none.
	threadProcs []*proc
	// universal: CPU samples came from a universal trace's
	// Universal.Events (universal.go).
	universal bool
	// sampled are the processes that have AllocationSampled events: an
	// allocation profile leaves out their GCAllocationTick events.
	sampled map[int64]bool
}

// NewBuilder starts a profile. origin is the clock value the trace counts
// relative time from (its sync time) and freq the clock's ticks per
// second.
func NewBuilder(o Options, origin, freq int64) *Builder {
	if freq <= 0 {
		freq = 1e9
	}
	o.PIDs = slices.Clone(o.PIDs) // the caller may reuse its slice
	m := o.Map
	if m == nil {
		m = symbols.NewMap()
	}
	b := &Builder{o: o, m: m, rawOffs: []uint32{0}, classes: map[*clrevents.EventInfo]class{},
		origin: origin, freq: freq, contention: map[threadKey]pending{},
		threadIdx: map[threadKey]uint32{}, tidIdx: map[int64]uint32{}}
	if 1e9%freq == 0 {
		b.nsPerTick = 1e9 / freq
	}
	return b
}

// Build reads a trace to its end and builds the profile. A trace without
// the events the kind needs is an error naming the trace and what to enable
// (ErrNoEvents), and the profile is nil.
//
// What the trace loses does not lose the profile: a trace that is damaged
// or cut short (trace.ErrDamaged) gives the profile of every event read,
// and an event the profile needs that does not decode is left out and
// counted (trace.ErrUndecoded). Build then returns the profile and an
// error that says what was lost: the reader's, joined with the decode
// errors (the first few in full).
func Build(r *trace.Reader, o Options) (*Profile, error) {
	if r.Started() {
		return nil, fmt.Errorf("%s: the Reader has handed out events already, and a profile needs every event from the trace's start (the code map's rundown among them): give Build a Reader opened anew", r.Name())
	}
	info := r.Info()
	origin, freq := info.SyncTimestamp, info.ClockFrequency
	return buildFrom(r, NewBuilder(o, origin, freq))
}

// buildFrom is Build with the Builder given.
func buildFrom(r *trace.Reader, b *Builder) (*Profile, error) {
	info := r.Info()
	var undecoded trace.DecodeErrors
	var readErr error
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		if b.origin == math.MinInt64 {
			b.origin = e.Timestamp()
		}
		if err := b.Add(e); err != nil {
			undecoded.AddEvent(e, err)
		}
	}
	lost := errors.Join(readErr, undecoded.Err())
	p, err := b.Finish()
	b.raws.release() // the profile holds none of them
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", r.Name(), err), lost)
	}
	p.Name = r.Name()
	if start := info.StartTime.UnixNano(); !info.StartTime.IsZero() && start < p.StartNanos && p.DurationNanos < math.MaxInt64-(p.StartNanos-start) {
		// The span starts where the trace says it does, often before
		// its first event, and still ends at its last.
		p.DurationNanos += p.StartNanos - start
		p.StartNanos = start
	}
	return p, lost
}

// ErrNoEvents is wrapped by the error of a profile without usable events.
var ErrNoEvents = errors.New("no usable events")

// class is what an event is to a Builder, by its schema entry.
type class uint8

const (
	classOther        class = iota // maybe of use to the kind: add1 looks
	classCode                      // a method or module event
	classThreadSample              // SampleProfiler ThreadSample, for a CPU profile
	classSkip                      // of no use to the kind
)

var threadSampleInfo = (*clrevents.ThreadSample)(nil).Info()

// classify says what events of a schema entry are to the builder.
func (b *Builder) classify(info *clrevents.EventInfo) class {
	slot := &b.recent[uintptr(unsafe.Pointer(info))/unsafe.Sizeof(*info)%uintptr(len(b.recent))]
	if slot.info == info {
		return slot.c
	}
	c, ok := b.classes[info]
	if !ok {
		name := info.Name
		switch {
		case symbols.IsCodeEvent(name):
			c = classCode
		case b.o.Kind == CPU && info.Provider == clrevents.ProviderSampleProfiler && name == "ThreadSample":
			c = classThreadSample
		case b.o.Kind == CPU:
			c = classSkip
		case b.o.Kind == Alloc && !strings.HasPrefix(name, "GCAllocationTick") && name != "AllocationSampled":
			c = classSkip
		case b.o.Kind == Contention && !strings.HasPrefix(name, "Contention"):
			c = classSkip
		case b.o.Kind == Exception && !(strings.HasPrefix(name, "ExceptionThrown") && name != "ExceptionThrownStop"):
			c = classSkip
		}
		b.classes[info] = c
	}
	slot.info, slot.c = info, c
	return c
}

// clrType is e's type in clrevents (the types a Builder knows), whatever
// other generated packages the program links; add1 decodes with it.
func clrType(e *trace.Event) (*clrevents.EventInfo, bool) {
	typ, ok := e.DecodeTypeIn(clrevents.Table())
	if !ok {
		return nil, false
	}
	info, ok := typ.(*clrevents.EventInfo)
	return info, ok
}

// kernelClass is the class (provider GUID) of e's type when it is one of
// kernelevents'.
func kernelClass(e *trace.Event) (clrimpl.GUID, bool) {
	typ, ok := e.DecodeType()
	if !ok {
		return clrimpl.GUID{}, false
	}
	info, ok := typ.(*kernelevents.EventInfo)
	if !ok {
		return clrimpl.GUID{}, false
	}
	return info.Descriptor().ProviderGUID, true
}

// Add feeds one event. It returns an error only for an event of interest
// whose payload does not decode. Events may come in file order: only the
// order of each thread's events matters.
func (b *Builder) Add(e *trace.Event) error {
	// The profile's span is the trace's, every event's: not only those
	// of the kind's events and kept processes.
	if !b.seen {
		b.at, b.atTS = e.Time(), e.Timestamp()
	}
	b.span(e.Timestamp())
	etw := e.Format() == trace.ETL
	if etw && b.k.stacks.Add(e) {
		return nil // a stack walk: Finish asks for its frames
	}
	info, ok := clrType(e)
	if !ok {
		if class, ok := kernelClass(e); ok {
			return b.kernelEvent(e, class)
		}
		return b.universalEvent(e)
	}
	c := b.classify(info)
	if c == classCode {
		if b.o.Map != nil {
			return nil // the map is kept by its owner
		}
		return b.m.Add(e)
	}
	pid := e.ProcessID()
	if !b.keep(pid) {
		if c != classSkip {
			b.leftOut(pid)
		}
		return nil
	}
	if etw {
		return b.addETW(e, info)
	}
	ts := e.Timestamp()
	switch c {
	case classSkip:
		return nil
	case classThreadSample:
		if b.universal {
			return nil // a collector's samples are profiled instead (universal.go)
		}
		if p := e.Payload(); info == threadSampleInfo && len(p) >= 4 { // Decode's reading, without its call
			return b.cpu(pid, e.ThreadID(), ts, clrevents.SampleProfilerSampleType(binary.LittleEndian.Uint32(p)), e.Stack(), e.StackKey())
		}
	}
	return b.add1(e, info, ts)
}

// keep reports whether Options.PIDs keeps the process.
func (b *Builder) keep(pid int64) bool {
	return len(b.o.PIDs) == 0 || slices.Contains(b.o.PIDs, pid)
}

// leftOut counts an event of interest of a process that Options.PIDs left
// out, for the error when no process it keeps has any.
func (b *Builder) leftOut(pid int64) {
	if b.others == nil {
		b.others = map[int64]int{}
	}
	b.others[pid]++
}

// noEvents is the error of a profile without samples: what the trace
// lacks, or, when Options.PIDs left out the processes that had events of
// interest, which those are.
func (b *Builder) noEvents() error {
	if len(b.others) == 0 {
		return fmt.Errorf("%w for the %s profile: %s", ErrNoEvents, b.o.Kind, b.o.Kind.missing())
	}
	names := processNames(b.processes()) // of its latest process, where an ID had two
	pids := slices.Sorted(maps.Keys(b.others))
	slices.SortStableFunc(pids, func(x, y int64) int { return cmp.Compare(b.others[y], b.others[x]) })
	const most = 10
	var list []string
	for _, pid := range pids[:min(len(pids), most)] {
		n := b.others[pid]
		switch name := names[pid]; {
		case pid < 0:
			list = append(list, fmt.Sprintf("process unknown (%d events)", n))
		case name != "":
			list = append(list, fmt.Sprintf("%s (process %d, %d events)", name, pid, n))
		default:
			list = append(list, fmt.Sprintf("process %d (%d events)", pid, n))
		}
	}
	if len(pids) > most {
		list = append(list, fmt.Sprintf("%d more", len(pids)-most))
	}
	return fmt.Errorf("%w for the %s profile of %s: the trace has them only for %s", ErrNoEvents, b.o.Kind,
		b.pidsLabel(), strings.Join(list, ", "))
}

// pidsLabel names the processes Options.PIDs keeps: "process 1",
// "processes 1 and 2".
func (b *Builder) pidsLabel() string {
	var list []string
	for _, pid := range b.o.PIDs {
		list = append(list, strconv.FormatInt(pid, 10))
	}
	if len(list) == 1 {
		return "process " + list[0]
	}
	return "processes " + strings.Join(list, ", ")
}

// span widens the trace's span to ts.
func (b *Builder) span(ts int64) {
	if !b.seen {
		b.first, b.last, b.seen = ts, ts, true
	}
	b.first, b.last = min(b.first, ts), max(b.last, ts)
}

// addETW handles an ETW event of the runtime. Its stack may come after
// it (a CLRStackWalk, or the kernel's walk: trace.Stacks matches them):
// a sample it makes without a stack of its own looks for one at Finish.
// A contention sample, made at ContentionStop, takes the walk of the
// ContentionStop, else the ContentionStart's.
func (b *Builder) addETW(e *trace.Event, info *clrevents.EventInfo) error {
	k := threadKey{e.ProcessID(), e.ThreadID()}
	n, started := b.raws.n, b.contention[k].ts
	ts := e.Timestamp()
	if err := b.add1(e, info, ts); err != nil {
		return err
	}
	own := len(e.Stack()) > 0
	switch st, ok := b.contention[k]; {
	case b.raws.n == n+1:
		var alt trace.StackRef
		if st := b.stopped; st.walk {
			alt = st.ref // a ContentionStop's: the Start's walk
		}
		if !own || alt != (trace.StackRef{}) {
			var ref trace.StackRef
			if !own {
				ref = e.StackRef()
			}
			b.k.samples.put(n, ksample{clr: true, ref: ref, alt: alt})
		}
	case ok && st.ts != started && !own:
		st.ref, st.walk = e.StackRef(), true // a ContentionStart's
		b.contention[k] = st
	}
	b.stopped = pending{}
	return nil
}

func (b *Builder) add1(e *trace.Event, info *clrevents.EventInfo, ts int64) error {
	name := info.Name
	pid := e.ProcessID()
	switch b.o.Kind {
	case CPU:
		if info.Provider != clrevents.ProviderSampleProfiler || name != "ThreadSample" {
			return nil
		}
		ev, err := e.DecodeIn(clrevents.Table())
		if err != nil {
			return err
		}
		s, ok := ev.(*clrevents.ThreadSample)
		if !ok {
			return nil
		}
		return b.cpu(pid, e.ThreadID(), ts, s.Type, e.Stack(), e.StackKey())
	case Alloc:
		switch {
		case strings.HasPrefix(name, "GCAllocationTick"):
			if b.sampled[pid] {
				return nil // the process's AllocationSampled events stand for its allocations
			}
			ev, err := e.DecodeIn(clrevents.Table())
			if err != nil {
				return err
			}
			x, ok := ev.(clrevents.GCAllocationTickEvent)
			if !ok {
				return nil
			}
			f := x.GCAllocationTickFields()
			if err := f.CheckAmount(); err != nil {
				return fmt.Errorf("%w: %v", ErrNotCredible, err)
			}
			n := f.Amount()
			b.add(pid, e.ThreadID(), ts, e.Stack(), e.StackKey(), 1, int64(n), b.label("Type ", f.TypeName, ""))
		case name == "AllocationSampled":
			ev, err := e.DecodeIn(clrevents.Table())
			if err != nil {
				return err
			}
			x, ok := ev.(*clrevents.AllocationSampled)
			if !ok {
				return nil
			}
			if x.ObjectSize > clrevents.MaxAllocationBytes {
				return fmt.Errorf("%w: ObjectSize %d bytes is more than an address space holds", ErrNotCredible, x.ObjectSize)
			}
			if !b.sampled[pid] {
				b.allocationSampled(pid)
			}
			c, n := upscale(x.ObjectSize)
			b.add(pid, e.ThreadID(), ts, e.Stack(), e.StackKey(), c, n, b.label("Type ", x.TypeName, ""))
		}
	case Contention:
		if !strings.HasPrefix(name, "Contention") {
			return nil
		}
		ev, err := e.DecodeIn(clrevents.Table())
		if err != nil {
			return err
		}
		x, ok := ev.(clrevents.ContentionEvent)
		if !ok {
			return nil
		}
		k := threadKey{pid, e.ThreadID()}
		if strings.HasPrefix(name, "ContentionStart") {
			b.contention[k] = pending{ts: ts, stack: b.rawStack(pid, e.Stack(), e.StackKey(), 0, StateNone, 0), ok: true}
			return nil
		}
		st, ok := b.contention[k]
		if !ok || !st.ok {
			return nil
		}
		delete(b.contention, k)
		b.stopped = st
		f := x.ContentionFields()
		d := b.nanos(ts - st.ts)
		if f.HasDurationNs && f.DurationNs >= 0 && f.DurationNs < math.MaxInt64 {
			d = int64(f.DurationNs)
		}
		if d < 0 {
			// Read in file order, a stop can come before its start only
			// where a timestamp or a thread is garbled.
			b.stopped = pending{}
			return fmt.Errorf("%w: the wait ends %d ns before the ContentionStart of its thread", ErrNotCredible, -d)
		}
		b.raws.add(raw{thread: b.thread(k), ts: st.ts, stack: st.stack, v1: d})
		b.stops = append(b.stops, ts)
	case Exception:
		if strings.HasPrefix(name, "ExceptionThrown") && name != "ExceptionThrownStop" {
			var leaf uint32
			if name != "ExceptionThrown" { // version 0 names no type
				ev, err := e.DecodeIn(clrevents.Table())
				if err != nil {
					return err
				}
				if x, ok := ev.(*clrevents.ExceptionThrownV1); ok {
					leaf = b.label("Throw(", x.ExceptionType, ")")
				}
			}
			b.add(pid, e.ThreadID(), ts, e.Stack(), e.StackKey(), 1, 0, leaf)
		}
	}
	return nil
}

// allocationSampled notes the first AllocationSampled event of process
// pid: the process's allocation ticks made so far are taken back, and
// those to come are left out (see Alloc). Until now, every allocation raw
// of the process was a tick.
func (b *Builder) allocationSampled(pid int64) {
	if b.sampled == nil {
		b.sampled = map[int64]bool{}
	}
	b.sampled[pid] = true
	for _, blk := range b.raws.blocks {
		for i := range blk {
			if r := &blk[i]; r.stack != takenBack && b.threadKeys[r.thread].pid == pid {
				r.stack = takenBack
				b.takenBack++
			}
		}
	}
}

// ErrNotCredible is wrapped by the error of an event whose values no
// runtime writes: an allocation tick that fails CheckAmount (amounts
// that disagree, a small object heap tick of 4 GiB or more, more than an
// address space, a kind that names no heap), a wait that ends before it
// began, a thread's CPU sample earlier than its previous one, or later
// than the two after it. Build leaves the event out of the
// profile and names it in its error, as it does events that do not
// decode. It is trace.ErrNotCredible, which the GC and JIT reports use
// too.
var ErrNotCredible = trace.ErrNotCredible

// allocationSamplingMean is the mean distance in bytes between two
// AllocationSampled events (dotnet/runtime's randomized allocation
// sampling: 100 KiB).
const allocationSamplingMean = 100 * 1024

// upscale turns one sampled allocation of size bytes into the count and
// bytes it stands for: an object of that size is sampled with probability
// 1 - exp(-size/mean), so it stands for 1/p objects.
func upscale(size uint64) (count, bytes int64) {
	if size == 0 {
		return 1, 0
	}
	p := -math.Expm1(-float64(size) / allocationSamplingMean)
	if p <= 0 {
		return 1, int64(size)
	}
	return int64(math.Round(1 / p)), int64(math.Round(float64(size) / p))
}

// nanos converts clock ticks to nanoseconds: exactly by a whole factor when
// the clock's frequency divides a second (as dotnetdiag does), rounding
// down otherwise.
func (b *Builder) nanos(ticks int64) int64 {
	if b.nsPerTick != 0 {
		return ticks * b.nsPerTick
	}
	if ticks >= 0 {
		// floor(ticks·1e9/freq), which is the sum below, in one 128-bit
		// division instead of two (a sample's time is converted each
		// time; divisions were 3% of a profile build).
		hi, lo := bits.Mul64(uint64(ticks), 1e9)
		if hi < uint64(b.freq) {
			if q, _ := bits.Div64(hi, lo, uint64(b.freq)); q <= math.MaxInt64 {
				return int64(q)
			}
		}
	}
	hi, lo := ticks/b.freq, ticks%b.freq
	return hi*1e9 + lo*1e9/b.freq
}

// spanNanos is the span of the events added, in nanoseconds, at most
// math.MaxInt64: never negative, however far apart garbled times are.
func (b *Builder) spanNanos() int64 {
	d := uint64(b.last) - uint64(b.first) // last ≥ first: the true difference
	if float64(d)*1e9/float64(b.freq) >= math.MaxInt64 {
		return math.MaxInt64
	}
	return b.nanos(int64(d))
}

// cpu adds a SampleProfiler sample. A thread's samples come in time
// order in every order a reader gives (the runtime writes each thread's
// events in order): one earlier than the thread's previous one has a
// garbled time or thread, and is left out with ErrNotCredible (the time
// it would attribute is negative); when the next one is earlier than the
// previous too, and in order with the one left out, the previous one's
// time was garbled forward (it holds the time to a moment that never
// came, and every sample after it would be left out): it is taken back
// instead, and the thread goes on.
func (b *Builder) cpu(pid, tid, ts int64, typ clrevents.SampleProfilerSampleType, ips []uint64, key uint64) error {
	if ts < b.origin {
		return nil
	}
	// +1: a sample at the sync time itself is one, and cpuThread's 0
	// means none yet.
	rel := b.nanos(ts-b.origin) + 1
	ti := b.thread(threadKey{pid, tid})
	for int(ti) >= len(b.cpuThreads) {
		b.cpuThreads = append(b.cpuThreads, cpuThread{})
	}
	t := &b.cpuThreads[ti]
	// The time of the thread's latest sample is the larger of
	// lastManaged and lastExternal's magnitude (cpuThread).
	var garbled error
	if last := max(t.lastManaged, t.lastExternal, -t.lastExternal); rel < last {
		// One of the two has a garbled time. This one is left out; but
		// when the thread's next sample is earlier than the latest too,
		// and not earlier than this one, the latest is the odd one out
		// (its time garbled forward): it is taken back, and the thread
		// goes on from the sample before it, or afresh when that one is
		// later too.
		if t.rejected == 0 || rel < t.rejected {
			t.rejected = rel
			return fmt.Errorf("%w: the sample is %d ns before its thread's previous one", ErrNotCredible, last-rel)
		}
		if t.latestRaw != 0 {
			b.takeBack(t.latestRaw - 1)
		}
		if before := max(t.before[1], t.before[0], -t.before[0]); rel >= before {
			t.lastExternal, t.lastManaged = t.before[0], t.before[1]
		} else {
			*t = cpuThread{lastStack: t.lastStack}
		}
		garbled = fmt.Errorf("%w: its thread's latest sample is %d ns after this one and the one left out before it: its time is garbled, and it is left out", ErrNotCredible, last-rel)
	}
	t.before, t.latestRaw, t.rejected = [2]int64{t.lastExternal, t.lastManaged}, 0, 0
	var v int64 // time attributed to this sample's stack
	managedSince := func() {
		if t.lastManaged > 0 {
			v = rel - t.lastManaged
		}
	}
	externalSince := func() {
		if t.lastExternal > 0 && !b.o.ManagedOnly {
			v = rel - t.lastExternal
		}
	}
	switch typ {
	case clrevents.SampleProfilerSampleTypeManaged:
		b.managedSamples++
		switch {
		case t.lastExternal == 0:
			managedSince()
			t.lastExternal = -1
		case t.lastExternal < 0:
			managedSince()
		default:
			externalSince()
			t.lastExternal = -rel
		}
		t.lastManaged = rel
	case clrevents.SampleProfilerSampleTypeExternal:
		b.externalSamples++
		if t.lastExternal < 0 {
			managedSince()
			if b.o.ManagedOnly {
				// The thread left managed code since its Managed sample:
				// with ManagedOnly no time goes to an External sample's
				// stack, and this while goes to the managed stack the
				// thread was last seen in, as PerfView's thread time
				// gives it.
				if v != 0 && t.managedStack != 0 {
					t.latestRaw = b.raws.add(raw{thread: ti, ts: ts, stack: t.managedStack - 1, v1: v}) + 1
				}
				v = 0
			}
		} else {
			externalSince()
		}
		t.lastExternal = rel
	default:
		return garbled
	}
	if v != 0 || b.o.ManagedOnly && typ == clrevents.SampleProfilerSampleTypeManaged {
		st := StateManaged
		if typ == clrevents.SampleProfilerSampleTypeExternal {
			st = StateExternal
		}
		id := b.rawStack(pid, ips, key, 0, st, t.lastStack)
		t.lastStack = id + 1
		if st == StateManaged {
			t.managedStack = id + 1
		}
		if v != 0 {
			t.latestRaw = b.raws.add(raw{thread: ti, ts: ts, stack: id, v1: v}) + 1
		}
	}
	return garbled
}

// stackSlot is an entry of Builder.skeys: the raw stack (ID+1) of the
// samples in state st of process pid, ending in label leaf, whose stacks
// had the StackKey key.
type stackSlot struct {
	key  uint64
	pid  int64
	id   uint32
	leaf uint32
	st   State
}

// skeysBits sets how many entries Builder.skeys has: several times the
// stacks a trace's samples use between two sequence points, where keys
// change (about a hundred in the .NET Core 3.0 trace here).
const (
	skeysBits = 10
	skeysSize = 1 << skeysBits
)

// rawStack returns the raw stack of a sample's ips in state st of process
// pid, ending in label leaf (0: none); key is the event's StackKey (0:
// none). last is the sample's thread's last stack (ID+1, 0 for none),
// tried first where there is no key.
func (b *Builder) rawStack(pid int64, ips []uint64, key uint64, leaf uint32, st State, last uint32) uint32 {
	if key != 0 && !b.keyless {
		if b.skeys == nil {
			b.skeys = make([]stackSlot, skeysSize)
		}
		slot := &b.skeys[(key^key>>32)*0x9E3779B97F4A7C15>>(64-skeysBits)]
		if slot.key == key && slot.pid == pid && slot.leaf == leaf && slot.st == st {
			return slot.id - 1
		}
		id := b.internLeaf(pid, ips, leaf, st)
		*slot = stackSlot{key: key, pid: pid, id: id + 1, leaf: leaf, st: st}
		return id
	}
	if last != 0 && b.leafOf(last-1) == leaf && b.stateOf(last-1) == st && equalIPs(b.rawIPs[b.rawOffs[last-1]:b.rawOffs[last]], ips) {
		return last - 1
	}
	return b.internLeaf(pid, ips, leaf, st)
}

// takeBack leaves raw i out of the profile: its time was garbled.
func (b *Builder) takeBack(i int) {
	b.raws.at(i).stack = takenBack
	b.takenBack++
}

// takenBack marks a raw left out after it was made (Builder.takeBack).
const takenBack = math.MaxUint32

func (b *Builder) add(pid, tid, ts int64, ips []uint64, key uint64, v0, v1 int64, leaf uint32) {
	b.raws.add(raw{thread: b.thread(threadKey{pid, tid}), ts: ts, stack: b.rawStack(pid, ips, key, leaf, StateNone, 0), v1: v1})
	if b.o.Kind == Alloc {
		b.v0s = append(b.v0s, v0)
	}
}

// thread numbers the threads.
func (b *Builder) thread(k threadKey) uint32 {
	slot := &b.tcache[uint64(k.tid^k.pid*31)%uint64(len(b.tcache))]
	if slot.ok && slot.k == k {
		return slot.i
	}
	i := b.thread1(k)
	*slot = threadSlot{k: k, i: i, ok: true}
	return i
}

func (b *Builder) thread1(k threadKey) uint32 {
	if k.pid == b.pid0 { // the common case: one process, a faster map
		if i, ok := b.tidIdx[k.tid]; ok {
			return i
		}
	}
	i, ok := b.threadIdx[k]
	if !ok {
		i = uint32(len(b.threadKeys))
		b.threadKeys = append(b.threadKeys, k)
		b.threadIdx[k] = i
		if len(b.threadKeys) == 1 {
			b.pid0 = k.pid
		}
		if k.pid == b.pid0 {
			b.tidIdx[k.tid] = i
		}
	}
	return i
}

// intern keeps a raw stack (innermost first) of a process once, in an
// open-addressing table keyed by a hash of the process and addresses.
func (b *Builder) intern(pid int64, ips []uint64) uint32 {
	return b.internLeaf(pid, ips, 0, StateNone)
}

// internLeaf is intern for a stack whose samples end in label leaf (see
// Builder.rawLeaf; 0 for none) and are in state st (Builder.rawStates).
func (b *Builder) internLeaf(pid int64, ips []uint64, leaf uint32, st State) uint32 {
	h := hashStack(pid, ips) ^ uint64(leaf)*0xD6E8FEB86659FD93 ^ uint64(st)*0xA0761D6478BD642F
	if len(b.rawTable) == 0 {
		b.rawTable = make([]uint32, 1024)
	}
	mask := uint64(len(b.rawTable) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		slot := b.rawTable[i]
		if slot == 0 {
			break
		}
		id := slot - 1
		if b.rawHashes[id] == h && b.rawPIDs[id] == pid && equalIPs(b.rawIPs[b.rawOffs[id]:b.rawOffs[id+1]], ips) && b.leafOf(id) == leaf && b.stateOf(id) == st {
			return id
		}
	}
	id := uint32(len(b.rawOffs) - 1)
	if leaf != 0 && b.rawLeaf == nil {
		b.rawLeaf = make([]uint32, id, id+1)
	}
	if b.rawLeaf != nil {
		b.rawLeaf = append(b.rawLeaf, leaf)
	}
	if st != StateNone && b.rawStates == nil {
		b.rawStates = make([]State, id, id+1)
	}
	if b.rawStates != nil {
		b.rawStates = append(b.rawStates, st)
	}
	b.rawIPs = append(b.rawIPs, ips...)
	b.rawOffs = append(b.rawOffs, uint32(len(b.rawIPs)))
	b.rawHashes = append(b.rawHashes, h)
	b.rawPIDs = append(b.rawPIDs, pid)
	if 2*len(b.rawHashes) > len(b.rawTable) {
		b.rawTable = make([]uint32, 2*len(b.rawTable))
		mask = uint64(len(b.rawTable) - 1)
		for j, hj := range b.rawHashes {
			i := hj & mask
			for b.rawTable[i] != 0 {
				i = (i + 1) & mask
			}
			b.rawTable[i] = uint32(j) + 1
		}
		return id
	}
	i := h & mask
	for b.rawTable[i] != 0 {
		i = (i + 1) & mask
	}
	b.rawTable[i] = id + 1
	return id
}

// leafOf is raw stack id's label (Builder.rawLeaf), 0 for none.
func (b *Builder) leafOf(id uint32) uint32 {
	if b.rawLeaf == nil {
		return 0
	}
	return b.rawLeaf[id]
}

// stateOf is raw stack id's State (Builder.rawStates).
func (b *Builder) stateOf(id uint32) State {
	if b.rawStates == nil {
		return StateNone
	}
	return b.rawStates[id]
}

// label is the label (an index in labelTexts, plus one) of the UTF-16
// name, made once a name: prefix, the name in UTF-8, then suffix. An
// empty name has none (0).
func (b *Builder) label(prefix string, name clrevents.UTF16, suffix string) uint32 {
	if name.IsEmpty() {
		return 0
	}
	b.labelKey = append(append(b.labelKey[:0], prefix...), name.Bytes()...)
	if i, ok := b.labelIdx[string(b.labelKey)]; ok {
		return i
	}
	if b.labelIdx == nil {
		b.labelIdx = make(map[string]uint32)
	}
	b.labelTexts = append(b.labelTexts, prefix+name.String()+suffix)
	i := uint32(len(b.labelTexts))
	b.labelIdx[string(b.labelKey)] = i
	return i
}

// hashStack hashes a process ID and a stack's addresses.
func hashStack(pid int64, ips []uint64) uint64 {
	const m = 0x9E3779B97F4A7C15
	h := uint64(pid)*m ^ uint64(len(ips))
	for _, ip := range ips {
		h = (h ^ ip) * m
		h ^= h >> 29
	}
	return h ^ h>>32
}

func equalIPs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	// As strings, for the runtime's vectorized comparison.
	return unsafe.String((*byte)(unsafe.Pointer(&a[0])), 8*len(a)) == unsafe.String((*byte)(unsafe.Pointer(&b[0])), 8*len(b))
}

// timeOrder returns the raws' indices sorted by the time of the event that
// made them (a contention's end), stably; nil when they already are in
// that order.
func (b *Builder) timeOrder() []int32 {
	if len(b.stops) == b.raws.n && b.raws.n > 0 {
		return stableOrder(b.stops)
	}
	sorted := true
	prev := int64(math.MinInt64)
	for _, blk := range b.raws.blocks {
		for i := range blk {
			if blk[i].ts < prev {
				sorted = false
			}
			prev = blk[i].ts
		}
	}
	if sorted {
		return nil
	}
	ts := make([]int64, 0, b.raws.n)
	for _, blk := range b.raws.blocks {
		for i := range blk {
			ts = append(ts, blk[i].ts)
		}
	}
	return stableOrder(ts)
}

// resolved is the last resolution of a raw stack: a raw stack resolves to
// the same frames over a span of time, and most samples reuse it.
type resolved struct {
	from, to int64
	stack    symbols.StackID
	counts   [symbols.NumReasons]int64
	ok       bool
	managed  bool  // the innermost frame is a managed method
	state    State // the raw stack's (Builder.stateOf)
	hits     int64 // reuses of the resolution, not yet counted
	// The sample the last raw of this stack went to, and its thread.
	thread uint32
	sample int
}

// flush adds the reuses of the resolution to the map's counts.
func (c *resolved) flush(m *symbols.Map) {
	if c.hits == 0 {
		return
	}
	for reason, n := range c.counts {
		if n != 0 {
			m.Count(symbols.Reason(reason), n*c.hits)
		}
	}
	c.hits = 0
}

// collapse keeps one frame of each run of frames that print alike
// without symbols: native frames of one image, which differ only by
// address (a flame graph of a dozen "clr!?" frames says no more than
// one), and unresolved frames, "?!?" whatever their reason, as PerfView
// shows them. The run's outermost frame stands for it.
func (b *Builder) collapse(frames []symbols.FrameID) []symbols.FrameID {
	out := frames[:0]
	var prev *symbols.Frame
	for _, id := range frames {
		f := b.m.Frame(id)
		if prev != nil && sameRun(prev, f) {
			continue
		}
		prev = f
		out = append(out, id)
	}
	return out
}

// sameRun reports whether frame f continues the run of frame prev.
func sameRun(prev, f *symbols.Frame) bool {
	switch f.Reason {
	case symbols.Resolved:
		return false
	case symbols.Native:
		return prev.Reason == symbols.Native && prev.ModulePath == f.ModulePath
	}
	return prev.Reason != symbols.Resolved && prev.Reason != symbols.Native
}

// Finish resolves the samples' stacks and aggregates them. It fails when
// no event made a sample.
func (b *Builder) Finish() (*Profile, error) {
	dropped := b.finishKernel() + b.takenBack
	if b.raws.n == dropped {
		return nil, b.noEvents()
	}
	procs := b.processes()
	b.assignProcesses(procs)
	p := &Profile{Kind: b.o.Kind, SampleTypes: b.o.Kind.SampleTypes(), Map: b.m, Stacks: symbols.NewStacks(), Events: b.raws.n - dropped,
		ProcessNames: processNames(procs)}
	b.finishUniversal(p)
	if b.o.Kind == CPU && b.k.samples.n > 0 {
		p.PeriodNanos = b.k.interval
		if p.PeriodNanos == 0 {
			p.PeriodNanos = defaultInterval
		}
	}
	if !b.universal {
		p.ExternalSamples, p.ManagedSamples = b.externalSamples, b.managedSamples
		if b.o.Kind == CPU && b.k.samples.n == 0 && b.externalSamples+b.managedSamples > 0 {
			p.SampleTypes = ThreadTimeSampleTypes()
		}
	}
	if b.seen {
		p.DurationNanos = b.spanNanos()
		// The earliest event's time (Build gives the trace's start
		// instead); pprof shows 1970 for none.
		if !b.at.IsZero() {
			p.StartNanos = b.at.UnixNano() - b.nanos(b.atTS-b.first)
		}
	}
	nv := len(p.SampleTypes)
	// A sample is a thread's (an index in threadKeys, one a pid and tid),
	// a stack's and a state's: the indices make the key, which the map
	// hashes faster than the pid, tid, stack and state.
	index := map[uint64]int{}
	// last[t] is the sample thread t's last raw went to (-1: none yet).
	last := make([]int, len(b.threadKeys))
	for t := range last {
		last[t] = -1
	}
	cache := make([]resolved, len(b.rawOffs)-1) // by raw stack
	var frames []symbols.FrameID
	labels := make([]symbols.FrameID, len(b.labelTexts)) // the labels' frames
	for i, text := range b.labelTexts {
		labels[i] = b.m.Label(text)
	}
	// Samples go to the profile in time order (stable: file order for
	// equal times), whatever order the reader gave the events in; then
	// they are ordered by thread (sortByThread).
	order := b.timeOrder()
	var threadOf []uint32 // by sample, its thread's index
	for n := range b.raws.n {
		i := n
		if order != nil {
			i = int(order[n])
		}
		ks := b.k.samples.at(i) // nil but for a kernel CPU sample
		if ks != nil && ks.drop {
			continue
		}
		{
			r := b.raws.at(i)
			if r.stack == takenBack {
				continue
			}
			k := b.threadKeys[r.thread]
			c := &cache[r.stack]
			if c.ok && c.from <= r.ts && r.ts < c.to {
				c.hits++
			} else {
				c.flush(b.m)
				ips := b.rawIPs[b.rawOffs[r.stack]:b.rawOffs[r.stack+1]]
				var from, to int64
				var counts [symbols.NumReasons]int64
				frames, from, to, counts = b.m.ResolveStackSpan(k.pid, r.ts, ips, frames[:0])
				managed := len(frames) > 0 && b.m.Frame(frames[len(frames)-1]).Reason == symbols.Resolved
				frames = b.collapse(frames)
				if leaf := b.leafOf(r.stack); leaf != 0 {
					frames = append(frames, labels[leaf-1])
				}
				*c = resolved{from: from, to: to, stack: p.Stacks.Intern(frames), counts: counts, ok: true, sample: -1, managed: managed,
					state: b.stateOf(r.stack)}
			}
			if b.o.ManagedOnly && ks != nil && !ks.clr && !c.managed {
				continue // a kernel sample outside managed code
			}
			j := c.sample
			if j < 0 || c.thread != r.thread || p.Samples[j].Stack != c.stack {
				if l := last[r.thread]; l >= 0 && p.Samples[l].Stack == c.stack && p.Samples[l].State == c.state {
					// The thread's last sample had this stack: threads
					// that wait share their stacks, each thread's samples
					// in a row.
					j = l
				} else {
					ak := uint64(r.thread)<<34 | uint64(c.state)<<32 | uint64(c.stack)
					var ok bool
					j, ok = index[ak]
					if !ok {
						j = len(p.Samples)
						index[ak] = j
						p.Samples = append(p.Samples, Sample{PID: k.pid, TID: k.tid, ProcessStart: b.processStart(r.thread), Stack: c.stack, State: c.state, Values: make([]int64, nv)})
						threadOf = append(threadOf, r.thread)
					}
				}
				c.thread, c.sample = r.thread, j
				last[r.thread] = j
			}
			v0 := int64(1)
			if b.o.Kind == Alloc {
				v0 = b.v0s[i]
			}
			p.Samples[j].Values[0] = addSat(p.Samples[j].Values[0], v0)
			if nv > 1 {
				p.Samples[j].Values[1] = addSat(p.Samples[j].Values[1], r.v1)
			}
		}
	}
	for i := range cache {
		cache[i].flush(b.m)
	}
	p.Samples = b.sortByThread(p.Samples, threadOf)
	p.Processes = profileProcesses(p.Samples, procs, p.ProcessNames)
	return p, nil
}

// sortByThread orders samples by process (its ID, then its start), then
// thread, stably (each thread's samples keep their order of first
// appearance), as Profile.Samples says; threadOf is each sample's thread
// index (two processes of one ID have threads of their own). A counting
// sort by the threads' ranks: one pass over the samples, a sort of the
// threads alone.
func (b *Builder) sortByThread(samples []Sample, threadOf []uint32) []Sample {
	byKey := make([]uint32, len(b.threadKeys))
	for i := range byKey {
		byKey[i] = uint32(i)
	}
	slices.SortFunc(byKey, func(x, y uint32) int {
		kx, ky := b.threadKeys[x], b.threadKeys[y]
		return cmp.Or(cmp.Compare(kx.pid, ky.pid), cmp.Compare(b.processStart(x), b.processStart(y)), cmp.Compare(kx.tid, ky.tid))
	})
	// start[t] is where thread t's samples begin.
	start := make([]int, len(b.threadKeys))
	for _, t := range threadOf {
		start[t]++
	}
	at := 0
	for _, t := range byKey {
		n := start[t]
		start[t] = at
		at += n
	}
	next := slices.Clone(start)
	sorted := true
	for i, t := range threadOf {
		sorted = sorted && next[t] == i
		next[t]++
	}
	if sorted {
		return samples
	}
	out := make([]Sample, len(samples))
	for i, t := range threadOf {
		out[start[t]] = samples[i]
		start[t]++
	}
	return out
}

// addSat is a + b, held at the int64 range where it would overflow: a
// sample's values add up the events that share its stack, and a garbled
// trace's may not fit.
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}
