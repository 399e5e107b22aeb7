package clrevents

import (
	"fmt"
	"strconv"
)

// Event is implemented by every generated event type (one per provider,
// event ID and version). Views inside a decoded event alias the payload it
// was decoded from.
type Event interface {
	// Info describes the event: provider, ID, version, task, opcode, level
	// and keywords.
	Info() *EventInfo
	// Decode reads the payload for a pointer size of 4 or 8 and returns the
	// bytes it used. Bytes past the template (a newer runtime's fields) are
	// not an error; a short payload is, naming the event and the field.
	Decode(payload []byte, ptrSize int) (int, error)
	// Encode appends the event's wire form for the pointer size. Count
	// and length fields are written as they are set.
	Encode(dst []byte, ptrSize int) []byte
	// AppendJSON appends the event's fields as one JSON object, map-bound
	// values by name.
	AppendJSON(dst []byte) []byte
	// AppendText appends the fields as space-separated Name=value pairs.
	AppendText(dst []byte) []byte
}

// EventInfo describes one (provider, event ID, version).
type EventInfo struct {
	Provider Provider
	ID       uint16
	Version  uint8
	Name     string // the manifest symbol, e.g. "GCStart_V2"
	// DisplayName is the event's name as TraceEvent and PerfView show it,
	// from the manifest's task and opcode messages: "GC/Start",
	// "Method/LoadVerbose", "GC/RestartEEStart".
	DisplayName string
	TypeName    string // the Go type, e.g. "GCStartV2"
	Task        uint16
	TaskName    string
	Opcode      Opcode
	OpcodeName  string
	Level       Level
	Keywords    uint64
	new         func() Event
}

// New returns a new zero value of the event's Go type.
func (i *EventInfo) New() Event { return i.new() }

func (i *EventInfo) String() string {
	return i.Provider.String() + "/" + i.Name
}

// Provider identifies one of the providers in the schema.
type Provider uint8

// ProviderInfo describes a provider.
type ProviderInfo struct {
	Name  string // e.g. "Microsoft-Windows-DotNETRuntime"
	Short string // e.g. "Runtime": the prefix of its Go names
	GUID  GUID
}

// Info describes p; it panics if p is not a provider of this package.
func (p Provider) Info() *ProviderInfo { return &providerTable[p] }

// Valid reports whether p is a provider of this package.
func (p Provider) Valid() bool { return int(p) < len(providerTable) }

// String returns the provider's name.
func (p Provider) String() string {
	if !p.Valid() {
		return "Provider(" + strconv.Itoa(int(p)) + ")"
	}
	return providerTable[p].Name
}

// GUID returns the provider's GUID.
func (p Provider) GUID() GUID { return p.Info().GUID }

// Providers lists every provider in the schema.
func Providers() []ProviderInfo { return providerTable[:] }

// ProviderByGUID finds a provider by its GUID.
func ProviderByGUID(g GUID) (Provider, bool) {
	for i := range providerTable {
		if providerTable[i].GUID == g {
			return Provider(i), true
		}
	}
	return 0, false
}

// ProviderByName finds a provider by its name, e.g.
// "Microsoft-Windows-DotNETRuntime".
func ProviderByName(name string) (Provider, bool) {
	for i := range providerTable {
		if providerTable[i].Name == name {
			return Provider(i), true
		}
	}
	return 0, false
}

// Events lists every event in the schema, by provider, ID and version.
func Events() []EventInfo { return eventTable[:] }

// eventIndex maps (provider, id, version) to an index in eventTable, as one
// dense slice per provider: index[p][id*versions+version] = table index + 1.
var eventIndex = buildIndex()

type providerIndex struct {
	versions int
	slots    []uint16
}

func buildIndex() []providerIndex {
	idx := make([]providerIndex, len(providerTable))
	maxID := make([]int, len(providerTable))
	for i := range eventTable {
		e := &eventTable[i]
		maxID[e.Provider] = max(maxID[e.Provider], int(e.ID))
		idx[e.Provider].versions = max(idx[e.Provider].versions, int(e.Version)+1)
	}
	for p := range idx {
		idx[p].slots = make([]uint16, (maxID[p]+1)*idx[p].versions)
	}
	for i := range eventTable {
		e := &eventTable[i]
		pi := &idx[e.Provider]
		pi.slots[int(e.ID)*pi.versions+int(e.Version)] = uint16(i + 1)
	}
	return idx
}

// lookup returns the table index of (p, id, version), or -1.
func lookup(p Provider, id uint16, version uint8) int {
	if int(p) >= len(eventIndex) {
		return -1
	}
	pi := &eventIndex[p]
	if int(version) >= pi.versions {
		return -1
	}
	k := int(id)*pi.versions + int(version)
	if k >= len(pi.slots) {
		return -1
	}
	return int(pi.slots[k]) - 1
}

// Lookup describes (p, id, version), if the schema has it.
func Lookup(p Provider, id uint16, version uint8) (*EventInfo, bool) {
	i := lookup(p, id, version)
	if i < 0 {
		return nil, false
	}
	return &eventTable[i], true
}

// UnknownEventError says that an event is not in the schema.
type UnknownEventError struct {
	Provider Provider
	ID       uint16
	Version  uint8
}

func (e *UnknownEventError) Error() string {
	return fmt.Sprintf("clrevents: %s event %d version %d: %v", e.Provider, e.ID, e.Version, ErrUnknownEvent)
}

// Unwrap returns ErrUnknownEvent.
func (e *UnknownEventError) Unwrap() error { return ErrUnknownEvent }

// Decoder decodes payloads into typed events, reusing one value per event
// type: after the first event of each type, decoding allocates nothing. The
// event it returns is overwritten by the next Decode of the same type. A
// Decoder is not safe for concurrent use.
type Decoder struct {
	// OlderVersions lets an event version the schema does not have (from
	// a runtime newer than the schema) decode with the newest older
	// version of the same event: the fields that version knows decode,
	// and the rest come back as extra bytes (len(payload)-n). The event
	// returned then reports the older version in Info.
	OlderVersions bool

	slots []Event
}

// NewDecoder returns a Decoder.
func NewDecoder() *Decoder { return &Decoder{slots: make([]Event, len(eventTable))} }

// Decode picks the event type for (p, id, version), decodes payload with
// the given pointer size (4 or 8) into the Decoder's value for that type,
// and returns it with the number of payload bytes used; the rest
// (len(payload)-n) is what a newer runtime appended. An event the schema
// does not have gives an *UnknownEventError (errors.Is ErrUnknownEvent).
func (d *Decoder) Decode(p Provider, id uint16, version uint8, ptrSize int, payload []byte) (Event, int, error) {
	i := lookup(p, id, version)
	for v := version; i < 0 && d.OlderVersions && v > 0; {
		v--
		i = lookup(p, id, v)
	}
	if i < 0 {
		return nil, 0, &UnknownEventError{Provider: p, ID: id, Version: version}
	}
	if d.slots == nil {
		d.slots = make([]Event, len(eventTable))
	}
	ev := d.slots[i]
	if ev == nil {
		ev = eventTable[i].new()
		d.slots[i] = ev
	}
	n, err := ev.Decode(payload, ptrSize)
	if err != nil {
		return nil, 0, err
	}
	return ev, n, nil
}

// Level is an ETW event level (LevelInformational, …).
type Level uint8

// Opcode is an ETW opcode: a standard one (OpcodeStart, …) or one a task
// defines.
type Opcode uint8
