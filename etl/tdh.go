package etl

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/clrgo/clrevents/clrimpl"
)

// MetaDataGUID is the classic event class of KernelTraceControl's event
// descriptions: when a trace is merged on the recording machine (xperf,
// PerfView), it adds, before the first event of each manifest-based
// provider it can describe, an EventInfo event (opcode OpEventInfo) that
// holds the TRACE_EVENT_INFO the Windows TDH API gives for that event, and
// an EventMapInfo event (OpEventMapInfo) for each value or bit map its
// fields use.
var MetaDataGUID = clrimpl.MustParseGUID("bbccf6c1-6cd1-48c4-80ff-839482e37671")

// The MetaData class's opcodes.
const (
	OpEventInfo    = 32
	OpEventMapInfo = 33
)

// InType is a payload field's wire type, as TDH numbers them
// (TDH_INTYPE_*); an EventSource's manifest names the same types ("win:Int32").
type InType uint16

// The wire types this package decodes.
const (
	InUnicodeString               InType = 1  // UTF-16LE, NUL-terminated unless a length is given (in characters)
	InAnsiString                  InType = 2  // bytes, NUL-terminated unless a length is given
	InInt8                        InType = 3  //
	InUInt8                       InType = 4  //
	InInt16                       InType = 5  //
	InUInt16                      InType = 6  //
	InInt32                       InType = 7  //
	InUInt32                      InType = 8  //
	InInt64                       InType = 9  //
	InUInt64                      InType = 10 //
	InFloat                       InType = 11 //
	InDouble                      InType = 12 //
	InBoolean                     InType = 13 // 4 bytes
	InBinary                      InType = 14 // length bytes
	InGUID                        InType = 15 //
	InPointer                     InType = 16 // the event's pointer size
	InFileTime                    InType = 17 // 100 ns since 1601 (UTC)
	InSystemTime                  InType = 18 // SYSTEMTIME, 16 bytes
	InSID                         InType = 19 // a security identifier, its own length
	InHexInt32                    InType = 20 //
	InHexInt64                    InType = 21 //
	InManifestCountedString       InType = 22 // uint16 byte count, then UTF-16LE
	InManifestCountedAnsiString   InType = 23 // uint16 byte count, then bytes
	InManifestCountedBinary       InType = 25 // uint16 byte count, then bytes
	InCountedString               InType = 300
	InCountedAnsiString           InType = 301
	InReversedCountedString       InType = 302 // big-endian uint16 byte count
	InReversedCountedAnsiString   InType = 303
	InNonNullTerminatedString     InType = 304 // the rest of the payload, UTF-16LE
	InNonNullTerminatedAnsiString InType = 305
	InUnicodeChar                 InType = 306
	InAnsiChar                    InType = 307
	InSizeT                       InType = 308 // the event's pointer size
	InHexDump                     InType = 309 // uint32 byte count, then bytes
	InWBEMSID                     InType = 310 // TOKEN_USER (two pointers), then a SID
)

// OutType is how TDH says a field should be shown (TDH_OUTTYPE_*); the
// ones this package acts on.
type OutType uint16

// The output types that change how a value is written.
const (
	OutHexBinary     OutType = 15
	OutHexInt8       OutType = 16
	OutHexInt16      OutType = 17
	OutHexInt32      OutType = 18
	OutHexInt64      OutType = 19
	OutBoolean       OutType = 13 // an integer as true or false
	OutPort          OutType = 22 // a 16-bit port in network byte order
	OutIPv4          OutType = 23 // 4 bytes in network byte order
	OutIPv6          OutType = 24 // 16 bytes
	OutSocketAddress OutType = 25 // a SOCKADDR
	OutWin32Error    OutType = 30
	OutNTStatus      OutType = 31
	OutHResult       OutType = 32
)

// Field is one payload field of an EventSchema.
type Field struct {
	Name string
	In   InType
	Out  OutType
	// Map names the field's values (nil when it has none, or when the
	// trace described the map after this event).
	Map *Map
	// MapName is the name of the field's map, "" for none.
	MapName string
	// Array says the field repeats: Count times, or as many times as the
	// field CountField (an index into the schema's Fields at the same
	// level, or -1) says, or, with PrefixCount, as many times as the
	// uint16 before the elements in the payload says (TraceLogging).
	Array       bool
	Count       int
	CountField  int
	PrefixCount bool
	// Length is the size of a string (in characters), binary or
	// fixed-size field, or the field LengthField says it (-1 for none).
	Length      int
	LengthField int
	// Fields are a struct's members (In is 0).
	Fields []Field

	// jsonKey is the name as a JSON object key with its colon, made once
	// (prepareFields); "" until then.
	jsonKey string
}

