package trace

import (
	"slices"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/kernelevents"
)

// Stacks gives the events of an ETW trace the call stacks walked for them
// after they were logged, by the Windows kernel or by the runtime.
//
// A kernel session logs an event's stack after the event, in StackWalk
// events that name it by its timestamp and thread:
// the frames themselves (StackWalk/Stack), or keys of frames the kernel
// cached (StackKeyKernel for the kernel-mode part, StackKeyUser for the
// user-mode part), whose frames a KeyCreate event gave earlier or a
// KeyDelete or KeyRundown event gives later, as late as the trace's end.
// The .NET runtime, asked for stacks (the Stack keyword), logs after an
// event a CLRStackWalk event of its own on the same thread, whose frames
// are that event's (generated types with such frames implement
// clrimpl.StackWalk). An event's whole stack is therefore known only once
// the trace has been read: feed every event to Add as it passes, and ask
// Stack for the StackRef of any event afterwards.
//
// The kernel walks the user-mode part of a stack when the thread goes
// back to user mode, and logs it once, naming the last event of that stay
// in the kernel: the events before it on the thread whose walks had only
// kernel-mode frames get that user-mode part too, as TraceEvent's
// TraceLog gives it to them (a hard fault's or a disk read's walk is
// otherwise its kernel half). An event of a user-mode provider on the
// thread in between (the thread was in user mode since) ends that.
//
// Stacks that come with their event (EventPipe's, and ETW's stack
// extended data) need none of this: Event.Stack gives them. But a
// kernel-mode provider's (a Microsoft-Windows-Kernel-* provider enabled
// with stacks) ends in the kernel: Windows logs its user-mode part when
// the thread goes back to user mode, in an event of its own
// (Microsoft-Windows-Kernel-EventTracing's event 18, opcode 24, for which
// Add reports true), for every such event of the thread's stay, as
// TraceEvent's TraceLog joins them; Stack gives the whole. The zero
// value is ready to use; a Stacks holds every walk it was given (a few
// dozen bytes each, plus their frames).
type Stacks struct {
	walks   []walk
	byEvent map[StackRef]int32 // the event a walk names -> index in walks
	waiting map[uint64][]keyUse
	created map[uint64]uint32 // keys a KeyCreate defined: part index + 1
	parts   []uint64          // the frames of every part, one after another
	ends    []uint32          // parts[ends[i-1]:ends[i]] is part i (ends[0] == 0)
	threads func(tid uint32) (pid uint32, ok bool)
	scratch []uint64
	// The runtime's walks: the last event of each thread without a stack
	// of its own, and the part each walked event got.
	last map[threadID]StackRef
	clr  map[StackRef]uint32
	// deferred holds, by thread, the walks that have a kernel-mode part
	// and wait for the user-mode part of the thread's return to user mode.
	deferred map[uint32][]int32
}

type threadID struct{ pid, tid int64 }

// StackRef names an event as the kernel's stack walks name it: its raw
// timestamp and its thread. The zero StackRef names no event.
type StackRef struct {
	ts  int64
	tid uint32
}

// walk is what the stack walks of one event said.
type walk struct {
	pid          uint32
	kernel, user uint32 // part index + 1; 0 while not known
}

// keyUse is a walk waiting for the frames of a key.
type keyUse struct {
	walk   int32
	kernel bool
}

// StackRef returns the reference the kernel's stack walks give e by: its
// Timestamp and thread (for a CPU sample, the sampled thread; for a
// kernel Thread or Process event, the thread that logged it, the
// creator's for a Start, as TraceEvent attaches those stacks). The zero
// StackRef for an event not from an ETW trace or without a thread.
func (e *Event) StackRef() StackRef {
	if e.et == nil {
		return StackRef{}
	}
	tid := e.ThreadID()
	if e.ids == idsCreated && e.et.ThreadID != 0xFFFFFFFF {
		tid = int64(e.et.ThreadID)
	}
	if tid < 0 || tid > 0xFFFFFFFF {
		return StackRef{}
	}
	return StackRef{ts: e.et.Timestamp, tid: uint32(tid)}
}

