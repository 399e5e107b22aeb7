package dynamic

import (
	"errors"
	"fmt"
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

// inType is a payload field's wire type as TDH numbers them
// (TDH_INTYPE_*); an EventSource's manifest names the same types
// ("win:Int32"), and TraceLogging uses the numbers up to 23.
type inType uint16

const (
	inUnicodeString               inType = 1
	inAnsiString                  inType = 2
	inInt8                        inType = 3
	inUInt8                       inType = 4
	inInt16                       inType = 5
	inUInt16                      inType = 6
	inInt32                       inType = 7
	inUInt32                      inType = 8
	inInt64                       inType = 9
	inUInt64                      inType = 10
	inFloat                       inType = 11
	inDouble                      inType = 12
	inBoolean                     inType = 13
	inBinary                      inType = 14
	inGUID                        inType = 15
	inPointer                     inType = 16
	inFileTime                    inType = 17
	inSystemTime                  inType = 18
	inSID                         inType = 19
	inHexInt32                    inType = 20
	inHexInt64                    inType = 21
	inManifestCountedString       inType = 22
	inManifestCountedAnsiString   inType = 23
	inManifestCountedBinary       inType = 25
	inCountedString               inType = 300
	inCountedAnsiString           inType = 301
	inReversedCountedString       inType = 302
	inReversedCountedAnsiString   inType = 303
	inNonNullTerminatedString     inType = 304
	inNonNullTerminatedAnsiString inType = 305
	inUnicodeChar                 inType = 306
	inAnsiChar                    inType = 307
	inSizeT                       inType = 308
	inHexDump                     inType = 309
	inWBEMSID                     inType = 310
)

// inKinds are the kinds of the TDH in-types this package decodes.
var inKinds = map[inType]Kind{
	inUnicodeString: String16, inAnsiString: AnsiString, inInt8: Int8, inUInt8: Uint8, inInt16: Int16,
	inUInt16: Uint16, inInt32: Int32, inUInt32: Uint32, inInt64: Int64, inUInt64: Uint64, inFloat: Float32,
	inDouble: Float64, inBoolean: Bool32, inBinary: Binary, inGUID: GUID, inPointer: Pointer,
	inFileTime: FileTime, inSystemTime: SystemTime, inSID: SID, inHexInt32: Uint32, inHexInt64: Uint64,
	inManifestCountedString: String16Counted, inManifestCountedAnsiString: AnsiStringCounted,
	inManifestCountedBinary: BinaryCounted, inCountedString: String16Counted,
	inCountedAnsiString: AnsiStringCounted, inReversedCountedString: String16CountedBE,
	inReversedCountedAnsiString: AnsiStringCountedBE, inNonNullTerminatedString: String16Rest,
	inNonNullTerminatedAnsiString: AnsiStringRest, inUnicodeChar: Char16, inAnsiChar: AnsiChar,
	inSizeT: SizeT, inHexDump: BinaryCounted32, inWBEMSID: WBEMSID,
}

// outType is how TDH says a field should be shown (TDH_OUTTYPE_*).
type outType uint16

// The output types that change how a value is shown.
const (
	outString        outType = 1 // on a 16-bit integer: a UTF-16 character
	outBoolean       outType = 13
	outHexInt8       outType = 16
	outHexInt16      outType = 17
	outHexInt32      outType = 18
	outHexInt64      outType = 19
	outPort          outType = 22
	outIPv4          outType = 23
	outIPv6          outType = 24
	outSocketAddress outType = 25
	outWin32Error    outType = 30
	outNTStatus      outType = 31
	outHResult       outType = 32
)

// outFormats are the formats of the out-types that have one.
var outFormats = map[outType]Format{
	outBoolean: FormatBool, outHexInt8: FormatHex, outHexInt16: FormatHex, outHexInt32: FormatHex,
	outHexInt64: FormatHex, outPort: FormatPort, outIPv4: FormatIPv4, outIPv6: FormatIPv6,
	outSocketAddress: FormatSocketAddress, outWin32Error: FormatHex, outNTStatus: FormatHex, outHResult: FormatHex,
}

// tdhField sets f's kind and format from a TDH in-type and out-type, and
// reports whether the in-type is one this package decodes. An out-type
// that says how to show the value wins; else the hexadecimal in-types,
// and a pointer-sized integer with any out-type, are hex.
func tdhField(f *Field, in inType, out outType) bool {
	k, ok := inKinds[in]
	if !ok {
		return false
	}
	f.Kind = k
	if out == outString && (in == inInt16 || in == inUInt16) {
		// A 16-bit integer shown as a string is a character (.NET's
		// char in a TraceLogging event, a manifest's win:UInt16 with
		// xs:string); TraceEvent shows it as one, and an array of them
		// as a string. An 8-bit one it shows as a number.
		f.Kind = Char16
		return true
	}
	if fm, ok := outFormats[out]; ok {
		f.Format = fm
	} else if in == inHexInt32 || in == inHexInt64 || in == inSizeT && out != 0 {
		f.Format = FormatHex
	}
	return true
}

// arrayOf makes the field named name that repeats elem (whose name it
// takes): an array of characters shows as a string up to its first NUL.
func arrayOf(elem Field, count int, countFrom FieldRef, prefix bool) Field {
	f := Field{Name: elem.Name, Kind: Array, Count: count, CountFrom: countFrom, PrefixCount: prefix}
	if elem.Kind.isChar() {
		f.Format = FormatPadded
	}
	elem.Name = ""
	f.Elem = &elem
	return f
}

// eventInfoHeader is the fixed part of TRACE_EVENT_INFO: the provider and
// event GUIDs, the event descriptor, the decoding source, thirteen string
// offsets, the property counts and the template flags.
const eventInfoHeader = 112

// propertyInfoSize is the size of one EVENT_PROPERTY_INFO.
const propertyInfoSize = 24

// Property flags (PROPERTY_FLAGS).
const (
	propStruct          = 0x1
	propParamLength     = 0x2
	propParamCount      = 0x4
	propParamFixedCount = 0x20
)

// decodingWBEM is DECODING_SOURCE DecodingSourceWbem: a classic (MOF)
// event class, whose events are told apart by opcode.
const decodingWBEM = 1

// maxStructDepth bounds the nesting of the structs of ETW descriptions.
const maxStructDepth = 8

// maxDescribedFields bounds the fields (struct members counted each time
// they appear) of one event's description.
const maxDescribedFields = 4096

// ParseEventInfo parses the payload of a KernelTraceControl
// MetaData/EventInfo event: the TRACE_EVENT_INFO of one event, with its
// names and its fields. Each field's map is left for the EventMapInfo
// events to fill (Field.MapName; Descriptions does it). A description that
// does not fit its payload is an error saying what does not fit.
func ParseEventInfo(p []byte) (*Description, error) {
	if len(p) < eventInfoHeader {
		return nil, fmt.Errorf("payload of %d bytes, want at least %d", len(p), eventInfoHeader)
	}
	d := &Description{}
	copy(d.ProviderGUID[:], p[0:16])
	d.ID = le.Uint16(p[32:])
	d.Version = p[34]
	d.Level = p[36]
	d.Opcode = p[37]
	d.Task = le.Uint16(p[38:])
	d.Keywords = le.Uint64(p[40:])
	d.Classic = le.Uint32(p[48:]) == decodingWBEM
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
	names := []*string{&d.Provider, nil, nil, nil, &d.TaskName, &d.OpcodeName}
	for i, dst := range names {
		if dst != nil {
			if *dst, err = str(52 + 4*i); err != nil {
				return nil, err
			}
		}
	}
	// EventNameOffset (Windows 10 and later; the activity ID name before).
	eventName := ""
	if !d.Classic {
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
	if d.Fields, err = buildFields(props, 0, int(top), 0, &budget); err != nil {
		return nil, err
	}
	d.OpcodeName = trimWin(d.OpcodeName)
	d.Name = eventName
	d.setName()
	return d, nil
}

// rawProperty is an EVENT_PROPERTY_INFO as stored.
type rawProperty struct {
	flags         uint32
	name, mapName string
	a, b          uint16 // InType, OutType; or StructStartIndex, NumOfStructMembers
	count, length uint16 // values, or property indexes
}

// buildFields turns properties [from, to) into fields; count and length
// references must point into the same level before the field.
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
		f := Field{Name: rp.name, MapName: rp.mapName}
		ref := func(idx uint16, what string) (FieldRef, error) {
			if int(idx) < from || int(idx) >= i {
				return 0, fmt.Errorf("property %d (%s): %s property %d is not an earlier property of its level", i, rp.name, what, idx)
			}
			return RefTo(int(idx) - from), nil
		}
		var err error
		count, countFrom, array := int(rp.count), FieldRef(0), false
		if rp.flags&propParamCount != 0 {
			if countFrom, err = ref(rp.count, "count"); err != nil {
				return nil, err
			}
			array = true
		} else {
			array = rp.count > 1 || rp.flags&propParamFixedCount != 0
		}
		if rp.flags&propParamLength != 0 {
			if f.LengthFrom, err = ref(rp.length, "length"); err != nil {
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
			f.Kind = Struct
			if f.Fields, err = buildFields(props, start, start+num, depth+1, budget); err != nil {
				return nil, err
			}
		} else if !tdhField(&f, inType(rp.a), outType(rp.b)) {
			return nil, fmt.Errorf("property %d (%s): in-type %d is not one this package decodes", i, rp.name, rp.a)
		}
		if array {
			f = arrayOf(f, count, countFrom, false)
		}
		fs = append(fs, f)
	}
	return fs, nil
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

// ParseEventMapInfo parses the payload of a KernelTraceControl
// MetaData/EventMapInfo event: the provider's GUID, then the
// EVENT_MAP_INFO of one map.
func ParseEventMapInfo(p []byte) (clrimpl.GUID, *Map, error) {
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
	entries := make([]MapEntry, n)
	for i := range entries {
		b := mi[mapInfoHeader+8*i:]
		s, ok := utf16At(mi, int64(le.Uint32(b)))
		if !ok {
			return g, nil, fmt.Errorf("map %s entry %d: name at offset %d has no terminator", name, i, le.Uint32(b))
		}
		entries[i] = MapEntry{Value: uint64(le.Uint32(b[4:])), Name: trimSpaceRight(s)}
	}
	return g, NewMap(name, flags&mapBitMap != 0, entries), nil
}

// utf16At reads the NUL-terminated UTF-16LE string at off.
func utf16At(p []byte, off int64) (string, bool) {
	if off < 0 || off > int64(len(p)) {
		return "", false
	}
	s, _, ok := clrimpl.ReadUTF16Z(p, int(off))
	return s.String(), ok
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
func (d *Description) setName() {
	switch {
	case d.TaskName == "" && d.Name != "":
	case d.TaskName == "":
		d.Name = "EventID(" + strconv.Itoa(int(d.ID)) + ")"
	case d.Opcode == 0 || d.OpcodeName == "" || d.OpcodeName == "Info":
		d.Name = d.TaskName
	default:
		d.Name = d.TaskName + "/" + d.OpcodeName
	}
}
