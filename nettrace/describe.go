package nettrace

import (
	"github.com/clrgo/clrevents/dynamic"
)

// Describe returns the metadata's field list as a description package
// dynamic interprets (writing payloads as JSON, text or columns, and
// giving the event's clrimpl.Descriptor), or nil when the metadata
// describes no fields or its field list did not parse (FieldsErr). The
// Reader makes it when it reads the metadata; for a Metadata made by hand
// the first call makes it, so do not call it from several goroutines at
// once then.
func (m *Metadata) Describe() *dynamic.Description {
	if len(m.Fields) == 0 || m.FieldsErr != nil {
		return nil
	}
	return m.describe()
}

// describe makes (once) the description of m's field list, whatever its
// length.
func (m *Metadata) describe() *dynamic.Description {
	if m.desc == nil {
		m.desc = &dynamic.Description{
			ProviderGUID: m.ProviderGUID, Provider: m.Provider, ID: m.EventID, Version: m.Version,
			Opcode: m.Opcode, Level: m.Level, Keywords: m.Keywords, Name: m.Name, Fields: dynamicFields(m.Fields),
		}
	}
	return m.desc
}

// AppendJSON decodes payload by m.Fields and appends it to dst as a JSON
// object of field name → value, as its description (Describe) writes it: integers
// become numbers, Boolean fields true/false, strings, characters, GUIDs
// and DateTimes (RFC 3339, UTC) strings, Objects nested JSON objects and
// arrays JSON arrays (of characters one string). Bytes past the last
// field are ignored. On a payload that does not fit the fields it returns
// dst extended by a partial object and a *dynamic.FieldError; it never
// panics. A Metadata without Fields gives "{}".
func (m *Metadata) AppendJSON(dst, payload []byte) ([]byte, error) {
	return m.describe().AppendJSON(dst, payload, 8)
}

// AppendText is AppendJSON's compact text form: space-separated
// name=value pairs, strings quoted, nested objects as {a=1 b=2} and arrays
// as [1 2 3]. For example: `Name="RuntimeInit" Timestamp=11111925598665`.
func (m *Metadata) AppendText(dst, payload []byte) ([]byte, error) {
	return m.describe().AppendText(dst, payload, 8)
}

// dynamicFields are the fields of package dynamic's model for a field
// list: EventSource's types, with its floats in their shortest 'g' form.
func dynamicFields(fs []Field) []dynamic.Field {
	if fs == nil {
		return nil
	}
	out := make([]dynamic.Field, len(fs))
	for i := range fs {
		out[i] = dynamicField(&fs[i])
	}
	return out
}

// typeKinds are the kinds of the scalar type codes.
var typeKinds = [...]dynamic.Kind{
	TypeBoolean32: dynamic.Bool32, TypeUTF16CodeUnit: dynamic.Char16, TypeSByte: dynamic.Int8,
	TypeByte: dynamic.Uint8, TypeInt16: dynamic.Int16, TypeUInt16: dynamic.Uint16, TypeInt32: dynamic.Int32,
	TypeUInt32: dynamic.Uint32, TypeInt64: dynamic.Int64, TypeUInt64: dynamic.Uint64, TypeSingle: dynamic.Float32,
	TypeDouble: dynamic.Float64, TypeDecimal: dynamic.Decimal, TypeDateTime: dynamic.DateTime, TypeGUID: dynamic.GUID,
	TypeNullTerminatedUTF16String: dynamic.String16, TypeVarInt: dynamic.VarInt, TypeVarUInt: dynamic.VarUint,
	TypeUTF8CodeUnit: dynamic.Char8, TypeBoolean8: dynamic.Uint8,
}

func dynamicField(f *Field) dynamic.Field {
	d := dynamic.Field{Name: f.Name}
	switch f.Type {
	case TypeObject:
		d.Kind, d.Fields = dynamic.Struct, dynamicFields(f.Fields)
	case TypeArray, TypeFixedLengthArray, TypeRelLoc, TypeDataLoc:
		switch f.Type {
		case TypeArray:
			d.Kind, d.PrefixCount = dynamic.Array, true
		case TypeFixedLengthArray:
			d.Kind, d.Count = dynamic.Array, int(f.Count)
		case TypeRelLoc:
			d.Kind = dynamic.RelLoc
		default:
			d.Kind = dynamic.DataLoc
		}
		if f.Elem != nil {
			e := dynamicField(f.Elem)
			d.Elem = &e
			if e.Kind == dynamic.Char16 || e.Kind == dynamic.Char8 {
				// A string up to its first NUL, as TraceEvent reads
				// every array of characters.
				d.Format = dynamic.FormatPadded
			}
		}
	default:
		if int(f.Type) < len(typeKinds) {
			d.Kind = typeKinds[f.Type] // Invalid for a code that is not a type: it does not decode
		}
		switch f.Type {
		case TypeBoolean8:
			d.Format = dynamic.FormatBool
		case TypeSingle, TypeDouble:
			d.Format = dynamic.FormatG
		}
	}
	return d
}