// Add keeps what e says about stacks, and reports whether it is a stack
// walk (the kernel's StackWalk events, the runtime's CLRStackWalk). Add
// costs other events of an ETW log a map update for their thread, and
// events of other formats nothing.
func (s *Stacks) Add(e *Event) bool {
	if e.et == nil {
		return false
	}
	if e.et.ProviderGUID == stackWalkGUID {
		if s.threads == nil && e.r != nil {
			r := e.r
			s.threads = func(tid uint32) (uint32, bool) {
				pid, ok := r.threads[tid]
				return pid, ok
			}
		}
		if v := e.kernelValue(); v != nil {
			s.add(v, e.PointerSize())
		}
		return true
	}
	if e.res.kernel != nil || e.r == nil {
		return false // the kernel's other events: not the runtime's walks' business
	}
	st := e.Stack()
	if e.et.ProviderGUID == eventTracingGUID && e.et.ID == 18 && e.et.Opcode == 24 {
		// The user-mode part of the thread's stay in the kernel, for the
		// events before whose stacks ended in kernel mode.
		if len(st) > 0 && e.et.ThreadID != 0xFFFFFFFF {
			part := s.addPart(st)
			for _, d := range s.deferred[e.et.ThreadID] {
				if s.walks[d].user == 0 {
					s.walks[d].user = part
				}
			}
			delete(s.deferred, e.et.ThreadID)
		}
		return true
	}
	ptr := e.PointerSize()
	if len(s.deferred) > 0 && (len(st) == 0 || !isKernelAddr(st[len(st)-1], ptr)) {
		// A user-mode provider's event: its thread is in user mode, so
		// a user-mode part to come belongs to a later stay in the kernel.
		// (A kernel-mode provider's event, whose stack ends in the
		// kernel, says nothing of that.)
		if tid := e.et.ThreadID; tid != 0xFFFFFFFF {
			delete(s.deferred, tid)
		}
	}
	if n := len(st); n > 0 && isKernelAddr(st[n-1], ptr) {
		// A kernel-mode provider's stack (its extended data) walked no
		// further than the kernel: the user-mode part follows when the
		// thread goes back to user mode.
		if pid := e.ProcessID(); pid >= 0 && pid <= 0xFFFFFFFF {
			w := s.walk(e.StackRef(), uint32(pid))
			if s.walks[w].kernel == 0 {
				s.walks[w].kernel = s.addPart(st)
				s.deferUser(e.et.ThreadID, w)
			}
		}
		return false
	}
	ref := e.decodeType()
	if !ref.ok() {
		return false
	}
	if _, kernel := e.r.eventType(ref).(*kernelevents.EventInfo); kernel {
		return false // KernelTraceControl's
	}
	v := e.r.value(ref)
	k := threadID{e.ProcessID(), e.ThreadID()}
	if w, ok := v.(clrimpl.StackWalk); ok {
		last, had := s.last[k]
		delete(s.last, k)
		if !had {
			return true
		}
		if _, err := v.Decode(e.Payload(), e.PointerSize()); err != nil {
			return true
		}
		s.scratch = w.AppendStackWalk(s.scratch[:0])
		if s.clr == nil {
			s.clr = map[StackRef]uint32{}
		}
		s.clr[last] = s.addPart(s.scratch)
		return true
	}
	if len(e.Stack()) > 0 {
		delete(s.last, k)
		return false
	}
	if s.last == nil {
		s.last = map[threadID]StackRef{}
	}
	s.last[k] = e.StackRef()
	return false
}

var stackWalkGUID = kernelevents.ProviderStackWalk.GUID()

