package nettrace

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/clrgo/clrevents/clrimpl"
)

// ErrPayload is the sentinel wrapped by every *PayloadError.
var ErrPayload = errors.New("payload does not match its metadata")

// PayloadError says which field of an EventSource payload could not be
// decoded and where it starts.
type PayloadError struct {
	Event  string // "Provider/EventName" (or "Provider/id N")
	Field  string // field path, e.g. "Values[3].Name"
	Offset int    // byte offset of the field in the payload
	Msg    string // what is wrong
}

// Error formats e as
//
//	nettrace: TestEventSource0/TestEvent1: field "arg0" at payload offset 0: needs 2 bytes, 1 left
func (e *PayloadError) Error() string {
	return "nettrace: " + e.Event + ": field " + strconv.Quote(e.Field) + " at payload offset " +
		strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Unwrap returns ErrPayload.
func (e *PayloadError) Unwrap() error { return ErrPayload }

// AppendJSON decodes payload by m.Fields and appends it to dst as a JSON
// object of field name → value. Integers become numbers, Boolean fields
// true/false, strings, characters, GUIDs and DateTimes (RFC 3339, UTC)
// strings, Objects nested JSON objects and arrays JSON arrays. Bytes past
// the last field are ignored. On a payload that does not fit the fields it
// returns dst extended by a partial object and a *PayloadError; it never
// panics. Arrays of characters (UTF16CodeUnit, UTF8CodeUnit) become one
// string. A Metadata without Fields gives "{}".
func (m *Metadata) AppendJSON(dst, payload []byte) ([]byte, error) {
	d := payloadDecoder{m: m, p: payload, json: true}
	return d.object(dst, m.Fields)
}

// AppendText is AppendJSON's compact text form: space-separated
// name=value pairs, strings quoted, nested objects as {a=1 b=2} and arrays
// as [1 2 3]. For example: `Name="RuntimeInit" Timestamp=11111925598665`.
func (m *Metadata) AppendText(dst, payload []byte) ([]byte, error) {
	d := payloadDecoder{m: m, p: payload}
	return d.fieldList(dst, m.Fields)
}

// payloadDecoder walks a payload by its fields. steps bounds the work a
// hostile metadata (arrays of empty structs nested deeply) can cause.
type payloadDecoder struct {
	m     *Metadata
	p     []byte
	i     int
	json  bool
	steps int
	// path[:depth] is the field being read, for errors only: building its
	// text for every value would allocate. Fields nest at most
	// maxFieldDepth deep, each level a name and maybe an array index.
	path  [2*maxFieldDepth + 4]pathElem
	depth int
}

// pathElem is a field's name, or an array element's index (name "").
type pathElem struct {
	name  string
	index int // -1 for a field
}

// enter notes that a field (name) or an array element (index) is being
// read; leave ends it.
func (d *payloadDecoder) enter(name string, index int) {
	if d.depth < len(d.path) {
		d.path[d.depth] = pathElem{name, index}
	}
	d.depth++
}

func (d *payloadDecoder) leave() { d.depth-- }

// pathString is the field being read as text: "Values[3].Name".
func (d *payloadDecoder) pathString() string {
	var b []byte
	for _, p := range d.path[:min(d.depth, len(d.path))] {
		if p.index >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(p.index), 10)
			b = append(b, ']')
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, p.name...)
	}
	return string(b)
}

const maxPayloadSteps = 1 << 20

func (d *payloadDecoder) errAt(at int, msg string) error {
	ev := d.m.Provider + "/"
	if d.m.Name != "" {
		ev += d.m.Name
	} else {
		ev += "id " + strconv.Itoa(int(d.m.EventID))
	}
	return &PayloadError{Event: ev, Field: d.pathString(), Offset: at, Msg: msg}
}

func (d *payloadDecoder) short(n int) error {
	return d.errAt(d.i, "needs "+strconv.Itoa(n)+" bytes, "+strconv.Itoa(len(d.p)-d.i)+" left")
}

// object appends {"a":…,"b":…} (JSON form).
func (d *payloadDecoder) object(dst []byte, fields []Field) ([]byte, error) {
	if !d.json {
		dst = append(dst, '{')
		dst, err := d.fieldList(dst, fields)
		if err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	}
	dst = append(dst, '{')
	for k := range fields {
		f := &fields[k]
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, f.Name)
		dst = append(dst, ':')
		var err error
		d.enter(f.Name, -1)
		dst, err = d.value(dst, f)
		if err != nil {
			return dst, err
		}
		d.leave()
	}
	return append(dst, '}'), nil
}

// fieldList appends a=… b=… (text form).
func (d *payloadDecoder) fieldList(dst []byte, fields []Field) ([]byte, error) {
	for k := range fields {
		f := &fields[k]
		if k > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, f.Name...)
		dst = append(dst, '=')
		var err error
		d.enter(f.Name, -1)
		dst, err = d.value(dst, f)
		if err != nil {
			return dst, err
		}
		d.leave()
	}
	return dst, nil
}

