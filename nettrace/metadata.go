package nettrace

import (
	"strconv"
)

// maxFieldDepth bounds the nesting of Object and array types in metadata.
const maxFieldDepth = 32

// metaErr is a metadata parse failure at index at of the payload.
type metaErr struct {
	at  int
	msg string
}

// Error returns the message with the metadata byte index.
func (e *metaErr) Error() string { return e.msg + " at metadata byte " + strconv.Itoa(e.at) }

func curErr(c *cursor, what string) *metaErr {
	msg := what + ": "
	if c.why != "" {
		msg += c.why
	} else {
		msg += "runs past the end of the metadata"
	}
	return &metaErr{at: c.badI, msg: msg}
}

// parseMetadataV3 parses a metadata event payload of formats 3 to 5:
//
//	int32 MetaDataId; utf16z Provider; int32 EventId; utf16z EventName;
//	int64 Keywords; int32 Version; int32 Level;
//	[int32 FieldCount; fields (V1 layout)]
//	{int32 TagLength; uint8 TagKind; tag payload}*   (V5)
func parseMetadataV3(p []byte) (*Metadata, error) {
	c := &cursor{b: p}
	m := &Metadata{}
	m.ID = c.u32()
	m.Provider = c.utf16z()
	m.EventID = uint16(c.u32())
	m.Name = c.utf16z()
	m.Keywords = c.u64()
	m.Version = uint8(c.u32())
	m.Level = uint8(c.u32())
	if c.bad {
		return nil, curErr(c, "metadata header")
	}
	parseFieldsAndTags(c, m)
	return m, nil
}

// parseMetadataV2 parses the metadata payload of EventPipeFile versions 1
// and 2, where the metadata ID is the stream offset of the metadata event:
//
//	(v1: GUID Provider | v2: utf16z Provider); int32 EventId; int32 Version;
//	int32 MetadataLength; [int32 EventId; utf16z Name; int64 Keywords;
//	int32 Version; int32 Level; int32 FieldCount; fields (V1 layout)]
func parseMetadataV2(p []byte, version int, id uint32) (*Metadata, error) {
	c := &cursor{b: p}
	m := &Metadata{ID: id}
	if version == 1 {
		m.ProviderGUID = c.guid()
	} else {
		m.Provider = c.utf16z()
	}
	m.EventID = uint16(c.u32())
	m.Version = uint8(c.u32())
	n := int32(c.u32())
	if c.bad {
		return nil, curErr(c, "metadata header")
	}
	if n > 0 && c.left() > 0 {
		m.EventID = uint16(c.u32())
		m.Name = c.utf16z()
		m.Keywords = c.u64()
		m.Version = uint8(c.u32())
		m.Level = uint8(c.u32())
		if c.bad {
			return nil, curErr(c, "metadata header")
		}
		parseFieldsAndTags(c, m)
	}
	return m, nil
}

// parseFieldsAndTags reads the optional V1 field list and the V5 tags that
// follow a V3–V5 metadata header. Like TraceEvent, a field list it cannot
// parse is recorded in m.FieldsErr rather than failing the trace.
func parseFieldsAndTags(c *cursor, m *Metadata) {
	if c.left() == 0 {
		return
	}
	fields, err := parseFieldsV1(c, 0)
	if err != nil {
		m.FieldsErr = err
		return
	}
	m.Fields = fields
	for c.left() > 0 {
		n := c.u32()
		kind := c.u8()
		if c.bad {
			m.FieldsErr = curErr(c, "metadata tag")
			return
		}
		if int64(n) > int64(c.left()) {
			m.FieldsErr = &metaErr{at: c.i, msg: "metadata tag length " + strconv.FormatUint(uint64(n), 10) + " exceeds the metadata"}
			return
		}
		tc := &cursor{b: c.bytes(int(n))}
		switch kind {
		case 1: // opcode
			m.Opcode = tc.u8()
			m.HasOpcode = !tc.bad
		case 2: // V2Params: replaces the V1 field list
			// A list that does not parse leaves the fields undescribed;
			// the tags after it are still read (its length frames it),
			// as TraceEvent reads them.
			f, err := parseFieldsV2(tc, 0)
			m.Fields, m.FieldsErr = f, err
		}
	}
}

