package clrimpl

// Descriptor describes one event type, whatever describes it: a generated
// event type (its EventInfo's descriptor) or a description a trace carries
// of its own events (EventSource metadata, TDH, manifests, TraceLogging;
// package dynamic). It is what consumers of events need to name an event
// and to write its fields without knowing where the description came from.
//
// A Descriptor is made once per event type or description and shared: do
// not modify it.
type Descriptor struct {
	// Provider is the provider's name as events of the type are shown
	// under it: its ProviderInfo's name, but where a schema says another
	// (every kernel event class is shown under "Windows Kernel", as
	// TraceEvent shows it; ProviderGUID tells the classes apart).
	Provider     string
	ProviderGUID GUID
	ID           uint16
	Version      uint8
	// Name is the name events of this type are shown under: the manifest
	// symbol of a generated type ("GCStart_V2"), the trace's own name of a
	// described one ("Microsoft-Windows-Kernel-File/Create").
	Name string
	// DisplayName is TraceEvent's name where it differs ("GC/Start"),
	// else Name.
	DisplayName string
	Task        uint16
	Opcode      Opcode
	Level       Level
	Keywords    uint64
	// Columns are the payload's fields as flat typed columns, in the order
	// Fields.AppendColumns appends them.
	Columns []Column
	// Fields writes a payload's fields by this description.
	Fields FieldWriter
}

// FieldWriter writes the fields of an event's payload by a description,
// allocating nothing in steady state. A payload that does not fit its
// description gives an error that names the field (its path, for nested
// fields) and the byte offset. ptrSize is the event's pointer size, 4 or
// 8, for pointer-sized fields.
type FieldWriter interface {
	// AppendJSON appends the fields as one JSON object, of the types the
	// description gives them (see the clrdump JSON lines' rules).
	AppendJSON(dst, payload []byte, ptrSize int) ([]byte, error)
	// AppendText appends the fields as space-separated Name=value pairs.
	AppendText(dst, payload []byte, ptrSize int) ([]byte, error)
	// AppendColumns appends the fields to a, one call per column of
	// Descriptor.Columns.
	AppendColumns(a ColumnAppender, payload []byte, ptrSize int) error
}
