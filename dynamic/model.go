package dynamic

import (
	"cmp"
	"slices"
	"strconv"
	"sync"

	"github.com/clrgo/clrevents/clrimpl"
)

// Kind is a field's wire type: how its value is laid out in the payload.
// How the value is shown is its Format (and its Map).
type Kind uint8

// The kinds. Pointer-sized kinds take the event's pointer size (4 or 8).
const (
	// Invalid is the zero Kind; a field of it does not decode.
	Invalid Kind = iota
	// Struct is the fields Fields, one after the other.
	Struct
	// Array is Elem repeated: Count times, or as many times as the earlier
	// field CountFrom names says, or, with PrefixCount, as many times as a
	// uint16 before the elements says. An array of characters (Char16,
	// Char8, AnsiChar) is one string.
	Array
	// RelLoc is a uint32 holding size<<16 | offset: Elem repeated over
	// size bytes at offset, counted from just after the field (NetTrace
	// V6). Elem must have a fixed size.
	RelLoc
	// DataLoc is RelLoc with the offset counted from the payload's start.
	DataLoc

	Int8
	Uint8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Uint64
	// VarInt is a zig-zag LEB128 int64; VarUint a LEB128 uint64 (V6).
	VarInt
	VarUint
	Float32
	Float64
	// Bool32 is a 4-byte Boolean.
	Bool32
	// Pointer is pointer-sized, shown in hex.
	Pointer
	// SizeT is pointer-sized.
	SizeT
	GUID
	// FileTime is a Windows FILETIME: 100 ns ticks since 1601 (UTC), as
	// TDH describes one. 0 is Go's zero time.
	FileTime
	// DateTime is a .NET DateTime as EventSource writes it: a FILETIME,
	// shown as a number when it is outside the years 1601 to 9999.
	DateTime
	// SystemTime is a 16-byte SYSTEMTIME, shown in RFC 3339; one whose
	// parts are no date (unset: all zeros; a month 13, the 31st of a
	// 30-day month, …) shows as its parts, "YYYY-MM-DD hh:mm:ss.mmm".
	SystemTime
	// Decimal is a 16-byte System.Decimal.
	Decimal
	// Char16 is one UTF-16 code unit; Char8 one UTF-8 code unit;
	// AnsiChar one 8-bit character (valid UTF-8 as it is, other bytes as
	// Latin-1).
	Char16
	Char8
	AnsiChar
	// String16 is a UTF-16LE string: Length (or LengthFrom's value)
	// characters when that is more than 0, up to its first NUL; else
	// NUL-terminated. AnsiString is the same in 8-bit characters.
	String16
	AnsiString
	// String16Rest and AnsiStringRest take the rest of the payload, up to
	// the first NUL.
	String16Rest
	AnsiStringRest
	// String16Counted and AnsiStringCounted follow a uint16 byte count
	// (little-endian; big-endian for the ...BE kinds), up to the first NUL.
	String16Counted
	AnsiStringCounted
	String16CountedBE
	AnsiStringCountedBE
	// Binary is Length (or LengthFrom's value) bytes; BinaryCounted
	// follows a uint16 byte count, BinaryCounted32 a uint32 one.
	Binary
	BinaryCounted
	BinaryCounted32
	// SID is a security identifier, its own length; WBEMSID a TOKEN_USER
	// (two pointers, the first 0 when there is no SID) and then a SID.
	SID
	WBEMSID

	numKinds
)

var kindNames = [numKinds]string{
	Invalid: "Invalid", Struct: "Struct", Array: "Array", RelLoc: "RelLoc", DataLoc: "DataLoc",
	Int8: "Int8", Uint8: "Uint8", Int16: "Int16", Uint16: "Uint16", Int32: "Int32", Uint32: "Uint32",
	Int64: "Int64", Uint64: "Uint64", VarInt: "VarInt", VarUint: "VarUint", Float32: "Float32",
	Float64: "Float64", Bool32: "Bool32", Pointer: "Pointer", SizeT: "SizeT", GUID: "GUID",
	FileTime: "FileTime", DateTime: "DateTime", SystemTime: "SystemTime", Decimal: "Decimal",
	Char16: "Char16", Char8: "Char8", AnsiChar: "AnsiChar", String16: "String16", AnsiString: "AnsiString",
	String16Rest: "String16Rest", AnsiStringRest: "AnsiStringRest", String16Counted: "String16Counted",
	AnsiStringCounted: "AnsiStringCounted", String16CountedBE: "String16CountedBE",
	AnsiStringCountedBE: "AnsiStringCountedBE", Binary: "Binary", BinaryCounted: "BinaryCounted",
	BinaryCounted32: "BinaryCounted32", SID: "SID", WBEMSID: "WBEMSID",
}