func (d *payloadDecoder) value(dst []byte, f *Field) ([]byte, error) {
	d.steps++
	if d.steps > maxPayloadSteps {
		return dst, d.errAt(d.i, "too many values")
	}
	switch f.Type {
	case TypeObject:
		return d.object(dst, f.Fields)
	case TypeArray:
		if len(d.p)-d.i < 2 {
			return dst, d.short(2)
		}
		n := int(binary.LittleEndian.Uint16(d.p[d.i:]))
		d.i += 2
		return d.array(dst, f.Elem, n)
	case TypeFixedLengthArray:
		return d.array(dst, f.Elem, int(f.Count))
	case TypeRelLoc, TypeDataLoc:
		if len(d.p)-d.i < 4 {
			return dst, d.short(4)
		}
		v := binary.LittleEndian.Uint32(d.p[d.i:])
		at := d.i
		d.i += 4
		size, off := int(v>>16), int(v&0xFFFF)
		if f.Type == TypeRelLoc {
			off += d.i
		}
		es := fixedSizeOf(f.Elem)
		if es < 0 || off+size > len(d.p) || (es > 0 && size%es != 0) || (es == 0 && size != 0) {
			return dst, d.errAt(at, "location "+strconv.Itoa(off)+"+"+strconv.Itoa(size)+" outside the payload or not a whole number of elements")
		}
		n := 0
		if es > 0 {
			n = size / es
		}
		sub := *d // the same path
		sub.p, sub.i = d.p[:off+size], off
		dst, err := sub.array(dst, f.Elem, n)
		d.steps = sub.steps
		return dst, err
	case TypeNullTerminatedUTF16String:
		start := d.i
		for j := d.i; j+2 <= len(d.p); j += 2 {
			if d.p[j] == 0 && d.p[j+1] == 0 {
				d.i = j + 2
				return appendQuotedUTF16(dst, d.p[start:j]), nil
			}
		}
		return dst, d.errAt(start, "string has no terminator")
	case TypeVarInt, TypeVarUInt:
		v, n := uvarint(d.p[d.i:])
		if n <= 0 {
			return dst, d.errAt(d.i, "bad varint")
		}
		d.i += n
		if f.Type == TypeVarInt {
			return strconv.AppendInt(dst, int64(v>>1)^-int64(v&1), 10), nil
		}
		return strconv.AppendUint(dst, v, 10), nil
	}
	n := f.Type.fixedSize()
	if n == 0 {
		return dst, d.errAt(d.i, "unknown type "+f.Type.String())
	}
	if len(d.p)-d.i < n {
		return dst, d.short(n)
	}
	b := d.p[d.i : d.i+n]
	d.i += n
	switch f.Type {
	case TypeBoolean32:
		return strconv.AppendBool(dst, binary.LittleEndian.Uint32(b) != 0), nil
	case TypeBoolean8:
		return strconv.AppendBool(dst, b[0] != 0), nil
	case TypeUTF16CodeUnit:
		return appendQuotedUTF16(dst, b), nil
	case TypeUTF8CodeUnit:
		return appendJSONBytes(dst, b), nil
	case TypeSByte:
		return strconv.AppendInt(dst, int64(int8(b[0])), 10), nil
	case TypeByte:
		return strconv.AppendUint(dst, uint64(b[0]), 10), nil
	case TypeInt16:
		return strconv.AppendInt(dst, int64(int16(binary.LittleEndian.Uint16(b))), 10), nil
	case TypeUInt16:
		return strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint16(b)), 10), nil
	case TypeInt32:
		return strconv.AppendInt(dst, int64(int32(binary.LittleEndian.Uint32(b))), 10), nil
	case TypeUInt32:
		return strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint32(b)), 10), nil
	case TypeInt64:
		return strconv.AppendInt(dst, int64(binary.LittleEndian.Uint64(b)), 10), nil
	case TypeUInt64:
		return strconv.AppendUint(dst, binary.LittleEndian.Uint64(b), 10), nil
	case TypeSingle:
		return appendFloat(dst, float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), 32), nil
	case TypeDouble:
		return appendFloat(dst, math.Float64frombits(binary.LittleEndian.Uint64(b)), 64), nil
	case TypeGUID:
		var g clrimpl.GUID
		copy(g[:], b)
		dst = append(dst, '"')
		dst = g.AppendText(dst)
		return append(dst, '"'), nil
	case TypeDateTime:
		ft := int64(binary.LittleEndian.Uint64(b))
		return appendFileTime(dst, ft), nil
	case TypeDecimal:
		return appendDecimal(dst, b), nil
	}
	// Offsets used as plain values (RelLoc/DataLoc are handled above).
	return strconv.AppendUint(dst, uint64(binary.LittleEndian.Uint32(b)), 10), nil
}