// eventTracingGUID is Microsoft-Windows-Kernel-EventTracing's, whose event
// 18 (opcode 24) carries the user-mode part of the stacks of a kernel-mode
// provider's events (ETW_TASK_STACK_TRACE, ETW_OPCODE_USER_MODE_STACK_TRACE).
var eventTracingGUID = clrimpl.MustParseGUID("b675ec37-bdb6-4648-bc92-f3fdc74d3ca2")

// add keeps a decoded StackWalk event.
func (s *Stacks) add(v clrimpl.Event, ptrSize int) {
	switch v := v.(type) {
	case *kernelevents.StackWalkStackV2:
		s.scratch = v.Stack.AppendTo(s.scratch[:0])
		if len(s.scratch) == 0 {
			return
		}
		w := s.walk(StackRef{int64(v.EventTimeStamp), v.StackThread}, v.StackProcess)
		part := s.addPart(s.scratch)
		switch {
		case !isKernelAddr(s.scratch[0], ptrSize):
			for _, d := range s.userPart(v.StackThread, w) {
				s.walks[d].user = part
			}
			s.walks[w].user = part
		case isKernelAddr(s.scratch[len(s.scratch)-1], ptrSize):
			// Kernel-mode frames alone: the user-mode part may follow.
			s.walks[w].kernel = part
			s.deferUser(v.StackThread, w)
		default:
			// Both parts: the thread's walk is whole, and the thread
			// was back in user mode.
			s.walks[w].kernel = part
			delete(s.deferred, v.StackThread)
		}
	case kernelevents.StackWalkKeyRefEvent:
		f := v.StackWalkKeyRefFields()
		w := s.walk(StackRef{int64(f.EventTimeStamp), f.StackThread}, f.StackProcess)
		kernel := f.Kind == kernelevents.KindStackWalkStackKeyKernel
		if kernel {
			s.deferUser(f.StackThread, w)
		} else {
			for _, d := range s.userPart(f.StackThread, w) {
				s.useKey(f.StackKey, keyUse{walk: d})
			}
		}
		s.useKey(f.StackKey, keyUse{walk: w, kernel: kernel})
	case kernelevents.StackWalkKeyDefEvent:
		f := v.StackWalkKeyDefFields()
		uses, waiting := s.waiting[f.StackKey]
		create := f.Kind == kernelevents.KindStackWalkKeyCreate
		if !waiting && !create {
			delete(s.created, f.StackKey) // the cache entry of no walk we have
			return
		}
		s.scratch = f.Stack.AppendTo(s.scratch[:0])
		part := s.addPart(s.scratch)
		for _, u := range uses {
			s.assign(u, part)
		}
		delete(s.waiting, f.StackKey)
		if create {
			if s.created == nil {
				s.created = map[uint64]uint32{}
			}
			s.created[f.StackKey] = part
		} else {
			delete(s.created, f.StackKey) // the key is free for another stack
		}
	}
}

// useKey gives u the frames of key: now if a KeyCreate defined it, else
// when a KeyDelete or KeyRundown does.
func (s *Stacks) useKey(key uint64, u keyUse) {
	if part, ok := s.created[key]; ok {
		s.assign(u, part)
		return
	}
	if s.waiting == nil {
		s.waiting = map[uint64][]keyUse{}
	}
	s.waiting[key] = append(s.waiting[key], u)
}

// deferUser notes walk w, on thread tid, as waiting for the user-mode part
// of the thread's return to user mode; not for the System process's and
// the idle threads, which have none.
func (s *Stacks) deferUser(tid uint32, w int32) {
	if pid := s.walks[w].pid; pid == 0 || pid == 4 {
		return
	}
	if s.deferred == nil {
		s.deferred = map[uint32][]int32{}
	}
	if d := s.deferred[tid]; len(d) == 0 || d[len(d)-1] != w {
		s.deferred[tid] = append(d, w)
	}
}

