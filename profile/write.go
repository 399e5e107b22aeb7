package profile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/clrgo/clrevents/symbols"
)

// main is the index of the value folded stacks and speedscope show: the
// last sample type, as pprof's default.
func (p *Profile) main() int { return len(p.SampleTypes) - 1 }

// frameName is a frame as folded stacks and speedscope print it:
// module!Namespace.Method(Signature), "?!?" when unresolved.
func (p *Profile) frameName(f symbols.FrameID) string { return p.Map.Frame(f).String() }

// rooted reports whether the writers start each stack with its process's
// frame: when the samples come from more than one process (see the
// package doc, "Frames and processes"), two processes of one ID (one PID,
// two ProcessStarts) among them.
func (p *Profile) rooted() bool { return p.procFrames().rooted }

// Folded returns the profile as folded stacks: each distinct stack (frame
// names joined by ';', root first) with the sum of its main value over
// every thread, zero sums left out. When the samples come from more than
// one process (an ETW trace of a whole machine), each stack starts with
// its process, "Idle (0);ntoskrnl!?" (see "Frames and processes" in the
// package doc).
func (p *Profile) Folded() map[string]int64 {
	vi := p.main()
	procs := p.procFrames()
	multi := procs.rooted
	names := make([]string, p.Stacks.Len())
	frameNames := make([]string, p.Map.NumFrames())
	out := make(map[string]int64, len(p.Samples)/4)
	var buf []byte
	for _, s := range p.Samples {
		if s.Values[vi] == 0 {
			continue
		}
		n := names[s.Stack]
		if n == "" && s.Stack != 0 {
			frames := p.Stacks.Frames(s.Stack)
			size := len(frames) - 1
			for _, f := range frames {
				fn := frameNames[f]
				if fn == "" {
					fn = p.frameName(f)
					frameNames[f] = fn
				}
				size += len(fn)
			}
			buf = slices.Grow(buf[:0], size)
			for i, f := range frames {
				if i > 0 {
					buf = append(buf, ';')
				}
				buf = append(buf, frameNames[f]...)
			}
			n = string(buf)
			names[s.Stack] = n
		}
		if multi {
			pn := procs.name(procKey{s.PID, s.ProcessStart})
			if n == "" {
				n = pn
			} else {
				n = pn + ";" + n
			}
		}
		out[n] = addSat(out[n], s.Values[vi])
	}
	return out
}

