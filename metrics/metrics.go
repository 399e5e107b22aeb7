// Package metrics turns .NET runtime events into Prometheus metrics: feed
// it the events of any trace the front door reads (a live session, a file,
// a pipe), and register its Set with a prometheus.Registry (package
// github.com/prometheus/client_golang/prometheus) to expose them.
//
//	set := metrics.New(metrics.Options{})
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(set)
//	p := set.Process(pid, "myapp")
//	for { e, err := r.Next(); …; p.Add(e) }
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Every series is labelled with the process it is about: pid and process
// (the name the caller gave, "" when none). Set.Add routes an event to its
// process by the event's process ID, for traces of several processes.
//
// # Metrics
//
// Names follow Prometheus' conventions: base units (seconds, bytes) in the
// name, _total for counters. Where OpenTelemetry's .NET runtime metrics
// (System.Runtime's meter, .NET 9) name the same quantity, the
// OpenTelemetry name is given.
//
//	dotnet_gc_collections_total{generation}     GCStart by the generation it collects (gen0, gen1, gen2); dotnet.gc.collections
//	dotnet_gc_pause_seconds                     histogram of the time the runtime was suspended for a GC (GCSuspendEEBegin for a GC to GCRestartEEEnd); its _sum is dotnet.gc.pause.time
//	dotnet_gc_heap_size_bytes{generation}       each generation's size after the last GC (GCHeapStats: gen0, gen1, gen2, loh, poh); dotnet.gc.last_collection.heap.size
//	dotnet_gc_allocated_bytes_total             bytes allocated, as GCAllocationTick samples them (one event per ~100 KB; runtime level Verbose, absent until one comes); dotnet.gc.heap.total_allocated
//	dotnet_jit_compiled_methods_total{tier}     methods the JIT compiled (MethodLoadVerbose of jitted code), by optimization tier; dotnet.jit.compiled_methods
//	dotnet_jit_compilation_seconds_total{tier}  time compiling, MethodJittingStarted to the load (runtime level Verbose, absent until one comes); dotnet.jit.compilation.time
//	dotnet_exceptions_total{type}               exceptions thrown, by type (ExceptionThrown); dotnet.exceptions
//	dotnet_monitor_lock_contentions_total       contended lock acquisitions (ContentionStart); dotnet.monitor.lock_contentions
//	dotnet_monitor_lock_contention_seconds_total time waiting for contended locks (ContentionStop)
//	dotnet_thread_pool_threads                  worker threads that exist, as the thread pool last reported them (ThreadPoolWorkerThreadStart, Stop and Wait's ActiveWorkerThreadCount; System.Runtime's threadpool-thread-count); dotnet.thread_pool.thread.count
//	dotnet_thread_pool_thread_goal              the worker threads hill climbing last aimed for (ThreadPoolWorkerThreadAdjustment/Adjustment's NewWorkerThreadCount): never below the minimum, it swings by its probe every few samples while the pool is busy, and threads above it exist until they time out
//	dotnet_events_total                         the events fed to the process
//
// and one metric per EventCounter (System.Runtime's cpu-usage, gc-heap-size,
// alloc-rate, …, and any other EventSource's): dotnet_runtime_NAME for
// System.Runtime, dotnet_eventcounter_PROVIDER_NAME for others, the name's
// dashes as underscores, with the unit converted to its base: "%" to a
// ratio (_ratio, 0–1), "MB" and "B" to bytes (_bytes), "ms" to seconds
// (_seconds). A mean counter (EventCounter, PollingCounter) is a gauge of
// its last mean; an incrementing one (IncrementingEventCounter) a counter
// of the sum of its increments, with _total: alloc-rate becomes
// dotnet_runtime_alloc_rate_bytes_total, time-in-gc
// dotnet_runtime_time_in_gc_ratio. System.Runtime's gauges named -count
// are named for what they count instead (threadpool-thread-count is
// dotnet_runtime_threadpool_threads, assembly-count
// dotnet_runtime_assemblies, active-timer-count dotnet_runtime_active_timers,
// methods-jitted-count dotnet_runtime_methods_jitted), and any other gauge
// whose name ends in _count, _sum or _bucket gets _value. Two counters of
// a process whose names come out the same (names that differ only in case
// or in '-' against '_', gc-heap-size in MB beside gc-heap-size-bytes,
// threadpool-thread-count beside threadpool-threads) are two metrics: the
// later one seen gets its own name's hash, _h and 8 hex digits
// (dotnet_runtime_threadpool_threads_h1a2b3c4d), where it would have
// taken the other's place in every scrape.
//
// # Cardinality
//
// The label values are bounded: generations and tiers are fixed sets,
// exception types past Options.MaxExceptionTypes per process count under
// type="other", and EventCounters past Options.MaxCounters per process are
// left out (and counted in dotnet_counters_dropped_total).
//
// # Cost
//
// Process.Add decodes only the events it needs (by provider and event ID
// first) and allocates nothing for the runtime's events once a process has
// seen its exception types; an EventCounters report (one per counter per
// interval) costs what counters.Decode allocates. Collecting builds the
// metrics from plain fields, under a per-process lock.
package metrics

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/counters"
	"github.com/clrgo/clrevents/trace"
	"github.com/prometheus/client_golang/prometheus"
)

