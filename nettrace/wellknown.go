package nettrace

// The events whose metadata does not describe their fields, and the fields
// they have. (In a file of its own, after reader.go: where new functions
// land moves the reader's hot loops, see BENCHMARKS.md, sixteenth and
// twentieth sessions.)

// diagnosticSource is the EventSource through which DiagnosticSource
// events reach EventPipe (System.Diagnostics.DiagnosticSource's
// DiagnosticSourceEventSource), and diagnosticSourceEvents the events of
// it whose parameters the metadata cannot describe: the source's name,
// the event's name, and its arguments as key/value pairs, an enumerable
// that a V1 field list has no type for. The runtime describes them with
// no fields.
const diagnosticSource = "Microsoft-Diagnostics-DiagnosticSource"

var diagnosticSourceEvents = map[string]bool{
	"Event": true, "Activity1Start": true, "Activity1Stop": true, "Activity2Start": true,
	"Activity2Stop": true, "RecursiveActivity1Start": true, "RecursiveActivity1Stop": true,
}

// diagnosticSourceFields is their layout: two NUL-terminated UTF-16
// strings, then an array (a 16-bit count) of key/value pairs of strings.
var diagnosticSourceFields = []Field{
	{Name: "SourceName", Type: TypeNullTerminatedUTF16String},
	{Name: "EventName", Type: TypeNullTerminatedUTF16String},
	{Name: "Arguments", Type: TypeArray, Elem: &Field{Type: TypeObject, Fields: []Field{
		{Name: "Key", Type: TypeNullTerminatedUTF16String},
		{Name: "Value", Type: TypeNullTerminatedUTF16String},
	}}},
}

// The universal providers: machine-wide events that collectors outside
// the runtime write into NetTrace V6 (the Linux collection of dotnet-trace
// and the tools it is built on), described in PerfView's
// UniversalProviders.md. Universal.System reconstructs the machine's
// processes and what they map (and names jitted code); Universal.Events
// holds samples, each a Value and a stack. Integers are unsigned LEB128
// varints and strings UTF-8 after a 16-bit byte count, which a V6 field
// list describes as VarUInt and an array of UTF8CodeUnit; the collectors
// describe Universal.System's events with no fields, and TraceEvent reads
// them with layouts of its own (UniversalSystemTraceEventParser), by
// provider and event name: these are those layouts.
const (
	universalSystem = "Universal.System"
	universalEvents = "Universal.Events"
)

// universalSystemFields are Universal.System's events' fields by name.
var universalSystemFields = func() map[string][]Field {
	u := func(name string) Field { return Field{Name: name, Type: TypeVarUInt} }
	str := func(name string) Field {
		return Field{Name: name, Type: TypeArray, Elem: &Field{Type: TypeUTF8CodeUnit}}
	}
	process := []Field{u("NamespaceId"), str("Name"), str("NamespaceName")}
	return map[string][]Field{
		"ExistingProcess": process,
		"ProcessCreate":   process,
		"ProcessMapping": {u("Id"), u("StartAddress"), u("EndAddress"), u("FileOffset"),
			str("FileName"), u("MetadataId")},
		"ProcessSymbol":          {u("Id"), u("MappingId"), u("StartAddress"), u("EndAddress"), str("Name")},
		"ProcessMappingMetadata": {u("Id"), str("SymbolMetadata"), str("VersionMetadata")},
	}
}()

// universalSampleFields are the fields of Universal.Events' stable events
// (cpu, cswitch): the sample's value.
var universalSampleFields = []Field{{Name: "Value", Type: TypeVarUInt}}

// wellKnownFields gives the events whose metadata cannot describe their
// parameters, or does not, and so describes none, the fields they have,
// as TraceEvent reads them: those of DiagnosticSource's events
// (EventPipeMetadata's PopulateWellKnownEventParameters), and those of the
// universal providers' (their parsers' layouts). Universal.System's
// ProcessExit has no fields.
func wellKnownFields(m *Metadata) {
	if len(m.Fields) != 0 || m.FieldsErr != nil {
		return
	}
	switch m.Provider {
	case diagnosticSource:
		if diagnosticSourceEvents[m.Name] {
			m.Fields = diagnosticSourceFields
		}
	case universalSystem:
		m.Fields = universalSystemFields[m.Name]
	case universalEvents:
		if m.Name == "cpu" || m.Name == "cswitch" {
			m.Fields = universalSampleFields
		}
	}
}
