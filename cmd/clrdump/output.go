package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/trace"
)

var csvHeader = []string{"index", "time", "provider", "event", "id", "version", "pid", "tid", "field", "value"}

// writeCSV writes the long form: one row per field. The field values are
// those of the JSON form, strings unquoted and arrays or objects as JSON.
// Rows are built in the output buffer itself (out), quoted as encoding/csv
// quotes them (appendCSVField), from a prefix of the event's columns that
// every row repeats.
func (d *dumper) writeCSV(e *trace.Event, dec *eventfmt.Decoded) {
	if d.printed == 1 {
		h := d.buf[:0]
		for i, c := range csvHeader {
			if i > 0 {
				h = append(h, ',')
			}
			h = appendCSVField(h, c)
		}
		d.w.Write(append(h, '\n'))
	}
	// The prefix, index to tid and the comma before field, that every
	// row of the event repeats.
	p := d.buf[:0]
	p = strconv.AppendInt(p, int64(d.printed-1), 10)
	p = append(p, ',')
	p = eventfmt.AppendTime(p, e.Time())
	p = append(p, ',')
	p = appendCSVField(p, e.Provider())
	p = append(p, ',')
	p = appendCSVField(p, dec.Name)
	p = append(p, ',')
	p = strconv.AppendUint(p, uint64(e.ID()), 10)
	p = append(p, ',')
	p = strconv.AppendUint(p, uint64(e.Version()), 10)
	p = append(p, ',')
	p = strconv.AppendInt(p, e.ProcessID(), 10)
	p = append(p, ',')
	p = strconv.AppendInt(p, e.ThreadID(), 10)
	p = append(p, ',')
	d.buf = p
	row := func(b []byte, field, value string) []byte {
		b = append(b, p...)
		b = appendCSVField(b, field)
		b = append(b, ',')
		b = appendCSVField(b, value)
		return append(b, '\n')
	}
	b := d.out()
	if dec.Err != nil {
		b = row(b, "error", dec.Err.Error())
	} else {
		d.obj = eventfmt.AppendFields(d.obj[:0], e, dec, true)
		n := 0
		eachMember(d.obj, func(key, val []byte) {
			b = append(b, p...)
			b = appendCSVField(b, key)
			b = append(b, ',')
			b = appendCSVValue(b, val)
			b = append(b, '\n')
			n++
		})
		if n == 0 {
			b = row(b, "", "")
		}
		if len(dec.Extra) > 0 {
			b = append(b, p...)
			b = append(b, "extra,"...)
			b = eventfmt.AppendHex(b, dec.Extra)
			b = append(b, '\n')
		}
	}
	d.w.Write(b)
}

// appendCSVValue appends the CSV field for a JSON value: a string's
// contents, anything else as it is. A string with escapes, control bytes
// or invalid UTF-8 goes through encoding/json, as before.
func appendCSVValue(dst, val []byte) []byte {
	if len(val) == 0 || val[0] != '"' {
		return appendCSVField(dst, val)
	}
	if n := len(val); n >= 2 && val[n-1] == '"' && plainJSONString(val[1:n-1]) {
		return appendCSVField(dst, val[1:n-1])
	}
	var s string
	if json.Unmarshal(val, &s) == nil {
		return appendCSVField(dst, s)
	}
	return appendCSVField(dst, val)
}

// plainJSONString reports whether the contents of a JSON string literal
// are printable ASCII without escapes or quotes: what encoding/json
// unquotes to the same bytes.
func plainJSONString(in []byte) bool {
	for _, c := range in {
		if c < 0x20 || c == '\\' || c == '"' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendCSVField appends f as encoding/csv's Writer (comma, no CRLF)
// writes a field: quoted, with quotes doubled, when it holds a comma, a
// quote, CR or LF, starts with a Unicode space or is \.
func appendCSVField[S string | []byte](dst []byte, f S) []byte {
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

// eachMember calls fn with the key (unquoted; our keys are Go identifiers)
// and the raw JSON value of each member of the JSON object obj, which must
// be well formed, as every AppendJSON writes it.
func eachMember(obj []byte, fn func(key, val []byte)) {
	i := 1 // past '{'
	for i < len(obj) && obj[i] == '"' {
		k := i + 1
		for i = k; i < len(obj) && obj[i] != '"'; i++ {
		}
		key := obj[k:i]
		i += 2 // '"' and ':'
		start := i
		// Fast paths: a string without escapes, and a number or literal,
		// end at the first quote or at the first ',' or '}'.
		if i < len(obj) && obj[i] == '"' {
			if n := bytes.IndexByte(obj[i+1:], '"'); n >= 0 && obj[i+n] != '\\' {
				i += n + 2
				fn(key, obj[start:i])
				i++
				continue
			}
		} else if i < len(obj) && obj[i] != '[' && obj[i] != '{' {
			for i < len(obj) && obj[i] != ',' && obj[i] != '}' {
				i++
			}
			fn(key, obj[start:i])
			i++
			continue
		}
		depth, inStr := 0, false
	scan:
		for ; i < len(obj); i++ {
			c := obj[i]
			switch {
			case inStr && c == '\\':
				i++
			case c == '"':
				inStr = !inStr
			case inStr:
			case c == '[' || c == '{':
				depth++
			case c == ']' || c == '}':
				if depth == 0 {
					break scan
				}
				depth--
			case c == ',' && depth == 0:
				break scan
			}
		}
		fn(key, obj[start:i])
		i++ // ',' or the closing '}'
	}
}