func (d *payloadDecoder) array(dst []byte, elem *Field, n int) ([]byte, error) {
	if elem == nil {
		return dst, d.errAt(d.i, "array without element type")
	}
	// Character arrays read as strings, as TraceEvent shows them.
	if elem.Type == TypeUTF16CodeUnit || elem.Type == TypeUTF8CodeUnit {
		w := elem.Type.fixedSize()
		if int64(w)*int64(n) > int64(len(d.p)-d.i) {
			return dst, d.short(w * n)
		}
		b := d.p[d.i : d.i+w*n]
		d.i += w * n
		if w == 2 {
			return appendQuotedUTF16(dst, b), nil
		}
		return appendJSONBytes(dst, b), nil
	}
	// Cheap bound: a fixed-size element array must fit in what is left.
	if es := fixedSizeOf(elem); es > 0 && int64(es)*int64(n) > int64(len(d.p)-d.i) {
		return dst, d.errAt(d.i, "array of "+strconv.Itoa(n)+" × "+strconv.Itoa(es)+" bytes exceeds the "+strconv.Itoa(len(d.p)-d.i)+" bytes left")
	}
	dst = append(dst, '[')
	for k := 0; k < n; k++ {
		if k > 0 {
			if d.json {
				dst = append(dst, ',')
			} else {
				dst = append(dst, ' ')
			}
		}
		var err error
		d.enter("", k)
		dst, err = d.value(dst, elem)
		if err != nil {
			return dst, err
		}
		d.leave()
	}
	return append(dst, ']'), nil
}

func appendFloat(dst []byte, v float64, bitSize int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		dst = append(dst, '"')
		dst = strconv.AppendFloat(dst, v, 'g', -1, bitSize)
		return append(dst, '"')
	}
	return strconv.AppendFloat(dst, v, 'g', -1, bitSize)
}

// fileTimeEpoch is 1601-01-01 in Unix seconds.
const fileTimeEpoch = -11644473600

// appendFileTime renders a FILETIME (100 ns ticks since 1601, UTC) as a
// quoted RFC 3339 time, or as a bare number when it is out of range.
func appendFileTime(dst []byte, ft int64) []byte {
	if ft < 0 || ft > 2650467743999999999 { // beyond year 9999
		return strconv.AppendInt(dst, ft, 10)
	}
	t := time.Unix(fileTimeEpoch+ft/1e7, (ft%1e7)*100).UTC()
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// appendDecimal renders a 16-byte System.Decimal (flags, hi32, lo32, mid32)
// as a quoted decimal string.
func appendDecimal(dst []byte, b []byte) []byte {
	flags := binary.LittleEndian.Uint32(b[0:])
	hi := binary.LittleEndian.Uint32(b[4:])
	lo := binary.LittleEndian.Uint32(b[8:])
	mid := binary.LittleEndian.Uint32(b[12:])
	scale := int(flags >> 16 & 0xFF)
	v := new(big.Int).SetUint64(uint64(hi))
	v.Lsh(v, 64)
	v.Or(v, new(big.Int).SetUint64(uint64(mid)<<32|uint64(lo)))
	s := v.String()
	if scale > 28 {
		scale = 28
	}
	for len(s) <= scale {
		s = "0" + s
	}
	dst = append(dst, '"')
	if flags&0x80000000 != 0 {
		dst = append(dst, '-')
	}
	dst = append(dst, s[:len(s)-scale]...)
	if scale > 0 {
		dst = append(dst, '.')
		dst = append(dst, s[len(s)-scale:]...)
	}
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// appendJSONRune appends r escaped for a JSON string.
func appendJSONRune(dst []byte, r rune) []byte {
	switch {
	case r == '"' || r == '\\':
		return append(dst, '\\', byte(r))
	case r == '\n':
		return append(dst, '\\', 'n')
	case r == '\r':
		return append(dst, '\\', 'r')
	case r == '\t':
		return append(dst, '\\', 't')
	case r < 0x20 || r == 0x2028 || r == 0x2029:
		return append(dst, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}

// appendJSONString appends s as a quoted JSON string (invalid UTF-8 becomes
// U+FFFD).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		dst = appendJSONRune(dst, r)
	}
	return append(dst, '"')
}

// appendJSONBytes appends UTF-8 bytes b as a quoted JSON string.
func appendJSONBytes(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		dst = appendJSONRune(dst, r)
	}
	return append(dst, '"')
}

// appendQuotedUTF16 appends UTF-16LE bytes b as a quoted JSON string.
func appendQuotedUTF16(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i+1 < len(b); i += 2 {
		u := rune(binary.LittleEndian.Uint16(b[i:]))
		if utf16.IsSurrogate(u) {
			r := utf8.RuneError
			if u < 0xDC00 && i+3 < len(b) {
				if r2 := utf16.DecodeRune(u, rune(binary.LittleEndian.Uint16(b[i+2:]))); r2 != utf8.RuneError {
					r = r2
					i += 2
				}
			}
			u = r
		}
		dst = appendJSONRune(dst, u)
	}
	return append(dst, '"')
}
