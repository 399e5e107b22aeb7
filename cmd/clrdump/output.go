package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/clrgo/clrevents/trace"
)

const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// appendTime appends t in UTC as timeLayout writes it (RFC 3339 with the
// microseconds truncated, "Z" for the zone), without time.AppendFormat's
// layout interpretation: that was a third of the time of -format text.
// Times before 1970 or after 9999 go through AppendFormat.
func appendTime(dst []byte, t time.Time) []byte {
	sec := t.Unix()
	if sec < 0 || sec >= 253402300800 { // 10000-01-01
		return t.UTC().AppendFormat(dst, timeLayout)
	}
	u := uint64(sec)
	days, sod := u/86400, u%86400
	// Civil date from days since 1970-01-01 (H. Hinnant's civil_from_days),
	// in eras of 400 years from 0000-03-01; unsigned, as the time is after
	// 1970.
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
		y++
	}
	us := uint64(t.Nanosecond()) / 1000
	var b [27]byte
	put2(b[0:], y/100)
	put2(b[2:], y%100)
	b[4] = '-'
	put2(b[5:], m)
	b[7] = '-'
	put2(b[8:], d)
	b[10] = 'T'
	put2(b[11:], sod/3600)
	b[13] = ':'
	put2(b[14:], sod/60%60)
	b[16] = ':'
	put2(b[17:], sod%60)
	b[19] = '.'
	put2(b[20:], us/10000)
	put2(b[22:], us/100%100)
	put2(b[24:], us%100)
	b[26] = 'Z'
	return append(dst, b[:]...)
}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// put2 writes v (< 100) as two digits.
func put2(b []byte, v uint64) {
	b[0], b[1] = digitPairs[2*v], digitPairs[2*v+1]
}

// fields appends the event's fields as a JSON object (json) or Name=value
// pairs (text): through clrevents for CLR events, the trace's metadata for
// EventSource events, package etl for the kernel events it parses, else
// the payload in hex.
func (d *dumper) fields(dst []byte, e *trace.Event, dec *decoded, json bool) []byte {
	if dec.ev != nil {
		if json {
			return dec.ev.AppendJSON(dst)
		}
		return dec.ev.AppendText(dst)
	}
	if m := e.Metadata(); dec.err == nil && m != nil && len(m.Fields) > 0 {
		var out []byte
		var err error
		if json {
			out, err = m.AppendJSON(dst, e.Payload())
		} else {
			out, err = m.AppendText(dst, e.Payload())
		}
		if err == nil {
			return out
		}
		dec.err = err
		d.errs++
	}
	if x := e.ETL(); x != nil {
		if out, ok := x.AppendKernelFields(dst, json); ok {
			return out
		}
	}
	if json {
		dst = append(dst, `{"payload":"`...)
		dst = appendHexBytes(dst, e.Payload())
		return append(dst, `"}`...)
	}
	dst = append(dst, "payload="...)
	return appendHexBytes(dst, e.Payload())
}