// prepareFields makes each field's JSON key once, so that decoding does
// not escape names per event.
func prepareFields(fs []Field) {
	for i := range fs {
		f := &fs[i]
		f.jsonKey = string(append(clrimpl.AppendJSONString(nil, f.Name), ':'))
		prepareFields(f.Fields)
	}
}

// Map is a value map or a bit map: names for a field's values.
type Map struct {
	Name    string
	Bits    bool // a bit map: the value is a set of flags
	Entries []MapEntry

	flags []clrimpl.FlagName // a bit map's entries, by value
	zero  string             // a bit map's name for 0
}

// MapEntry is one named value of a Map.
type MapEntry struct {
	Value uint64
	Name  string
}

// EventSchema describes the payload of one kind of event: one the trace
// itself describes (a manifest-based provider's through KernelTraceControl's
// EventInfo events, a .NET EventSource's through its ManifestData events, a
// TraceLogging event's through its own metadata), or a kernel event's MOF
// layout (KernelSchema).
type EventSchema struct {
	ProviderGUID clrimpl.GUID
	Provider     string // the provider's name
	ID           uint16
	Version      uint8
	Opcode       uint8
	Task         uint16
	Level        uint8
	Keywords     uint64
	TaskName     string
	OpcodeName   string // without a "win:" prefix
	// Name is the event's name as TraceEvent gives it: the task, then "/"
	// and the opcode unless the opcode is Info (0); the event's own name
	// where it has no task.
	Name   string
	Fields []Field
	// Classic says the schema is of a classic (MOF) event class, which
	// tells events apart by opcode, not by ID.
	Classic bool
}

// eventInfoHeader is the fixed part of TRACE_EVENT_INFO: the provider and
// event GUIDs, the event descriptor, the decoding source, thirteen string
// offsets, the property counts and the template flags.
const eventInfoHeader = 112

// propertyInfoSize is the size of one EVENT_PROPERTY_INFO.
const propertyInfoSize = 24

// Property flags (PROPERTY_FLAGS).
const (
	propStruct           = 0x1
	propParamLength      = 0x2
	propParamCount       = 0x4
	propParamFixedLength = 0x10
	propParamFixedCount  = 0x20
)

// decodingWBEM is DECODING_SOURCE DecodingSourceWbem: a classic (MOF)
// event class, whose events are told apart by opcode.
const decodingWBEM = 1

// maxStructDepth bounds the nesting of struct properties.
const maxStructDepth = 8

// maxDescribedFields bounds the fields (struct members counted each time
// they appear) of one event's description.
const maxDescribedFields = 4096

// ParseEventInfo parses a KernelTraceControl MetaData/EventInfo event: the
// TRACE_EVENT_INFO of one event, with its names and its fields. Each
// field's map is left for the EventMapInfo events to fill (Field.MapName).
// A description that does not fit its payload is an error naming the
// event's offset and what does not fit.
func ParseEventInfo(e *Event) (*EventSchema, error) {
	if e.ProviderGUID != MetaDataGUID || e.Opcode != OpEventInfo {
		return nil, fmt.Errorf("etl: event at offset %d is not a MetaData/EventInfo event", e.Offset)
	}
	s, err := parseEventInfo(e.Payload)
	if err != nil {
		return nil, fmt.Errorf("etl: MetaData/EventInfo event at offset %d: %w", e.Offset, err)
	}
	return s, nil
}

