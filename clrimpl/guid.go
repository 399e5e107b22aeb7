package clrimpl

import (
	"encoding/binary"
	"fmt"
)

// GUID is a Windows GUID in its wire layout: Data1 (uint32), Data2 and
// Data3 (uint16) little-endian, then the eight bytes of Data4 as they are.
// That is how ETW, EventPipe and the CLR's payloads carry GUIDs, so a GUID
// read from a payload is a plain copy of its 16 bytes.
type GUID [16]byte

// GUIDFromFields builds a GUID from its four textual parts, as in
// {Data1-Data2-Data3-Data4}.
func GUIDFromFields(d1 uint32, d2, d3 uint16, d4 [8]byte) GUID {
	var g GUID
	binary.LittleEndian.PutUint32(g[0:], d1)
	binary.LittleEndian.PutUint16(g[4:], d2)
	binary.LittleEndian.PutUint16(g[6:], d3)
	copy(g[8:], d4[:])
	return g
}

// ParseGUID parses the canonical text form, with or without braces:
// "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4" or "{E13C0D23-…}". Case is ignored.
func ParseGUID(s string) (GUID, error) {
	in := s
	if len(s) == 38 && s[0] == '{' && s[37] == '}' {
		s = s[1:37]
	}
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return GUID{}, fmt.Errorf("clrevents: malformed GUID %q", in)
	}
	var raw [16]byte // in text order
	j := 0
	for i := 0; i < 36; {
		if s[i] == '-' {
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return GUID{}, fmt.Errorf("clrevents: malformed GUID %q", in)
		}
		raw[j] = hi<<4 | lo
		j++
		i += 2
	}
	var d4 [8]byte
	copy(d4[:], raw[8:])
	return GUIDFromFields(
		binary.BigEndian.Uint32(raw[0:]),
		binary.BigEndian.Uint16(raw[4:]),
		binary.BigEndian.Uint16(raw[6:]),
		d4), nil
}

// MustParseGUID is ParseGUID for constants known to be well formed; it
// panics on a malformed string.
func MustParseGUID(s string) GUID {
	g, err := ParseGUID(s)
	if err != nil {
		panic(err)
	}
	return g
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// String formats g in lower case without braces,
// "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4".
func (g GUID) String() string {
	return string(g.AppendText(make([]byte, 0, 36)))
}

// AppendText appends the String form of g to b. It does not allocate when b
// has room.
func (g GUID) AppendText(b []byte) []byte {
	const digits = "0123456789abcdef"
	hex := func(b []byte, v uint64, n int) []byte {
		for i := n - 1; i >= 0; i-- {
			b = append(b, digits[(v>>(uint(i)*4))&0xf])
		}
		return b
	}
	b = hex(b, uint64(binary.LittleEndian.Uint32(g[0:])), 8)
	b = append(b, '-')
	b = hex(b, uint64(binary.LittleEndian.Uint16(g[4:])), 4)
	b = append(b, '-')
	b = hex(b, uint64(binary.LittleEndian.Uint16(g[6:])), 4)
	b = append(b, '-')
	b = hex(b, uint64(binary.BigEndian.Uint16(g[8:])), 4)
	b = append(b, '-')
	return hex(b, binary.BigEndian.Uint64(g[8:])&0xffffffffffff, 12)
}

// MarshalText implements encoding.TextMarshaler.
func (g GUID) MarshalText() ([]byte, error) { return g.AppendText(nil), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (g *GUID) UnmarshalText(b []byte) error {
	v, err := ParseGUID(string(b))
	if err != nil {
		return err
	}
	*g = v
	return nil
}

// IsZero reports whether g is the all-zero GUID.
func (g GUID) IsZero() bool { return g == GUID{} }
