package trace

import (
	"strconv"

	"github.com/clrgo/clrevents/dynamic"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/nettrace"
)

// Event.Task and Event.Opcode, and the tasks and opcodes of EventPipe
// events that neither the trace nor a generated type gives:
// TplEventSource's declarations (tpl.go), or the opcode a name implies.
// (In a file after reader.go, so that the accessors and Next that every
// reader of events calls stay where they were in the binary: where code
// lands moved them by 5%, BENCHMARKS.md, twentieth session.)

// Task is the event's task: from the ETW header, or for EventPipe, which
// records none, from its generated type (Type), or for the Task Parallel
// Library's events, from TplEventSource's declarations (as TraceEvent
// gives them); 0 when unknown.
func (e *Event) Task() uint16 {
	if e.et != nil {
		return e.et.Task
	}
	if d := e.typeDescriptor(); d != nil {
		return d.Task
	}
	return declaredTask(e.nt.Metadata)
}

// Opcode is the event's opcode, from the trace, or, where the trace does
// not record it (EventPipe metadata before NetTrace V5 never does), from
// its generated type, or for the Task Parallel Library's events from
// TplEventSource's declarations (TaskStarted is a Start). Another
// EventPipe event of no generated type whose metadata gives no opcode
// takes the one its name implies, as TraceEvent gives it: Start (1) for a
// name that ends in "Start", Stop (2) for one that ends in "Stop", in any
// case (EventSource makes an event so named a Start or Stop event, and its
// activities depend on the pair). Name keeps the name as the trace gives
// it ("RequestStart"; TraceEvent shows "Request/Start").
func (e *Event) Opcode() uint8 {
	if e.et != nil {
		return e.et.Opcode
	}
	op := e.nt.Opcode
	if m := e.nt.Metadata; op == 0 && (m == nil || !m.HasOpcode) {
		if d := e.typeDescriptor(); d != nil {
			op = uint8(d.Opcode)
		} else {
			op = declaredOpcode(m)
		}
	}
	return op
}

// declaredOpcode is the opcode of an EventPipe event of metadata m (nil
// when none) that neither the trace nor a generated type gives.
func declaredOpcode(m *nettrace.Metadata) uint8 {
	if m == nil {
		return 0
	}
	if m.Provider == tplProvider {
		if t, ok := tplEvent(m.EventID); ok {
			return t.opcode
		}
	}
	return impliedOpcode(m.Name)
}

// declaredTask is the task of an EventPipe event of metadata m (nil when
// none) that no generated type gives: TplEventSource's, else 0.
func declaredTask(m *nettrace.Metadata) uint16 {
	if m != nil && m.Provider == tplProvider {
		if t, ok := tplEvent(m.EventID); ok {
			return t.task
		}
	}
	return 0
}

// The standard ETW opcodes that a name implies (impliedOpcode) and
// TplEventSource declares (tpl.go): the generated packages' own.
const (
	opcodeStart = uint8(kernelevents.OpcodeStart)
	opcodeStop  = uint8(kernelevents.OpcodeStop)
	opcodeSend  = uint8(kernelevents.OpcodeSend)
)

// impliedOpcode is the opcode an EventSource event's name implies: Start
// or Stop for a name that ends so (in any case), else 0.
func impliedOpcode(name string) uint8 {
	switch {
	case endsFold(name, "start"):
		return opcodeStart
	case endsFold(name, "stop"):
		return opcodeStop
	}
	return 0
}

