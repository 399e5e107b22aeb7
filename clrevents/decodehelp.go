package clrevents

import (
	"strconv"
)

// fieldEnd is where a fixed-prefix field ends: bytes plus ptrs pointers.
// Generated decoders list them for the error they return on a short
// payload; the hot path never reads them.
type fieldEnd struct {
	name  string
	bytes int
	ptrs  int
}

// prefixShort names the first prefix field a payload of have bytes cuts,
// and where that field starts.
func prefixShort(have, ptrSize int, ends []fieldEnd) (field string, off int) {
	start := 0
	for _, e := range ends {
		end := e.bytes + e.ptrs*ptrSize
		if end > have {
			return e.name, start
		}
		start = end
	}
	return "", have
}

// shortPrefix is the error of an event whose payload is shorter than its
// fixed prefix.
func shortPrefix(event string, have, ptrSize int, ends []fieldEnd) error {
	f, off := prefixShort(have, ptrSize, ends)
	return decodeError(event, f, off, ErrShortPayload)
}

// elemPath names a field inside element i of a struct array: "Values[3].Name".
func elemPath(field string, i uint64, sub string) string {
	p := field + "[" + strconv.FormatUint(i, 10) + "]"
	if sub != "" {
		p += "." + sub
	}
	return p
}

// flagName is one named flag of a bitMap or keyword set.
type flagName struct {
	value uint64
	name  string
}

// appendFlags appends the names of the flags set in v, joined by "|", with
// any bits no name covers in hex; zero is the name of the value 0, if the
// map has one.
func appendFlags(b []byte, v uint64, names []flagName, zero string) []byte {
	if v == 0 {
		if zero != "" {
			return append(b, zero...)
		}
		return append(b, '0')
	}
	first := true
	rest := v
	for _, n := range names {
		if n.value != 0 && v&n.value == n.value {
			if !first {
				b = append(b, '|')
			}
			b = append(b, n.name...)
			first = false
			rest &^= n.value
		}
	}
	if rest != 0 {
		if !first {
			b = append(b, '|')
		}
		b = appendHex(b, rest)
	}
	return b
}

// appendUnknown appends a value a map does not name: "GCReason(0x1a)".
func appendUnknown(b []byte, typ string, v uint64) []byte {
	b = append(b, typ...)
	b = append(b, '(')
	b = appendHex(b, v)
	return append(b, ')')
}

// appendHex appends v as 0x followed by lower-case hex digits.
func appendHex(b []byte, v uint64) []byte {
	b = append(b, '0', 'x')
	return strconv.AppendUint(b, v, 16)
}