// Options bound what a Set keeps. The zero value is usable.
type Options struct {
	// MaxExceptionTypes bounds the distinct values of
	// dotnet_exceptions_total's type label per process; later types
	// count under "other". 0 means 50.
	MaxExceptionTypes int
	// MaxCounters bounds the distinct EventCounters kept per process;
	// later ones are counted in dotnet_counters_dropped_total. 0 means 200.
	MaxCounters int
	// PauseBuckets are dotnet_gc_pause_seconds' upper bounds, in seconds,
	// in any order: New sorts a copy and drops repeats, NaN and +Inf (a
	// histogram's last bucket, always there). Empty means 0.1 ms to 1 s.
	PauseBuckets []float64
}

// DefaultPauseBuckets are dotnet_gc_pause_seconds' buckets by default.
var DefaultPauseBuckets = []float64{0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}

// Set is the metrics of a set of processes: a prometheus.Collector. It is
// safe for concurrent use: events may be added while it is collected.
type Set struct {
	o Options

	mu    sync.Mutex
	procs map[int64]*Process
	// ended are processes whose ID the system gave to another process in
	// the trace (an ETW kernel Process/Start): their series stay.
	ended []*Process
	descs map[string]*prometheus.Desc // EventCounter metrics, by name
}

// New returns an empty Set.
func New(o Options) *Set {
	if o.MaxExceptionTypes <= 0 {
		o.MaxExceptionTypes = 50
	}
	if o.MaxCounters <= 0 {
		o.MaxCounters = 200
	}
	// A pause counts in the first bucket whose bound it is under, and
	// the buckets add up in order: they must increase.
	o.PauseBuckets = slices.DeleteFunc(slices.Clone(o.PauseBuckets), func(b float64) bool { return math.IsNaN(b) || math.IsInf(b, 1) })
	slices.Sort(o.PauseBuckets)
	o.PauseBuckets = slices.Compact(o.PauseBuckets)
	if len(o.PauseBuckets) == 0 {
		o.PauseBuckets = DefaultPauseBuckets
	}
	return &Set{o: o, procs: map[int64]*Process{}, descs: map[string]*prometheus.Desc{}}
}

// Process returns the metrics of process pid, made on first use with the
// process label name (a later call's name replaces it when not "").
func (s *Set) Process(pid int64, name string) *Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[pid]
	if p == nil {
		p = &Process{set: s, pid: strconv.FormatInt(pid, 10), name: name,
			pause:      make([]uint64, len(s.o.PauseBuckets)),
			exceptions: map[string]*uint64{},
			counters:   map[string]*counterValue{},
			jitStarts:  map[uint64]int64{},
			contStarts: map[int64]int64{},
		}
		s.procs[pid] = p
	} else if name != "" {
		p.mu.Lock()
		p.name = name
		p.mu.Unlock()
	}
	return p
}

// The ETW kernel's Process/Start event, as package trace names it.
const (
	kernelProvider = "Windows Kernel"
	opProcessStart = 1
)

