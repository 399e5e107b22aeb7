// Package textfmt holds the quoting and layout that every text output of
// the module shares: JSON strings and CSV fields quoted as encoding/json
// and encoding/csv write them (without their cost), and tables laid out in
// columns. Event lines (internal/eventfmt) and the GC and JIT reports
// (gcstats, jitstats) use it, so that their quoting is the same.
package textfmt

import (
	"encoding/json"
	"unicode"
	"unicode/utf8"
)

// AppendJSONString quotes s for JSON: plain printable ASCII, as provider
// and event names are, directly; anything else through encoding/json
// (strconv's Go quoting is not JSON for control characters and non-ASCII
// escapes).
func AppendJSONString(dst []byte, s string) []byte {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !jsonPlain8(uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56) {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// jsonPlain8 reports whether the eight bytes of v are printable ASCII that
// JSON writes unescaped: 0x20–0x7e, not '"' or '\\'. In each byte, x - k
// borrows into the top bit exactly when x < k (x < 0x80); a borrow into
// the byte above happens only after a byte below has matched.
func jsonPlain8(v uint64) bool {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	if v&high != 0 {
		return false
	}
	return ((v-0x20*ones)|((v^0x7f*ones)-ones)|((v^'"'*ones)-ones)|((v^'\\'*ones)-ones))&high == 0
}

// AppendCSVField appends f as encoding/csv's Writer (comma, no CRLF)
// writes a field: quoted, with quotes doubled, when it holds a comma, a
// quote, CR or LF, starts with a Unicode space or is \.
func AppendCSVField[S string | []byte](dst []byte, f S) []byte {
	quote := false
	i := 0
	for ; i+8 <= len(f); i += 8 {
		if csvSpecial8(uint64(f[i]) | uint64(f[i+1])<<8 | uint64(f[i+2])<<16 | uint64(f[i+3])<<24 |
			uint64(f[i+4])<<32 | uint64(f[i+5])<<40 | uint64(f[i+6])<<48 | uint64(f[i+7])<<56) {
			break
		}
	}
	for ; i < len(f); i++ {
		if c := f[i]; c == '\n' || c == '\r' || c == '"' || c == ',' {
			quote = true
			break
		}
	}
	if !quote && len(f) > 0 {
		if f[0] < utf8.RuneSelf {
			quote = asciiSpace[f[0]] || string(f) == `\.`
		} else {
			r, _ := utf8.DecodeRuneInString(string(f[:min(len(f), utf8.UTFMax)]))
			quote = unicode.IsSpace(r)
		}
	}
	if !quote {
		return append(dst, f...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(f); i++ {
		if f[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, f[i])
	}
	return append(dst, '"')
}

// csvSpecial8 reports whether any of the eight bytes of v is ',', '"', CR
// or LF: a zero byte of v ^ c*0x01… marks c, and (x - 0x01…) &^ x &
// 0x80… finds a zero byte (bytes above it may be marked falsely by the
// borrow, never when none is zero).
func csvSpecial8(v uint64) bool {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	z := func(x uint64) uint64 { return (x - ones) &^ x & high }
	return z(v^','*ones)|z(v^'"'*ones)|z(v^'\r'*ones)|z(v^'\n'*ones) != 0
}

// asciiSpace marks the ASCII bytes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// AppendCSVRecord appends fields as one CSV record (AppendCSVField each,
// commas between) and a newline.
func AppendCSVRecord(dst []byte, fields ...string) []byte {
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendCSVField(dst, f)
	}
	return append(dst, '\n')
}