func parseEventInfo(p []byte) (*EventSchema, error) {
	if len(p) < eventInfoHeader {
		return nil, fmt.Errorf("payload of %d bytes, want at least %d", len(p), eventInfoHeader)
	}
	s := &EventSchema{}
	copy(s.ProviderGUID[:], p[0:16])
	s.ID = le.Uint16(p[32:])
	s.Version = p[34]
	s.Level = p[36]
	s.Opcode = p[37]
	s.Task = le.Uint16(p[38:])
	s.Keywords = le.Uint64(p[40:])
	s.Classic = le.Uint32(p[48:]) == decodingWBEM
	str := func(at int) (string, error) {
		off := le.Uint32(p[at:])
		if off == 0 {
			return "", nil
		}
		v, ok := utf16At(p, int64(off))
		if !ok {
			return "", fmt.Errorf("string at TRACE_EVENT_INFO offset %d: offset %d has no terminator in the payload", at, off)
		}
		return v, nil
	}
	var err error
	names := []*string{&s.Provider, nil, nil, nil, &s.TaskName, &s.OpcodeName}
	for i, dst := range names {
		if dst != nil {
			if *dst, err = str(52 + 4*i); err != nil {
				return nil, err
			}
		}
	}
	// EventNameOffset (Windows 10 and later; the activity ID name before).
	eventName := ""
	if !s.Classic {
		if eventName, err = str(92); err != nil {
			return nil, err
		}
	}
	n := le.Uint32(p[100:])
	top := le.Uint32(p[104:])
	if uint64(n)*propertyInfoSize > uint64(len(p)-eventInfoHeader) {
		return nil, fmt.Errorf("%d properties of %d bytes exceed the payload of %d bytes", n, propertyInfoSize, len(p))
	}
	if top > n {
		return nil, fmt.Errorf("%d top-level properties of %d", top, n)
	}
	props := make([]rawProperty, n)
	for i := range props {
		b := p[eventInfoHeader+i*propertyInfoSize:]
		rp := &props[i]
		rp.flags = le.Uint32(b)
		if rp.name, err = str(eventInfoHeader + i*propertyInfoSize + 4); err != nil {
			return nil, fmt.Errorf("property %d name: %w", i, err)
		}
		rp.a, rp.b = le.Uint16(b[8:]), le.Uint16(b[10:])
		if rp.flags&propStruct == 0 {
			if rp.mapName, err = str(eventInfoHeader + i*propertyInfoSize + 12); err != nil {
				return nil, fmt.Errorf("property %d map name: %w", i, err)
			}
		}
		rp.count, rp.length = le.Uint16(b[16:]), le.Uint16(b[18:])
	}
	budget := maxDescribedFields
	if s.Fields, err = buildFields(props, 0, int(top), 0, &budget); err != nil {
		return nil, err
	}
	prepareFields(s.Fields)
	s.OpcodeName = trimWin(s.OpcodeName)
	s.Name = eventName
	s.setName()
	return s, nil
}

// rawProperty is an EVENT_PROPERTY_INFO as stored.
type rawProperty struct {
	flags         uint32
	name, mapName string
	a, b          uint16 // InType, OutType; or StructStartIndex, NumOfStructMembers
	count, length uint16 // values, or property indexes
}