// Remove forgets process pid, and the processes that had its ID before
// it: their series are no longer collected.
func (s *Set) Remove(pid int64) {
	s.mu.Lock()
	delete(s.procs, pid)
	id := strconv.FormatInt(pid, 10)
	s.ended = slices.DeleteFunc(s.ended, func(p *Process) bool { return p.pid == id })
	s.mu.Unlock()
}

// Add feeds an event to the process it is about (Event.ProcessID). A
// process is made, named as the trace names it (Event.ProcessName), by
// its first event of the .NET runtime's provider or its first
// EventCounters event: in an ETW log, which holds every process's kernel
// events, the others are no .NET process and have no series. Events of no
// process (-1: a trace that does not record processes, .NET Core 2.0's)
// are ignored. An ETW kernel Process/Start of an ID that has a process
// means the system gave the ID to another process: the next events of the
// ID make a new one, as TraceEvent tells process instances apart, and the
// earlier one's series stay (see Collect).
func (s *Set) Add(e *trace.Event) error {
	pid := e.ProcessID()
	if pid < 0 {
		return nil
	}
	s.mu.Lock()
	p := s.procs[pid]
	if p != nil && e.Opcode() == opProcessStart && e.Provider() == kernelProvider && e.Name() == "Process/Start" {
		// Another process has the ID: the one that had it has exited.
		delete(s.procs, pid)
		s.ended = append(s.ended, p)
		p = nil
	}
	s.mu.Unlock()
	if p == nil {
		if e.Provider() != runtimeProvider && e.Name() != "EventCounters" {
			return nil
		}
		p = s.Process(pid, e.ProcessName())
	}
	return p.Add(e)
}

// Process is the metrics of one process.
type Process struct {
	set       *Set
	pid, name string

	mu     sync.Mutex
	events uint64
	gcs    [3]uint64
	// suspended maps the thread that suspended the runtime for a GC to
	// when (Unix ns), until that thread's restart ends: the runtime pairs
	// them by thread, and another thread's suspension (the debugger's,
	// another reason's) may overlap the GC's and end before it.
	suspended  map[int64]int64
	pause      []uint64
	pauseN     uint64
	pauseSum   float64
	heapSeen   bool
	heap       [5]uint64
	allocated  uint64
	allocSeen  bool // an allocation tick came: allocated is measured
	jitTimed   bool // a MethodJittingStarted came: jitSeconds is measured
	jitMethods [8]uint64
	jitSeconds [8]float64
	jitStarts  map[uint64]int64 // MethodJittingStarted by method ID (Unix ns)
	exceptions map[string]*uint64
	otherExc   uint64
	contN      uint64
	contSec    float64
	contStarts map[int64]int64 // ContentionStart by thread (Unix ns)
	tpSeen     bool            // a worker thread's start, stop or wait came: tpThreads is measured
	tpThreads  float64
	goalSeen   bool // an adjustment came: tpGoal is measured
	tpGoal     float64
	counters   map[string]*counterValue
	metricOf   map[string]string // counters' metric names, to the counter (provider/name) that has each
	counterOut uint64            // counters left out (MaxCounters)
	scratch    []byte
}

type counterValue struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	scale float64 // from the reported unit to the base unit
	value float64
}

// Runtime provider event IDs Add uses.
const (
	idGCStart            = 1
	idGCRestartEEEnd     = 3
	idGCHeapStats        = 4
	idGCSuspendEEBegin   = 9
	idGCAllocationTick   = 10
	idTPWorkerStart      = 50
	idTPWorkerStop       = 51
	idTPAdjustment       = 55
	idTPWorkerWait       = 57
	idExceptionThrown    = 80
	idContentionStart    = 81
	idContentionStop     = 91
	idMethodLoad         = 141
	idMethodLoadVerbose  = 143
	idMethodJittingStart = 145
)

// runtimeProvider is the runtime provider's name.
const runtimeProvider = "Microsoft-Windows-DotNETRuntime"

// maxWait bounds one lock wait, in seconds (about 31 years).
const maxWait = 1e9

// maxPending bounds the compiles and contentions waiting for their end.
const maxPending = 4096