// endsFold reports whether s ends with lower, a lower-case ASCII word, in
// any case of its ASCII letters.
func endsFold(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	s = s[len(s)-len(lower):]
	for i := 0; i < len(lower); i++ {
		if s[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// DisplayName is the name TraceEvent shows for the event, its "Task/Opcode"
// form: the generated type's ("GC/Start" for GCStart_V2), a kernel
// event's (Name), and for an EventPipe event of no generated type the
// name TraceEvent makes from its metadata: the event's name, less a
// "Start" or "Stop" that its Start or Stop opcode (recorded or implied,
// see Opcode) repeats, then "/" and the opcode's name (Start, Stop,
// DataCollectionStart, DataCollectionStop, Extension, Reply, Resume,
// Suspend, Transfer, else its number) unless the opcode is 0:
// "RequestStart" is "Request/Start", an event named "TestEvent3" of
// opcode 24 "TestEvent3/24". The Task Parallel Library's events have the
// names TraceEvent's parser for them gives ("TaskExecute/Start" for
// TaskStarted). An event with no name is "EventID(N)". Name stays the
// name the trace or the type gives; DisplayName is for matching what
// PerfView shows. Its strings are made once per kind of event.
//
// TraceEvent's parser of the runtime's events has no template for a few
// of them (IncreaseMemoryPressure and DecreaseMemoryPressure among them),
// and names those by the format: from the manifest's task name in an ETW
// log ("GarbageCollection/IncreaseMemoryPressure"), by the task alone in
// an EventPipe trace ("GC"). DisplayName gives the generated type's,
// "GC/IncreaseMemoryPressure", for both; match such an event by its
// Name ("IncreaseMemoryPressure"), which clrdump's -event matches too.
func (e *Event) DisplayName() string {
	if e.nt == nil {
		if d := e.typeDescriptor(); d != nil && e.res.kernel == nil && e.res.class == nil {
			return d.DisplayName
		}
		if n := e.Name(); n != "" {
			return n
		}
		return "EventID(" + strconv.Itoa(int(e.ID())) + ")"
	}
	if d := e.typeDescriptor(); d != nil {
		return d.DisplayName
	}
	m, op := e.nt.Metadata, e.Opcode()
	if e.r == nil || m == nil {
		return eventPipeDisplayName(m, e.nt.Name, e.nt.ID, op)
	}
	k := displayKey{m, op} // the metadata gives the name and event ID
	if s, ok := e.r.displayNames[k]; ok {
		return s
	}
	s := eventPipeDisplayName(m, e.nt.Name, e.nt.ID, op)
	if e.r.displayNames == nil {
		e.r.displayNames = make(map[displayKey]string)
	}
	if len(e.r.displayNames) < maxDisplayNames {
		e.r.displayNames[k] = s
	}
	return s
}

// displayKey is what an EventPipe event's DisplayName depends on: its
// metadata, and its opcode (a V6 label list may override the metadata's).
type displayKey struct {
	m  *nettrace.Metadata
	op uint8
}

// maxDisplayNames bounds the Reader's cache of display names: a trace
// names its events in its metadata, which a damaged or hostile trace can
// make endless.
const maxDisplayNames = 1 << 14

// eventPipeDisplayName is DisplayName for an EventPipe event of metadata m
// (nil when none), name and event ID id, with opcode op, that has no
// generated type.
func eventPipeDisplayName(m *nettrace.Metadata, name string, id uint16, op uint8) string {
	if m != nil && m.Provider == tplProvider {
		if t, ok := tplEvent(m.EventID); ok && int(t.task) < len(tplTaskNames) && tplTaskNames[t.task] != "" && op == t.opcode {
			// The parser names opcode 9 Send, as the EventSource declares
			// it (the enumeration names it Transfer).
			if op == opcodeSend {
				return tplTaskNames[t.task] + "/Send"
			}
			return tplTaskNames[t.task] + "/" + opcodeName(op)
		}
	}
	if name == "" {
		return "EventID(" + strconv.Itoa(int(id)) + ")"
	}
	// The name is trimmed by the metadata's opcode, or the one its name
	// implies; a V6 label's opcode changes only the suffix.
	mop := uint8(0)
	if m != nil && m.HasOpcode {
		mop = m.Opcode
	} else {
		mop = impliedOpcode(name)
	}
	switch {
	case mop == opcodeStart && endsFold(name, "start"):
		name = name[:len(name)-len("start")]
	case mop == opcodeStop && endsFold(name, "stop"):
		name = name[:len(name)-len("stop")]
	}
	if op == 0 {
		return name
	}
	return name + "/" + opcodeName(op)
}

// opcodeName is the name TraceEvent gives an EventPipe event's opcode: the
// standard ETW opcodes' names in its enumeration, else the number.
func opcodeName(op uint8) string {
	if int(op) < len(opcodeNames) {
		return opcodeNames[op]
	}
	return strconv.Itoa(int(op))
}

var opcodeNames = [...]string{"Info", "Start", "Stop", "DataCollectionStart", "DataCollectionStop", "Extension", "Reply", "Resume", "Suspend", "Transfer"}

// emptyDescription is the description of an EventSource event declared
// without arguments (describedEmpty): its metadata's name and header
// facts, no fields. Made once per metadata record.
func (r *Reader) emptyDescription(m *nettrace.Metadata) *dynamic.Description {
	d := r.emptyDescs[m]
	if d == nil {
		d = &dynamic.Description{ProviderGUID: m.ProviderGUID, Provider: m.Provider, ID: m.EventID, Version: m.Version,
			Opcode: m.Opcode, Level: m.Level, Keywords: m.Keywords, Name: m.Name}
		if r.emptyDescs == nil {
			r.emptyDescs = map[*nettrace.Metadata]*dynamic.Description{}
		}
		r.emptyDescs[m] = d
	}
	return d
}

// describedEmpty reports whether the event is an EventPipe event of no
// generated type whose metadata declares no fields and whose payload is
// empty: an EventSource event without arguments (RequestStop), which
// AppendJSON writes as {} and AppendText as nothing. A payload that its
// metadata does not describe stays undescribed.
func (e *Event) describedEmpty() bool {
	if e.nt == nil || len(e.nt.Payload) != 0 || e.typ.ok() {
		return false
	}
	m := e.nt.Metadata
	return m != nil && len(m.Fields) == 0 && m.FieldsErr == nil
}
