package etl

import (
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
)

// AppendJSON appends the payload's fields as one JSON object, keyed by
// the field names the trace gives: integers as numbers, hexadecimal
// fields and pointers as "0x…" strings, map-bound values by name
// ("A|B" for flags), strings, GUIDs, times (RFC 3339, UTC), SIDs and
// network addresses as strings, binary data as "0x…", arrays as arrays
// and structs as objects. ptrSize is the event's pointer size (4 or 8).
// A payload that does not fit the fields is an error naming the field
// and its byte offset.
func (s *EventSchema) AppendJSON(dst, payload []byte, ptrSize int) ([]byte, error) {
	d := schemaDecoder{p: payload, ptr: ptrSize, json: true}
	return d.object(dst, s.Fields)
}

// AppendText appends the payload's fields as "name=value" pairs separated
// by spaces, values written as AppendJSON writes them.
func (s *EventSchema) AppendText(dst, payload []byte, ptrSize int) ([]byte, error) {
	d := schemaDecoder{p: payload, ptr: ptrSize}
	return d.fields(dst, s.Fields)
}

// FieldError is a payload that does not fit an EventSchema.
type FieldError struct {
	Field  string // the field's path ("Addresses[2].Port")
	Offset int    // the byte offset in the payload
	Msg    string
}

func (e *FieldError) Error() string {
	return "field " + e.Field + " at payload offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

type schemaDecoder struct {
	p     []byte
	i     int
	ptr   int
	json  bool
	steps int
	// path[:depth] is the field being read, for errors only: building its
	// text for every value would allocate. Structs nest at most
	// maxStructDepth deep.
	path  [maxStructDepth + 2]pathElem
	depth int
}

// pathElem is a field's name and, inside an array, the element's index
// (-1 outside one).
type pathElem struct {
	name  string
	index int
}

// enter notes that the field name is being read.
func (d *schemaDecoder) enter(name string) {
	if d.depth < len(d.path) {
		d.path[d.depth] = pathElem{name: name, index: -1}
	}
	d.depth++
}

// pathString is the field being read as text: "Addresses[2].Port".
func (d *schemaDecoder) pathString() string {
	var b []byte
	for i, p := range d.path[:min(d.depth, len(d.path))] {
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, p.name...)
		if p.index >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(p.index), 10)
			b = append(b, ']')
		}
	}
	return string(b)
}

// maxSchemaSteps bounds the values one payload may produce (arrays of
// empty structs would otherwise loop on a count from the payload).
const maxSchemaSteps = 1 << 20

func (d *schemaDecoder) fail(at int, format string, args ...any) error {
	return &FieldError{Field: d.pathString(), Offset: at, Msg: fmt.Sprintf(format, args...)}
}

func (d *schemaDecoder) object(dst []byte, fs []Field) ([]byte, error) {
	dst = append(dst, '{')
	dst, err := d.fields(dst, fs)
	return append(dst, '}'), err
}

// fields appends the fields of one level; the integers read so far give
// later fields their counts and lengths.
func (d *schemaDecoder) fields(dst []byte, fs []Field) ([]byte, error) {
	var small [16]uint64
	vals := small[:0]
	if len(fs) > len(small) {
		vals = make([]uint64, 0, len(fs))
	}
	for k := range fs {
		f := &fs[k]
		if k > 0 {
			if d.json {
				dst = append(dst, ',')
			} else {
				dst = append(dst, ' ')
			}
		}
		if d.json {
			if f.jsonKey != "" {
				dst = append(dst, f.jsonKey...)
			} else {
				dst = clrimpl.AppendJSONString(dst, f.Name)
				dst = append(dst, ':')
			}
		} else {
			dst = append(dst, f.Name...)
			dst = append(dst, '=')
		}
		var v uint64
		var err error
		d.enter(f.Name)
		if dst, v, err = d.field(dst, f, vals); err != nil {
			return dst, err
		}
		d.depth--
		vals = append(vals, v)
	}
	return dst, nil
}

// lengthOf is f's length: its own, or the value of the field it names
// (vals holds the integers of the fields before it).
func (f *Field) lengthOf(vals []uint64) int {
	if f.LengthField >= 0 {
		return int(min(vals[f.LengthField], math.MaxInt32))
	}
	return f.Length
}

