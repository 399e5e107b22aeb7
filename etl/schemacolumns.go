package etl

import (
	"math"
	"net/netip"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
)

// Columns describes the payload as table columns, by the flattening rules
// of the generated event types (see clrimpl.Column): a scalar field is a
// column of its type, named as the trace names it; a field bound to a map
// is its number and Field_name; strings, character arrays, SIDs and
// addresses are UTF-8 strings; times are RFC 3339 strings (UTC), as in
// the JSON lines; binary data is bytes; an array or a struct is one JSON
// column. AppendColumns writes a row of them.
func (s *EventSchema) Columns() []clrimpl.Column {
	cols := make([]clrimpl.Column, 0, len(s.Fields))
	for i := range s.Fields {
		f := &s.Fields[i]
		k, hex := f.columnKind()
		cols = append(cols, clrimpl.Column{Name: f.Name, Kind: k, Hex: hex})
		if f.Map != nil && k != clrimpl.ColumnJSON {
			cols = append(cols, clrimpl.Column{Name: f.Name + "_name", Kind: clrimpl.ColumnString})
		}
	}
	return cols
}

// columnKind is the kind of f's column, and whether the JSON lines write
// it in hex.
func (f *Field) columnKind() (clrimpl.ColumnKind, bool) {
	if f.Fields != nil || f.Array && f.In != InUnicodeChar && f.In != InAnsiChar {
		return clrimpl.ColumnJSON, false
	}
	hex := f.hex() || f.In == InPointer
	switch f.In {
	case InInt8:
		return clrimpl.ColumnInt8, false
	case InUInt8:
		if f.Out == OutBoolean {
			return clrimpl.ColumnBool, false
		}
		return clrimpl.ColumnUint8, hex
	case InInt16:
		return clrimpl.ColumnInt16, false
	case InUInt16:
		return clrimpl.ColumnUint16, hex
	case InInt32:
		return clrimpl.ColumnInt32, hex
	case InUInt32, InHexInt32:
		switch f.Out {
		case OutIPv4:
			return clrimpl.ColumnString, false
		case OutBoolean:
			return clrimpl.ColumnBool, false
		}
		return clrimpl.ColumnUint32, hex
	case InInt64:
		return clrimpl.ColumnInt64, hex
	case InUInt64, InHexInt64, InPointer, InSizeT:
		return clrimpl.ColumnUint64, hex
	case InFloat:
		return clrimpl.ColumnFloat32, false
	case InDouble:
		return clrimpl.ColumnFloat64, false
	case InBoolean:
		return clrimpl.ColumnBool, false
	case InGUID:
		return clrimpl.ColumnGUID, false
	case InBinary, InManifestCountedBinary, InHexDump:
		if f.Out == OutIPv4 || f.Out == OutIPv6 || f.Out == OutSocketAddress {
			return clrimpl.ColumnString, false
		}
		return clrimpl.ColumnBinary, false
	}
	return clrimpl.ColumnString, false // strings, characters, times, SIDs
}

// AppendColumns appends one row of Columns for payload: exactly one call
// of a per column. A payload that does not fit the fields is an error
// naming the field and its byte offset; the row is then incomplete.
func (s *EventSchema) AppendColumns(a clrimpl.ColumnAppender, payload []byte, ptrSize int) error {
	d := schemaDecoder{p: payload, ptr: ptrSize, json: true}
	var small [16]uint64
	vals := small[:0]
	for i := range s.Fields {
		f := &s.Fields[i]
		kind, _ := f.columnKind()
		var v uint64
		var err error
		d.depth = 0
		d.enter(f.Name)
		if kind == clrimpl.ColumnJSON {
			var out []byte
			if out, v, err = d.field(a.Scratch(), f, vals); err != nil {
				return err
			}
			a.Bytes(out)
		} else if v, err = d.appendColumn(a, f, kind, vals); err != nil {
			return err
		}
		vals = append(vals, v)
	}
	return nil
}

// appendColumn appends the column (or, for a map-bound field, the two
// columns) of a scalar field.
func (d *schemaDecoder) appendColumn(a clrimpl.ColumnAppender, f *Field, kind clrimpl.ColumnKind, vals []uint64) (uint64, error) {
	var u uint64
	var b []byte
	var err error
	if f.Array { // a character array: one string
		w := f.fixedSize(d.ptr)
		b, err = d.str(w*f.Count, w == 2)
	} else {
		u, b, err = d.scalar(f, f.lengthOf(vals))
	}
	if err != nil {
		return 0, err
	}
	switch kind {
	case clrimpl.ColumnBool:
		a.Bool(u != 0)
	case clrimpl.ColumnInt8, clrimpl.ColumnInt16, clrimpl.ColumnInt32, clrimpl.ColumnInt64:
		a.Int(int64(u))
	case clrimpl.ColumnUint16:
		if f.Out == OutPort {
			a.Uint(u>>8 | (u&0xff)<<8)
		} else {
			a.Uint(u)
		}
	case clrimpl.ColumnUint8, clrimpl.ColumnUint32, clrimpl.ColumnUint64:
		a.Uint(u)
	case clrimpl.ColumnFloat32:
		a.Float(float64(math.Float32frombits(uint32(u))))
	case clrimpl.ColumnFloat64:
		a.Float(math.Float64frombits(u))
	case clrimpl.ColumnGUID:
		var g clrimpl.GUID
		copy(g[:], b)
		a.GUID(g)
	case clrimpl.ColumnBinary:
		a.Bytes(b)
	default: // ColumnString
		a.Bytes(d.text(a.Scratch(), f, u, b))
	}
	if f.Map != nil {
		a.Bytes(f.Map.appendText(a.Scratch(), u))
	}
	return u, nil
}

// text is the UTF-8 text of a string column's value.
func (d *schemaDecoder) text(dst []byte, f *Field, u uint64, b []byte) []byte {
	switch f.In {
	case InFileTime:
		return fileTime(int64(u)).AppendFormat(dst, time.RFC3339Nano)
	case InSystemTime:
		return systemTime(b).AppendFormat(dst, time.RFC3339Nano)
	case InSID, InWBEMSID:
		return appendSID(dst, b)
	case InUInt32, InHexInt32:
		return netip.AddrFrom4([4]byte(b)).AppendTo(dst) // OutIPv4
	case InBinary, InManifestCountedBinary, InHexDump:
		dst, _ = appendAddress(dst, f.Out, b)
		return dst
	}
	if f.wide() {
		return clrimpl.MakeUTF16(b).AppendUTF8(dst)
	}
	return clrimpl.MakeAnsi(b).AppendUTF8(dst)
}