// Add feeds one event. It returns an error only for an event it uses
// whose payload does not decode; the event is then left out.
func (p *Process) Add(e *trace.Event) error {
	if e.Provider() == runtimeProvider {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.events++
		return p.runtime(e)
	}
	p.mu.Lock()
	p.events++
	p.mu.Unlock()
	if e.Name() != "EventCounters" {
		return nil
	}
	c, err := counters.Decode(e)
	if errors.Is(err, counters.ErrNotCounters) {
		return nil
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.counter(&c)
	p.mu.Unlock()
	return nil
}

func (p *Process) runtime(e *trace.Event) error {
	id := e.ID()
	switch id {
	case idGCRestartEEEnd:
		if at, ok := p.suspended[e.ThreadID()]; ok {
			delete(p.suspended, e.ThreadID())
			if d := float64(e.Time().UnixNano()-at) / 1e9; d >= 0 {
				p.observePause(d)
			}
		}
		return nil
	case idGCSuspendEEBegin, idGCStart, idGCHeapStats, idGCAllocationTick, idTPWorkerStart, idTPWorkerStop, idTPAdjustment, idTPWorkerWait,
		idExceptionThrown, idContentionStart, idContentionStop, idMethodLoad, idMethodLoadVerbose, idMethodJittingStart:
	default:
		return nil
	}
	ev, err := e.DecodeIn(clrevents.Table())
	if err != nil {
		return err
	}
	switch v := ev.(type) {
	case clrevents.GCSuspendEEEvent:
		// The runtime suspends for other reasons too (the debugger, code
		// pitching, shutdown): those are no GC pause. A GC's pause ends
		// with the restart on the thread that suspended for it, not
		// with another suspension's restart in between.
		switch v.GCSuspendEEFields().Reason {
		case clrevents.GCSuspendEEReasonSuspendForGC, clrevents.GCSuspendEEReasonSuspendForGCPrep:
			if p.suspended == nil {
				p.suspended = make(map[int64]int64)
			}
			if len(p.suspended) < maxPending {
				p.suspended[e.ThreadID()] = e.Time().UnixNano()
			}
		}
	case clrevents.GCStartEvent:
		if d := v.GCStartFields().Depth; d < 3 {
			p.gcs[d]++
		}
	case clrevents.GCHeapStatsEvent:
		f := v.GCHeapStatsFields()
		p.heap = [5]uint64{f.GenerationSize0, f.GenerationSize1, f.GenerationSize2, f.GenerationSize3, f.GenerationSize4}
		p.heapSeen = true
	case clrevents.GCAllocationTickEvent:
		f := v.GCAllocationTickFields()
		// A garbled payload (a damaged trace's) can hold any amount: the
		// counter takes only amounts a runtime writes (CheckAmount), and
		// does not wrap.
		if f.CheckAmount() == nil {
			p.allocated = min(p.allocated+f.Amount(), math.MaxUint64-clrevents.MaxAllocationBytes)
			p.allocSeen = true
		}
	case *clrevents.ThreadPoolWorkerThreadAdjustmentAdjustment:
		// Hill climbing's new goal, not the threads that exist: the
		// runtime keeps threads above the goal until they time out, and
		// the goal never goes below the minimum.
		p.tpGoal, p.goalSeen = float64(v.NewWorkerThreadCount), true
	case *clrevents.ThreadPoolWorkerThreadStart:
		// The thread pool gives the threads that exist
		// (NumExistingThreads) as ActiveWorkerThreadCount.
		p.tpThreads, p.tpSeen = float64(v.ActiveWorkerThreadCount), true
	case *clrevents.ThreadPoolWorkerThreadStop:
		p.tpThreads, p.tpSeen = float64(v.ActiveWorkerThreadCount), true
	case *clrevents.ThreadPoolWorkerThreadWait:
		p.tpThreads, p.tpSeen = float64(v.ActiveWorkerThreadCount), true
	case *clrevents.ExceptionThrownV1:
		p.exception(v.ExceptionType)
	case *clrevents.ExceptionThrown:
		p.otherExc++ // version 0 names no type
	case clrevents.ContentionEvent:
		f := v.ContentionFields()
		tid := e.ThreadID()
		switch f.Kind {
		case clrevents.KindContentionStart:
			p.contN++
			if len(p.contStarts) >= maxPending {
				clear(p.contStarts)
			}
			p.contStarts[tid] = e.Time().UnixNano()
		case clrevents.KindContentionStop:
			start, ok := p.contStarts[tid]
			delete(p.contStarts, tid)
			d := math.NaN()
			switch {
			case f.HasDurationNs:
				d = f.DurationNs / 1e9
			case ok:
				d = float64(e.Time().UnixNano()-start) / 1e9
			}
			// The counter takes only what a wait can be: not negative,
			// not NaN, not decades (a garbled payload's double, or a
			// garbled time, can be any of them).
			if d >= 0 && d < maxWait {
				p.contSec += d
			}
		}
	case clrevents.MethodJittingStartedEvent:
		if len(p.jitStarts) >= maxPending {
			clear(p.jitStarts)
		}
		p.jitStarts[v.MethodJittingStartedFields().MethodID] = e.Time().UnixNano()
		p.jitTimed = true
	case clrevents.MethodLoadUnloadVerboseEvent:
		f := v.MethodLoadUnloadVerboseFields()
		if f.Kind == clrevents.KindMethodLoadVerbose {
			p.jitted(e, f.MethodID, f.MethodFlags, f.OptimizationTier())
		}
	case clrevents.MethodLoadUnloadEvent:
		f := v.MethodLoadUnloadFields()
		if f.Kind == clrevents.KindMethodLoad {
			p.jitted(e, f.MethodID, f.MethodFlags, f.OptimizationTier())
		}
	}
	return nil
}

// jitted counts a method load of JIT-compiled code.
func (p *Process) jitted(e *trace.Event, id uint64, flags clrevents.MethodFlags, tier clrevents.OptimizationTier) {
	if flags&clrevents.MethodFlagsJitted == 0 {
		return
	}
	t := int(tier) & 7
	p.jitMethods[t]++
	if start, ok := p.jitStarts[id]; ok {
		delete(p.jitStarts, id)
		if d := e.Time().UnixNano() - start; d >= 0 {
			p.jitSeconds[t] += float64(d) / 1e9
		}
	}
}

func (p *Process) observePause(d float64) {
	p.pauseN++
	p.pauseSum += d
	for i, b := range p.set.o.PauseBuckets {
		if d <= b {
			p.pause[i]++
			break
		}
	}
}

// exception counts a thrown exception of type typ, under "other" past
// MaxExceptionTypes types.
func (p *Process) exception(typ clrevents.UTF16) {
	p.scratch = typ.AppendUTF8(p.scratch[:0])
	if n, ok := p.exceptions[string(p.scratch)]; ok {
		*n++
		return
	}
	if len(p.exceptions) >= p.set.o.MaxExceptionTypes || string(p.scratch) == "other" {
		p.otherExc++
		return
	}
	n := new(uint64)
	*n = 1
	p.exceptions[string(p.scratch)] = n
}

// counter records an EventCounters report.
func (p *Process) counter(c *counters.Counter) {
	p.scratch = append(append(append(p.scratch[:0], c.Provider...), '/'), c.Name...)
	v, ok := p.counters[string(p.scratch)]
	if !ok {
		if len(p.counters) >= p.set.o.MaxCounters {
			p.counterOut++
			return
		}
		name, typ, scale := counterMetric(c)
		key := string(p.scratch)
		if other, taken := p.metricOf[name]; taken && other != key {
			// Another counter's name came out the same: this one is
			// told apart by its own name's hash.
			h := fnv.New32a()
			h.Write(p.scratch)
			name = fmt.Sprintf("%s_h%08x", name, h.Sum32())
		}
		if p.metricOf == nil {
			p.metricOf = map[string]string{}
		}
		p.metricOf[name] = key
		v = &counterValue{desc: p.set.counterDesc(name, c), typ: typ, scale: scale}
		p.counters[key] = v
	}
	if v.typ == prometheus.CounterValue {
		if x := c.Increment * v.scale; x > 0 && !math.IsInf(x, 0) {
			v.value += x
		}
		return
	}
	v.value = c.Mean * v.scale
}

// counterMetric names an EventCounter's metric, its type, and the factor
// from its unit to the base unit.
func counterMetric(c *counters.Counter) (name string, typ prometheus.ValueType, scale float64) {
	var b strings.Builder
	if c.Provider == "System.Runtime" {
		b.WriteString("dotnet_runtime_")
	} else {
		b.WriteString("dotnet_eventcounter_")
		writeSanitized(&b, c.Provider)
		b.WriteByte('_')
	}
	if r, ok := renamed[c.Name]; ok && c.Provider == "System.Runtime" {
		b.WriteString(r)
	} else {
		writeSanitized(&b, c.Name)
	}
	scale = 1
	suffix := ""
	switch c.DisplayUnits {
	case "%":
		suffix, scale = "_ratio", 0.01
	case "B":
		suffix = "_bytes"
	case "MB":
		suffix, scale = "_bytes", 1e6
	case "ms":
		suffix, scale = "_seconds", 1e-3
	}
	name = b.String()
	if !strings.HasSuffix(name, suffix) {
		name += suffix
	}
	typ = prometheus.GaugeValue
	if c.Kind == counters.Increment {
		typ = prometheus.CounterValue
		name += "_total"
	} else if strings.HasSuffix(name, "_count") || strings.HasSuffix(name, "_sum") || strings.HasSuffix(name, "_bucket") {
		// Suffixes that belong to histograms and summaries.
		name += "_value"
	}
	return name, typ, scale
}

// renamed are System.Runtime's gauges whose names end in -count, a
// histogram's suffix in Prometheus: they get the plural instead.
var renamed = map[string]string{
	"threadpool-thread-count": "threadpool_threads",
	"assembly-count":          "assemblies",
	"active-timer-count":      "active_timers",
	"methods-jitted-count":    "methods_jitted",
}

// writeSanitized writes s with every character outside [a-zA-Z0-9_] as
// '_', lower case.
func writeSanitized(b *strings.Builder, s string) {
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
}

func (s *Set) counterDesc(name string, c *counters.Counter) *prometheus.Desc {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.descs[name]
	if d == nil {
		help := "EventCounter " + c.Name + " of " + c.Provider + ", in base units (" + unitWord(c.DisplayUnits) + ")."
		d = prometheus.NewDesc(name, help, procLabels, nil)
		s.descs[name] = d
	}
	return d
}

func unitWord(u string) string {
	switch u {
	case "":
		return "a count"
	case "%":
		return "a ratio, from %"
	case "MB":
		return "bytes, from MB"
	case "ms":
		return "seconds, from ms"
	}
	return "as reported: " + u
}

var procLabels = []string{"pid", "process"}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(procLabels[:2:2], labels...), nil)
}

