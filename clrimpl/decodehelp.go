package clrimpl

import (
	"strconv"
)

// FieldEnd is where a fixed-prefix field ends: bytes plus ptrs pointers.
// Generated decoders list them for the error they return on a short
// payload; the hot path never reads them.
type FieldEnd struct {
	Name  string // the field
	Bytes int    // its end offset, less the pointer-sized fields before and in it
	Ptrs  int    // pointer-sized fields up to its end
}

// PrefixShort names the first prefix field a payload of have bytes cuts,
// and where that field starts.
func PrefixShort(have, ptrSize int, ends []FieldEnd) (field string, off int) {
	start := 0
	for _, e := range ends {
		end := e.Bytes + e.Ptrs*ptrSize
		if end > have {
			return e.Name, start
		}
		start = end
	}
	return "", have
}

// ShortPrefix is the error of an event whose payload is shorter than its
// fixed prefix.
func ShortPrefix(pkg, event string, have, ptrSize int, ends []FieldEnd) error {
	f, off := PrefixShort(have, ptrSize, ends)
	return NewDecodeError(pkg, event, f, off, ErrShortPayload)
}

// ElemPath names a field inside element i of a struct array: "Values[3].Name".
func ElemPath(field string, i uint64, sub string) string {
	p := field + "[" + strconv.FormatUint(i, 10) + "]"
	if sub != "" {
		p += "." + sub
	}
	return p
}

// FlagName is one named flag of a bitMap or keyword set.
type FlagName struct {
	Value uint64
	Name  string
}

// AppendFlags appends the names of the flags set in v, joined by "|", with
// any bits no name covers in hex; zero is the name of the value 0, if the
// map has one.
func AppendFlags(b []byte, v uint64, names []FlagName, zero string) []byte {
	if v == 0 {
		if zero != "" {
			return append(b, zero...)
		}
		return append(b, '0')
	}
	first := true
	rest := v
	for _, n := range names {
		if n.Value != 0 && v&n.Value == n.Value {
			if !first {
				b = append(b, '|')
			}
			b = append(b, n.Name...)
			first = false
			rest &^= n.Value
		}
	}
	if rest != 0 {
		if !first {
			b = append(b, '|')
		}
		b = AppendHex(b, rest)
	}
	return b
}

// AppendUnknown appends a value a map does not name: "GCReason(0x1a)".
func AppendUnknown(b []byte, typ string, v uint64) []byte {
	b = append(b, typ...)
	b = append(b, '(')
	b = AppendHex(b, v)
	return append(b, ')')
}

// AppendHex appends v as 0x followed by lower-case hex digits.
func AppendHex(b []byte, v uint64) []byte {
	b = append(b, '0', 'x')
	return strconv.AppendUint(b, v, 16)
}