// String returns the kind's name ("Uint32"), or "Kind(n)".
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// size is the wire size of one value of a scalar kind (ptr for the
// pointer-sized ones), or 0 when it varies or k is composite.
func (k Kind) size(ptr int) int {
	switch k {
	case Int8, Uint8, Char8, AnsiChar:
		return 1
	case Int16, Uint16, Char16:
		return 2
	case Int32, Uint32, Float32, Bool32, RelLoc, DataLoc:
		return 4
	case Int64, Uint64, Float64, FileTime, DateTime:
		return 8
	case GUID, SystemTime, Decimal:
		return 16
	case Pointer, SizeT:
		return ptr
	}
	return 0
}

// isChar reports whether k is a character, whose arrays are strings.
func (k Kind) isChar() bool { return k == Char16 || k == Char8 || k == AnsiChar }

// signed reports whether k is a signed integer.
func (k Kind) signed() bool {
	switch k {
	case Int8, Int16, Int32, Int64, VarInt:
		return true
	}
	return false
}

// Format says how an integer, binary or character-array field is shown,
// beyond what its Kind says.
type Format uint8

// The formats.
const (
	// FormatDefault shows the value as its kind does.
	FormatDefault Format = iota
	// FormatHex shows an integer as "0x…" (a quoted string in JSON).
	FormatHex
	// FormatBool shows an integer as true or false.
	FormatBool
	// FormatPort shows a 16-bit integer as a port in network byte order.
	FormatPort
	// FormatIPv4 shows 4 bytes (a Uint32 or Binary) as an IPv4 address.
	FormatIPv4
	// FormatIPv6 shows 16 bytes of Binary as an IPv6 address.
	FormatIPv6
	// FormatSocketAddress shows Binary holding a SOCKADDR_IN or
	// SOCKADDR_IN6 as "a.b.c.d:port" or "[v6]:port".
	FormatSocketAddress
	// FormatG shows a float in strconv's 'g' form, the shortest that reads
	// back at its own precision, and NaN and the infinities as strings:
	// EventSource's floats as TraceEvent shows them. Without it a float is
	// a JSON number as encoding/json writes it, and NaN and the
	// infinities null.
	FormatG
	// FormatPadded shows an array of characters up to its first NUL, as a
	// NUL-padded fixed-size string; without it every character is shown.
	FormatPadded
)

// FieldRef names an earlier field of the same level (the event's top
// level, or the members of one struct) by position: RefTo(i) is the field
// at index i. The zero FieldRef names none.
type FieldRef uint16

// RefTo returns the FieldRef of the field at index i (0 ≤ i < 65535).
func RefTo(i int) FieldRef { return FieldRef(i + 1) }

// Index returns the index of the field r names, and false for none.
func (r FieldRef) Index() (int, bool) { return int(r) - 1, r != 0 }

// Field describes one payload field, or an array's element (Name "").
type Field struct {
	Name   string
	Kind   Kind
	Format Format
	// Map names the field's values (nil when it has none, or when the
	// trace has not described the map yet); MapName is the name of the
	// map the description gives, "" for none.
	Map     *Map
	MapName string
	// Elem is the element of an Array, RelLoc or DataLoc.
	Elem *Field
	// Count is an Array's element count, unless CountFrom names the
	// earlier field that gives it, or PrefixCount says a uint16 before
	// the elements does.
	Count       int
	CountFrom   FieldRef
	PrefixCount bool
	// Length is the size of a String16 or AnsiString (characters) or of
	// Binary (bytes), unless LengthFrom names the earlier field that gives
	// it. An array element's LengthFrom names a field of the array's
	// level.
	Length     int
	LengthFrom FieldRef
	// Fields are a Struct's members.
	Fields []Field

	// key is the name as a JSON object key with its colon, made once
	// (prepare); "" until then.
	key string
	// refs is, for a Struct, how many of its members' values later
	// members refer to (the highest index named plus one).
	refs int
}