// parseFieldsV1: int32 count; count × {int32 TypeCode; [nested fields if
// Object]; utf16z Name}.
func parseFieldsV1(c *cursor, depth int) ([]Field, error) {
	if depth > maxFieldDepth {
		return nil, &metaErr{at: c.i, msg: "fields nested too deep"}
	}
	at := c.i
	n := c.u32()
	if c.bad {
		return nil, curErr(c, "field count")
	}
	// Each field takes at least 6 bytes (type code and an empty name).
	if int64(n)*6 > int64(c.left()) {
		return nil, &metaErr{at: at, msg: "field count " + strconv.FormatUint(uint64(n), 10) + " exceeds the metadata"}
	}
	fields := make([]Field, n)
	for i := range fields {
		f := &fields[i]
		tat := c.i
		f.Type = TypeCode(c.u32())
		if c.bad {
			return nil, curErr(c, "field type")
		}
		switch {
		case f.Type == TypeObject:
			sub, err := parseFieldsV1(c, depth+1)
			if err != nil {
				return nil, err
			}
			f.Fields = sub
		case f.Type.fixedSize() > 0 || f.Type == TypeNullTerminatedUTF16String:
			if f.Type > TypeNullTerminatedUTF16String {
				return nil, &metaErr{at: tat, msg: "type code " + f.Type.String() + " not valid in V1 field lists"}
			}
		default:
			return nil, &metaErr{at: tat, msg: "unknown type code " + strconv.Itoa(int(f.Type))}
		}
		f.Name = c.utf16z()
		if c.bad {
			return nil, curErr(c, "field name")
		}
	}
	return fields, nil
}

// parseFieldsV2 (the V5 V2Params tag): int32 count; count × {int32 Size
// (including itself); utf16z Name; type}.
func parseFieldsV2(c *cursor, depth int) ([]Field, error) {
	if depth > maxFieldDepth {
		return nil, &metaErr{at: c.i, msg: "fields nested too deep"}
	}
	at := c.i
	n := c.u32()
	if c.bad {
		return nil, curErr(c, "field count")
	}
	if int64(n)*4 > int64(c.left()) {
		return nil, &metaErr{at: at, msg: "field count " + strconv.FormatUint(uint64(n), 10) + " exceeds the metadata"}
	}
	fields := make([]Field, n)
	for i := range fields {
		sat := c.i
		size := c.u32()
		if c.bad {
			return nil, curErr(c, "field size")
		}
		if size < 4 || int64(size-4) > int64(c.left()) {
			return nil, &metaErr{at: sat, msg: "field size " + strconv.FormatUint(uint64(size), 10) + " out of range"}
		}
		fc := &cursor{b: c.bytes(int(size - 4))}
		fields[i].Name = fc.utf16z()
		if fc.bad {
			return nil, curErr(fc, "field name")
		}
		if err := parseTypeV2(fc, &fields[i], depth); err != nil {
			return nil, err
		}
	}
	return fields, nil
}

func parseTypeV2(c *cursor, f *Field, depth int) error {
	if depth > maxFieldDepth {
		return &metaErr{at: c.i, msg: "fields nested too deep"}
	}
	tat := c.i
	f.Type = TypeCode(c.u32())
	if c.bad {
		return curErr(c, "field type")
	}
	switch {
	case f.Type == TypeObject:
		sub, err := parseFieldsV2(c, depth+1)
		if err != nil {
			return err
		}
		f.Fields = sub
	case f.Type == TypeArray:
		f.Elem = &Field{}
		return parseTypeV2(c, f.Elem, depth+1)
	case f.Type <= TypeNullTerminatedUTF16String && (f.Type.fixedSize() > 0 || f.Type == TypeNullTerminatedUTF16String):
	default:
		return &metaErr{at: tat, msg: "unknown type code " + strconv.Itoa(int(f.Type))}
	}
	return nil
}

// parseMetadataV6 parses one V6 metadata row (after its uint16 size):
//
//	varuint32 ID; string Provider; varuint32 EventId; string Name;
//	FieldDescriptions; OptionalMetadata; (ignored tail)
func parseMetadataV6(row []byte) (*Metadata, error) {
	c := &cursor{b: row}
	m := &Metadata{}
	m.ID = c.varu32()
	m.Provider = c.utf8str()
	id := c.varu32()
	m.Name = c.utf8str()
	if c.bad {
		return nil, curErr(c, "metadata header")
	}
	// A varuint32 that may exceed 16 bits: its low 16 bits, as
	// TraceEvent keeps it (Metadata.EventID).
	m.EventID = uint16(id)
	fields, err := parseFieldsV6(c, 0)
	if err != nil {
		return nil, err
	}
	m.Fields = fields
	oat := c.i
	n := c.u16()
	if c.bad {
		return nil, curErr(c, "optional metadata size")
	}
	if int(n) > c.left() {
		return nil, &metaErr{at: oat, msg: "optional metadata size " + strconv.Itoa(int(n)) + " exceeds the row"}
	}
	oc := &cursor{b: c.bytes(int(n))}
	for oc.left() > 0 && !oc.bad {
		kat := oc.i
		switch kind := oc.u8(); kind {
		case 1:
			m.Opcode = oc.u8()
			m.HasOpcode = true
		case 3:
			m.Keywords = oc.u64()
		case 4:
			m.MessageTemplate = oc.utf8str()
		case 5:
			m.Description = oc.utf8str()
		case 6:
			k := oc.utf8str()
			v := oc.utf8str()
			if !oc.bad {
				if m.Attributes == nil {
					m.Attributes = make(map[string]string)
				}
				m.Attributes[k] = v
			}
		case 7:
			m.ProviderGUID = oc.guid()
		case 8:
			m.Level = oc.u8()
		case 9:
			m.Version = oc.u8()
		default:
			return nil, &metaErr{at: oat + 2 + kat, msg: "unknown optional metadata kind " + strconv.Itoa(int(kind))}
		}
	}
	if oc.bad {
		e := curErr(oc, "optional metadata")
		e.at += oat + 2
		return nil, e
	}
	return m, nil
}

