package clrimpl

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// JSON helpers for the generated AppendJSON methods and for any writer of
// event fields (the interpreters of descriptions a trace carries write the
// same JSON with them). None allocates when dst has room. String escaping follows encoding/json with HTML escaping off, byte
// for byte: '"' and '\\' are escaped, control characters become \b, \f, \n,
// \r, \t or \u00XX, U+2028 and U+2029 become \u2028 and \u2029, and invalid
// UTF-8 becomes \ufffd.

const hexDigits = "0123456789abcdef"

// jsonSafe[c] is true for the ASCII bytes that appear unescaped in a JSON
// string: everything from 0x20 to 0x7f except '"' and '\\'.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONEscapedASCII appends the escape sequence for an ASCII byte c
// that is not jsonSafe.
func appendJSONEscapedASCII(dst []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// appendJSONRune appends the JSON form of a non-ASCII rune r (already
// replaced by U+FFFD when invalid): its UTF-8 bytes, or \u2028 / \u2029.
func appendJSONRune(dst []byte, r rune) []byte {
	if r == '\u2028' || r == '\u2029' {
		return append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}

// AppendJSONString appends s as a quoted JSON string literal, escaped per
// RFC 8259 exactly as encoding/json does with HTML escaping off.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendJSONEscapedASCII(dst, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = appendJSONRune(dst, r)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendJSONHex appends v as a quoted lower-case hex string, "0x1f"; zero is
// "0x0".
func AppendJSONHex(dst []byte, v uint64) []byte {
	dst = append(dst, '"', '0', 'x')
	dst = strconv.AppendUint(dst, v, 16)
	return append(dst, '"')
}

// AppendJSONUint appends v as a JSON number.
func AppendJSONUint(dst []byte, v uint64) []byte {
	return strconv.AppendUint(dst, v, 10)
}

// AppendJSONInt appends v as a JSON number.
func AppendJSONInt(dst []byte, v int64) []byte {
	return strconv.AppendInt(dst, v, 10)
}

// AppendJSONFloat appends f as a JSON number in the shortest form that
// round-trips, formatted as encoding/json formats a float64 (plain decimal
// from 1e-6 up to 1e21, exponent form outside). JSON has no NaN or infinity:
// they become null.
func AppendJSONFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Clean up e-09 to e-9, as encoding/json does.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// AppendJSONBool appends true or false.
func AppendJSONBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// AppendJSON appends g as a quoted JSON string in its String form,
// "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4". It does not allocate when dst has
// room.
func (g GUID) AppendJSON(dst []byte) []byte {
	dst = append(dst, '"')
	dst = g.AppendText(dst)
	return append(dst, '"')
}