// userPart returns the walks of thread tid, other than w, that wait for
// the user-mode part w's walk gives, and forgets them: the part is
// logged once, for the last event of the thread's stay in the kernel,
// whose walk has a kernel-mode part too. A user-mode part of an event
// without one (a sample of user code) is its whole stack: the thread is
// in user mode, and the walks that waited get none.
func (s *Stacks) userPart(tid uint32, w int32) []int32 {
	d := s.deferred[tid]
	if len(d) == 0 {
		return nil
	}
	delete(s.deferred, tid)
	if !slices.Contains(d, w) {
		return nil
	}
	out := d[:0]
	for _, i := range d {
		if i != w && s.walks[i].user == 0 {
			out = append(out, i)
		}
	}
	return out
}

// walk returns the index of the walk of the event ref names, made on first
// use.
func (s *Stacks) walk(ref StackRef, pid uint32) int32 {
	if i, ok := s.byEvent[ref]; ok {
		return i
	}
	if s.byEvent == nil {
		s.byEvent = map[StackRef]int32{}
	}
	i := int32(len(s.walks))
	s.walks = append(s.walks, walk{pid: pid})
	s.byEvent[ref] = i
	return i
}

func (s *Stacks) addPart(frames []uint64) uint32 {
	if len(s.ends) == 0 {
		s.ends = append(s.ends, 0)
	}
	s.parts = append(s.parts, frames...)
	s.ends = append(s.ends, uint32(len(s.parts)))
	return uint32(len(s.ends) - 1) // index + 1
}

func (s *Stacks) part(p uint32) []uint64 {
	if p == 0 {
		return nil
	}
	return s.parts[s.ends[p-1]:s.ends[p]]
}

func (s *Stacks) assign(u keyUse, part uint32) {
	if u.kernel {
		s.walks[u.walk].kernel = part
	} else {
		s.walks[u.walk].user = part
	}
}

// Stack appends to dst the stack walked for the event ref names,
// innermost first, and returns it with the process the walk was in. The
// runtime's walk of its event comes first; a kernel walk gives its
// kernel-mode frames, then its user-mode frames. ok is false when no walk
// named the event; a walk whose keys were never defined gives the frames
// that were, possibly none. A process the walk did not name (-1) is the
// one the trace's Thread events give the thread.
func (s *Stacks) Stack(ref StackRef, dst []uint64) (frames []uint64, pid int64, ok bool) {
	if part, ok := s.clr[ref]; ok {
		return append(dst, s.part(part)...), s.threadsProcess(ref.tid), true
	}
	i, ok := s.byEvent[ref]
	if !ok {
		return dst, s.threadsProcess(ref.tid), false
	}
	w := s.walks[i]
	dst = append(append(dst, s.part(w.kernel)...), s.part(w.user)...)
	return dst, int64(w.pid), true
}

// Close drops what Stacks keeps only while events are added (each
// thread's last event); Stack answers as before.
func (s *Stacks) Close() {
	s.last, s.waiting, s.deferred = nil, nil, nil
}

// ThreadProcess returns the process the trace's Thread events put thread
// tid in, -1 when they have not (so far).
func (s *Stacks) ThreadProcess(tid int64) int64 {
	if tid < 0 || tid > 0xFFFFFFFF {
		return -1
	}
	return s.threadsProcess(uint32(tid))
}

func (s *Stacks) threadsProcess(tid uint32) int64 {
	if s.threads == nil {
		return -1
	}
	if pid, ok := s.threads(tid); ok {
		return int64(pid)
	}
	return -1
}

// Len returns how many events the walks Stacks holds name.
func (s *Stacks) Len() int { return len(s.walks) + len(s.clr) }

// isKernelAddr reports whether an address is in kernel space.
func isKernelAddr(a uint64, ptrSize int) bool {
	if ptrSize == 4 {
		return a >= 0x80000000
	}
	return a >= 0xFFFF800000000000
}