// WriteFolded writes folded stacks, `frame;frame;...;leaf VALUE` a line,
// root first, sorted by stack.
func (p *Profile) WriteFolded(w io.Writer) error {
	f := p.Folded()
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		bw.WriteString(k)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(f[k], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Pprof returns the profile in pprof's form: one Mapping per module, one
// Location per frame, Function names as the folded form prints them
// (module!Namespace.Method(Signature), module!? for native code in a
// known image, ?!? for an unresolved frame, which keeps its address and
// has no mapping), and the thread and process as numeric labels "thread"
// and "pid" (units "thread" and "pid") and the executable, where the trace
// names it, as label "process". A SampleProfiler sample's State is its
// label "state", "managed" or "external" (go tool pprof -tagfocus
// state=managed keeps the time in managed code), and its profile's
// sample and period type is "wall", not "cpu": the runtime samples
// threads that wait too. When the samples come from more than one process, each
// sample's outermost location is its process (see "Frames and processes"
// in the package doc).
//
// A mapping whose functions the trace named (a managed module's, a native
// image's symbols in a universal trace) has HasFunctions set; one that
// holds a native frame ("module!?": an address in an image the trace
// names, no function) has not, so that pprof symbolizes its addresses
// from the image's file, which it finds by the mapping's path or build ID
// (PPROF_BINARY_PATH, a symbol server); where it cannot, the frame keeps
// its name. pprof then resymbolizes the mapping's named frames too.
//
// The first Mapping is what pprof calls the main binary ("File:" in go
// tool pprof's header): for a profile of one process whose executable the
// trace names, that executable's mapping; otherwise a mapping without a
// file, so that pprof names none (a trace of a whole machine has no main
// binary, and an EventPipe trace does not name its executable).
func (p *Profile) Pprof() *profile.Profile {
	out := &profile.Profile{TimeNanos: p.StartNanos, DurationNanos: p.DurationNanos}
	for _, t := range p.SampleTypes {
		out.SampleType = append(out.SampleType, &profile.ValueType{Type: t.Type, Unit: t.Unit})
	}
	if p.Kind == CPU {
		// The main value's: cpu (nanoseconds; a universal trace's
		// weighted samples, see universal.go, have no time), or wall for
		// the SampleProfiler's thread time.
		main := p.SampleTypes[p.main()]
		out.PeriodType = &profile.ValueType{Type: main.Type, Unit: main.Unit}
		out.Period = p.PeriodNanos
	}
	out.DefaultSampleType = p.SampleTypes[p.main()].Type
	mappings := map[string]*profile.Mapping{}
	functions := map[string]*profile.Function{}
	// A function has its Name alone, no SystemName: pprof takes a name
	// whose SystemName is the same for one still to demangle, and cuts
	// what looks like C++'s parameters and template arguments out of it,
	// which merges .NET's overloads (Visit(class …IEnumerable`1<…>) and
	// Visit(…) became one Visit).
	function := func(name, file string) *profile.Function {
		fn := functions[name]
		if fn == nil {
			fn = &profile.Function{ID: uint64(len(out.Function) + 1), Name: name, Filename: file}
			functions[name] = fn
			out.Function = append(out.Function, fn)
		}
		return fn
	}
	locs := map[symbols.FrameID]*profile.Location{}
	location := func(id symbols.FrameID) *profile.Location {
		if l := locs[id]; l != nil {
			return l
		}
		f := p.Map.Frame(id)
		l := &profile.Location{ID: uint64(len(out.Location) + 1), Address: f.Address}
		if f.Reason == symbols.Resolved || f.Reason == symbols.Native {
			mk := f.ModulePath
			if mk == "" {
				mk = f.Module
			}
			if mk != "" {
				key := mk
				if f.ImageEnd != 0 {
					key += "@" + strconv.FormatUint(f.ImageBase, 16) // an image may be mapped at other bases
				}
				m := mappings[key]
				if m == nil {
					m = &profile.Mapping{ID: uint64(len(out.Mapping) + 1), File: mk, BuildID: f.BuildID,
						Start: f.ImageBase, Limit: f.ImageEnd, Offset: f.ImageOffset, HasFunctions: true}
					mappings[key] = m
					out.Mapping = append(out.Mapping, m)
				}
				if f.Reason == symbols.Native && m.Limit > m.Start {
					// An address no symbol named: the mapping is not
					// symbolized, and pprof symbolizes it from its file
					// (found by its path or build ID), keeping our name
					// where it cannot.
					m.HasFunctions = false
				}
				l.Mapping = m
			}
			l.Line = []profile.Line{{Function: function(f.String(), f.ModulePath)}}
		} else {
			l.Line = []profile.Line{{Function: function(f.String(), "")}}
		}
		locs[id] = l
		out.Location = append(out.Location, l)
		return l
	}
	procs := p.procFrames()
	rooted := procs.rooted
	procLocs := map[procKey]*profile.Location{}
	for _, s := range p.Samples {
		pk := procKey{s.PID, s.ProcessStart}
		frames := p.Stacks.Frames(s.Stack)
		ls := make([]*profile.Location, 0, len(frames)+1)
		for i := len(frames) - 1; i >= 0; i-- { // pprof lists the leaf first
			ls = append(ls, location(frames[i]))
		}
		if rooted {
			l := procLocs[pk]
			if l == nil {
				l = &profile.Location{ID: uint64(len(out.Location) + 1),
					Line: []profile.Line{{Function: function(procs.name(pk), "")}}}
				procLocs[pk] = l
				out.Location = append(out.Location, l)
			}
			ls = append(ls, l)
		}
		ps := &profile.Sample{
			Location: ls,
			Value:    append([]int64(nil), s.Values...),
			NumLabel: map[string][]int64{"thread": {s.TID}, "pid": {s.PID}},
			// The unit pprof would infer (the key), stated: a numeric
			// label of 0 without a unit (the idle process and thread)
			// does not survive pprof's encoding.
			NumUnit: map[string][]string{"thread": {"thread"}, "pid": {"pid"}},
		}
		if n := procs.exe(pk); n != "" {
			ps.Label = map[string][]string{"process": {n}}
		}
		if s.State != StateNone {
			if ps.Label == nil {
				ps.Label = map[string][]string{}
			}
			ps.Label["state"] = []string{s.State.String()}
		}
		out.Sample = append(out.Sample, ps)
	}
	out.Mapping = p.mainFirst(out.Mapping, procs)
	return out
}

// mainFirst puts first the mapping pprof takes for the main binary (see
// Pprof) and numbers the mappings again.
func (p *Profile) mainFirst(ms []*profile.Mapping, procs *procFrames) []*profile.Mapping {
	main := &profile.Mapping{HasFunctions: true} // no file: pprof names none
	if !procs.rooted && len(p.Samples) > 0 {
		if exe := procs.exe(procKey{p.Samples[0].PID, p.Samples[0].ProcessStart}); exe != "" {
			main = &profile.Mapping{File: exe, HasFunctions: true} // unless a mapping of the executable holds samples
			for i, m := range ms {
				if strings.EqualFold(baseName(m.File), exe) {
					main = m
					ms = slices.Delete(ms, i, i+1)
					break
				}
			}
		}
	}
	ms = slices.Insert(ms, 0, main)
	for i, m := range ms {
		m.ID = uint64(i + 1)
	}
	return ms
}

// baseName is a path's last element, whether its separators are Windows'
// or not.
func baseName(path string) string {
	return path[strings.LastIndexAny(path, `/\`)+1:]
}

// WritePprof writes the gzipped protocol buffer go tool pprof reads.
func (p *Profile) WritePprof(w io.Writer) error {
	return p.Pprof().Write(w)
}

// speedscope's file format (https://www.speedscope.app/file-format-schema.json).
type ssFile struct {
	Schema             string      `json:"$schema"`
	Shared             ssShared    `json:"shared"`
	Profiles           []ssProfile `json:"profiles"`
	Name               string      `json:"name,omitempty"`
	ActiveProfileIndex int         `json:"activeProfileIndex"`
	Exporter           string      `json:"exporter"`
}

type ssShared struct {
	Frames []ssFrame `json:"frames"`
}

type ssFrame struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
}

type ssProfile struct {
	Type       string  `json:"type"`
	Name       string  `json:"name"`
	Unit       string  `json:"unit"`
	StartValue int64   `json:"startValue"`
	EndValue   int64   `json:"endValue"`
	Samples    [][]int `json:"samples"`
	Weights    []int64 `json:"weights"`
}

// ssUnit maps a pprof unit to one of speedscope's.
func ssUnit(u string) string {
	switch u {
	case "nanoseconds", "bytes":
		return u
	}
	return "none"
}

// WriteSpeedscope writes speedscope's JSON: one sampled profile per thread
// (weights are the main value), frames shared and named as the folded
// form names them; a thread's Samples of one stack in two States are one
// sample. When the samples come from more than one process, each
// sample's first frame is its process (see "Frames and processes" in the
// package doc).
func (p *Profile) WriteSpeedscope(w io.Writer) error {
	vi := p.main()
	procs := p.procFrames()
	f := ssFile{Schema: "https://www.speedscope.app/file-format-schema.json", Name: p.Name,
		Exporter: "clrevents", Shared: ssShared{Frames: []ssFrame{}}, Profiles: []ssProfile{}}
	frameIdx := map[string]int{}
	frame := func(name, file string) int {
		j, ok := frameIdx[name]
		if !ok {
			j = len(f.Shared.Frames)
			frameIdx[name] = j
			f.Shared.Frames = append(f.Shared.Frames, ssFrame{Name: name, File: file})
		}
		return j
	}
	// A thread of a process (two processes of one ID may have threads
	// of one ID too).
	type procThread struct {
		proc procKey
		tid  int64
	}
	byThread := map[procThread]int{}
	// The sample of a thread's stack (its profile's, and its index there),
	// where the stack's Samples are in more than one State.
	type threadStack struct {
		k     procThread
		stack symbols.StackID
	}
	var byStack map[threadStack]int
	for _, s := range p.Samples {
		if s.Values[vi] == 0 {
			continue
		}
		pk := procKey{s.PID, s.ProcessStart}
		k := procThread{pk, s.TID}
		pi, ok := byThread[k]
		if !ok {
			pi = len(f.Profiles)
			byThread[k] = pi
			f.Profiles = append(f.Profiles, ssProfile{Type: "sampled", Unit: ssUnit(p.SampleTypes[vi].Unit),
				Name: fmt.Sprintf("%s: %s, thread %d", p.Kind, procs.name(pk), s.TID), Samples: [][]int{}, Weights: []int64{}})
		}
		pr := &f.Profiles[pi]
		if s.State != StateNone {
			if byStack == nil {
				byStack = map[threadStack]int{}
			}
			ts := threadStack{k, s.Stack}
			if j, ok := byStack[ts]; ok {
				pr.Weights[j] = addSat(pr.Weights[j], s.Values[vi])
				pr.EndValue = addSat(pr.EndValue, s.Values[vi])
				continue
			}
			byStack[ts] = len(pr.Samples)
		}
		frames := p.Stacks.Frames(s.Stack)
		stack := make([]int, 0, len(frames)+1)
		if procs.rooted {
			stack = append(stack, frame(procs.name(pk), ""))
		}
		for _, fr := range frames {
			fm := p.Map.Frame(fr)
			stack = append(stack, frame(fm.String(), fm.ModulePath))
		}
		pr.Samples = append(pr.Samples, stack)
		pr.Weights = append(pr.Weights, s.Values[vi])
		pr.EndValue = addSat(pr.EndValue, s.Values[vi])
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(&f); err != nil {
		return err
	}
	return bw.Flush()
}
