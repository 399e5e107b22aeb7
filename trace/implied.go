package trace

import "github.com/clrgo/clrevents/nettrace"

// The opcodes and tasks of EventPipe events that neither the trace nor a
// generated type gives (Event.Opcode, Event.Task): TplEventSource's
// declarations (tpl.go), or the opcode a name implies. (In files of their
// own, so that the accessors Next's callers use stay where they were:
// see BENCHMARKS.md, twentieth session.)

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

// The opcodes a name can imply (impliedOpcode).
const (
	opcodeStart = 1
	opcodeStop  = 2
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