// field appends the value of f, an array or not, and returns its integer.
func (d *schemaDecoder) field(dst []byte, f *Field, vals []uint64) ([]byte, uint64, error) {
	length := f.lengthOf(vals)
	if !f.Array {
		return d.value(dst, f, length)
	}
	n := f.Count
	switch {
	case f.CountField >= 0:
		n = int(min(vals[f.CountField], math.MaxInt32))
	case f.PrefixCount:
		if len(d.p)-d.i < 2 {
			return dst, 0, d.fail(d.i, "a 2-byte element count needs 2 bytes, %d left", len(d.p)-d.i)
		}
		n = int(le.Uint16(d.p[d.i:]))
		d.i += 2
	}
	dst, err := d.array(dst, f, n, length)
	return dst, 0, err
}

func (d *schemaDecoder) array(dst []byte, f *Field, n, length int) ([]byte, error) {
	// Character arrays are strings, as TraceEvent shows them.
	switch f.In {
	case InUnicodeChar, InAnsiChar:
		w := f.fixedSize(d.ptr)
		b, err := d.str(w*n, w == 2)
		if err != nil {
			return dst, err
		}
		return d.format(dst, f, 0, b), nil
	}
	if sz := f.fixedSize(d.ptr); sz > 0 && int64(n)*int64(sz) > int64(len(d.p)-d.i) {
		return dst, d.fail(d.i, "%d elements of %d bytes exceed the %d bytes left", n, sz, len(d.p)-d.i)
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
		if d.depth > 0 {
			d.path[d.depth-1].index = k
		}
		if dst, _, err = d.value(dst, f, length); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// fixedSize is the wire size of one value of f, or 0 when it varies.
func (f *Field) fixedSize(ptr int) int {
	switch f.In {
	case InInt8, InUInt8, InAnsiChar:
		return 1
	case InInt16, InUInt16, InUnicodeChar:
		return 2
	case InInt32, InUInt32, InHexInt32, InFloat, InBoolean:
		return 4
	case InInt64, InUInt64, InHexInt64, InDouble, InFileTime:
		return 8
	case InGUID, InSystemTime:
		return 16
	case InPointer, InSizeT:
		return ptr
	}
	return 0
}

// value appends one value of f and returns it as an integer (for the
// fields whose counts and lengths it gives).
func (d *schemaDecoder) value(dst []byte, f *Field, length int) ([]byte, uint64, error) {
	if f.Fields != nil {
		if err := d.step(); err != nil {
			return dst, 0, err
		}
		dst, err := d.object(dst, f.Fields)
		return dst, 0, err
	}
	u, b, err := d.scalar(f, length)
	if err != nil {
		return dst, 0, err
	}
	return d.format(dst, f, u, b), u, nil
}

func (d *schemaDecoder) step() error {
	d.steps++
	if d.steps > maxSchemaSteps {
		return d.fail(d.i, "more than %d values", maxSchemaSteps)
	}
	return nil
}

// scalar reads one value of a field that is not a struct: its integer
// (sign-extended for signed types), and the bytes of a fixed-size value,
// a string (UTF-16LE or 8-bit, without terminator), binary data or a SID
// (nil for a WBEM SID without one).
func (d *schemaDecoder) scalar(f *Field, length int) (uint64, []byte, error) {
	if err := d.step(); err != nil {
		return 0, nil, err
	}
	at := d.i
	left := len(d.p) - d.i
	switch f.In {
	case InUnicodeString, InAnsiString:
		wide := f.In == InUnicodeString
		if length > 0 {
			if wide {
				length *= 2
			}
			b, err := d.str(length, wide)
			return 0, b, err
		}
		b, err := d.strz(wide)
		return 0, b, err
	case InNonNullTerminatedString, InNonNullTerminatedAnsiString:
		wide := f.In == InNonNullTerminatedString
		b, err := d.str(left&^boolInt(wide), wide)
		return 0, b, err
	case InManifestCountedString, InManifestCountedAnsiString, InCountedString, InCountedAnsiString,
		InReversedCountedString, InReversedCountedAnsiString, InManifestCountedBinary:
		if left < 2 {
			return 0, nil, d.fail(at, "a 2-byte length needs 2 bytes, %d left", left)
		}
		n := int(le.Uint16(d.p[d.i:]))
		if f.In == InReversedCountedString || f.In == InReversedCountedAnsiString {
			n = int(binary.BigEndian.Uint16(d.p[d.i:]))
		}
		d.i += 2
		if f.In == InManifestCountedBinary {
			b, err := d.bytes(n)
			return 0, b, err
		}
		b, err := d.str(n, f.wide())
		return 0, b, err
	case InBinary:
		b, err := d.bytes(length)
		return 0, b, err
	case InHexDump:
		if left < 4 {
			return 0, nil, d.fail(at, "a 4-byte length needs 4 bytes, %d left", left)
		}
		n := int(min(le.Uint32(d.p[d.i:]), math.MaxInt32))
		d.i += 4
		b, err := d.bytes(n)
		return 0, b, err
	case InSID, InWBEMSID:
		b, err := d.sid(f)
		return 0, b, err
	}
	n := f.fixedSize(d.ptr)
	if n == 0 {
		return 0, nil, d.fail(at, "in-type %d has no size", f.In)
	}
	if left < n {
		return 0, nil, d.fail(at, "needs %d bytes, %d left", n, left)
	}
	b := d.p[d.i : d.i+n]
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
	switch f.In {
	case InInt8:
		u = uint64(int64(int8(u)))
	case InInt16:
		u = uint64(int64(int16(u)))
	case InInt32:
		u = uint64(int64(int32(u)))
	}
	return u, b, nil
}

// wide reports whether f's strings are UTF-16.
func (f *Field) wide() bool {
	switch f.In {
	case InUnicodeString, InNonNullTerminatedString, InManifestCountedString, InCountedString,
		InReversedCountedString, InUnicodeChar:
		return true
	}
	return false
}

// signed reports whether f is a signed integer.
func (f *Field) signed() bool {
	switch f.In {
	case InInt8, InInt16, InInt32, InInt64:
		return true
	}
	return false
}

// format appends a value scalar read, as AppendJSON writes it.
func (d *schemaDecoder) format(dst []byte, f *Field, u uint64, b []byte) []byte {
	switch f.In {
	case InUnicodeString, InNonNullTerminatedString, InManifestCountedString, InCountedString, InReversedCountedString,
		InUnicodeChar:
		return clrimpl.MakeUTF16(b).AppendJSON(dst)
	case InAnsiString, InNonNullTerminatedAnsiString, InManifestCountedAnsiString, InCountedAnsiString,
		InReversedCountedAnsiString, InAnsiChar:
		return clrimpl.MakeAnsi(b).AppendJSON(dst)
	case InBinary, InManifestCountedBinary, InHexDump:
		return d.binary(dst, f, b)
	case InSID, InWBEMSID:
		return append(appendSID(append(dst, '"'), b), '"')
	case InFloat:
		return clrimpl.AppendJSONFloat(dst, float64(math.Float32frombits(uint32(u))))
	case InDouble:
		return clrimpl.AppendJSONFloat(dst, math.Float64frombits(u))
	case InBoolean:
		return strconv.AppendBool(dst, u != 0)
	case InGUID:
		var g clrimpl.GUID
		copy(g[:], b)
		return g.AppendJSON(dst)
	case InFileTime:
		return d.time(dst, fileTime(int64(u)))
	case InSystemTime:
		return d.time(dst, systemTime(b))
	}
	switch {
	case f.Map != nil:
		return f.Map.appendName(dst, u)
	case f.Out == OutBoolean:
		return strconv.AppendBool(dst, u != 0)
	case f.Out == OutPort && len(b) == 2:
		return strconv.AppendUint(dst, uint64(u>>8|(u&0xff)<<8), 10)
	case f.Out == OutIPv4 && len(b) == 4:
		return append(netip.AddrFrom4([4]byte(b)).AppendTo(append(dst, '"')), '"')
	case f.hex(), f.In == InPointer, f.In == InSizeT && f.Out != 0:
		if d.json {
			return clrimpl.AppendJSONHex(dst, u)
		}
		return strconv.AppendUint(append(dst, "0x"...), u, 16)
	case f.signed():
		return strconv.AppendInt(dst, int64(u), 10)
	}
	return strconv.AppendUint(dst, u, 10)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (f *Field) hex() bool {
	switch f.Out {
	case OutHexInt8, OutHexInt16, OutHexInt32, OutHexInt64, OutHResult, OutNTStatus, OutWin32Error:
		return true
	}
	return f.In == InHexInt32 || f.In == InHexInt64
}

func (d *schemaDecoder) time(dst []byte, t time.Time) []byte {
	return append(t.UTC().AppendFormat(append(dst, '"'), time.RFC3339Nano), '"')
}

// str reads the n bytes at the cursor as a string, without the
// terminator and padding a fixed-length string may hold.
func (d *schemaDecoder) str(n int, wide bool) ([]byte, error) {
	b, err := d.bytes(n)
	if err != nil {
		return nil, err
	}
	if wide {
		b = b[:len(b)&^1]
		for j := 0; j+1 < len(b); j += 2 {
			if b[j] == 0 && b[j+1] == 0 {
				return b[:j], nil
			}
		}
		return b, nil
	}
	for j, c := range b {
		if c == 0 {
			return b[:j], nil
		}
	}
	return b, nil
}

// strz reads the NUL-terminated string at the cursor.
func (d *schemaDecoder) strz(wide bool) ([]byte, error) {
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
func (d *schemaDecoder) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(d.p)-d.i {
		return nil, d.fail(d.i, "%d bytes exceed the %d bytes left", n, len(d.p)-d.i)
	}
	b := d.p[d.i : d.i+n : d.i+n]
	d.i += n
	return b, nil
}

// binary appends bytes as hex, or as the address they hold.
func (d *schemaDecoder) binary(dst []byte, f *Field, b []byte) []byte {
	if out, ok := appendAddress(append(dst, '"'), f.Out, b); ok {
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

// appendAddress appends binary data an out-type says is an address.
func appendAddress(dst []byte, out OutType, b []byte) ([]byte, bool) {
	switch {
	case out == OutIPv6 && len(b) == 16:
		return netip.AddrFrom16([16]byte(b)).AppendTo(dst), true
	case out == OutIPv4 && len(b) == 4:
		return netip.AddrFrom4([4]byte(b)).AppendTo(dst), true
	case out == OutSocketAddress:
		return appendSocketAddress(dst, b)
	}
	return dst, false
}

const hexDigits = "0123456789abcdef"

// appendSocketAddress appends a SOCKADDR_IN or SOCKADDR_IN6 as
// "a.b.c.d:port" or "[v6]:port".
func appendSocketAddress(dst, b []byte) ([]byte, bool) {
	if len(b) < 2 {
		return dst, false
	}
	switch le.Uint16(b) {
	case 2: // AF_INET
		if len(b) >= 8 {
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:])).AppendTo(dst), true
		}
	case 23: // AF_INET6
		if len(b) >= 24 {
			return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:])).AppendTo(dst), true
		}
	}
	return dst, false
}