// Map is a value map or a bit map: names for a field's values. Make one
// with NewMap.
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

// NewMap returns a map of the entries: a value map, or a bit map when
// bits is set, whose entries it puts in ascending order of value, the
// order its flags are named in.
func NewMap(name string, bits bool, entries []MapEntry) *Map {
	m := &Map{Name: name, Bits: bits, Entries: entries}
	if bits {
		slices.SortStableFunc(m.Entries, func(a, b MapEntry) int { return cmp.Compare(a.Value, b.Value) })
		for _, e := range m.Entries {
			if e.Value == 0 {
				m.zero = e.Name
			}
			m.flags = append(m.flags, clrimpl.FlagName{Value: e.Value, Name: e.Name})
		}
	}
	return m
}

// appendText appends the map's name for v, as the generated enums write
// theirs: a value map's entry, or "Map(0x1a)" for a value it does not
// name; a bit map's set flags joined by "|", with any bits no flag names
// in hex.
func (m *Map) appendText(dst []byte, v uint64) []byte {
	if m.Bits {
		return clrimpl.AppendFlags(dst, v, m.flags, m.zero)
	}
	for _, e := range m.Entries {
		if e.Value == v {
			return append(dst, e.Name...)
		}
	}
	return clrimpl.AppendUnknown(dst, m.Name, v)
}

// appendName appends the map's name for v as a JSON string.
func (m *Map) appendName(dst []byte, v uint64) []byte {
	var buf [64]byte
	return clrimpl.MakeAnsi(m.appendText(buf[:0], v)).AppendJSON(dst) // UTF-8 as it is
}

// Description describes one kind of event at run time: its identity, its
// name and its payload's fields. It writes payloads by them (AppendJSON,
// AppendText, AppendColumns: it is a clrimpl.FieldWriter) and gives the
// clrimpl.Descriptor consumers use (Descriptor). The first call of any of
// those methods fixes the description: do not modify it afterwards.
type Description struct {
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
	// Name is the event's name as the trace's own tools give it: for ETW
	// descriptions TraceEvent's (the task, then "/" and the opcode unless
	// the opcode is Info; the event's own name where it has no task), for
	// EventSource metadata the metadata's.
	Name   string
	Fields []Field
	// Classic says the description is of a classic (MOF) event class,
	// whose events are told apart by opcode, not by ID.
	Classic bool

	once sync.Once
	refs int // how many top-level values later fields refer to
	desc clrimpl.Descriptor
}

// Descriptor returns the description as a clrimpl.Descriptor: its
// identity and name, its columns, and d itself as the FieldWriter.
func (d *Description) Descriptor() *clrimpl.Descriptor {
	d.once.Do(d.init)
	return &d.desc
}

// Columns describes the payload as table columns, by the flattening rules
// of the generated event types (see clrimpl.Column): a scalar field is a
// column of its type, named as the trace names it; a field bound to a map
// is its number and Field_name; strings, characters, character arrays,
// SIDs, addresses, times and Decimals are UTF-8 strings (times RFC 3339,
// UTC, as in the JSON form); binary data is bytes; an array, a struct and
// a RelLoc or DataLoc is one JSON column holding what AppendJSON writes
// for it. AppendColumns writes a row of them.
func (d *Description) Columns() []clrimpl.Column { return d.Descriptor().Columns }

