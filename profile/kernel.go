package profile

import (
	"github.com/clrgo/clrevents/etl"
)

// CPU samples of an ETW trace. A kernel session samples every processor
// (PerfInfo/Sample, once a millisecond unless the session set another
// interval: PerfInfo/CollectionStart) and walks each sample's stack: the
// frames come in a StackWalk/Stack event, or as keys of frames the kernel
// cached (StackKeyKernel for the kernel-mode part, StackKeyUser for the
// user-mode part), whose frames a KeyDelete or KeyRundown event gives
// later (or a KeyCreate earlier). A stack event names its sample by the
// sample's timestamp and thread. A sample carries a thread, not a process:
// the kernel's Thread events say which process a thread is in.
//
// Each sample counts the interval times its Count, and its stack is the
// kernel frames, then the user frames, innermost first; a sample whose
// stack never came has the sampled address alone.

// ksample is a kernel CPU sample waiting for its stack.
type ksample struct {
	ip           uint64
	pid          int64
	count        int64  // the samples it stands for
	kernel, user uint32 // part index + 1; 0 when not (yet) known
	set          bool
	drop         bool // of a process the profile leaves out
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

type kkey struct {
	ts  int64
	tid uint32
}

type kwait struct {
	raw    int32
	kernel bool
}

// kstate is a Builder's state for kernel samples.
type kstate struct {
	threads  map[uint32]int64 // thread ID -> process ID
	interval int64            // nanoseconds per sample
	samples  ksamples
	pending  map[kkey]int32 // sample (timestamp, thread) -> raw index
	waiting  map[uint64][]kwait
	created  map[uint64]uint32 // keys defined by KeyCreate: part index + 1
	partIPs  []uint64
	partOffs []uint32
	frames   []uint64
}

// defaultInterval is the kernel's default sampling interval, 1 ms.
const defaultInterval = 1_000_000

// kernelEvent handles a kernel event of an ETW trace: threads, sample
// intervals, samples and their stacks for a CPU profile, images for the
// map. It reports whether the event was one of those.
func (b *Builder) kernelEvent(x *etl.Event) (bool, error) {
	if x.ProviderGUID == etl.ImageIDGUID {
		return true, b.m.AddETL(x) // an image's PDB
	}
	switch x.KernelGroup() {
	case etl.GroupImage:
		return true, b.m.AddETL(x)
	case etl.GroupProcess:
		if x.IsKernel(etl.GroupProcess, etl.OpStart) || x.IsKernel(etl.GroupProcess, etl.OpDCStart) {
			pr, err := etl.ParseProcess(x)
			if err != nil {
				return true, err
			}
			if b.procNames == nil {
				b.procNames = map[int64]string{}
			}
			b.procNames[int64(pr.ProcessID)] = pr.ImageFileName
			return true, nil
		}
		return false, nil
	case etl.GroupThread, etl.GroupPerfInfo, etl.GroupStackWalk:
	default:
		return false, nil
	}
	if b.o.Kind != CPU || !x.IsKernel(x.KernelGroup(), -1) {
		return false, nil
	}
	k := &b.k
	if k.threads == nil {
		k.threads = map[uint32]int64{}
		k.pending = map[kkey]int32{}
		k.waiting = map[uint64][]kwait{}
		k.created = map[uint64]uint32{}
		k.partOffs = []uint32{0}
	}
	switch x.KernelGroup() {
	case etl.GroupThread:
		if x.Opcode == etl.OpStart || x.Opcode == etl.OpDCStart {
			t, err := etl.ParseThread(x)
			if err != nil {
				return true, err
			}
			k.threads[t.ThreadID] = int64(t.ProcessID)
		}
	case etl.GroupPerfInfo:
		switch x.Opcode {
		case etl.OpCollectionStart:
			iv, err := etl.ParseSampleInterval(x)
			if err != nil {
				return true, err
			}
			if iv.Source == 0 && iv.NewInterval > 0 {
				k.interval = int64(iv.NewInterval) * 100
			}
		case etl.OpSampledProfile:
			s, err := etl.ParseSampledProfile(x)
			if err != nil {
				return true, err
			}
			pid, ok := k.threads[s.ThreadID]
			if !ok {
				pid = -1 // until a stack walk or a later Thread event says
			}
			if ok && !b.keep(pid) {
				b.leftOut(pid)
				return true, nil
			}
			ts := x.Timestamp
			b.span(ts)
			c := int64(max(s.Count, 1))
			i := b.raws.add(raw{thread: b.thread(threadKey{pid, int64(s.ThreadID)}), ts: ts, v1: c})
			k.samples.put(i, ksample{ip: s.IP, pid: pid, count: c})
			k.pending[kkey{ts, s.ThreadID}] = int32(i)
		}
	case etl.GroupStackWalk:
		switch x.Opcode {
		case etl.OpStack, etl.OpStackKeyKernel, etl.OpStackKeyUser:
			ref, err := etl.ParseStackRef(x)
			if err != nil {
				return true, err
			}
			i, ok := k.pending[kkey{ref.EventTimestamp, ref.ThreadID}]
			if !ok {
				return true, nil // the stack of another kind of event
			}
			if s := k.samples.at(int(i)); s.pid < 0 {
				s.pid = int64(ref.ProcessID)
			}
			if ref.HasFrames() {
				k.frames = ref.Frames(k.frames[:0])
				if len(k.frames) == 0 {
					return true, nil
				}
				part := k.addPart(k.frames)
				if isKernelAddr(k.frames[0], x.PointerSize) {
					k.samples.at(int(i)).kernel = part
				} else {
					k.samples.at(int(i)).user = part
				}
			} else if part, ok := k.created[ref.Key]; ok {
				k.assign(kwait{raw: i, kernel: ref.Kernel}, part)
			} else {
				k.waiting[ref.Key] = append(k.waiting[ref.Key], kwait{raw: i, kernel: ref.Kernel})
			}
			if !ref.Kernel && !ref.HasFrames() {
				delete(k.pending, kkey{ref.EventTimestamp, ref.ThreadID}) // the user part comes last
			}
		case etl.OpKeyCreate, etl.OpKeyDelete, etl.OpKeyRundown:
			def, err := etl.ParseStackDef(x)
			if err != nil {
				return true, err
			}
			w, waiting := k.waiting[def.Key]
			if !waiting && x.Opcode != etl.OpKeyCreate {
				delete(k.created, def.Key)
				return true, nil
			}
			k.frames = def.Frames(k.frames[:0])
			part := k.addPart(k.frames)
			for _, r := range w {
				k.assign(r, part)
			}
			delete(k.waiting, def.Key)
			if x.Opcode == etl.OpKeyCreate {
				k.created[def.Key] = part
			} else {
				delete(k.created, def.Key)
			}
		}
	}
	return true, nil
}

// isKernelAddr reports whether an address is in kernel space.
func isKernelAddr(a uint64, ptrSize int) bool {
	if ptrSize == 4 {
		return a >= 0x80000000
	}
	return a >= 0xFFFF800000000000
}

func (k *kstate) addPart(frames []uint64) uint32 {
	k.partIPs = append(k.partIPs, frames...)
	k.partOffs = append(k.partOffs, uint32(len(k.partIPs)))
	return uint32(len(k.partOffs) - 1) // index + 1
}

func (k *kstate) part(p uint32) []uint64 {
	if p == 0 {
		return nil
	}
	return k.partIPs[k.partOffs[p-1]:k.partOffs[p]]
}

func (k *kstate) assign(w kwait, part uint32) {
	if w.kernel {
		k.samples.at(int(w.raw)).kernel = part
	} else {
		k.samples.at(int(w.raw)).user = part
	}
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
	var ips []uint64
	for i := range k.samples.n {
		s := k.samples.at(i)
		if s == nil {
			continue
		}
		r := b.raws.at(i)
		if s.pid < 0 {
			// The thread's process came after the sample (the rundown of
			// threads at the start of a trace takes a while).
			tid := b.threadKeys[r.thread].tid
			if pid, ok := k.threads[uint32(tid)]; ok {
				s.pid = pid
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
		ips = append(append(ips[:0], k.part(s.kernel)...), k.part(s.user)...)
		if len(ips) == 0 {
			ips = append(ips, s.ip)
		}
		r.stack = b.intern(s.pid, ips)
		r.v1 *= interval
	}
	return dropped
}
