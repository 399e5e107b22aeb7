package clrimpl

import (
	"strconv"
)

// Text helpers for the names of map-bound values and flags, for the
// generated AppendText and AppendJSON methods and for any writer of event
// fields.

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
