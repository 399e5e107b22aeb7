package nettrace

import "sync"

// The universal providers' events, whose metadata does not describe their
// fields, and the fields they have (DiagnosticSource's are in
// metadata.go). In a file of its own, after reader.go: where new functions
// land moves the reader's hot loops (BENCHMARKS.md, sixteenth and
// twentieth sessions).

// The universal providers: machine-wide events that collectors outside
// the runtime write into NetTrace V6 (the Linux collection of dotnet-trace
// and the tools it is built on), described in PerfView's
// UniversalProviders.md. Universal.System reconstructs the machine's
// processes and what they map (and names jitted code); Universal.Events
// holds samples, each a Value and a stack. Integers are unsigned LEB128
// varints and strings UTF-8 after a 16-bit byte count, which a V6 field
// list describes as VarUInt and an array of UTF8CodeUnit; the collectors
// describe Universal.System's events with no fields, or (one-collect's
// writer since 2025) each string as a single UTF8CodeUnit, and TraceEvent
// reads them with layouts of its own (UniversalSystemTraceEventParser)
// whatever they declare, by provider and event name: these are those
// layouts, which replace what a Universal.System event declares.
const (
	universalSystem = "Universal.System"
	universalEvents = "Universal.Events"
)

// universalSystemFields are Universal.System's events' fields by name,
// made when the first universal event needs them rather than as every
// program that links the reader starts.
var universalSystemFields = sync.OnceValue(func() map[string][]Field {
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
})

// universalSampleFields are the fields of Universal.Events' stable events
// (cpu, cswitch): the sample's value.
var universalSampleFields = []Field{{Name: "Value", Type: TypeVarUInt}}

// universalFields gives the universal providers' events the fields
// TraceEvent's parsers read: Universal.System's always (ProcessExit has
// none), Universal.Events' samples where they declare none.
func universalFields(m *Metadata) {
	if m.Provider == universalSystem {
		// Whatever the event declares: one-collect's writer has declared
		// its strings as one UTF8CodeUnit each since 2025 (a byte, to a
		// reader of the declaration), and TraceEvent reads these events
		// with its fixed layouts, by name.
		if fs, ok := universalSystemFields()[m.Name]; ok {
			m.Fields, m.FieldsErr = fs, nil
		}
		return
	}
	if len(m.Fields) != 0 || m.FieldsErr != nil {
		return
	}
	switch m.Provider {
	case universalEvents:
		if m.Name == "cpu" || m.Name == "cswitch" {
			m.Fields = universalSampleFields
		}
	}
}
