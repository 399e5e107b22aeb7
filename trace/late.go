package trace

import (
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/kernelevents"
)

// ended is what the end of an ETW log says of a thread or process that was
// running before the log's first event about it: its process (for a
// thread) or its executable's name, and when the log said so.
type ended struct {
	pid  uint32
	name string
	ts   int64
}

// endNames is what an ETW log says only at its end: the threads and
// processes its events came from before any Start or DCStart named them.
// A whole log's rundown names every running thread and process at its
// start; a circular log has lost that rundown (its first buffers were
// overwritten) and a cut one may have, and both name those threads and
// processes only in the rundown at their end (DCEnd) or when they end.
// TraceEvent answers the events before from those (its thread-to-process
// rundown map, looked up by the first end after the event); so do we.
type endNames struct {
	threads map[uint32]ended
	procs   map[int64]ended
	// rundownNames are the names of the files and registry keys (by
	// address) whose first naming event in the log is a rundown
	// (names.go), which TraceEvent gives them from the log's start.
	rundownNames map[uint64]string
}

// ends reads the log a second time, once, for its endNames; nil when the
// log cannot be read again (a stream read front to back) or when reading
// it fails. It is read on the first event whose thread no Start or
// DCStart has named: a whole log never has one.
func (r *Reader) ends() *endNames {
	if r.endsRead {
		return r.endNames
	}
	r.endsRead = true
	if r.et == nil {
		return nil
	}
	er, err := r.et.Reopen()
	if err != nil {
		return nil
	}
	defer er.Close()
	n := &endNames{threads: map[uint32]ended{}, procs: map[int64]ended{}}
	startedT := map[uint32]bool{}
	startedP := map[int64]bool{}
	var named firstNames
	for {
		ev, err := er.Next()
		if err != nil {
			break // io.EOF, or damage: what was read still counts
		}
		if ev.ProviderGUID == fileIOGUID && namesFile(ev.Opcode) || ev.ProviderGUID == registryGUID && ev.Opcode >= 10 && namesKey(ev.Opcode) {
			named.note(r.kernelOf(ev), ev.ProviderGUID == fileIOGUID && fileRundown(ev.Opcode) || ev.ProviderGUID == registryGUID && keyRundown(ev.Opcode))
			continue
		}
		if ev.ProviderGUID != threadGUID && ev.ProviderGUID != processGUID || ev.Opcode < 1 || ev.Opcode > 4 {
			continue
		}
		start := ev.Opcode == 1 || ev.Opcode == 3
		switch v := r.kernelOf(ev).(type) {
		case kernelevents.ThreadEvent:
			f := v.ThreadFields()
			switch _, known := n.threads[f.ThreadID]; {
			case start:
				startedT[f.ThreadID] = true
			case !startedT[f.ThreadID] && !known:
				n.threads[f.ThreadID] = ended{pid: f.ProcessID, ts: ev.Timestamp}
			}
		case kernelevents.ProcessEvent:
			f := v.ProcessFields()
			pid := int64(f.ProcessID)
			switch _, known := n.procs[pid]; {
			case start:
				startedP[pid] = true
			case !startedP[pid] && !known:
				n.procs[pid] = ended{name: f.ImageFileName.String(), ts: ev.Timestamp}
			}
		}
	}
	n.rundownNames = named.rundown
	r.endNames = n
	return n
}

// firstNames follows the naming events of a pass over a log for the
// addresses whose first name is a rundown's.
type firstNames struct {
	names   map[uint64]string // every address named so far
	rundown map[uint64]string // those a rundown named first
}

// note follows naming event v (a kernelevents value of kernelOf), a
// rundown if rundown.
func (f *firstNames) note(v any, rundown bool) {
	ev, ok := v.(clrimpl.Event)
	if !ok {
		return
	}
	addr, name, ok := nameOf(ev, func(a uint64) string { return f.names[a] })
	if !ok {
		return
	}
	if f.names == nil {
		f.names = map[uint64]string{}
	}
	if _, seen := f.names[addr]; !seen && rundown {
		if f.rundown == nil {
			f.rundown = map[uint64]string{}
		}
		f.rundown[addr] = name
	}
	f.names[addr] = name
}

// kernelOf decodes a kernel event of another pass over the log into a
// value of its own (the Reader's values belong to the event Next gave).
func (r *Reader) kernelOf(ev *etl.Event) any {
	res := r.resolveGUID(ev.ProviderGUID)
	ref := r.find(res.provs, classicID(ev), ev.Version, true)
	if !ref.ok() {
		return nil
	}
	v := r.eventType(ref).New()
	if _, err := v.Decode(ev.Payload, ev.PointerSize); err != nil {
		return nil
	}
	return v
}

// endedThread is the process of thread tid at time ts from the log's end
// (endNames), for a thread no Start or DCStart has named.
func (r *Reader) endedThread(tid uint32, ts int64) (pid int64, ok bool) {
	n := r.ends()
	if n == nil {
		return -1, false
	}
	t, ok := n.threads[tid]
	if !ok || ts > t.ts {
		return -1, false
	}
	return int64(t.pid), true
}

// endedProcess is the executable's name of process pid at time ts from the
// log's end (endNames), for a process no Start or DCStart has named; "" if
// none names it.
func (r *Reader) endedProcess(pid int64, ts int64) string {
	n := r.ends()
	if n == nil {
		return ""
	}
	if p, ok := n.procs[pid]; ok && ts <= p.ts {
		return p.name
	}
	return ""
}
