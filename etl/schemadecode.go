package etl

import (
	"encoding/binary"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"time"

	"github.com/clrgo/clrevents/clrevents"
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
	return d.object(dst, s.Fields, "")
}

// AppendText appends the payload's fields as "name=value" pairs separated
// by spaces, values written as AppendJSON writes them.
func (s *EventSchema) AppendText(dst, payload []byte, ptrSize int) ([]byte, error) {
	d := schemaDecoder{p: payload, ptr: ptrSize}
	return d.fields(dst, s.Fields, "")
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
}

// maxSchemaSteps bounds the values one payload may produce (arrays of
// empty structs would otherwise loop on a count from the payload).
const maxSchemaSteps = 1 << 20

func (d *schemaDecoder) fail(path string, at int, format string, args ...any) error {
	return &FieldError{Field: path, Offset: at, Msg: fmt.Sprintf(format, args...)}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func (d *schemaDecoder) object(dst []byte, fs []Field, path string) ([]byte, error) {
	dst = append(dst, '{')
	dst, err := d.fields(dst, fs, path)
	return append(dst, '}'), err
}

// fields appends the fields of one level; the integers read so far give
// later fields their counts and lengths.
func (d *schemaDecoder) fields(dst []byte, fs []Field, path string) ([]byte, error) {
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
			dst = clrimpl.AppendJSONString(dst, f.Name)
			dst = append(dst, ':')
		} else {
			dst = append(dst, f.Name...)
			dst = append(dst, '=')
		}
		fp := join(path, f.Name)
		length := f.Length
		if f.LengthField >= 0 {
			length = int(min(vals[f.LengthField], math.MaxInt32))
		}
		var v uint64
		var err error
		if f.Array {
			n := f.Count
			switch {
			case f.CountField >= 0:
				n = int(min(vals[f.CountField], math.MaxInt32))
			case f.PrefixCount:
				if len(d.p)-d.i < 2 {
					return dst, d.fail(fp, d.i, "a 2-byte element count needs 2 bytes, %d left", len(d.p)-d.i)
				}
				n = int(le.Uint16(d.p[d.i:]))
				d.i += 2
			}
			dst, err = d.array(dst, f, n, length, fp)
		} else {
			dst, v, err = d.value(dst, f, length, fp)
		}
		if err != nil {
			return dst, err
		}
		vals = append(vals, v)
	}
	return dst, nil
}