var (
	descGCs        = desc("dotnet_gc_collections_total", "Garbage collections, by the generation collected (GCStart).", "generation")
	descPause      = desc("dotnet_gc_pause_seconds", "Time the runtime was suspended for a GC (GCSuspendEEBegin to GCRestartEEEnd).")
	descHeap       = desc("dotnet_gc_heap_size_bytes", "Size of each generation after the last GC (GCHeapStats).", "generation")
	descAllocated  = desc("dotnet_gc_allocated_bytes_total", "Bytes allocated, as GCAllocationTick samples them (runtime level Verbose).")
	descJitMethods = desc("dotnet_jit_compiled_methods_total", "Methods the JIT compiled, by optimization tier (MethodLoadVerbose).", "tier")
	descJitTime    = desc("dotnet_jit_compilation_seconds_total", "Time the JIT spent compiling, by tier (MethodJittingStarted to MethodLoadVerbose; runtime level Verbose).", "tier")
	descExceptions = desc("dotnet_exceptions_total", "Exceptions thrown, by type (ExceptionThrown); types past the limit count as other.", "type")
	descContN      = desc("dotnet_monitor_lock_contentions_total", "Contended lock acquisitions (ContentionStart).")
	descContTime   = desc("dotnet_monitor_lock_contention_seconds_total", "Time spent waiting for contended locks (ContentionStop).")
	descTPThreads  = desc("dotnet_thread_pool_threads", "Thread pool worker threads that exist, as last reported (ThreadPoolWorkerThreadStart, Stop and Wait).")
	descTPGoal     = desc("dotnet_thread_pool_thread_goal", "Thread pool worker threads hill climbing last aimed for (ThreadPoolWorkerThreadAdjustment/Adjustment's NewWorkerThreadCount); threads above it exist until they time out.")
	descEvents     = desc("dotnet_events_total", "Events fed to the metrics of the process.")
	descCounterOut = desc("dotnet_counters_dropped_total", "EventCounter reports left out: more distinct counters than the limit.")
)

