package nettrace

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/clrgo/clrevents/clrimpl"
)

// Columns describes the payload as table columns, by the flattening rules
// of the generated event types (see clrimpl.Column): a scalar field is a
// column of its type, named as the metadata names it; strings, characters,
// character arrays, DateTimes (RFC 3339, UTC) and Decimals are UTF-8
// strings as AppendJSON writes them; an Object, an array of anything but
// characters, and a RelLoc or DataLoc array is one JSON column holding what
// AppendJSON writes for it. AppendColumns writes a row of them.
func (m *Metadata) Columns() []clrimpl.Column {
	cols := make([]clrimpl.Column, 0, len(m.Fields))
	for i := range m.Fields {
		cols = append(cols, clrimpl.Column{Name: m.Fields[i].Name, Kind: columnKind(&m.Fields[i])})
	}
	return cols
}

func columnKind(f *Field) clrimpl.ColumnKind {
	switch f.Type {
	case TypeArray, TypeFixedLengthArray:
		if f.Elem != nil && (f.Elem.Type == TypeUTF16CodeUnit || f.Elem.Type == TypeUTF8CodeUnit) {
			return clrimpl.ColumnString
		}
		return clrimpl.ColumnJSON
	case TypeObject, TypeRelLoc, TypeDataLoc:
		return clrimpl.ColumnJSON
	case TypeBoolean32, TypeBoolean8:
		return clrimpl.ColumnBool
	case TypeSByte:
		return clrimpl.ColumnInt8
	case TypeByte:
		return clrimpl.ColumnUint8
	case TypeInt16:
		return clrimpl.ColumnInt16
	case TypeUInt16:
		return clrimpl.ColumnUint16
	case TypeInt32:
		return clrimpl.ColumnInt32
	case TypeUInt32:
		return clrimpl.ColumnUint32
	case TypeInt64, TypeVarInt:
		return clrimpl.ColumnInt64
	case TypeUInt64, TypeVarUInt:
		return clrimpl.ColumnUint64
	case TypeSingle:
		return clrimpl.ColumnFloat32
	case TypeDouble:
		return clrimpl.ColumnFloat64
	case TypeGUID:
		return clrimpl.ColumnGUID
	}
	return clrimpl.ColumnString // strings, characters, DateTime, Decimal
}

// AppendColumns appends one row of Columns for payload: exactly one call
// of a per column. A payload that does not fit the fields is the
// *PayloadError AppendJSON gives; the row is then incomplete.
func (m *Metadata) AppendColumns(a clrimpl.ColumnAppender, payload []byte) error {
	d := payloadDecoder{m: m, p: payload, json: true}
	for i := range m.Fields {
		f := &m.Fields[i]
		start := d.i
		d.enter(f.Name, -1)
		out, err := d.value(a.Scratch(), f)
		if err != nil {
			return err
		}
		d.leave()
		raw := d.p[start:d.i] // the field's bytes; for Objects and arrays, all of them
		switch kind := columnKind(f); kind {
		case clrimpl.ColumnJSON:
			a.Bytes(out)
		case clrimpl.ColumnBool:
			a.Bool(out[0] == 't')
		case clrimpl.ColumnInt8:
			a.Int(int64(int8(raw[0])))
		case clrimpl.ColumnInt16:
			a.Int(int64(int16(binary.LittleEndian.Uint16(raw))))
		case clrimpl.ColumnInt32:
			a.Int(int64(int32(binary.LittleEndian.Uint32(raw))))
		case clrimpl.ColumnInt64:
			if f.Type == TypeVarInt {
				v, _ := uvarint(raw)
				a.Int(int64(v>>1) ^ -int64(v&1))
			} else {
				a.Int(int64(binary.LittleEndian.Uint64(raw)))
			}
		case clrimpl.ColumnUint8:
			a.Uint(uint64(raw[0]))
		case clrimpl.ColumnUint16:
			a.Uint(uint64(binary.LittleEndian.Uint16(raw)))
		case clrimpl.ColumnUint32:
			a.Uint(uint64(binary.LittleEndian.Uint32(raw)))
		case clrimpl.ColumnUint64:
			if f.Type == TypeVarUInt {
				v, _ := uvarint(raw)
				a.Uint(v)
			} else {
				a.Uint(binary.LittleEndian.Uint64(raw))
			}
		case clrimpl.ColumnFloat32:
			a.Float(float64(math.Float32frombits(binary.LittleEndian.Uint32(raw))))
		case clrimpl.ColumnFloat64:
			a.Float(math.Float64frombits(binary.LittleEndian.Uint64(raw)))
		case clrimpl.ColumnGUID:
			var g clrimpl.GUID
			copy(g[:], raw)
			a.GUID(g)
		default: // ColumnString
			a.Bytes(stringColumn(a.Scratch(), f, raw, out))
		}
	}
	return nil
}

// stringColumn is the UTF-8 text of a string column's value: the
// characters of a string or character array, as AppendJSON reads them
// (unpaired surrogates and invalid UTF-8 as U+FFFD), or AppendJSON's text
// of a DateTime or Decimal without its quotes.
func stringColumn(dst []byte, f *Field, raw, out []byte) []byte {
	switch f.Type {
	case TypeNullTerminatedUTF16String:
		return appendUTF16AsUTF8(dst, raw[:len(raw)-2])
	case TypeUTF16CodeUnit:
		return appendUTF16AsUTF8(dst, raw)
	case TypeUTF8CodeUnit:
		return appendValidUTF8(dst, raw)
	case TypeArray, TypeFixedLengthArray:
		if f.Type == TypeArray {
			raw = raw[2:] // the count
		}
		if f.Elem.Type == TypeUTF16CodeUnit {
			return appendUTF16AsUTF8(dst, raw)
		}
		return appendValidUTF8(dst, raw)
	}
	if n := len(out); n >= 2 && out[0] == '"' && out[n-1] == '"' {
		out = out[1 : n-1] // a DateTime or Decimal: no escapes inside
	}
	return append(dst, out...)
}

// appendUTF16AsUTF8 appends UTF-16LE b as UTF-8, as appendQuotedUTF16 reads it.
func appendUTF16AsUTF8(dst, b []byte) []byte {
	return clrimpl.MakeUTF16(b[:len(b)&^1]).AppendUTF8(dst)
}

// appendValidUTF8 appends b with each invalid byte as U+FFFD, as
// appendJSONBytes reads it.
func appendValidUTF8(dst, b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}
