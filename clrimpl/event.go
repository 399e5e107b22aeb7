package clrimpl

// Event is a value of a generated event type, whatever package generated
// it: what a reader that decodes through registered Tables hands out.
// Every generated package's own Event interface embeds it (adding Info,
// which returns that package's EventInfo), so a type switch on the
// generated types works on it as on theirs.
//
// A decoded Event's strings and arrays are views that alias the payload it
// was decoded from.
type Event interface {
	// Decode reads the payload for a pointer size of 4 or 8 and returns
	// the bytes it used. Bytes past the template (a newer runtime's
	// fields) are not an error; a short payload is, a *DecodeError naming
	// the event, the field and the byte offset.
	Decode(payload []byte, ptrSize int) (int, error)
	// Encode appends the event's wire form for the pointer size.
	Encode(dst []byte, ptrSize int) []byte
	// AppendJSON appends the event's fields as one JSON object.
	AppendJSON(dst []byte) []byte
	// AppendText appends the fields as space-separated Name=value pairs.
	AppendText(dst []byte) []byte
	// AppendColumns appends the fields to a as one row of the columns
	// Descriptor().Columns lists, one call per column.
	AppendColumns(a ColumnAppender)
	// Descriptor describes the event's type; it is the same pointer for
	// every value of the type.
	Descriptor() *Descriptor
}

// StackWalk is implemented by the generated types of events whose
// payload is the call stack of another event: the one logged just before
// it on the same thread (the CLR's CLRStackWalk events; the schema marks
// such a field walk). Package trace gives those frames to that event
// (Event.Stack).
type StackWalk interface {
	Event
	// AppendStackWalk appends the frames, innermost first, to dst.
	AppendStackWalk(dst []uint64) []uint64
}

// EventType is one event type of a generated package (its EventInfo): the
// description of the type and a constructor of its values.
type EventType interface {
	// Descriptor describes the type. It is made once and shared: its
	// Fields writes a payload of the type by decoding it into a value of
	// the type (see EventFields).
	Descriptor() *Descriptor
	// New returns a new zero value of the type.
	New() Event
}