var generations = [...]string{"gen0", "gen1", "gen2", "loh", "poh"}

// Describe sends nothing: the EventCounter metrics are known only as they
// come, so the Set is an unchecked collector.
func (s *Set) Describe(chan<- *prometheus.Desc) {}

// Collect sends every process's metrics: those of a process whose ID
// another process has since had stay (its pid and process labels tell
// them apart), but where the two have one name too (a program started
// again), whose labels a registry refuses twice: the earlier's series
// end, and the later's counters begin again from zero, which
// Prometheus's rate and increase take for a reset.
func (s *Set) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	procs := make([]*Process, 0, len(s.procs)+len(s.ended))
	procs = append(procs, s.ended...)
	for _, p := range s.procs {
		procs = append(procs, p)
	}
	s.mu.Unlock()
	type labels struct{ pid, name string }
	keys := make([]labels, len(procs))
	latest := make(map[labels]*Process, len(procs)) // the latest process of each label pair
	for i, p := range procs {
		keys[i] = labels{p.pid, p.processName()}
		latest[keys[i]] = p
	}
	kept := make([]*Process, 0, len(procs))
	for i, p := range procs {
		if latest[keys[i]] == p {
			kept = append(kept, p)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return kept[i].pid < kept[j].pid })
	for _, p := range kept {
		p.collect(ch)
	}
}