// buildFields turns properties [from, to) into fields; count and length
// references become indexes relative to from, and must point into the
// same level before the field.
func buildFields(props []rawProperty, from, to, depth int, budget *int) ([]Field, error) {
	if depth > maxStructDepth {
		return nil, errors.New("structs nested too deep")
	}
	// Structs may name the same members more than once, and each other:
	// the budget bounds the fields built, not only the properties read.
	if *budget -= to - from; *budget < 0 {
		return nil, fmt.Errorf("more than %d fields", maxDescribedFields)
	}
	fs := make([]Field, 0, to-from)
	for i := from; i < to; i++ {
		rp := &props[i]
		f := Field{Name: rp.name, MapName: rp.mapName, CountField: -1, LengthField: -1, Count: 1}
		ref := func(idx uint16, what string) (int, error) {
			if int(idx) < from || int(idx) >= i {
				return 0, fmt.Errorf("property %d (%s): %s property %d is not an earlier property of its level", i, rp.name, what, idx)
			}
			return int(idx) - from, nil
		}
		var err error
		if rp.flags&propParamCount != 0 {
			if f.CountField, err = ref(rp.count, "count"); err != nil {
				return nil, err
			}
			f.Array = true
		} else {
			f.Count = int(rp.count)
			f.Array = rp.count > 1 || rp.flags&propParamFixedCount != 0
		}
		if rp.flags&propParamLength != 0 {
			if f.LengthField, err = ref(rp.length, "length"); err != nil {
				return nil, err
			}
		} else {
			f.Length = int(rp.length)
		}
		if rp.flags&propStruct != 0 {
			start, num := int(rp.a), int(rp.b)
			if start+num > len(props) || num == 0 {
				return nil, fmt.Errorf("property %d (%s): struct members %d..%d outside the %d properties", i, rp.name, start, start+num, len(props))
			}
			if f.Fields, err = buildFields(props, start, start+num, depth+1, budget); err != nil {
				return nil, err
			}
		} else {
			f.In, f.Out = InType(rp.a), OutType(rp.b)
			if !f.In.known() {
				return nil, fmt.Errorf("property %d (%s): in-type %d is not one this package decodes", i, rp.name, f.In)
			}
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// ParseEventMapInfo parses a KernelTraceControl MetaData/EventMapInfo
// event: the provider's GUID, then the EVENT_MAP_INFO of one map.
func ParseEventMapInfo(e *Event) (clrimpl.GUID, *Map, error) {
	if e.ProviderGUID != MetaDataGUID || e.Opcode != OpEventMapInfo {
		return clrimpl.GUID{}, nil, fmt.Errorf("etl: event at offset %d is not a MetaData/EventMapInfo event", e.Offset)
	}
	g, m, err := parseEventMapInfo(e.Payload)
	if err != nil {
		return g, nil, fmt.Errorf("etl: MetaData/EventMapInfo event at offset %d: %w", e.Offset, err)
	}
	return g, m, nil
}

// mapInfoHeader is EVENT_MAP_INFO's fixed part: name offset, flags, entry
// count and the entry value type (or format string offset).
const mapInfoHeader = 16

// Map flags (MAP_FLAGS).
const (
	mapValueMap = 0x1
	mapBitMap   = 0x2
	mapPattern  = 0x4
)

func parseEventMapInfo(p []byte) (clrimpl.GUID, *Map, error) {
	var g clrimpl.GUID
	if len(p) < 16+mapInfoHeader {
		return g, nil, fmt.Errorf("payload of %d bytes, want at least %d", len(p), 16+mapInfoHeader)
	}
	copy(g[:], p)
	mi := p[16:] // offsets are from the EVENT_MAP_INFO
	name, ok := utf16At(mi, int64(le.Uint32(mi)))
	if !ok {
		return g, nil, fmt.Errorf("map name at offset %d has no terminator", le.Uint32(mi))
	}
	flags := le.Uint32(mi[4:])
	n := le.Uint32(mi[8:])
	if flags&mapPattern != 0 {
		return g, nil, fmt.Errorf("map %s: pattern maps are not supported", name)
	}
	if uint64(n)*8 > uint64(len(mi)-mapInfoHeader) {
		return g, nil, fmt.Errorf("map %s: %d entries exceed the payload", name, n)
	}
	m := &Map{Name: name, Bits: flags&mapBitMap != 0, Entries: make([]MapEntry, n)}
	for i := range m.Entries {
		b := mi[mapInfoHeader+8*i:]
		s, ok := utf16At(mi, int64(le.Uint32(b)))
		if !ok {
			return g, nil, fmt.Errorf("map %s entry %d: name at offset %d has no terminator", name, i, le.Uint32(b))
		}
		m.Entries[i] = MapEntry{Value: uint64(le.Uint32(b[4:])), Name: trimSpaceRight(s)}
	}
	m.prepare()
	return g, m, nil
}

// prepare puts a bit map's entries in ascending order of value, the
// order its flags are named in, and keeps them in the form
// clrimpl.AppendFlags takes.
func (m *Map) prepare() {
	if !m.Bits {
		return
	}
	slices.SortStableFunc(m.Entries, func(a, b MapEntry) int { return cmp.Compare(a.Value, b.Value) })
	m.flags = m.flags[:0]
	for _, e := range m.Entries {
		if e.Value == 0 {
			m.zero = e.Name
		}
		m.flags = append(m.flags, clrimpl.FlagName{Value: e.Value, Name: e.Name})
	}
}

// utf16At reads the NUL-terminated UTF-16LE string at off.
func utf16At(p []byte, off int64) (string, bool) {
	if off < 0 || off > int64(len(p)) {
		return "", false
	}
	s, rest := utf16z(p[off:])
	return s, rest != nil
}

// trimSpaceRight drops the trailing blanks TDH leaves on map names.
func trimSpaceRight(s string) string {
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

func trimWin(s string) string {
	if len(s) > 4 && s[:4] == "win:" {
		return s[4:]
	}
	return s
}

// setName sets Name as TraceEvent names the event: the task, then "/" and
// the opcode unless it is Info; the event's own name (set before) or
// "EventID(N)" where there is no task.
func (s *EventSchema) setName() {
	switch {
	case s.TaskName == "" && s.Name != "":
	case s.TaskName == "":
		s.Name = "EventID(" + strconv.Itoa(int(s.ID)) + ")"
	case s.Opcode == 0 || s.OpcodeName == "" || s.OpcodeName == "Info":
		s.Name = s.TaskName
	default:
		s.Name = s.TaskName + "/" + s.OpcodeName
	}
}

func (t InType) known() bool {
	switch {
	case t >= InUnicodeString && t <= InManifestCountedAnsiString, t == InManifestCountedBinary:
		return true
	case t >= InCountedString && t <= InWBEMSID:
		return true
	}
	return false
}
