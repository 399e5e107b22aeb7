package clrimpl

import "strconv"

// Columnar output. A generated event type describes its payload as a flat
// list of typed columns (Column, in its EventInfo) and appends one row of
// them to a ColumnAppender (the AppendColumns method), field by field in
// template order, with no reflection and no allocation. The description and
// the appender are neutral: a columnar writer (package dataset writes
// Parquet) adapts them to its library, so generated packages depend on no
// columnar library.
//
// The flattening rules, decided once here for every writer:
//
//   - An integer field is a column of its width and sign; a pointer-sized
//     field is an unsigned 64-bit column (a 32-bit process's pointers fit).
//   - A field bound to a value map or a bit map is two columns: its number
//     (its width and sign) and Field_name, a string with the name as
//     AppendText writes it ("Induced", "Pinning|WeakRef", unknown values as
//     Type(0x…)). The number keeps bit tests and unknown values exact; the
//     name makes queries readable. Go field names have no underscore, so
//     the name column cannot collide with a field.
//   - Strings (UTF-16, ANSI) are UTF-8 strings; GUIDs are GUIDs; binary
//     blobs are bytes.
//   - An array, of scalars or of structs, is one JSON column holding what
//     AppendJSON writes for the field: the same numbers, names and hex
//     strings as the JSON lines.

// ColumnKind is the type of a column's values.
type ColumnKind uint8

// The column kinds.
const (
	ColumnBool ColumnKind = iota + 1
	ColumnInt8
	ColumnInt16
	ColumnInt32
	ColumnInt64
	ColumnUint8
	ColumnUint16
	ColumnUint32
	ColumnUint64
	ColumnFloat32
	ColumnFloat64
	ColumnGUID   // a 16-byte GUID
	ColumnString // UTF-8 text
	ColumnBinary // raw bytes
	ColumnJSON   // a JSON value (an array field)
)

var columnKindNames = [...]string{
	ColumnBool: "bool", ColumnInt8: "int8", ColumnInt16: "int16", ColumnInt32: "int32", ColumnInt64: "int64",
	ColumnUint8: "uint8", ColumnUint16: "uint16", ColumnUint32: "uint32", ColumnUint64: "uint64",
	ColumnFloat32: "float32", ColumnFloat64: "float64", ColumnGUID: "guid", ColumnString: "string",
	ColumnBinary: "binary", ColumnJSON: "json",
}

// String is the kind's lower-case name ("uint32"), or "ColumnKind(n)".
func (k ColumnKind) String() string {
	if int(k) < len(columnKindNames) && columnKindNames[k] != "" {
		return columnKindNames[k]
	}
	return "ColumnKind(" + strconv.Itoa(int(k)) + ")"
}

// Signed reports whether the kind is a signed integer.
func (k ColumnKind) Signed() bool { return k >= ColumnInt8 && k <= ColumnInt64 }

// Unsigned reports whether the kind is an unsigned integer.
func (k ColumnKind) Unsigned() bool { return k >= ColumnUint8 && k <= ColumnUint64 }

// Bits is the width of an integer or float kind in bits, else 0.
func (k ColumnKind) Bits() int {
	switch k {
	case ColumnInt8, ColumnUint8:
		return 8
	case ColumnInt16, ColumnUint16:
		return 16
	case ColumnInt32, ColumnUint32, ColumnFloat32:
		return 32
	case ColumnInt64, ColumnUint64, ColumnFloat64:
		return 64
	}
	return 0
}

// Column describes one column of an event type's rows.
type Column struct {
	// Name is the field's Go name ("Count"), or Field_name for the name
	// column of a map-bound field ("Reason_name").
	Name string
	Kind ColumnKind
	// Hex is set for fields the manifest shows in hex (addresses, IDs,
	// handles): the JSON lines write them as "0x…" strings.
	Hex bool
}

// ColumnAppender receives one row of an event type's columns, in the order
// of its Column list: exactly one call per column. The generated
// AppendColumns methods call it; a columnar writer implements it.
type ColumnAppender interface {
	// Bool appends a ColumnBool value.
	Bool(v bool)
	// Int appends a value of a signed integer column.
	Int(v int64)
	// Uint appends a value of an unsigned integer column.
	Uint(v uint64)
	// Float appends a ColumnFloat32 or ColumnFloat64 value.
	Float(v float64)
	// GUID appends a ColumnGUID value.
	GUID(v GUID)
	// Bytes appends a ColumnString (UTF-8), ColumnBinary or ColumnJSON
	// value. v is valid only during the call: the appender copies it.
	Bytes(v []byte)
	// Scratch returns an empty buffer that the caller may append to and
	// pass to Bytes; the appender reuses it, so nothing allocates in
	// steady state.
	Scratch() []byte
}