func (d *Description) init() {
	d.refs = prepare(d.Fields)
	cols := make([]clrimpl.Column, 0, len(d.Fields))
	for i := range d.Fields {
		f := &d.Fields[i]
		k, hex := f.column()
		cols = append(cols, clrimpl.Column{Name: f.Name, Kind: k, Hex: hex})
		if f.Map != nil && k != clrimpl.ColumnJSON {
			cols = append(cols, clrimpl.Column{Name: f.Name + "_name", Kind: clrimpl.ColumnString})
		}
	}
	d.desc = clrimpl.Descriptor{
		Provider: d.Provider, ProviderGUID: d.ProviderGUID, ID: d.ID, Version: d.Version,
		Name: d.Name, DisplayName: d.Name, Task: d.Task, Opcode: clrimpl.Opcode(d.Opcode),
		Level: clrimpl.Level(d.Level), Keywords: d.Keywords, Columns: cols, Fields: d,
	}
}

// prepare makes each field's JSON key and each level's count of values
// referred to, once: fields prepared before (shared between descriptions)
// are left alone. It returns the level's count.
func prepare(fs []Field) int {
	refs := 0
	for i := range fs {
		f := &fs[i]
		if f.key == "" {
			f.key = string(append(clrimpl.AppendJSONString(nil, f.Name), ':'))
			f.refs = prepare(f.Fields)
			if f.Elem != nil {
				prepareElem(f.Elem)
			}
		}
		refs = max(refs, f.levelRefs())
	}
	return refs
}

// prepareElem prepares an array's element (and its elements, and its
// members).
func prepareElem(e *Field) {
	if e.key != "" {
		return
	}
	e.key = string(append(clrimpl.AppendJSONString(nil, e.Name), ':'))
	e.refs = prepare(e.Fields)
	if e.Elem != nil {
		prepareElem(e.Elem)
	}
}

// levelRefs is how many values of f's level f refers to: its own count
// and length, and its elements' lengths.
func (f *Field) levelRefs() int {
	n := max(int(f.CountFrom), int(f.LengthFrom))
	for e := f.Elem; e != nil; e = e.Elem {
		n = max(n, int(e.LengthFrom))
	}
	return n
}

// column is the kind of f's column, and whether the JSON form writes it
// in hex.
func (f *Field) column() (clrimpl.ColumnKind, bool) {
	switch f.Kind {
	case Struct, RelLoc, DataLoc:
		return clrimpl.ColumnJSON, false
	case Array:
		if f.Elem != nil && f.Elem.Kind.isChar() {
			return clrimpl.ColumnString, false
		}
		return clrimpl.ColumnJSON, false
	}
	hex := f.Format == FormatHex || f.Kind == Pointer
	switch f.Kind {
	case Int8:
		return clrimpl.ColumnInt8, false
	case Uint8:
		if f.Format == FormatBool {
			return clrimpl.ColumnBool, false
		}
		return clrimpl.ColumnUint8, hex
	case Int16:
		return clrimpl.ColumnInt16, false
	case Uint16:
		return clrimpl.ColumnUint16, hex
	case Int32:
		return clrimpl.ColumnInt32, hex
	case Uint32:
		switch f.Format {
		case FormatIPv4:
			return clrimpl.ColumnString, false
		case FormatBool:
			return clrimpl.ColumnBool, false
		}
		return clrimpl.ColumnUint32, hex
	case Int64, VarInt:
		return clrimpl.ColumnInt64, hex
	case Uint64, Pointer, SizeT, VarUint:
		return clrimpl.ColumnUint64, hex
	case Float32:
		return clrimpl.ColumnFloat32, false
	case Float64:
		return clrimpl.ColumnFloat64, false
	case Bool32:
		return clrimpl.ColumnBool, false
	case GUID:
		return clrimpl.ColumnGUID, false
	case Binary, BinaryCounted, BinaryCounted32:
		switch f.Format {
		case FormatIPv4, FormatIPv6, FormatSocketAddress:
			return clrimpl.ColumnString, false
		}
		return clrimpl.ColumnBinary, false
	}
	return clrimpl.ColumnString, false // strings, characters, times, SIDs, Decimals
}

// label names the event in errors: "Provider/Name", with the GUID for a
// provider without a name and "id N" for an event without one.
func (d *Description) label() string {
	p := d.Provider
	if p == "" && !d.ProviderGUID.IsZero() {
		p = d.ProviderGUID.String()
	}
	if d.Name != "" {
		return p + "/" + d.Name
	}
	return p + "/id " + strconv.Itoa(int(d.ID))
}
