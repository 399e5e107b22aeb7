package interp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/clrgo/clrevents/schema"
)

// Value is a decoded event, struct element or field. Which members are set
// depends on Kind:
//
//   - integers, pointers, ports and booleans: Uint holds uint64 of the Go
//     value (sign-extended for signed kinds; 0 or 1 for a boolean; for a
//     field bound to a map, the value converted to the map's type first,
//     as the generated enum type holds it; a port in host order); Int
//     holds the signed value.
//   - FILETIMEs: Int, the 100 ns ticks since 1601.
//   - addresses and SIDs: Raw, their wire bytes (a SID's TOKEN_USER
//     included).
//   - floats: Float (a win:Float widened to float64).
//   - GUIDs: GUID, in wire layout.
//   - strings and blobs: Raw, the bytes without terminator (UTF-16LE for
//     win:UnicodeString).
//   - count= arrays of scalars: Raw, the elements' wire bytes; see Len
//     and Index.
//   - arrays of structs: Elems, each a KindStruct value with Fields.
//   - an event or struct element: Fields, in wire order.
//
// Raw aliases the payload.
type Value struct {
	Event  *schema.LEvent // set on an event's value
	Field  *schema.LField // the field this is the value of; nil for events and elements
	Kind   schema.Kind
	Uint   uint64
	Int    int64
	Float  float64
	GUID   [16]byte
	Raw    []byte
	Fields []Value
	Elems  []Value

	ptrSize int
	f       *field
}

// Get returns the field with the given manifest name, or nil.
func (v *Value) Get(name string) *Value {
	for i := range v.Fields {
		if v.Fields[i].Field != nil && v.Fields[i].Field.Name == name {
			return &v.Fields[i]
		}
	}
	return nil
}

// IsArray reports whether v is a count= array (of scalars or structs).
func (v *Value) IsArray() bool {
	return v.Field != nil && (v.Field.IsArray() || v.Kind == schema.KindStruct)
}

// Len is the number of elements of an array value.
func (v *Value) Len() int {
	if v.Kind == schema.KindStruct {
		return len(v.Elems)
	}
	if v.f == nil || !v.Field.IsArray() {
		return 0
	}
	return len(v.Raw) / elemSize(v.f, v.ptrSize)
}

// Index returns element i of an array of scalars, as a scalar Value. It
// panics if i is out of range.
func (v *Value) Index(i int) Value {
	if v.Kind == schema.KindStruct {
		return v.Elems[i]
	}
	n := elemSize(v.f, v.ptrSize)
	if i < 0 || i >= v.Len() {
		panic(fmt.Sprintf("interp: index %d out of range [0:%d]", i, v.Len()))
	}
	e := Value{Field: v.Field, Kind: v.Kind, ptrSize: v.ptrSize}
	setScalar(&e, v.Kind, v.Raw[i*n:(i+1)*n], v.ptrSize)
	return e
}

// GoName is the field's name in the generated Go types (JSON keys a field
// by its schema name, Field.Name).
func (v *Value) GoName() string {
	if v.f == nil {
		return ""
	}
	return v.f.goName
}

// String returns a string value decoded to UTF-8 (unpaired surrogates and,
// for ANSI strings, bytes that are not UTF-8 read as Latin-1), a blob in
// hex, and any other value as its JSON text.
func (v *Value) String() string {
	switch v.Kind {
	case schema.KindUTF16:
		return utf16String(v.Raw)
	case schema.KindAnsi:
		return ansiString(v.Raw)
	}
	return string(v.appendJSON(nil))
}

// Text returns a map-bound value's name as the generated enum prints it
// ("AllocSmall", "Flag1|Flag2", "GCReason(0x1a)"); for other values it is
// String.
func (v *Value) Text() string {
	if v.f != nil && v.f.enum != nil && !v.Field.IsArray() {
		return string(v.f.enum.appendText(nil, v.Uint))
	}
	return v.String()
}

// EnumName returns the names a map gives the value, without the unknown
// forms: for a valueMap the single name, for a bitMap the set flags. ok is
// false when the field is not map-bound or bits remain that no name covers.
func (v *Value) EnumName() (names []string, ok bool) {
	if v.f == nil || v.f.enum == nil {
		return nil, false
	}
	en := v.f.enum
	if !en.bitmap {
		for _, e := range en.entries {
			if e.value == v.Uint {
				return []string{e.name}, true
			}
		}
		return nil, false
	}
	if v.Uint == 0 {
		if en.zero != "" {
			return []string{en.zero}, true
		}
		return nil, true
	}
	rest := v.Uint
	for _, e := range en.sortedFlags() {
		if v.Uint&e.value == e.value {
			names = append(names, e.name)
			rest &^= e.value
		}
	}
	return names, rest == 0
}