// processName is p's process label.
func (p *Process) processName() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.name
}

func (p *Process) collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := []string{p.pid, p.name}
	with := func(v string) []string { return append(l[:2:2], v) }
	m := func(d *prometheus.Desc, t prometheus.ValueType, v float64, lv []string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, lv...)
	}
	m(descEvents, prometheus.CounterValue, float64(p.events), l)
	for g, n := range p.gcs {
		m(descGCs, prometheus.CounterValue, float64(n), with(generations[g]))
	}
	buckets := make(map[float64]uint64, len(p.pause))
	var cum uint64
	for i, b := range p.set.o.PauseBuckets {
		cum += p.pause[i]
		buckets[b] = cum
	}
	ch <- prometheus.MustNewConstHistogram(descPause, p.pauseN, p.pauseSum, buckets, l...)
	if p.heapSeen {
		for g, n := range p.heap {
			m(descHeap, prometheus.GaugeValue, float64(n), with(generations[g]))
		}
	}
	// Allocations and compile times are measured only at the runtime's
	// Verbose level: without their events the series are absent, not 0
	// (which would read as nothing allocated, no time compiling).
	if p.allocSeen {
		m(descAllocated, prometheus.CounterValue, float64(p.allocated), l)
	}
	for t, n := range p.jitMethods {
		if n == 0 {
			continue
		}
		tier := clrevents.OptimizationTier(t).String()
		m(descJitMethods, prometheus.CounterValue, float64(n), with(tier))
		if p.jitTimed {
			m(descJitTime, prometheus.CounterValue, p.jitSeconds[t], with(tier))
		}
	}
	for typ, n := range p.exceptions {
		m(descExceptions, prometheus.CounterValue, float64(*n), with(typ))
	}
	if p.otherExc > 0 {
		m(descExceptions, prometheus.CounterValue, float64(p.otherExc), with("other"))
	}
	m(descContN, prometheus.CounterValue, float64(p.contN), l)
	m(descContTime, prometheus.CounterValue, p.contSec, l)
	if p.tpSeen {
		m(descTPThreads, prometheus.GaugeValue, p.tpThreads, l)
	}
	if p.goalSeen {
		m(descTPGoal, prometheus.GaugeValue, p.tpGoal, l)
	}
	for _, c := range p.counters {
		m(c.desc, c.typ, c.value, l)
	}
	m(descCounterOut, prometheus.CounterValue, float64(p.counterOut), l)
}