func (d *schemaDecoder) array(dst []byte, f *Field, n, length int, path string) ([]byte, error) {
	// Character arrays are strings, as TraceEvent shows them.
	switch f.In {
	case InUnicodeChar:
		return d.str(dst, path, 2*n, true)
	case InAnsiChar:
		return d.str(dst, path, n, false)
	}
	if sz := f.fixedSize(d.ptr); sz > 0 && int64(n)*int64(sz) > int64(len(d.p)-d.i) {
		return dst, d.fail(path, d.i, "%d elements of %d bytes exceed the %d bytes left", n, sz, len(d.p)-d.i)
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
		if dst, _, err = d.value(dst, f, length, path+"["+strconv.Itoa(k)+"]"); err != nil {
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
func (d *schemaDecoder) value(dst []byte, f *Field, length int, path string) ([]byte, uint64, error) {
	d.steps++
	if d.steps > maxSchemaSteps {
		return dst, 0, d.fail(path, d.i, "more than %d values", maxSchemaSteps)
	}
	if f.Fields != nil {
		dst, err := d.object(dst, f.Fields, path)
		return dst, 0, err
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
			dst, err := d.str(dst, path, length, wide)
			return dst, 0, err
		}
		dst, err := d.strz(dst, path, wide)
		return dst, 0, err
	case InNonNullTerminatedString, InNonNullTerminatedAnsiString:
		dst, err := d.str(dst, path, left&^boolInt(f.In == InNonNullTerminatedString), f.In == InNonNullTerminatedString)
		return dst, 0, err
	case InManifestCountedString, InManifestCountedAnsiString, InCountedString, InCountedAnsiString,
		InReversedCountedString, InReversedCountedAnsiString, InManifestCountedBinary:
		if left < 2 {
			return dst, 0, d.fail(path, at, "a 2-byte length needs 2 bytes, %d left", left)
		}
		n := int(le.Uint16(d.p[d.i:]))
		if f.In == InReversedCountedString || f.In == InReversedCountedAnsiString {
			n = int(binary.BigEndian.Uint16(d.p[d.i:]))
		}
		d.i += 2
		if f.In == InManifestCountedBinary {
			dst, err := d.binary(dst, f, path, n)
			return dst, 0, err
		}
		wide := f.In == InManifestCountedString || f.In == InCountedString || f.In == InReversedCountedString
		dst, err := d.str(dst, path, n, wide)
		return dst, 0, err
	case InBinary:
		dst, err := d.binary(dst, f, path, length)
		return dst, 0, err
	case InHexDump:
		if left < 4 {
			return dst, 0, d.fail(path, at, "a 4-byte length needs 4 bytes, %d left", left)
		}
		n := int(min(le.Uint32(d.p[d.i:]), math.MaxInt32))
		d.i += 4
		dst, err := d.binary(dst, f, path, n)
		return dst, 0, err
	case InSID, InWBEMSID:
		dst, err := d.sid(dst, f, path)
		return dst, 0, err
	}
	n := f.fixedSize(d.ptr)
	if n == 0 {
		return dst, 0, d.fail(path, at, "in-type %d has no size", f.In)
	}
	if left < n {
		return dst, 0, d.fail(path, at, "needs %d bytes, %d left", n, left)
	}
	b := d.p[d.i : d.i+n]
	d.i += n
	var u uint64
	var signed bool
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
		u, signed = uint64(int64(int8(u))), true
	case InInt16:
		u, signed = uint64(int64(int16(u))), true
	case InInt32:
		u, signed = uint64(int64(int32(u))), true
	case InInt64:
		signed = true
	case InFloat:
		return clrimpl.AppendJSONFloat(dst, float64(math.Float32frombits(uint32(u)))), 0, nil
	case InDouble:
		return clrimpl.AppendJSONFloat(dst, math.Float64frombits(u)), 0, nil
	case InBoolean:
		return strconv.AppendBool(dst, u != 0), u, nil
	case InGUID:
		var g clrevents.GUID
		copy(g[:], b)
		return g.AppendJSON(dst), 0, nil
	case InFileTime:
		return d.time(dst, fileTime(int64(u))), u, nil
	case InSystemTime:
		return d.time(dst, systemTime(b)), 0, nil
	case InUnicodeChar:
		dst = clrimpl.MakeUTF16(b).AppendJSON(dst)
		return dst, u, nil
	case InAnsiChar:
		return clrimpl.MakeAnsi(b).AppendJSON(dst), u, nil
	}
	switch {
	case f.Map != nil:
		return f.Map.appendName(dst, u), u, nil
	case f.Out == OutBoolean:
		return strconv.AppendBool(dst, u != 0), u, nil
	case f.Out == OutPort && n == 2:
		return strconv.AppendUint(dst, uint64(u>>8|(u&0xff)<<8), 10), u, nil
	case f.Out == OutIPv4 && n == 4:
		return d.quoted(dst, netip.AddrFrom4([4]byte(b)).String()), u, nil
	case f.hex(), f.In == InPointer, f.In == InSizeT && f.Out != 0:
		if d.json {
			return clrimpl.AppendJSONHex(dst, u), u, nil
		}
		return strconv.AppendUint(append(dst, "0x"...), u, 16), u, nil
	case signed:
		return strconv.AppendInt(dst, int64(u), 10), u, nil
	}
	return strconv.AppendUint(dst, u, 10), u, nil
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

func (d *schemaDecoder) quoted(dst []byte, s string) []byte {
	return clrimpl.AppendJSONString(dst, s)
}

func (d *schemaDecoder) time(dst []byte, t time.Time) []byte {
	return d.quoted(dst, t.UTC().Format(time.RFC3339Nano))
}

// str appends the n bytes at the cursor as a string.
func (d *schemaDecoder) str(dst []byte, path string, n int, wide bool) ([]byte, error) {
	if n < 0 || n > len(d.p)-d.i {
		return dst, d.fail(path, d.i, "string of %d bytes exceeds the %d bytes left", n, len(d.p)-d.i)
	}
	b := d.p[d.i : d.i+n]
	d.i += n
	if wide {
		b = b[:len(b)&^1]
		// A fixed-length string may hold its terminator and padding.
		for j := 0; j+1 < len(b); j += 2 {
			if b[j] == 0 && b[j+1] == 0 {
				b = b[:j]
				break
			}
		}
		return clrimpl.MakeUTF16(b).AppendJSON(dst), nil
	}
	for j, c := range b {
		if c == 0 {
			b = b[:j]
			break
		}
	}
	return clrimpl.MakeAnsi(b).AppendJSON(dst), nil
}

// strz appends the NUL-terminated string at the cursor.
func (d *schemaDecoder) strz(dst []byte, path string, wide bool) ([]byte, error) {
	if wide {
		s, next, ok := clrimpl.ReadUTF16Z(d.p, d.i)
		if !ok {
			return dst, d.fail(path, d.i, "string has no terminator")
		}
		d.i = next
		return s.AppendJSON(dst), nil
	}
	s, next, ok := clrimpl.ReadAnsiZ(d.p, d.i)
	if !ok {
		return dst, d.fail(path, d.i, "string has no terminator")
	}
	d.i = next
	return s.AppendJSON(dst), nil
}

// binary appends n bytes as hex, or as the address they hold.
func (d *schemaDecoder) binary(dst []byte, f *Field, path string, n int) ([]byte, error) {
	if n < 0 || n > len(d.p)-d.i {
		return dst, d.fail(path, d.i, "%d bytes exceed the %d bytes left", n, len(d.p)-d.i)
	}
	b := d.p[d.i : d.i+n]
	d.i += n
	switch {
	case f.Out == OutIPv6 && n == 16:
		return d.quoted(dst, netip.AddrFrom16([16]byte(b)).String()), nil
	case f.Out == OutIPv4 && n == 4:
		return d.quoted(dst, netip.AddrFrom4([4]byte(b)).String()), nil
	case f.Out == OutSocketAddress:
		if s, ok := socketAddress(b); ok {
			return d.quoted(dst, s), nil
		}
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
	return dst, nil
}

const hexDigits = "0123456789abcdef"

// socketAddress formats a SOCKADDR_IN or SOCKADDR_IN6 as "a.b.c.d:port"
// or "[v6]:port".
func socketAddress(b []byte) (string, bool) {
	if len(b) < 2 {
		return "", false
	}
	switch le.Uint16(b) {
	case 2: // AF_INET
		if len(b) >= 8 {
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:])).String(), true
		}
	case 23: // AF_INET6
		if len(b) >= 24 {
			return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:])).String(), true
		}
	}
	return "", false
}

