package profile

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/clrgo/clrevents/internal/numfmt"
)

// Processes of one ID (see the package doc): Add keeps the kernel's
// Process/Start and DCStart events, and Finish makes each ID's processes
// from them and gives each sample the process of its ID live at the
// sample's time. It is Finish that does it, by the samples' times, not
// Add by their order: the builder reads each thread's events in order,
// not the trace's, so a sample may come before the Process/Start of its
// process, and a kernel sample may learn its process only at Finish
// (finishKernel).

// Process is a process the samples of a profile are of.
type Process struct {
	// PID is the process's ID; -1 for samples whose process the trace
	// does not say.
	PID int64
	// Start is the process's start in Unix nanoseconds where the trace
	// records it (an ETW kernel Process/Start), 0 otherwise (a process
	// running before the trace began, a trace without kernel Process
	// events). With PID it tells apart the processes of one ID: it is
	// their Samples' ProcessStart.
	Start int64
	// Name is the executable's name where the trace gives it ("app.exe"),
	// else "".
	Name string
}

// procEvent is a kernel Process/Start or Process/DCStart, as Add keeps it
// for Finish.
type procEvent struct {
	ts    int64 // the event's timestamp, in the trace's clock
	start int64 // Process/Start: its time, Unix nanoseconds (Process.Start); 0 for DCStart
	pid   int64
	name  string
	dc    bool // a DCStart: a process running before the trace
}

// proc is a process of an ID as Finish makes it from the procEvents.
type proc struct {
	from  int64 // the timestamp it started at; math.MinInt64 before the trace
	start int64 // Process.Start
	name  string
}

// noteProcess keeps a kernel Process/Start (dc false) or DCStart of
// process pid at timestamp ts and time t.
func (b *Builder) noteProcess(pid, ts int64, t time.Time, name string, dc bool) {
	ev := procEvent{ts: ts, pid: pid, name: name, dc: dc}
	if !dc && !t.IsZero() {
		ev.start = t.UnixNano()
	}
	b.procEvents = append(b.procEvents, ev)
}

// processes makes each ID's processes from the kernel's Process events,
// in the order they started (by time, whatever order they were read
// in): a Process/Start begins one, after one running before the trace
// (unnamed unless a DCStart named it earlier) that has the ID's samples
// from before it; a DCStart names the ID's latest process, or begins
// the one running before the trace. Nil when the trace has no Process
// events.
func (b *Builder) processes() map[int64][]proc {
	if len(b.procEvents) == 0 {
		return nil
	}
	slices.SortStableFunc(b.procEvents, func(x, y procEvent) int {
		return cmp.Or(cmp.Compare(x.pid, y.pid), cmp.Compare(x.ts, y.ts))
	})
	out := map[int64][]proc{}
	for _, e := range b.procEvents {
		ps := out[e.pid]
		switch {
		case !e.dc:
			if len(ps) == 0 {
				ps = append(ps, proc{from: math.MinInt64})
			}
			ps = append(ps, proc{from: e.ts, start: e.start, name: e.name})
		case len(ps) == 0:
			ps = append(ps, proc{from: math.MinInt64, name: e.name})
		default:
			ps[len(ps)-1].name = e.name
		}
		out[e.pid] = ps
	}
	return out
}

// processNames is Profile.ProcessNames from the processes: each ID's
// latest process's name. Nil for none.
func processNames(procs map[int64][]proc) map[int64]string {
	if procs == nil {
		return nil
	}
	names := make(map[int64]string, len(procs))
	for pid, ps := range procs {
		names[pid] = ps[len(ps)-1].name
	}
	return names
}

// assignProcesses gives each sample of an ID that has processes
// (Builder.processes) the one live at the sample's time: a thread of an
// ID that had two processes becomes two threads (indices in threadKeys
// of one key), one of each process. Builder.threadProcs then has each
// thread's process. It runs at Finish, once the kernel samples have
// their processes (finishKernel), and allocates nothing by sample.
func (b *Builder) assignProcesses(procs map[int64][]proc) {
	if procs == nil {
		return
	}
	n := len(b.threadKeys)
	lists := make([][]proc, n) // by thread: its ID's processes, nil when none
	b.threadProcs = make([]*proc, n)
	scan := false
	for t, k := range b.threadKeys {
		ps := procs[k.pid]
		switch {
		case len(ps) == 1:
			b.threadProcs[t] = &ps[0] // one process, from before the trace
		case len(ps) > 1:
			lists[t] = ps
			scan = true
		}
	}
	if !scan {
		return
	}
	var split map[uint64]uint32 // (thread, process) → the thread of that process, where it is a new one
	for _, blk := range b.raws.blocks {
		for i := range blk {
			r := &blk[i]
			t := r.thread
			ps := lists[t]
			if ps == nil {
				continue
			}
			j := len(ps) - 1
			for ps[j].from > r.ts { // ps[0] is from math.MinInt64
				j--
			}
			switch p := &ps[j]; {
			case b.threadProcs[t] == nil:
				b.threadProcs[t] = p
			case b.threadProcs[t] != p:
				key := uint64(t)<<32 | uint64(j)
				nt, ok := split[key]
				if !ok {
					if split == nil {
						split = map[uint64]uint32{}
					}
					nt = uint32(len(b.threadKeys))
					b.threadKeys = append(b.threadKeys, b.threadKeys[t])
					b.threadProcs = append(b.threadProcs, p)
					split[key] = nt
				}
				r.thread = nt
			}
		}
	}
}

