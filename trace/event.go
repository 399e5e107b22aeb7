package trace

import (
	"strconv"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/nettrace"
)

// Event is one event in the same shape for every format. The Reader reuses
// one Event: it and its slices (Payload, Stack) are valid until the next
// call to Next; strings stay valid.
type Event struct {
	// Time is the event's wall-clock time (UTC); Timestamp is the raw
	// clock value it comes from (QPC ticks on Windows, nanoseconds on Linux
	// and macOS; see Info.ClockFrequency).
	Time      time.Time
	Timestamp int64

	// Provider is the provider's name. When neither the trace nor the
	// schema names it (an ETW provider this package does not know), it is
	// the GUID in its canonical text form.
	Provider     string
	ProviderGUID clrevents.GUID
	// Name is the event's name: the manifest symbol for events in the
	// schema ("GCStart_V2"), the trace's own name for EventSource events,
	// "Task/Opcode" for known kernel events ("EventTrace/Header"), else
	// empty.
	Name    string
	ID      uint16
	Version uint8
	// Task, Opcode, Level and Keywords come from the trace where it
	// records them and from the schema where it does not (an EventPipe
	// trace records no task and, before NetTrace V5, no opcode).
	Task     uint16
	Opcode   uint8
	Level    uint8
	Keywords uint64

	// ProcessID and ThreadID are the process and thread the event is
	// about; -1 when the trace does not say (ETW's kernel performance
	// events).
	ProcessID, ThreadID int64
	// CPU is the processor number, or -1 where the trace does not record
	// one (EventPipe before NetTrace V4; .NET 5+ runtimes often write
	// "unknown").
	CPU int
	// PointerSize is 4 or 8: the size of pointer-sized payload fields.
	PointerSize int
	// Payload is the event's data, aliasing the reader's buffers.
	Payload []byte
	// Stack holds the event's stack as instruction pointers, innermost
	// first, when the trace recorded one (EventPipe stacks, ETW stack
	// extended items); nil otherwise.
	Stack []uint64
	// ActivityID and RelatedActivityID are zero when absent.
	ActivityID, RelatedActivityID clrevents.GUID
	// Offset is the byte offset of the event in the (decompressed) file.
	Offset int64

	r    *Reader
	prov clrevents.Provider
	// info is the schema's description of (provider, ID, version); nil
	// for events not in the schema.
	info *clrevents.EventInfo
	nt   *nettrace.Event
	et   *etl.Event
}

// Schema returns the schema's description of the event (provider, ID,
// version), if the schema has it. It does not decode anything.
func (e *Event) Schema() (*clrevents.EventInfo, bool) { return e.info, e.info != nil }

// Decode decodes the payload into the generated type of the event, reusing
// one value per type (valid until the next Decode of the same type; strings
// and arrays inside it alias the payload). It allocates nothing in steady
// state. Events outside the schema return clrevents.ErrUnknownEvent itself;
// a payload that does not fit its template returns an error naming the
// event, the field and the byte offset. A newer version of a known event
// than the schema holds decodes as the newest older version, unless the
// Reader was made WithExactVersions.
func (e *Event) Decode() (clrevents.Event, error) {
	ev, _, err := e.DecodeN()
	return ev, err
}

// DecodeN is Decode that also returns how many payload bytes the template
// used: Payload[n:] is what a newer runtime appended.
func (e *Event) DecodeN() (clrevents.Event, int, error) {
	if e.r == nil || !e.prov.Valid() {
		return nil, 0, clrevents.ErrUnknownEvent
	}
	if e.info == nil && !e.r.dec.OlderVersions {
		return nil, 0, clrevents.ErrUnknownEvent
	}
	ev, n, err := e.r.dec.Decode(e.prov, e.ID, e.Version, e.PointerSize, e.Payload)
	if err != nil {
		return nil, 0, &DecodeError{Name: e.r.cfg.name, Offset: e.Offset, Err: err}
	}
	return ev, n, nil
}

// Metadata returns the EventPipe metadata record of the event (an
// EventSource event's field list), or nil for ETL events.
func (e *Event) Metadata() *nettrace.Metadata {
	if e.nt == nil {
		return nil
	}
	return e.nt.Metadata
}

// NetTrace returns the format reader's record of the event for EventPipe
// traces (thread tables, labels, sequence numbers), or nil.
func (e *Event) NetTrace() *nettrace.Event { return e.nt }

// ETL returns the format reader's record of the event for ETW logs (header
// kind, flags, extended data items), or nil.
func (e *Event) ETL() *etl.Event { return e.et }

// DecodeError is a payload that did not decode: Err names the event, the
// field and the offset in the payload; Name and Offset locate the event in
// the input.
type DecodeError struct {
	Name   string // the input: a path, "standard input", ...
	Offset int64  // the event's byte offset in the (decompressed) file
	Err    error
}

func (e *DecodeError) Error() string {
	return e.Name + ": event at offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Err.Error()
}

// Unwrap returns the decoder's error.
func (e *DecodeError) Unwrap() error { return e.Err }