func appendHexBytes(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	dst = append(dst, "0x"...)
	for _, c := range b {
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}

func (d *dumper) writeText(e *trace.Event, dec *decoded) {
	b := d.buf[:0]
	b = appendTime(b, e.Time())
	b = append(b, ' ')
	b = append(b, e.Provider()...)
	b = append(b, '/')
	b = append(b, dec.name...)
	b = append(b, " pid="...)
	b = strconv.AppendInt(b, e.ProcessID(), 10)
	b = append(b, " tid="...)
	b = strconv.AppendInt(b, e.ThreadID(), 10)
	b = append(b, ' ')
	if dec.err != nil {
		b = append(b, "error="...)
		b = strconv.AppendQuote(b, dec.err.Error())
		b = append(b, ' ')
		b = append(b, "payload="...)
		b = appendHexBytes(b, e.Payload())
	} else {
		b = d.fields(b, e, dec, false)
	}
	if len(dec.extra) > 0 {
		b = append(b, " extra="...)
		b = appendHexBytes(b, dec.extra)
	}
	b = append(b, '\n')
	d.w.Write(b)
	d.buf = b
}

func (d *dumper) writeJSON(e *trace.Event, dec *decoded) {
	b := d.buf[:0]
	b = append(b, `{"time":"`...)
	b = appendTime(b, e.Time())
	b = append(b, `","provider":`...)
	b = appendJSONString(b, e.Provider())
	b = append(b, `,"event":`...)
	b = appendJSONString(b, dec.name)
	b = append(b, `,"id":`...)
	b = strconv.AppendUint(b, uint64(e.ID()), 10)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, uint64(e.Version()), 10)
	b = append(b, `,"task":`...)
	b = strconv.AppendUint(b, uint64(e.Task()), 10)
	b = append(b, `,"opcode":`...)
	b = strconv.AppendUint(b, uint64(e.Opcode()), 10)
	b = append(b, `,"level":`...)
	b = strconv.AppendUint(b, uint64(e.Level()), 10)
	b = append(b, `,"keywords":"0x`...)
	b = strconv.AppendUint(b, e.Keywords(), 16)
	b = append(b, `","pid":`...)
	b = strconv.AppendInt(b, e.ProcessID(), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, e.ThreadID(), 10)
	if e.CPU() >= 0 {
		b = append(b, `,"cpu":`...)
		b = strconv.AppendInt(b, int64(e.CPU()), 10)
	}
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(len(e.Payload())), 10)
	if !e.ActivityID().IsZero() {
		b = append(b, `,"activity":"`...)
		b = e.ActivityID().AppendText(b)
		b = append(b, '"')
	}
	if !e.RelatedActivityID().IsZero() {
		b = append(b, `,"related_activity":"`...)
		b = e.RelatedActivityID().AppendText(b)
		b = append(b, '"')
	}
	if dec.err != nil {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, dec.err.Error())
		b = append(b, `,"payload":"`...)
		b = appendHexBytes(b, e.Payload())
		b = append(b, '"')
	} else {
		b = append(b, `,"fields":`...)
		b = d.fields(b, e, dec, true)
	}
	if len(dec.extra) > 0 {
		b = append(b, `,"extra":"`...)
		b = appendHexBytes(b, dec.extra)
		b = append(b, '"')
	}
	b = append(b, "}\n"...)
	d.w.Write(b)
	d.buf = b
}

// appendJSONString quotes s for JSON: plain printable ASCII, as provider
// and event names are, directly; anything else through encoding/json
// (strconv's Go quoting is not JSON for control characters and non-ASCII
// escapes).
func appendJSONString(dst []byte, s string) []byte {
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

var csvHeader = []string{"index", "time", "provider", "event", "id", "version", "pid", "tid", "field", "value"}

// writeCSV writes the long form: one row per field. The field values are
// those of the JSON form, strings unquoted and arrays or objects as JSON.
// Rows are built in one buffer, quoted as encoding/csv quotes them
// (appendCSVField), from a prefix of the event's columns that every row
// repeats.
func (d *dumper) writeCSV(e *trace.Event, dec *decoded) {
	b := d.buf[:0]
	if d.printed == 1 {
		for i, h := range csvHeader {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCSVField(b, h)
		}
		b = append(b, '\n')
	}
	// The prefix, index to tid and the comma before field, sits at
	// b[start:end]; rows are appended after it and written from end.
	start := len(b)
	b = strconv.AppendInt(b, int64(d.printed-1), 10)
	b = append(b, ',')
	b = appendTime(b, e.Time())
	b = append(b, ',')
	b = appendCSVField(b, e.Provider())
	b = append(b, ',')
	b = appendCSVField(b, dec.name)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(e.ID()), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(e.Version()), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, e.ProcessID(), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, e.ThreadID(), 10)
	b = append(b, ',')
	end := len(b)
	row := func(b []byte, field, value string) []byte {
		b = append(b, b[start:end]...)
		b = appendCSVField(b, field)
		b = append(b, ',')
		b = appendCSVField(b, value)
		return append(b, '\n')
	}
	if dec.err != nil {
		b = row(b, "error", dec.err.Error())
	} else {
		d.obj = d.fields(d.obj[:0], e, dec, true)
		n := 0
		eachMember(d.obj, func(key, val []byte) {
			b = append(b, b[start:end]...)
			b = appendCSVField(b, key)
			b = append(b, ',')
			b = appendCSVValue(b, val)
			b = append(b, '\n')
			n++
		})
		if n == 0 {
			b = row(b, "", "")
		}
		if len(dec.extra) > 0 {
			b = append(b, b[start:end]...)
			b = append(b, "extra,"...)
			b = appendHexBytes(b, dec.extra)
			b = append(b, '\n')
		}
	}
	d.w.Write(b[:start])
	d.w.Write(b[end:])
	d.buf = b
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