// sid appends a security identifier as "S-1-5-21-…". A WBEM SID starts
// with a TOKEN_USER: two pointers, the first 0 when there is no SID.
func (d *schemaDecoder) sid(dst []byte, f *Field, path string) ([]byte, error) {
	at := d.i
	if f.In == InWBEMSID {
		if len(d.p)-d.i < 2*d.ptr {
			return dst, d.fail(path, at, "TOKEN_USER needs %d bytes, %d left", 2*d.ptr, len(d.p)-d.i)
		}
		null := le.Uint32(d.p[d.i:]) == 0
		d.i += 2 * d.ptr
		if null {
			return d.quoted(dst, ""), nil
		}
	}
	if len(d.p)-d.i < 8 {
		return dst, d.fail(path, d.i, "a SID needs at least 8 bytes, %d left", len(d.p)-d.i)
	}
	b := d.p[d.i:]
	n := int(b[1])
	if 8+4*n > len(b) {
		return dst, d.fail(path, d.i, "a SID of %d sub-authorities exceeds the %d bytes left", n, len(b))
	}
	var auth uint64
	for _, c := range b[2:8] {
		auth = auth<<8 | uint64(c)
	}
	s := make([]byte, 0, 16+11*n)
	s = append(s, "S-"...)
	s = strconv.AppendUint(s, uint64(b[0]), 10)
	s = append(s, '-')
	s = strconv.AppendUint(s, auth, 10)
	for k := 0; k < n; k++ {
		s = append(s, '-')
		s = strconv.AppendUint(s, uint64(le.Uint32(b[8+4*k:])), 10)
	}
	d.i += 8 + 4*n
	return d.quoted(dst, string(s)), nil
}

// systemTime converts a SYSTEMTIME: year, month, day of week, day, hour,
// minute, second, milliseconds, each a uint16.
func systemTime(b []byte) time.Time {
	u := func(i int) int { return int(le.Uint16(b[2*i:])) }
	return time.Date(u(0), time.Month(u(1)), u(3), u(4), u(5), u(6), u(7)*1e6, time.UTC)
}

// appendName appends the map's name for v as a JSON string, as the
// generated enums write theirs: a value map's entry, or "Map(0x1a)" for a
// value it does not name; a bit map's set flags joined by "|", with any
// bits no flag names in hex.
func (m *Map) appendName(dst []byte, v uint64) []byte {
	var buf [64]byte
	b := buf[:0]
	if m.Bits {
		b = clrimpl.AppendFlags(b, v, m.flags, m.zero)
	} else {
		found := false
		for _, e := range m.Entries {
			if e.Value == v {
				b, found = append(b, e.Name...), true
				break
			}
		}
		if !found {
			b = clrimpl.AppendUnknown(b, m.Name, v)
		}
	}
	return clrimpl.AppendJSONString(dst, string(b))
}
