package dynamic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/clrgo/clrevents/clrimpl"
)

var le = binary.LittleEndian

// ErrPayload is the sentinel every *FieldError wraps.
var ErrPayload = errors.New("payload does not fit its description")

// FieldError is a payload that does not fit its Description.
type FieldError struct {
	Event  string // "Provider/Name" (the GUID for a provider without a name, "id N" for an event without one)
	Field  string // the field's path ("Addresses[2].Port")
	Offset int    // the field's byte offset in the payload
	Msg    string // what does not fit
}

// Error formats e as
//
//	My-Source/Batch/Flush: field ids at payload offset 2: 255 elements of 8 bytes exceed the 16 bytes left
func (e *FieldError) Error() string {
	return e.Event + ": field " + e.Field + " at payload offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Unwrap returns ErrPayload.
func (e *FieldError) Unwrap() error { return ErrPayload }

// maxDepth bounds the nesting of structs and arrays the paths of errors
// follow (deeper fields still decode; their errors name the outer path).
const maxDepth = 32

// maxSteps bounds the values one payload may produce: arrays of empty
// structs would otherwise loop on a count from the payload.
const maxSteps = 1 << 20

// AppendJSON appends the payload's fields as one JSON object, keyed by the
// field names (see the package documentation for the values). ptrSize is
// the event's pointer size (4 or 8). Bytes past the last field are
// ignored. A payload that does not fit the fields returns dst extended by
// a partial object and a *FieldError.
func (d *Description) AppendJSON(dst, payload []byte, ptrSize int) ([]byte, error) {
	d.once.Do(d.init)
	dec := decoder{desc: d, p: payload, ptr: ptrSize, json: true}
	return dec.object(dst, d.Fields, d.refs)
}

// AppendText appends the payload's fields as space-separated Name=value
// pairs, values as AppendJSON writes them but hexadecimal numbers and
// binary data unquoted; nested structs as {a=1 b=2} and arrays as
// [1 2 3]. For example: `Name="RuntimeInit" Timestamp=11111925598665`.
func (d *Description) AppendText(dst, payload []byte, ptrSize int) ([]byte, error) {
	d.once.Do(d.init)
	dec := decoder{desc: d, p: payload, ptr: ptrSize}
	return dec.fields(dst, d.Fields, d.refs)
}

// AppendColumns appends one row of Columns for payload to a: exactly one
// call per column. A payload that does not fit the fields is the
// *FieldError AppendJSON gives; the row is then incomplete.
func (d *Description) AppendColumns(a clrimpl.ColumnAppender, payload []byte, ptrSize int) error {
	d.once.Do(d.init)
	dec := decoder{desc: d, p: payload, ptr: ptrSize, json: true}
	var small [16]uint64
	vals := small[:0]
	if d.refs > len(small) {
		vals = make([]uint64, 0, d.refs)
	}
	for i := range d.Fields {
		f := &d.Fields[i]
		kind, _ := f.column()
		var v uint64
		var err error
		dec.enter(f.Name, -1)
		if kind == clrimpl.ColumnJSON {
			var out []byte
			if out, v, err = dec.value(a.Scratch(), f, vals); err != nil {
				return err
			}
			a.Bytes(out)
		} else if v, err = dec.appendColumn(a, f, kind, vals); err != nil {
			return err
		}
		dec.leave()
		if i < d.refs {
			vals = append(vals, v)
		}
	}
	return nil
}

// decoder walks a payload by its fields.
type decoder struct {
	desc  *Description
	p     []byte
	i     int
	ptr   int
	json  bool
	steps int
	// path[:depth] is the field being read, for errors only: building its
	// text for every value would allocate. Each level is a name and maybe
	// an array index.
	path  [2*maxDepth + 4]pathElem
	depth int
}

// pathElem is a field's name, or an array element's index.
type pathElem struct {
	name  string
	index int // -1 for a field
}

// enter notes that a field (name) or an array element (index) is being
// read; leave ends it.
func (d *decoder) enter(name string, index int) {
	if d.depth < len(d.path) {
		d.path[d.depth] = pathElem{name, index}
	}
	d.depth++
}

func (d *decoder) leave() { d.depth-- }

// pathString is the field being read as text: "Values[3].Name".
func (d *decoder) pathString() string {
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

func (d *decoder) fail(at int, format string, args ...any) error {
	return &FieldError{Event: d.desc.label(), Field: d.pathString(), Offset: at, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) short(n int) error {
	return d.fail(d.i, "needs %d bytes, %d left", n, len(d.p)-d.i)
}

func (d *decoder) step() error {
	d.steps++
	if d.steps > maxSteps {
		return d.fail(d.i, "more than %d values", maxSteps)
	}
	return nil
}

// object appends {…}: the fields of one level.
func (d *decoder) object(dst []byte, fs []Field, refs int) ([]byte, error) {
	dst = append(dst, '{')
	dst, err := d.fields(dst, fs, refs)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// fields appends the fields of one level, "a":…,"b":… or a=… b=…; the
// integers read so far give later fields their counts and lengths.
func (d *decoder) fields(dst []byte, fs []Field, refs int) ([]byte, error) {
	var small [16]uint64
	vals := small[:0]
	if refs > len(small) {
		vals = make([]uint64, 0, refs)
	}
	for k := range fs {
		f := &fs[k]
		if k > 0 {
			dst = d.sep(dst)
		}
		switch {
		case !d.json:
			dst = append(dst, f.Name...)
			dst = append(dst, '=')
		case f.key != "":
			dst = append(dst, f.key...)
		default:
			dst = append(clrimpl.AppendJSONString(dst, f.Name), ':')
		}
		var v uint64
		var err error
		d.enter(f.Name, -1)
		if dst, v, err = d.value(dst, f, vals); err != nil {
			return dst, err
		}
		d.leave()
		if k < refs {
			vals = append(vals, v)
		}
	}
	return dst, nil
}

func (d *decoder) sep(dst []byte) []byte {
	if d.json {
		return append(dst, ',')
	}
	return append(dst, ' ')
}

// ref is the value of the earlier field r names, from vals (the values of
// the level's fields so far).
func (d *decoder) ref(r FieldRef, vals []uint64, what string) (int, error) {
	i, _ := r.Index()
	if i >= len(vals) {
		return 0, d.fail(d.i, "its %s field %d is not an earlier field", what, i)
	}
	return int(min(vals[i], math.MaxInt32)), nil
}

// length is f's Length, or its LengthFrom field's value.
func (d *decoder) length(f *Field, vals []uint64) (int, error) {
	if f.LengthFrom != 0 {
		return d.ref(f.LengthFrom, vals, "length")
	}
	return f.Length, nil
}

// value appends one value of f and returns it as an integer (for the
// fields whose counts and lengths it gives; 0 for anything but an
// integer). vals are the values of f's level so far.
func (d *decoder) value(dst []byte, f *Field, vals []uint64) ([]byte, uint64, error) {
	if err := d.step(); err != nil {
		return dst, 0, err
	}
	switch f.Kind {
	case Struct:
		dst, err := d.object(dst, f.Fields, f.refs)
		return dst, 0, err
	case Array:
		n, err := d.count(f, vals)
		if err != nil {
			return dst, 0, err
		}
		dst, err = d.array(dst, f, n, vals)
		return dst, 0, err
	case RelLoc, DataLoc:
		dst, err := d.location(dst, f, vals)
		return dst, 0, err
	}
	u, b, err := d.scalar(f, vals)
	if err != nil {
		return dst, 0, err
	}
	return d.format(dst, f, u, b), u, nil
}

// count reads or finds an Array's element count.
func (d *decoder) count(f *Field, vals []uint64) (int, error) {
	switch {
	case f.CountFrom != 0:
		return d.ref(f.CountFrom, vals, "count")
	case f.PrefixCount:
		if len(d.p)-d.i < 2 {
			return 0, d.fail(d.i, "a 2-byte element count needs 2 bytes, %d left", len(d.p)-d.i)
		}
		n := int(le.Uint16(d.p[d.i:]))
		d.i += 2
		return n, nil
	}
	return f.Count, nil
}

// array appends n elements of the array f: an array of characters as one
// string, else [e0,e1,…].
func (d *decoder) array(dst []byte, f *Field, n int, vals []uint64) ([]byte, error) {
	elem := f.Elem
	if elem == nil {
		return dst, d.fail(d.i, "array without element type")
	}
	if elem.Kind.isChar() {
		b, err := d.chars(f, n)
		if err != nil {
			return dst, err
		}
		return d.format(dst, elem, 0, b), nil
	}
	// Cheap bound: an array of fixed-size scalars must fit in what is left.
	if sz := elem.Kind.size(d.ptr); sz > 0 && int64(n)*int64(sz) > int64(len(d.p)-d.i) {
		return dst, d.fail(d.i, "%d elements of %d bytes exceed the %d bytes left", n, sz, len(d.p)-d.i)
	}
	dst = append(dst, '[')
	for k := 0; k < n; k++ {
		if k > 0 {
			dst = d.sep(dst)
		}
		var err error
		d.enter("", k)
		if dst, _, err = d.value(dst, elem, vals); err != nil {
			return dst, err
		}
		d.leave()
	}
	return append(dst, ']'), nil
}

// chars reads the n characters of an array of characters: all of them,
// or up to the first NUL with FormatPadded.
func (d *decoder) chars(f *Field, n int) ([]byte, error) {
	w := f.Elem.Kind.size(d.ptr)
	if int64(w)*int64(n) > int64(len(d.p)-d.i) {
		return nil, d.short(w * n)
	}
	b := d.p[d.i : d.i+w*n : d.i+w*n]
	d.i += w * n
	if f.Format == FormatPadded {
		b = trimNUL(b, w == 2)
	}
	return b, nil
}

// location appends the elements a RelLoc or DataLoc points at.
func (d *decoder) location(dst []byte, f *Field, vals []uint64) ([]byte, error) {
	if len(d.p)-d.i < 4 {
		return dst, d.short(4)
	}
	v := le.Uint32(d.p[d.i:])
	at := d.i
	d.i += 4
	size, off := int(v>>16), int(v&0xFFFF)
	if f.Kind == RelLoc {
		off += d.i
	}
	es := -1
	if f.Elem != nil {
		es = fixedSize(f.Elem, d.ptr)
	}
	if es < 0 || off+size > len(d.p) || (es > 0 && size%es != 0) || (es == 0 && size != 0) {
		return dst, d.fail(at, "location %d+%d outside the payload or not a whole number of elements", off, size)
	}
	n := 0
	if es > 0 {
		n = size / es
	}
	sub := *d // the same path
	sub.p, sub.i = d.p[:off+size], off
	dst, err := sub.array(dst, f, n, vals)
	d.steps = sub.steps
	return dst, err
}

// fixedSize is the size of every value of f, or -1 when values differ in
// size (or are too large to matter).
func fixedSize(f *Field, ptr int) int {
	switch f.Kind {
	case Struct:
		n := 0
		for i := range f.Fields {
			s := fixedSize(&f.Fields[i], ptr)
			if s < 0 {
				return -1
			}
			if n += s; n > 1<<20 {
				return -1
			}
		}
		return n
	case Array:
		if f.CountFrom != 0 || f.PrefixCount || f.Elem == nil {
			return -1
		}
		s := fixedSize(f.Elem, ptr)
		if s < 0 || s*f.Count > 1<<20 {
			return -1
		}
		return s * f.Count
	case RelLoc, DataLoc:
		return 4
	}
	if s := f.Kind.size(ptr); s > 0 {
		return s
	}
	return -1
}

// scalar reads one value of a field that is neither a struct nor an
// array: its integer (sign-extended for signed kinds; the bits of a float
// or time), and its bytes: those of a fixed-size value, of a string
// (without terminator, up to its first NUL where the kind says so), of
// binary data or of a SID (nil for a WBEM SID without one).
func (d *decoder) scalar(f *Field, vals []uint64) (uint64, []byte, error) {
	at := d.i
	left := len(d.p) - d.i
	switch f.Kind {
	case String16, AnsiString:
		wide := f.Kind == String16
		length, err := d.length(f, vals)
		if err != nil {
			return 0, nil, err
		}
		if length > 0 {
			if wide {
				length *= 2
			}
			b, err := d.str(length, wide)
			return 0, b, err
		}
		b, err := d.strz(wide)
		return 0, b, err
	case String16Rest:
		b, err := d.str(left&^1, true)
		return 0, b, err
	case AnsiStringRest:
		b, err := d.str(left, false)
		return 0, b, err
	case String16Counted, AnsiStringCounted, String16CountedBE, AnsiStringCountedBE, BinaryCounted:
		if left < 2 {
			return 0, nil, d.fail(at, "a 2-byte length needs 2 bytes, %d left", left)
		}
		n := int(le.Uint16(d.p[d.i:]))
		if f.Kind == String16CountedBE || f.Kind == AnsiStringCountedBE {
			n = int(binary.BigEndian.Uint16(d.p[d.i:]))
		}
		d.i += 2
		if f.Kind == BinaryCounted {
			b, err := d.bytes(n)
			return 0, b, err
		}
		b, err := d.str(n, f.Kind == String16Counted || f.Kind == String16CountedBE)
		return 0, b, err
	case Binary:
		length, err := d.length(f, vals)
		if err != nil {
			return 0, nil, err
		}
		b, err := d.bytes(length)
		return 0, b, err
	case BinaryCounted32:
		if left < 4 {
			return 0, nil, d.fail(at, "a 4-byte length needs 4 bytes, %d left", left)
		}
		n := int(min(le.Uint32(d.p[d.i:]), math.MaxInt32))
		d.i += 4
		b, err := d.bytes(n)
		return 0, b, err
	case SID, WBEMSID:
		b, err := d.sid(f)
		return 0, b, err
	case VarInt, VarUint:
		v, n := uvarint(d.p[d.i:])
		if n <= 0 {
			return 0, nil, d.fail(at, "bad varint")
		}
		d.i += n
		if f.Kind == VarInt {
			v = uint64(int64(v>>1) ^ -int64(v&1))
		}
		return v, nil, nil
	}
	n := f.Kind.size(d.ptr)
	if n == 0 {
		return 0, nil, d.fail(at, "kind %s has no size", f.Kind)
	}
	if left < n {
		return 0, nil, d.short(n)
	}
	b := d.p[d.i : d.i+n : d.i+n]
	d.i += n
	var u uint64
	switch n {
	case 1:
		u = uint64(b[0])
	case 2:
		u = uint64(le.Uint16(b))
	case 4:
		u = uint64(le.Uint32(b))
	case 8:
		u = le.Uint64(b)
	}
	switch f.Kind {
	case Int8:
		u = uint64(int64(int8(u)))
	case Int16:
		u = uint64(int64(int16(u)))
	case Int32:
		u = uint64(int64(int32(u)))
	}
	return u, b, nil
}

// format appends a value scalar read, as AppendJSON (or AppendText)
// writes it.
func (d *decoder) format(dst []byte, f *Field, u uint64, b []byte) []byte {
	switch f.Kind {
	case String16, String16Rest, String16Counted, String16CountedBE, Char16:
		return clrimpl.MakeUTF16(b).AppendJSON(dst)
	case AnsiString, AnsiStringRest, AnsiStringCounted, AnsiStringCountedBE, AnsiChar:
		return clrimpl.MakeAnsi(b).AppendJSON(dst)
	case Char8:
		return appendJSONUTF8(dst, b)
	case Binary, BinaryCounted, BinaryCounted32:
		return d.binary(dst, f, b)
	case SID, WBEMSID:
		return append(appendSID(append(dst, '"'), b), '"')
	case Float32:
		v := float64(math.Float32frombits(uint32(u)))
		if f.Format == FormatG {
			return appendFloatG(dst, v, 32)
		}
		return clrimpl.AppendJSONFloat(dst, v)
	case Float64:
		v := math.Float64frombits(u)
		if f.Format == FormatG {
			return appendFloatG(dst, v, 64)
		}
		return clrimpl.AppendJSONFloat(dst, v)
	case Bool32:
		return strconv.AppendBool(dst, u != 0)
	case GUID:
		return clrimpl.GUID(b).AppendJSON(dst)
	case FileTime:
		return appendTime(append(dst, '"'), fileTime(int64(u)), '"')
	case SystemTime:
		return appendSystemTime(dst, b, true)
	case DateTime:
		return appendDateTime(dst, int64(u), true)
	case Decimal:
		return appendDecimal(dst, b, true)
	}
	switch {
	case f.Map != nil:
		return f.Map.appendName(dst, u)
	case f.Format == FormatBool:
		return strconv.AppendBool(dst, u != 0)
	case f.Format == FormatPort && len(b) == 2:
		return strconv.AppendUint(dst, u>>8|(u&0xff)<<8, 10)
	case f.Format == FormatIPv4 && len(b) == 4:
		return append(appendIPv4(append(dst, '"'), b), '"')
	case f.Format == FormatHex || f.Kind == Pointer:
		if d.json {
			return clrimpl.AppendJSONHex(dst, u)
		}
		return strconv.AppendUint(append(dst, "0x"...), u, 16)
	case f.Kind.signed():
		return strconv.AppendInt(dst, int64(u), 10)
	}
	return strconv.AppendUint(dst, u, 10)
}

// binary appends bytes as the address they hold, or as hex.
func (d *decoder) binary(dst []byte, f *Field, b []byte) []byte {
	if out, ok := appendAddress(append(dst, '"'), f.Format, b); ok {
		return append(out, '"')
	}
	if d.json {
		dst = append(dst, '"')
	}
	dst = append(dst, "0x"...)
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	if d.json {
		dst = append(dst, '"')
	}
	return dst
}

// str reads the n bytes at the cursor as a string, up to the first NUL
// (the terminator and padding a fixed-length string may hold).
func (d *decoder) str(n int, wide bool) ([]byte, error) {
	b, err := d.bytes(n)
	if err != nil {
		return nil, err
	}
	if wide {
		b = b[:len(b)&^1]
	}
	return trimNUL(b, wide), nil
}

// trimNUL cuts b at its first NUL character (a zero code unit at an even
// offset when wide).
func trimNUL(b []byte, wide bool) []byte {
	if wide {
		for j := 0; j+1 < len(b); j += 2 {
			if b[j] == 0 && b[j+1] == 0 {
				return b[:j]
			}
		}
		return b
	}
	for j, c := range b {
		if c == 0 {
			return b[:j]
		}
	}
	return b
}

// strz reads the NUL-terminated string at the cursor.
func (d *decoder) strz(wide bool) ([]byte, error) {
	if wide {
		s, next, ok := clrimpl.ReadUTF16Z(d.p, d.i)
		if !ok {
			return nil, d.fail(d.i, "string has no terminator")
		}
		d.i = next
		return s.Bytes(), nil
	}
	s, next, ok := clrimpl.ReadAnsiZ(d.p, d.i)
	if !ok {
		return nil, d.fail(d.i, "string has no terminator")
	}
	d.i = next
	return s.Bytes(), nil
}

// bytes reads n bytes.
func (d *decoder) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(d.p)-d.i {
		return nil, d.fail(d.i, "%d bytes exceed the %d bytes left", n, len(d.p)-d.i)
	}
	b := d.p[d.i : d.i+n : d.i+n]
	d.i += n
	return b, nil
}

// sid reads a security identifier. A WBEM SID starts with a TOKEN_USER:
// two pointers, the first 0 when there is no SID (then the result is nil).
func (d *decoder) sid(f *Field) ([]byte, error) {
	at := d.i
	if f.Kind == WBEMSID {
		if len(d.p)-d.i < 2*d.ptr {
			return nil, d.fail(at, "TOKEN_USER needs %d bytes, %d left", 2*d.ptr, len(d.p)-d.i)
		}
		null := le.Uint32(d.p[d.i:]) == 0
		d.i += 2 * d.ptr
		if null {
			return nil, nil
		}
	}
	if len(d.p)-d.i < 8 {
		return nil, d.fail(d.i, "a SID needs at least 8 bytes, %d left", len(d.p)-d.i)
	}
	n := int(d.p[d.i+1])
	if 8+4*n > len(d.p)-d.i {
		return nil, d.fail(d.i, "a SID of %d sub-authorities exceeds the %d bytes left", n, len(d.p)-d.i)
	}
	return d.bytes(8 + 4*n)
}

// appendColumn appends the column (or, for a map-bound field, the two
// columns) of a field that is not a JSON column.
func (d *decoder) appendColumn(a clrimpl.ColumnAppender, f *Field, kind clrimpl.ColumnKind, vals []uint64) (uint64, error) {
	if err := d.step(); err != nil {
		return 0, err
	}
	if f.Kind == Array { // an array of characters: one string
		n, err := d.count(f, vals)
		if err != nil {
			return 0, err
		}
		b, err := d.chars(f, n)
		if err != nil {
			return 0, err
		}
		a.Bytes(appendText(a.Scratch(), f.Elem, 0, b))
		return 0, nil
	}
	u, b, err := d.scalar(f, vals)
	if err != nil {
		return 0, err
	}
	switch kind {
	case clrimpl.ColumnBool:
		a.Bool(u != 0)
	case clrimpl.ColumnInt8, clrimpl.ColumnInt16, clrimpl.ColumnInt32, clrimpl.ColumnInt64:
		a.Int(int64(u))
	case clrimpl.ColumnUint16:
		if f.Format == FormatPort {
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
		a.GUID(clrimpl.GUID(b))
	case clrimpl.ColumnBinary:
		a.Bytes(b)
	default: // ColumnString
		a.Bytes(appendText(a.Scratch(), f, u, b))
	}
	if f.Map != nil {
		a.Bytes(f.Map.appendText(a.Scratch(), u))
	}
	return u, nil
}

// appendText appends the UTF-8 text of a string column's value: the
// characters of a string, a character or an array of characters; a time,
// SID, address or Decimal as the JSON form writes it, without quotes.
func appendText(dst []byte, f *Field, u uint64, b []byte) []byte {
	switch f.Kind {
	case FileTime:
		return appendTime(dst, fileTime(int64(u)), 0)
	case SystemTime:
		return appendSystemTime(dst, b, false)
	case DateTime:
		return appendDateTime(dst, int64(u), false)
	case Decimal:
		return appendDecimal(dst, b, false)
	case SID, WBEMSID:
		return appendSID(dst, b)
	case Uint32: // FormatIPv4
		return appendIPv4(dst, b)
	case Binary, BinaryCounted, BinaryCounted32:
		dst, _ = appendAddress(dst, f.Format, b)
		return dst
	case Char8:
		return appendValidUTF8(dst, b)
	case String16, String16Rest, String16Counted, String16CountedBE, Char16:
		return clrimpl.MakeUTF16(b).AppendUTF8(dst)
	}
	return clrimpl.MakeAnsi(b).AppendUTF8(dst)
}