// processStart is the start of thread t's process (Process.Start).
func (b *Builder) processStart(t uint32) int64 {
	if int(t) < len(b.threadProcs) && b.threadProcs[t] != nil {
		return b.threadProcs[t].start
	}
	return 0
}

// profileProcesses is Profile.Processes: the processes of the samples,
// which are in process order.
func profileProcesses(samples []Sample, procs map[int64][]proc, names map[int64]string) []Process {
	var out []Process
	for i := range samples {
		s := &samples[i]
		if len(out) > 0 && out[len(out)-1].PID == s.PID && out[len(out)-1].Start == s.ProcessStart {
			continue
		}
		p := Process{PID: s.PID, Start: s.ProcessStart, Name: names[s.PID]}
		if ps, ok := procs[s.PID]; ok {
			p.Name = ""
			for _, x := range ps {
				if x.start == s.ProcessStart {
					p.Name = x.name
					break
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// procKey is a process as the writers tell them apart: its ID and start
// (Sample.PID and ProcessStart).
type procKey struct{ pid, start int64 }

// procFrames names the processes of a profile's samples for the writers.
type procFrames struct {
	p *Profile
	// rooted: the samples are of more than one process, and the writers
	// start each stack with its process's frame.
	rooted bool
	// reused are the IDs of more than one process of the samples, whose
	// frames name their starts.
	reused map[int64]bool
	names  map[procKey]procName // made once a process
}

// procName is a process's frame and executable's name.
type procName struct{ frame, exe string }

// procFrames looks at the processes of p's samples.
func (p *Profile) procFrames() *procFrames {
	f := &procFrames{p: p}
	var first map[int64]int64 // an ID's first start seen
	var prev procKey
	for i := range p.Samples {
		s := &p.Samples[i]
		k := procKey{s.PID, s.ProcessStart}
		if i > 0 && k == prev {
			continue // the samples of a process are together (Profile.Samples)
		}
		if i > 0 {
			f.rooted = true
		}
		prev = k
		if first == nil {
			first = map[int64]int64{}
		}
		if st, ok := first[k.pid]; !ok {
			first[k.pid] = k.start
		} else if st != k.start {
			if f.reused == nil {
				f.reused = map[int64]bool{}
			}
			f.reused[k.pid] = true
		}
	}
	return f
}

// exe is the executable's name of process k, "" when the trace does not
// give it: its Profile.Processes entry's, else (a profile whose Processes
// do not list it) its ID's in ProcessNames.
func (p *Profile) exe(k procKey) string {
	for _, x := range p.Processes {
		if x.PID == k.pid && x.Start == k.start {
			return x.Name
		}
	}
	return p.ProcessNames[k.pid]
}

// name is process k's frame: "test.exe (3644)", "process 3644" when the
// trace does not name it, "process unknown" when it does not say which
// process a sample is of; where the samples have another process of its
// ID, with its start, as the GC and JIT reports tell them apart: "test.exe
// (3644, started at 3.000 ms)" from the profile's start (StartNanos),
// "process 3644 (start not in the trace)".
func (f *procFrames) name(k procKey) string { return f.lookup(k).frame }

// exe is the executable's name of process k (Profile.exe).
func (f *procFrames) exe(k procKey) string { return f.lookup(k).exe }

func (f *procFrames) lookup(k procKey) procName {
	if n, ok := f.names[k]; ok {
		return n
	}
	id := strconv.FormatInt(k.pid, 10)
	n := procName{exe: f.p.exe(k)}
	switch {
	case k.pid < 0:
		n.frame = "process unknown"
	case f.reused[k.pid]:
		var start time.Time
		if k.start != 0 {
			start = time.Unix(0, k.start)
		}
		started := numfmt.Started(time.Unix(0, f.p.StartNanos), start)
		if n.exe != "" {
			n.frame = n.exe + " (" + id + ", " + started + ")"
		} else {
			n.frame = "process " + id + " (" + started + ")"
		}
	case n.exe != "":
		n.frame = n.exe + " (" + id + ")"
	default:
		n.frame = "process " + id
	}
	if f.names == nil {
		f.names = map[procKey]procName{}
	}
	f.names[k] = n
	return n
}
