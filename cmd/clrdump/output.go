package main

import (
	"encoding/csv"
	"encoding/json"
	"strconv"

	"github.com/clrgo/clrevents/trace"
)

const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// fields appends the event's fields as a JSON object (json) or Name=value
// pairs (text): through clrevents for CLR events, the trace's metadata for
// EventSource events, else the payload in hex.
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
	b = e.Time().UTC().AppendFormat(b, timeLayout)
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
	b = e.Time().UTC().AppendFormat(b, timeLayout)
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
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

var csvHeader = []string{"index", "time", "provider", "event", "id", "version", "pid", "tid", "field", "value"}

// writeCSV writes the long form: one row per field. The field values are
// those of the JSON form, strings unquoted and arrays or objects as JSON.
func (d *dumper) writeCSV(e *trace.Event, dec *decoded) {
	cw := csv.NewWriter(d.w)
	if d.printed == 1 {
		cw.Write(csvHeader)
	}
	row := []string{
		strconv.Itoa(d.printed - 1), e.Time().UTC().Format(timeLayout), e.Provider(), dec.name,
		strconv.Itoa(int(e.ID())), strconv.Itoa(int(e.Version())),
		strconv.FormatInt(e.ProcessID(), 10), strconv.FormatInt(e.ThreadID(), 10), "", "",
	}
	if dec.err != nil {
		row[8], row[9] = "error", dec.err.Error()
		cw.Write(row)
		cw.Flush()
		return
	}
	d.obj = d.fields(d.obj[:0], e, dec, true)
	n := 0
	eachMember(d.obj, func(key, val []byte) {
		row[8] = string(key)
		if len(val) > 0 && val[0] == '"' {
			var s string
			if json.Unmarshal(val, &s) == nil {
				row[9] = s
			} else {
				row[9] = string(val)
			}
		} else {
			row[9] = string(val)
		}
		cw.Write(row)
		n++
	})
	if n == 0 {
		row[8], row[9] = "", ""
		cw.Write(row)
	}
	if len(dec.extra) > 0 {
		row[8], row[9] = "extra", string(appendHexBytes(nil, dec.extra))
		cw.Write(row)
	}
	cw.Flush()
}

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