// AppendJSON appends v as JSON, byte for byte what the generated
// AppendJSON writes: an event or element as an object keyed by the fields'
// schema names, in wire order or the order its template shows them in
// (only those), map-bound values by name, hex fields and pointers as
// "0x…" strings, blobs as hex, GUIDs in canonical form, addresses, times
// and SIDs as strings.
func (v *Value) AppendJSON(dst []byte) []byte { return v.appendJSON(dst) }

// shown are the fields of an event or element the JSON writes, in order.
func (v *Value) shown() []*Value {
	out := make([]*Value, 0, len(v.Fields))
	if v.Event != nil && v.Event.Template != nil && len(v.Event.Template.Show) > 0 {
		for _, lf := range v.Event.Template.Shown {
			out = append(out, &v.Fields[lf.Index])
		}
		return out
	}
	for i := range v.Fields {
		out = append(out, &v.Fields[i])
	}
	return out
}

func (v *Value) appendJSON(dst []byte) []byte {
	if v.Field == nil || (v.Kind == schema.KindStruct && v.Fields != nil) {
		// An event or a struct element.
		fs := v.shown()
		if len(fs) == 0 {
			return append(dst, "{}"...)
		}
		for i, f := range fs {
			if i == 0 {
				dst = append(dst, '{')
			} else {
				dst = append(dst, ',')
			}
			dst = jsonString(dst, f.Field.Name)
			dst = append(dst, ':')
			dst = f.appendJSON(dst)
		}
		return append(dst, '}')
	}
	lf := v.Field
	if v.Kind == schema.KindStruct {
		dst = append(dst, '[')
		for i := range v.Elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			e := v.Elems[i]
			dst = e.appendJSON(dst)
		}
		return append(dst, ']')
	}
	if lf.IsArray() {
		hex := lf.Kind == schema.KindPointer ||
			lf.Hex && (lf.Kind == schema.KindUint32 || lf.Kind == schema.KindUint64)
		dst = append(dst, '[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			e := v.Index(i)
			dst = e.appendScalar(dst, hex, nil)
		}
		return append(dst, ']')
	}
	return v.appendScalar(dst, lf.Hex, v.f.enum)
}

// appendScalar appends one scalar, string or blob.
func (v *Value) appendScalar(dst []byte, hex bool, en *enum) []byte {
	if en != nil {
		dst = append(dst, '"')
		dst = en.appendText(dst, v.Uint)
		return append(dst, '"')
	}
	switch v.Kind {
	case schema.KindUint8, schema.KindUint16, schema.KindUint32, schema.KindUint64, schema.KindPointer:
		if hex {
			return append(dst, `"0x`+strconv.FormatUint(v.Uint, 16)+`"`...)
		}
		return strconv.AppendUint(dst, v.Uint, 10)
	case schema.KindInt8, schema.KindInt16, schema.KindInt32, schema.KindInt64:
		if hex {
			// The bits at the field's width.
			sz, _ := v.Kind.FixedSize()
			u := v.Uint
			if sz.Bytes < 8 {
				u &= 1<<(8*sz.Bytes) - 1
			}
			return append(dst, `"0x`+strconv.FormatUint(u, 16)+`"`...)
		}
		return strconv.AppendInt(dst, v.Int, 10)
	case schema.KindFloat32, schema.KindFloat64:
		if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
			return append(dst, "null"...)
		}
		b, _ := json.Marshal(v.Float)
		return append(dst, b...)
	case schema.KindBool:
		return strconv.AppendBool(dst, v.Uint != 0)
	case schema.KindGUID:
		return append(dst, `"`+guidString(v.GUID)+`"`...)
	case schema.KindUTF16:
		raw := v.Raw
		if v.Field != nil && v.Field.Padded() {
			raw = trimNUL(raw, 2)
		}
		return jsonString(dst, utf16String(raw))
	case schema.KindAnsi:
		raw := v.Raw
		if v.Field != nil && v.Field.Padded() {
			raw = trimNUL(raw, 1)
		}
		return jsonString(dst, ansiString(raw))
	case schema.KindPort:
		return strconv.AppendUint(dst, v.Uint, 10)
	case schema.KindIPv4, schema.KindIPv6:
		a, _ := netip.AddrFromSlice(v.Raw)
		return append(dst, `"`+a.String()+`"`...)
	case schema.KindFileTime:
		t := time.Time{}
		if v.Int != 0 {
			t = time.Unix(v.Int/1e7-11644473600, v.Int%1e7*100).UTC()
		}
		return append(dst, `"`+t.Format(time.RFC3339Nano)+`"`...)
	case schema.KindWBEMSID:
		return append(dst, `"`+sidString(v.Raw, v.ptrSize)+`"`...)
	case schema.KindBinary:
		if len(v.Raw) == 0 {
			return append(dst, `""`...)
		}
		return append(dst, fmt.Sprintf(`"0x%x"`, v.Raw)...)
	}
	return append(dst, "null"...)
}