// sid reads a security identifier. A WBEM SID starts with a TOKEN_USER:
// two pointers, the first 0 when there is no SID (then the result is nil).
func (d *schemaDecoder) sid(f *Field) ([]byte, error) {
	at := d.i
	if f.In == InWBEMSID {
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

// appendSID appends a SID as "S-1-5-21-…" (nothing for none).
func appendSID(dst, b []byte) []byte {
	if len(b) < 8 {
		return dst
	}
	var auth uint64
	for _, c := range b[2:8] {
		auth = auth<<8 | uint64(c)
	}
	dst = append(dst, "S-"...)
	dst = strconv.AppendUint(dst, uint64(b[0]), 10)
	dst = append(dst, '-')
	dst = strconv.AppendUint(dst, auth, 10)
	for k := 8; k+4 <= len(b); k += 4 {
		dst = append(dst, '-')
		dst = strconv.AppendUint(dst, uint64(le.Uint32(b[k:])), 10)
	}
	return dst
}

// systemTime converts a SYSTEMTIME: year, month, day of week, day, hour,
// minute, second, milliseconds, each a uint16.
func systemTime(b []byte) time.Time {
	u := func(i int) int { return int(le.Uint16(b[2*i:])) }
	return time.Date(u(0), time.Month(u(1)), u(3), u(4), u(5), u(6), u(7)*1e6, time.UTC)
}

// appendName appends the map's name for v as a JSON string (appendText).
func (m *Map) appendName(dst []byte, v uint64) []byte {
	var buf [64]byte
	return clrimpl.MakeAnsi(m.appendText(buf[:0], v)).AppendJSON(dst) // UTF-8 as it is
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
