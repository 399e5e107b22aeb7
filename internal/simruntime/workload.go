package simruntime

import (
	"cmp"
	"encoding/binary"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Workload simulates a running application's events, for Config.Stream:
// every session it serves gets a NetTrace V6 stream that goes on until
// StopTracing (or the server's Close), with timestamps that advance with
// the wall clock on one clock shared by all the Workload's sessions (as a
// runtime's sessions share the monotonic clock), holding what the
// session's providers, keywords and level ask for:
//
//   - the runtime provider: a GC per block (GCSuspendEEBegin, GCStart,
//     GCEnd, GCHeapStats, GCRestartEEEnd; every 10th of generation 1,
//     every 50th of generation 2), a thread pool adjustment to a goal of
//     8 threads and a worker thread's wait with 6 threads existing per
//     block (Threading), exceptions of ExceptionTypes types in turn
//     (Exception), ContentionStart/Stop pairs (Contention), and at
//     Verbose GCAllocationTick (GC) and MethodJittingStarted (JIT); the
//     JIT keyword also brings a MethodLoadVerbose for each of JitMethods
//     methods when the simulated JIT compiles it, or below Verbose a
//     MethodLoad without its names, as the runtime sends them (its
//     ETW::MethodLog::SendMethodEvent names a method only when the
//     runtime provider is at Verbose) (one every 20 ms from JitAfter
//     after the Workload's first session on, each at tier 0, then 200
//     ms later at tier 1 at another address), after which the JIT is
//     quiet, as an application that has warmed up;
//   - the SampleProfiler: a ThreadSample of each of 4 threads every
//     millisecond, with stacks that run through the precompiled methods
//     (Precompiled: only a rundown names them) and the JIT-compiled ones
//     (see stack);
//   - System.Runtime: a set of EventCounters every EventCounterIntervalSec.
//
// Events that ask for stacks carry them unless the request said not to
// walk stacks. After the stop, a session that asked for a rundown gets the
// rundown provider's ModuleDCEnd and MethodDCEndVerbose events for every
// method compiled so far and the precompiled ones, then the stream ends.
type Workload struct {
	PID int
	// Rate is about how many runtime provider events a second a session
	// gets (0: 2000), besides samples and counters.
	Rate int
	// Tick is the time between blocks (0: 10 ms).
	Tick time.Duration
	// DropPerTick makes the sequence numbers skip this many events per
	// block, as when the runtime's buffer is full.
	DropPerTick uint32
	// ExceptionTypes is how many distinct exception types are thrown, in
	// turn (0: 3). Their names are System.Exception0, System.Exception1, …
	ExceptionTypes int
	// JitMethods is how many methods the simulated JIT compiles (0: 16).
	JitMethods int
	// JitAfter is when the simulated JIT compiles its first method, after
	// the Workload's first session (0: jitEvery, 20 ms).
	JitAfter time.Duration

	once  sync.Once
	start time.Time
	mu    sync.Mutex
	stats WorkloadStats
}

// WorkloadStats counts what a Workload's sessions wrote.
type WorkloadStats struct {
	Sessions int
	Events   int64 // every event written, samples and counters included
	Samples  int64 // ThreadSample events
	GCs      int64
	Rundowns int // sessions that ended with a rundown
}

// Stats returns what the Workload's sessions have written so far.
func (w *Workload) Stats() WorkloadStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Method is a simulated managed method.
type Method struct {
	Namespace, Name, Signature string
	Address                    uint64
	Size                       uint32
}

// The simulated application's module and precompiled (ReadyToRun) code.
const (
	ModuleID   = 0xA0001000
	ModulePath = "/app/Sim.App.dll"
)

// Precompiled are the methods compiled before any session (ReadyToRun
// code): only a rundown names them.
var Precompiled = []Method{
	{"Sim.App.Program", "Main", "void  (class System.String[])", 0x7f0000010000, 0x400},
	{"Sim.App.Worker", "Run", "void  ()", 0x7f0000011000, 0x400},
	{"Sim.App.Worker", "Compute", "int32  (int32)", 0x7f0000012000, 0x400},
	{"Sim.App.Worker", "Hash", "int64  (class System.String)", 0x7f0000013000, 0x400},
}

// JitMethod returns the i'th method the simulated JIT compiles, at tier 0
// (tier1 false) or tier 1.
func JitMethod(i int, tier1 bool) Method {
	m := Method{"Sim.App.Generated", "Step" + strconv.Itoa(i), "void  ()", 0x7f1000000000 + uint64(i)*0x1000, 0x200}
	if tier1 {
		m.Address += 0x100000
	}
	return m
}

const (
	jitEvery = 20 * time.Millisecond  // one method compiled every jitEvery
	tierUp   = 200 * time.Millisecond // then recompiled at tier 1
	qpcFreq  = 10_000_000             // the stream's clock: 100 ns ticks
	threads  = 4
)

// Metadata IDs of the events a Workload writes.
const (
	mGCStart = 1 + iota
	mGCEnd
	mRestartEnd
	mHeapStats
	mSuspendBegin
	mAllocTick
	mTPAdjust
	mException
	mContStart
	mContStop
	mMethodLoad
	mMethodLoadPlain
	mJitStart
	mMethodDCEnd
	mModuleDCEnd
	mSample
	mCounterMean
	mCounterSum
	mTPWait
)

func (w *Workload) defaults() (rate int, tick time.Duration, exc, jit int) {
	rate, tick, exc, jit = w.Rate, w.Tick, w.ExceptionTypes, w.JitMethods
	if rate <= 0 {
		rate = 2000
	}
	if tick <= 0 {
		tick = 10 * time.Millisecond
	}
	if exc <= 0 {
		exc = 3
	}
	if jit <= 0 {
		jit = 16
	}
	return
}

// now is the shared clock in 100 ns ticks since the Workload's first
// session, offset so that it is never 0.
func (w *Workload) now() int64 {
	return int64(time.Since(w.start)/100) + qpcFreq
}

// session is what a request enables.
type session struct {
	runtime            bool
	kw                 uint64
	level              uint32
	samples, counters  bool
	interval           time.Duration
	stacks, rundown    bool
	gcs, exc           int
	seq                uint32
	last               int64 // the last timestamp written
	pend               []pending
	nevents, nsamples  int64
	nextCounters, prev int64
}

func parseSession(req *Collect) *session {
	s := &session{stacks: req.Stackwalk, rundown: req.RequestRundown}
	if req.Version >= 4 {
		s.rundown = req.RundownKeyword != 0
	}
	for _, p := range req.Providers {
		switch p.Name {
		case "Microsoft-Windows-DotNETRuntime":
			s.runtime, s.kw, s.level = true, p.Keywords, p.Level
		case "Microsoft-DotNETCore-SampleProfiler":
			s.samples = true
		case "System.Runtime":
			s.counters = true
			s.interval = time.Second
			for _, kv := range strings.Split(p.Args, ";") {
				if v, ok := strings.CutPrefix(kv, "EventCounterIntervalSec="); ok {
					if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
						s.interval = time.Duration(f * float64(time.Second))
					}
				}
			}
		}
	}
	if s.level == 0 {
		s.level = 5 // LogAlways enables every level
	}
	return s
}

