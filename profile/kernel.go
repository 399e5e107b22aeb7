package profile

import (
	"fmt"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// CPU samples of an ETW trace. A kernel session samples every processor
// (PerfInfo/Sample, once a millisecond unless the session set another
// interval: PerfInfo/CollectionStart, or in logs before Windows 8, which
// have none, PerfInfo/SetInterval), and walks each sample's stack; the
// front door matches the walks to their samples (trace.Stacks), the
// kernel's Thread events say which process a sampled thread is in.
//
// Each sample counts one interval, whatever its Count: Microsoft documents
// that field as not used, TraceEvent and PerfView count every sample once,
// and it is 1 in every sample of the repository's logs (88,809). A garbled
// one would otherwise make one sample weigh up to 65,535. Its stack is the
// kernel frames, then the user frames, innermost first; a sample whose
// stack never came has the sampled address alone.

// ksample is a sample of an ETW trace waiting for its stack: a kernel
// CPU sample, or (clr) a sample of a runtime event, which takes the
// stack walked for ref, else for alt, else keeps its own.
type ksample struct {
	ip       uint64
	ref, alt trace.StackRef
	pid      int64
	set      bool
	drop     bool // of a process the profile leaves out
	clr      bool
}

// ksamples are the kernel samples by raw index, in blocks of chunk
// (raws's): growing copies nothing.
type ksamples struct {
	blocks [][]ksample
	n      int // raw index + 1 of the last sample
}

// at returns the kernel sample of raw i, nil when raw i is not one.
func (ks *ksamples) at(i int) *ksample {
	if i/chunk >= len(ks.blocks) || ks.blocks[i/chunk] == nil {
		return nil
	}
	if s := &ks.blocks[i/chunk][i%chunk]; s.set {
		return s
	}
	return nil
}

func (ks *ksamples) put(i int, s ksample) {
	for i/chunk >= len(ks.blocks) {
		ks.blocks = append(ks.blocks, nil)
	}
	if ks.blocks[i/chunk] == nil {
		ks.blocks[i/chunk] = make([]ksample, chunk)
	}
	s.set = true
	ks.blocks[i/chunk][i%chunk] = s
	ks.n = max(ks.n, i+1)
}

// kstate is a Builder's state for kernel samples.
type kstate struct {
	stacks   trace.Stacks
	interval int64 // nanoseconds per sample
	// started is set once a CollectionStart has given the interval, which
	// a SetInterval does not change then.
	started bool
	samples ksamples
	frames  []uint64
}

// maxInterval is the longest sampling interval the kernel takes, in 100 ns
// units: a second (xperf's -SetProfInt takes 1221 to 10,000,000). A longer
// one is garbled, and would make each sample hours long.
const maxInterval = 10_000_000

// defaultInterval is the kernel's default sampling interval, 1 ms.
const defaultInterval = 1_000_000

// The kernel classes a Builder reads: images and their PDBs go to the
// map (which decodes them), processes give their names, PerfInfo the
// samples and their interval.
var (
	imageClass    = kernelevents.ProviderImage.GUID()
	imageIDClass  = kernelevents.ProviderImageID.GUID()
	processClass  = kernelevents.ProviderProcess.GUID()
	perfInfoClass = kernelevents.ProviderPerfInfo.GUID()
)

// kernelEvent handles an event of kernelevents' of class (its provider
// GUID): processes' starts and names, images and their PDBs for the map, and for a
// CPU profile sample intervals and samples. Other classes are not decoded.
func (b *Builder) kernelEvent(e *trace.Event, class clrimpl.GUID) error {
	switch {
	case class == imageClass || class == imageIDClass:
		if b.o.Map != nil {
			return nil // the map is kept by its owner
		}
		return b.m.Add(e)
	case class == processClass, class == perfInfoClass && b.o.Kind == CPU:
	default:
		return nil
	}
	ev, err := e.Decode()
	if err != nil {
		return err
	}
	if v, ok := ev.(kernelevents.ProcessEvent); ok {
		if f := v.ProcessFields(); f.Kind == kernelevents.KindProcessStart || f.Kind == kernelevents.KindProcessDCStart {
			b.noteProcess(int64(f.ProcessID), e.Timestamp(), e.Time(), f.ImageFileName.String(), f.Kind == kernelevents.KindProcessDCStart)
		}
		return nil
	}
	k := &b.k
	switch v := ev.(type) {
	case kernelevents.CollectionStartEvent:
		if f := v.CollectionStartFields(); f.Source == 0 && f.NewInterval > 0 {
			if err := k.setInterval("CollectionStart", f.NewInterval); err != nil {
				return err
			}
			k.started = true
		}
	case kernelevents.SetIntervalEvent:
		// A session that sets the interval logs SetInterval as it sets it
		// and again as it stops and puts the old one back: without a
		// CollectionStart, the last one's OldInterval is the interval
		// the samples were taken at, as TraceLog takes it. (A log whose
		// interval changed midway is weighed by one interval, as
		// TraceEvent weighs it.)
		if f := v.SetIntervalFields(); f.SampleSource == 0 && f.OldInterval > 0 && !k.started {
			if err := k.setInterval("SetInterval", f.OldInterval); err != nil {
				return err
			}
		}
	case *kernelevents.PerfInfoSampleV2:
		pid := e.ProcessID() // -1 where no Thread event names the thread (yet): a stack walk or a later one may
		if pid >= 0 && !b.keep(pid) {
			b.leftOut(pid)
			return nil
		}
		ts := e.Timestamp()
		i := b.raws.add(raw{thread: b.thread(threadKey{pid, int64(v.ThreadID)}), ts: ts, v1: 1})
		k.samples.put(i, ksample{ip: v.InstructionPointer, ref: e.StackRef(), pid: pid})
	}
	return nil
}

// setInterval takes the sampling interval (100 ns units) an event of
// kind gives.
func (k *kstate) setInterval(kind string, v uint32) error {
	if v > maxInterval {
		return fmt.Errorf("%w: %s sets the sampling interval to %d × 100 ns, more than the second the kernel allows", ErrNotCredible, kind, v)
	}
	k.interval = int64(v) * 100
	return nil
}

// finishKernel gives each kernel sample its process, stack and time, and
// returns how many it dropped: samples whose process, known only now, is
// not the one the profile keeps.
func (b *Builder) finishKernel() (dropped int) {
	k := &b.k
	if k.samples.n == 0 {
		return 0
	}
	interval := k.interval
	if interval == 0 {
		interval = defaultInterval
	}
	for i := range k.samples.n {
		s := k.samples.at(i)
		if s == nil {
			continue
		}
		r := b.raws.at(i)
		if r.stack == takenBack {
			continue // left out already (an allocation tick of a process with AllocationSampled events)
		}
		if s.clr {
			b.walkedStack(s, r)
			continue
		}
		frames, wpid, walked := k.stacks.Stack(s.ref, k.frames[:0])
		k.frames = frames
		if s.pid < 0 {
			// The thread's process came after the sample (the rundown of
			// threads at the start of a trace takes a while), from the
			// walk or the Thread events.
			tid := b.threadKeys[r.thread].tid
			if walked && wpid >= 0 {
				s.pid = wpid
			} else {
				s.pid = k.stacks.ThreadProcess(tid)
			}
			if s.pid >= 0 {
				r.thread = b.thread(threadKey{s.pid, tid})
			}
		}
		if !b.keep(s.pid) {
			b.leftOut(s.pid)
			s.drop = true
			dropped++
			continue
		}
		if len(frames) == 0 {
			frames = append(frames, s.ip)
		}
		r.stack = b.intern(s.pid, frames)
		r.v1 *= interval
	}
	return dropped
}

// walkedStack gives a runtime event's sample r the stack walked for it,
// if one was.
func (b *Builder) walkedStack(s *ksample, r *raw) {
	k := &b.k
	for _, ref := range []trace.StackRef{s.ref, s.alt} {
		if ref == (trace.StackRef{}) {
			continue
		}
		frames, _, ok := k.stacks.Stack(ref, k.frames[:0])
		k.frames = frames
		if ok && len(frames) > 0 {
			// The sample keeps its label (the type an allocation made,
			// the exception a throw threw).
			r.stack = b.internLeaf(b.threadKeys[r.thread].pid, frames, b.leafOf(r.stack), b.stateOf(r.stack))
			return
		}
	}
}