// trimNUL cuts a fixed character array (of unit-byte characters) at its
// first NUL character.
func trimNUL(b []byte, unit int) []byte {
	for i := 0; i+unit <= len(b); i += unit {
		if b[i] == 0 && b[i+unit-1] == 0 {
			return b[:i]
		}
	}
	return b
}

// sidString is the "S-1-5-…" form of a mof:Sid's SID (after its TOKEN_USER),
// "" when there is none.
func sidString(b []byte, ptrSize int) string {
	if len(b) < 2*ptrSize+8 {
		return ""
	}
	sid := b[2*ptrSize:]
	var auth uint64
	for _, c := range sid[2:8] {
		auth = auth<<8 | uint64(c)
	}
	s := fmt.Sprintf("S-%d-%d", sid[0], auth)
	for k := 8; k+4 <= len(sid); k += 4 {
		s += fmt.Sprintf("-%d", binary.LittleEndian.Uint32(sid[k:]))
	}
	return s
}

// appendText is the generated enum's AppendText.
func (en *enum) appendText(dst []byte, u uint64) []byte {
	if !en.bitmap {
		for _, e := range en.entries {
			if e.value == u {
				return append(dst, e.name...)
			}
		}
		return append(dst, en.typeName+"(0x"+strconv.FormatUint(u, 16)+")"...)
	}
	if u == 0 {
		if en.zero != "" {
			return append(dst, en.zero...)
		}
		return append(dst, '0')
	}
	first := true
	rest := u
	for _, e := range en.sortedFlags() {
		if u&e.value == e.value {
			if !first {
				dst = append(dst, '|')
			}
			dst = append(dst, e.name...)
			first = false
			rest &^= e.value
		}
	}
	if rest != 0 {
		if !first {
			dst = append(dst, '|')
		}
		dst = append(dst, "0x"+strconv.FormatUint(rest, 16)...)
	}
	return dst
}

// sortedFlags are a bitmap's non-zero entries by value (stable).
func (en *enum) sortedFlags() []entry {
	var out []entry
	for _, e := range en.entries {
		if e.value != 0 {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].value < out[j].value })
	return out
}

// jsonString appends s as encoding/json writes it with HTML escaping off.
func jsonString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// utf16String decodes UTF-16LE; unpaired surrogates become U+FFFD.
func utf16String(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// ansiString reads valid UTF-8 sequences as UTF-8 and every other byte as
// Latin-1.
func ansiString(b []byte) string {
	var out []rune
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			r, n = rune(b[0]), 1
		}
		out = append(out, r)
		b = b[n:]
	}
	return string(out)
}

// guidString is the canonical text of a GUID in wire layout.
func guidString(g [16]byte) string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x",
		binary.LittleEndian.Uint32(g[0:]), binary.LittleEndian.Uint16(g[4:]), binary.LittleEndian.Uint16(g[6:]),
		binary.BigEndian.Uint16(g[8:]), g[10:16])
}

// ValidUTF16 reports whether a UTF-16LE string has only paired surrogates
// (and an even length).
func ValidUTF16(b []byte) bool {
	if len(b)%2 != 0 {
		return false
	}
	for i := 0; i < len(b); i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		switch {
		case c >= 0xD800 && c < 0xDC00:
			if i+4 > len(b) {
				return false
			}
			d := binary.LittleEndian.Uint16(b[i+2:])
			if d < 0xDC00 || d >= 0xE000 {
				return false
			}
			i += 2
		case c >= 0xDC00 && c < 0xE000:
			return false
		}
	}
	return true
}