// parseFieldsV6: uint16 count; count × {uint16 Size; string Name; Type;
// (ignored tail)}.
func parseFieldsV6(c *cursor, depth int) ([]Field, error) {
	if depth > maxFieldDepth {
		return nil, &metaErr{at: c.i, msg: "fields nested too deep"}
	}
	at := c.i
	n := c.u16()
	if c.bad {
		return nil, curErr(c, "field count")
	}
	if int(n)*2 > c.left() {
		return nil, &metaErr{at: at, msg: "field count " + strconv.Itoa(int(n)) + " exceeds the metadata"}
	}
	fields := make([]Field, n)
	for i := range fields {
		sat := c.i
		size := c.u16()
		if c.bad || int(size) > c.left() {
			return nil, &metaErr{at: sat, msg: "field size " + strconv.Itoa(int(size)) + " exceeds the metadata"}
		}
		fc := &cursor{b: c.bytes(int(size))}
		fields[i].Name = fc.utf8str()
		if fc.bad {
			e := curErr(fc, "field name")
			e.at += sat + 2
			return nil, e
		}
		if err := parseTypeV6(fc, &fields[i], depth); err != nil {
			if me, ok := err.(*metaErr); ok {
				me.at += sat + 2
			}
			return nil, err
		}
	}
	return fields, nil
}

func parseTypeV6(c *cursor, f *Field, depth int) error {
	if depth > maxFieldDepth {
		return &metaErr{at: c.i, msg: "fields nested too deep"}
	}
	tat := c.i
	f.Type = TypeCode(c.u8())
	if c.bad {
		return curErr(c, "field type")
	}
	switch f.Type {
	case TypeObject:
		sub, err := parseFieldsV6(c, depth+1)
		if err != nil {
			return err
		}
		f.Fields = sub
	case TypeArray, TypeFixedLengthArray, TypeRelLoc, TypeDataLoc:
		f.Elem = &Field{}
		if err := parseTypeV6(c, f.Elem, depth+1); err != nil {
			return err
		}
		if f.Type == TypeFixedLengthArray {
			f.Count = c.u16()
			if c.bad {
				return curErr(c, "fixed array length")
			}
		}
		if (f.Type == TypeRelLoc || f.Type == TypeDataLoc) && !isFixedSize(f.Elem) {
			return &metaErr{at: tat, msg: f.Type.String() + " needs a fixed-size element type"}
		}
	case TypeVarInt, TypeVarUInt, TypeNullTerminatedUTF16String:
	default:
		// Decimal (15) is not in V6's table, but TraceEvent reads it (16
		// bytes), as earlier versions have it: a row that has one is
		// taken, not lost with every event of its type.
		if f.Type.fixedSize() == 0 {
			return &metaErr{at: tat, msg: "unknown type code " + strconv.Itoa(int(f.Type))}
		}
	}
	return nil
}

// isFixedSize reports whether every value of f's type has the same size.
func isFixedSize(f *Field) bool {
	switch f.Type {
	case TypeObject:
		for i := range f.Fields {
			if !isFixedSize(&f.Fields[i]) {
				return false
			}
		}
		return true
	case TypeFixedLengthArray:
		return isFixedSize(f.Elem)
	case TypeArray, TypeNullTerminatedUTF16String, TypeVarInt, TypeVarUInt:
		return false
	}
	return f.Type.fixedSize() > 0
}

// diagnosticSource is the EventSource through which DiagnosticSource
// events reach EventPipe (System.Diagnostics.DiagnosticSource's
// DiagnosticSourceEventSource), and diagnosticSourceEvent names the events
// of it whose parameters the metadata cannot describe: the source's name,
// the event's name, and its arguments as key/value pairs, an enumerable
// that a V1 field list has no type for. The runtime describes them with
// no fields.
const diagnosticSource = "Microsoft-Diagnostics-DiagnosticSource"

func diagnosticSourceEvent(name string) bool {
	switch name {
	case "Event", "Activity1Start", "Activity1Stop", "Activity2Start",
		"Activity2Stop", "RecursiveActivity1Start", "RecursiveActivity1Stop":
		return true
	}
	return false
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

// wellKnownFields gives the events whose metadata cannot describe their
// parameters, and so describes none, the fields they have: those of
// DiagnosticSource's events, as TraceEvent fills them in
// (EventPipeMetadata's PopulateWellKnownEventParameters).
func wellKnownFields(m *Metadata) {
	if len(m.Fields) == 0 && m.FieldsErr == nil && m.Provider == diagnosticSource && diagnosticSourceEvent(m.Name) {
		m.Fields = diagnosticSourceFields
	}
}