func (s *session) on(kw uint64, level uint32) bool {
	return s.runtime && s.kw&kw != 0 && s.level >= level
}

// Stream serves one session (see Config.Stream).
func (w *Workload) Stream(req *Collect, out io.Writer, stop, closed <-chan struct{}) {
	w.once.Do(func() { w.start = time.Now() })
	rate, tick, _, _ := w.defaults()
	s := parseSession(req)
	w.mu.Lock()
	w.stats.Sessions++
	w.mu.Unlock()
	var b v6w
	b.header(w.PID)
	// The header's sync time is the clock now, as a runtime writes it.
	hdr := b.b.Bytes()
	binary.LittleEndian.PutUint64(hdr[8+4+4+4+4+16:], uint64(w.now()))
	b.block(3, metadataBlock())
	b.block(6, threadBlock(w.PID))
	s.prev = w.now()
	s.last = s.prev
	s.nextCounters = s.prev
	flush := func() bool {
		_, err := out.Write(b.b.Bytes())
		b.b.Reset()
		w.mu.Lock()
		w.stats.Events += s.nevents
		w.stats.Samples += s.nsamples
		s.nevents, s.nsamples = 0, 0
		w.mu.Unlock()
		return err == nil
	}
	if !flush() {
		return
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	perTick := max(rate*int(tick/time.Millisecond)/1000, 1)
	for {
		select {
		case <-closed:
			return
		case <-stop:
			if s.rundown {
				w.rundown(&b, s)
				w.mu.Lock()
				w.stats.Rundowns++
				w.mu.Unlock()
			}
			b.seq = s.seq
			b.ts = s.last + 1
			b.end()
			flush()
			return
		case <-t.C:
		}
		w.block(&b, s, perTick)
		if !flush() {
			return
		}
	}
}

// pending is an event waiting for its block.
type pending struct {
	meta    uint32
	thread  uint64
	ts      int64
	stack   []uint64
	payload []byte
}

// ev adds an event to the session's next block: its metadata ID, thread
// index, time, stack (nil: none) and payload (copied).
func (s *session) ev(meta uint32, thread uint64, ts int64, stack []uint64, payload []byte) {
	if !s.stacks {
		stack = nil
	}
	s.pend = append(s.pend, pending{meta, thread, ts, stack, append([]byte(nil), payload...)})
	s.nevents++
}

// flushEvents writes the stack block, the event block (in time order)
// and a sequence point for the events since the last one.
func (s *session) flushEvents(b *v6w) {
	if len(s.pend) == 0 {
		return
	}
	sort.SliceStable(s.pend, func(i, j int) bool { return s.pend[i].ts < s.pend[j].ts })
	var sb, eb []byte
	var nstacks uint32
	eb = binary.LittleEndian.AppendUint16(eb, 20)
	eb = binary.LittleEndian.AppendUint16(eb, 0)
	eb = binary.LittleEndian.AppendUint64(eb, 0)
	eb = binary.LittleEndian.AppendUint64(eb, 0)
	prevLast := s.last
	for _, e := range s.pend {
		ts := e.ts
		if ts <= s.last {
			ts = s.last + 1
		}
		s.last = ts
		s.seq++
		var id uint32
		if e.stack != nil {
			nstacks++
			id = nstacks
			sb = binary.LittleEndian.AppendUint32(sb, uint32(len(e.stack)*8))
			for _, ip := range e.stack {
				sb = binary.LittleEndian.AppendUint64(sb, ip)
			}
		}
		var h [52]byte
		binary.LittleEndian.PutUint32(h[0:], uint32(48+len(e.payload)))
		binary.LittleEndian.PutUint32(h[4:], e.meta) // high bit clear: sorted (one capture thread)
		binary.LittleEndian.PutUint32(h[8:], s.seq)
		binary.LittleEndian.PutUint64(h[12:], e.thread)
		binary.LittleEndian.PutUint64(h[20:], 1)
		binary.LittleEndian.PutUint32(h[32:], id)
		binary.LittleEndian.PutUint64(h[36:], uint64(ts))
		binary.LittleEndian.PutUint32(h[48:], uint32(len(e.payload)))
		eb = append(eb, h[:]...)
		eb = append(eb, e.payload...)
	}
	// The least and greatest timestamps of the block's events, as the
	// runtime states them (exactly: readers check them).
	first := s.pend[0].ts
	if first <= prevLast {
		first = prevLast + 1
	}
	binary.LittleEndian.PutUint64(eb[4:], uint64(first))
	binary.LittleEndian.PutUint64(eb[12:], uint64(s.last))
	if nstacks > 0 {
		hdr := binary.LittleEndian.AppendUint32(nil, 1)
		hdr = binary.LittleEndian.AppendUint32(hdr, nstacks)
		b.block(5, append(hdr, sb...))
	}
	b.block(2, eb)
	// A sequence point ends the stack table's scope.
	sp := binary.LittleEndian.AppendUint64(nil, uint64(s.last))
	sp = binary.LittleEndian.AppendUint32(sp, 0)
	sp = binary.LittleEndian.AppendUint32(sp, 1)
	sp = binary.AppendUvarint(sp, 1)
	sp = binary.AppendUvarint(sp, uint64(s.seq))
	b.block(4, sp)
	clear(s.pend)
	s.pend = s.pend[:0]
}

// block writes one tick's events, from the previous tick's time to now.
func (w *Workload) block(b *v6w, s *session, perTick int) {
	_, _, excTypes, jitN := w.defaults()
	now := w.now()
	from := s.prev
	s.prev = now
	span := max(now-from, 1)
	at := func(i, n int) int64 { return from + span*int64(i)/int64(max(n, 1)) }
	var p []byte
	if s.samples {
		per := max(int(span/(qpcFreq/1000)), 1) // one a millisecond per thread
		for i := range per {
			ts := at(i, per)
			for th := uint64(1); th <= threads; th++ {
				p = binary.LittleEndian.AppendUint32(p[:0], 2) // managed
				s.ev(mSample, th, ts, w.stack(ts, int(th)+i), p)
				s.nsamples++
			}
		}
	}
	if s.on(0x10, 4) {
		// The methods the JIT compiled since the last tick.
		for i := range jitN {
			for tier := range 2 {
				t := w.compiledAt(i, tier == 1)
				if t <= from || t > now {
					continue
				}
				m := JitMethod(i, tier == 1)
				if s.on(0x10, 5) {
					s.ev(mJitStart, 1, t-1000, nil, jitStartPayload(p[:0], i, m))
				}
				if s.on(0x10, 5) {
					s.ev(mMethodLoad, 1, t, nil, methodPayload(p[:0], uint64(0xB000+i), m, uint32(8|(3+tier)<<7)))
				} else {
					// As the runtime: a method's name only at Verbose
					// (its MethodLoadVerbose), else MethodLoad.
					s.ev(mMethodLoadPlain, 1, t, nil, methodLoadPayload(p[:0], uint64(0xB000+i), m, uint32(8|(3+tier)<<7)))
				}
			}
		}
	}
	left := perTick
	if s.on(0x1, 4) {
		s.gcs++
		gen := uint32(0)
		switch {
		case s.gcs%50 == 0:
			gen = 2
		case s.gcs%10 == 0:
			gen = 1
		}
		t0 := at(0, 1)
		pause := int64(10_000 + 1000*int64(s.gcs%40)) // 1–5 ms
		p = binary.LittleEndian.AppendUint32(p[:0], 1)
		p = binary.LittleEndian.AppendUint32(p, uint32(s.gcs))
		s.ev(mSuspendBegin, 1, t0, nil, binary.LittleEndian.AppendUint16(p, 0))
		p = binary.LittleEndian.AppendUint32(p[:0], uint32(s.gcs))
		p = binary.LittleEndian.AppendUint32(p, gen)
		p = binary.LittleEndian.AppendUint32(p, 0)
		p = binary.LittleEndian.AppendUint32(p, 0)
		p = binary.LittleEndian.AppendUint16(p, 0)
		s.ev(mGCStart, 1, t0+10, nil, binary.LittleEndian.AppendUint64(p, 0))
		p = binary.LittleEndian.AppendUint32(p[:0], uint32(s.gcs))
		p = binary.LittleEndian.AppendUint32(p, gen)
		s.ev(mGCEnd, 1, t0+pause-20, nil, binary.LittleEndian.AppendUint16(p, 0))
		s.ev(mHeapStats, 1, t0+pause-10, nil, heapStatsPayload(p[:0], uint64(s.gcs)))
		s.ev(mRestartEnd, 1, t0+pause, nil, []byte{0, 0})
		w.mu.Lock()
		w.stats.GCs++
		w.mu.Unlock()
		left -= 5
	}
	if s.on(0x10000, 4) {
		p = binary.LittleEndian.AppendUint64(p[:0], math.Float64bits(12.5))
		p = binary.LittleEndian.AppendUint32(p, 8)
		p = binary.LittleEndian.AppendUint32(p, 0)
		s.ev(mTPAdjust, 2, at(1, 2), nil, binary.LittleEndian.AppendUint16(p, 0))
		p = binary.LittleEndian.AppendUint32(p[:0], 6) // ActiveWorkerThreadCount: the threads that exist
		p = binary.LittleEndian.AppendUint32(p, 0)
		s.ev(mTPWait, 3, at(1, 2), nil, binary.LittleEndian.AppendUint16(p, 0))
		left -= 2
	}
	alloc, exc, cont := s.on(0x1, 5), s.on(0x8000, 2), s.on(0x4000, 4)
	kinds := 0
	for _, on := range []bool{alloc, exc, cont} {
		if on {
			kinds++
		}
	}
	if kinds > 0 && left > 0 {
		n := max(left/kinds, 1)
		for i := range n {
			ts := at(i, n)
			th := uint64(i%threads + 1)
			if alloc {
				s.ev(mAllocTick, th, ts, w.stack(ts, i), allocPayload(p[:0], i))
			}
			if exc && i%2 == 0 {
				s.exc++
				s.ev(mException, th, ts+1, w.stack(ts, i+1), exceptionPayload(p[:0], "System.Exception"+strconv.Itoa(s.exc%excTypes)))
			}
			if cont && i%2 == 1 {
				p = append(p[:0], 0)
				p = binary.LittleEndian.AppendUint16(p, 0)
				p = binary.LittleEndian.AppendUint64(p, 0x1000)
				p = binary.LittleEndian.AppendUint64(p, 0x2000)
				s.ev(mContStart, th, ts+2, w.stack(ts, i+2), binary.LittleEndian.AppendUint64(p, 4243))
				p = append(p[:0], 0)
				p = binary.LittleEndian.AppendUint16(p, 0)
				s.ev(mContStop, th, ts+3, nil, binary.LittleEndian.AppendUint64(p, math.Float64bits(50_000))) // 50 µs
			}
		}
	}
	if s.counters && now >= s.nextCounters {
		s.nextCounters = now + int64(s.interval/100)
		for _, c := range runtimeCounters(s.gcs) {
			meta, cp := counterPayload(p[:0], c)
			s.ev(mCounterMean+meta-1, 3, now, nil, cp)
		}
	}
	s.flushEvents(b)
	s.seq += w.DropPerTick
}

// compiledAt is when the simulated JIT compiles method i (at tier 1 if
// tier1), on the shared clock.
func (w *Workload) compiledAt(i int, tier1 bool) int64 {
	t := time.Duration(i)*jitEvery + cmp.Or(w.JitAfter, jitEvery)
	if tier1 {
		t += tierUp
	}
	return int64(t/100) + qpcFreq
}

// method returns the code of JIT-compiled method i at time ts, if it is
// compiled by then.
func (w *Workload) method(i int, ts int64) (Method, bool) {
	switch {
	case ts >= w.compiledAt(i, true):
		return JitMethod(i, true), true
	case ts >= w.compiledAt(i, false):
		return JitMethod(i, false), true
	}
	return Method{}, false
}

// stack is a sample's stack, innermost first: Compute, Hash, or (every
// third sample) a JIT-compiled method where one is compiled by ts, else
// Compute; then Worker.Run and Program.Main.
func (w *Workload) stack(ts int64, k int) []uint64 {
	_, _, _, jitN := w.defaults()
	leaf := Precompiled[2+k%3%2].Address + 0x10
	if k%3 == 2 {
		if m, ok := w.method(k/3%jitN, ts); ok {
			leaf = m.Address + 0x20
		}
	}
	return []uint64{leaf, Precompiled[1].Address + 0x30, Precompiled[0].Address + 0x40}
}

// rundown writes the rundown: the module, then every method.
func (w *Workload) rundown(b *v6w, s *session) {
	_, _, _, jitN := w.defaults()
	ts := w.now()
	var p []byte
	p = binary.LittleEndian.AppendUint64(p, ModuleID)
	p = binary.LittleEndian.AppendUint64(p, 0xA0000000)
	p = binary.LittleEndian.AppendUint32(p, 0)
	p = binary.LittleEndian.AppendUint32(p, 0)
	p = appendUTF16(p, ModulePath)
	p = appendUTF16(p, "")
	p = binary.LittleEndian.AppendUint16(p, 0)
	p = append(p, make([]byte, 16)...)
	p = binary.LittleEndian.AppendUint32(p, 1)
	p = appendUTF16(p, "")
	p = append(p, make([]byte, 16)...)
	p = binary.LittleEndian.AppendUint32(p, 0)
	p = appendUTF16(p, "")
	s.ev(mModuleDCEnd, 1, ts, nil, p)
	for i, m := range Precompiled {
		s.ev(mMethodDCEnd, 1, ts, nil, methodPayload(p[:0], uint64(0xC000+i), m, 0))
	}
	for i := range jitN {
		if m, ok := w.method(i, ts); ok {
			s.ev(mMethodDCEnd, 1, ts, nil, methodPayload(p[:0], uint64(0xB000+i), m, 8))
		}
	}
	s.flushEvents(b)
}

func methodPayload(p []byte, id uint64, m Method, flags uint32) []byte {
	p = methodHead(p, id, m, flags)
	p = appendUTF16(p, m.Namespace)
	p = appendUTF16(p, m.Name)
	p = appendUTF16(p, m.Signature)
	p = binary.LittleEndian.AppendUint16(p, 0)
	return binary.LittleEndian.AppendUint64(p, 0)
}

// methodLoadPayload is MethodLoad_V2's: methodPayload's without the
// names.
func methodLoadPayload(p []byte, id uint64, m Method, flags uint32) []byte {
	p = methodHead(p, id, m, flags)
	p = binary.LittleEndian.AppendUint16(p, 0)
	return binary.LittleEndian.AppendUint64(p, 0)
}

// methodHead appends what a method's load events begin with: its ID,
// module, address, size, token and flags.
func methodHead(p []byte, id uint64, m Method, flags uint32) []byte {
	p = binary.LittleEndian.AppendUint64(p, id)
	p = binary.LittleEndian.AppendUint64(p, ModuleID)
	p = binary.LittleEndian.AppendUint64(p, m.Address)
	p = binary.LittleEndian.AppendUint32(p, m.Size)
	p = binary.LittleEndian.AppendUint32(p, 0x06000001)
	return binary.LittleEndian.AppendUint32(p, flags)
}

func jitStartPayload(p []byte, i int, m Method) []byte {
	p = binary.LittleEndian.AppendUint64(p, uint64(0xB000+i))
	p = binary.LittleEndian.AppendUint64(p, ModuleID)
	p = binary.LittleEndian.AppendUint32(p, 0x06000001)
	p = binary.LittleEndian.AppendUint32(p, 32)
	p = appendUTF16(p, m.Namespace)
	p = appendUTF16(p, m.Name)
	p = appendUTF16(p, m.Signature)
	return binary.LittleEndian.AppendUint16(p, 0)
}

// heapStatsPayload: generation sizes that move with the GC count.
func heapStatsPayload(p []byte, n uint64) []byte {
	for g := range uint64(4) {
		p = binary.LittleEndian.AppendUint64(p, (g+1)<<20+n%7*4096) // size
		p = binary.LittleEndian.AppendUint64(p, 1024)               // promoted
	}
	p = binary.LittleEndian.AppendUint64(p, 0)
	p = binary.LittleEndian.AppendUint64(p, 0)
	p = binary.LittleEndian.AppendUint32(p, 1)
	p = binary.LittleEndian.AppendUint32(p, 2)
	p = binary.LittleEndian.AppendUint32(p, 3)
	p = binary.LittleEndian.AppendUint16(p, 0)
	p = binary.LittleEndian.AppendUint64(p, 64<<10) // generation 4 (POH)
	return binary.LittleEndian.AppendUint64(p, 0)
}

// allocPayload is a GCAllocationTick_V4 of 100 KB of System.Byte[] or
// System.String.
func allocPayload(p []byte, i int) []byte {
	p = binary.LittleEndian.AppendUint32(p, 100_000)
	p = binary.LittleEndian.AppendUint32(p, 0)
	p = binary.LittleEndian.AppendUint16(p, 0)
	p = binary.LittleEndian.AppendUint64(p, 100_000)
	p = binary.LittleEndian.AppendUint64(p, 0x5000+uint64(i%2))
	p = appendUTF16(p, []string{"System.Byte[]", "System.String"}[i%2])
	p = binary.LittleEndian.AppendUint32(p, 0)
	p = binary.LittleEndian.AppendUint64(p, 0x7e0000000000)
	return binary.LittleEndian.AppendUint64(p, 24)
}

func exceptionPayload(p []byte, typ string) []byte {
	p = appendUTF16(p, typ)
	p = appendUTF16(p, "simulated")
	p = binary.LittleEndian.AppendUint64(p, Precompiled[2].Address+0x18)
	p = binary.LittleEndian.AppendUint32(p, 0x80131500)
	p = binary.LittleEndian.AppendUint16(p, 0x10)
	return binary.LittleEndian.AppendUint16(p, 0)
}

// runtimeCounters is what System.Runtime reports each interval.
func runtimeCounters(gcs int) []Counter {
	return []Counter{
		{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 12.5},
		{Name: "working-set", DisplayName: "Working Set", Units: "MB", Value: 64},
		{Name: "gc-heap-size", DisplayName: "GC Heap Size", Units: "MB", Value: 12},
		{Name: "gen-0-gc-count", DisplayName: "Gen 0 GC Count", Increment: true, Value: float64(gcs % 5)},
		{Name: "time-in-gc", DisplayName: "% Time in GC since last GC", Units: "%", Value: 3},
		{Name: "alloc-rate", DisplayName: "Allocation Rate", Units: "B", Increment: true, Value: 1_000_000},
		{Name: "exception-count", DisplayName: "Exception Count", Increment: true, Value: 7},
		{Name: "threadpool-thread-count", DisplayName: "ThreadPool Thread Count", Value: 8},
		{Name: "threadpool-queue-length", DisplayName: "ThreadPool Queue Length", Value: 0},
		{Name: "time-in-jit", DisplayName: "Time spent in JIT", Units: "ms", Increment: true, Value: 1.5},
	}
}

// metadataBlock describes every event a Workload writes.
func metadataBlock() []byte {
	type rec struct {
		id       uint32
		provider string
		event    uint16
		name     string
		version  uint8
		fields   []Field
	}
	const rt, rd = "Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown"
	mean, sum := counterFields()
	recs := []rec{
		{mGCStart, rt, 1, "", 2, nil},
		{mGCEnd, rt, 2, "", 1, nil},
		{mRestartEnd, rt, 3, "", 1, nil},
		{mHeapStats, rt, 4, "", 2, nil},
		{mSuspendBegin, rt, 9, "", 1, nil},
		{mAllocTick, rt, 10, "", 4, nil},
		{mTPAdjust, rt, 55, "", 0, nil},
		{mTPWait, rt, 57, "", 0, nil},
		{mException, rt, 80, "", 1, nil},
		{mContStart, rt, 81, "", 2, nil},
		{mContStop, rt, 91, "", 1, nil},
		{mMethodLoad, rt, 143, "", 2, nil},
		{mMethodLoadPlain, rt, 141, "", 2, nil},
		{mJitStart, rt, 145, "", 1, nil},
		{mMethodDCEnd, rd, 144, "", 2, nil},
		{mModuleDCEnd, rd, 154, "", 2, nil},
		{mSample, "Microsoft-DotNETCore-SampleProfiler", 0, "ThreadSample", 0, nil},
		{mCounterMean, "System.Runtime", 0, "EventCounters", 0, CounterFields(mean)},
		{mCounterSum, "System.Runtime", 0, "EventCounters", 0, CounterFields(sum)},
	}
	mb := binary.LittleEndian.AppendUint16(nil, 0)
	for _, x := range recs {
		r := binary.AppendUvarint(nil, uint64(x.id))
		r = appendUTF8(r, x.provider)
		r = binary.AppendUvarint(r, uint64(x.event))
		r = appendUTF8(r, x.name)
		r = appendFields(r, x.fields)
		r = binary.LittleEndian.AppendUint16(r, 2)
		r = append(r, 9, x.version) // optional metadata: the version
		mb = binary.LittleEndian.AppendUint16(mb, uint16(len(r)))
		mb = append(mb, r...)
	}
	return mb
}

// threadBlock lists the threads: indexes 1 to 4 of process pid, OS
// threads 4242 to 4245.
func threadBlock(pid int) []byte {
	var th []byte
	for i := uint64(1); i <= threads; i++ {
		row := binary.AppendUvarint(nil, i)
		row = binary.AppendUvarint(append(row, 2), uint64(pid))
		row = binary.AppendUvarint(append(row, 3), 4241+i)
		th = binary.LittleEndian.AppendUint16(th, uint16(len(row)))
		th = append(th, row...)
	}
	return th
}
