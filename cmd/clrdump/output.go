package main

import (
	"encoding/csv"
	"encoding/json"
	"strconv"
)

const timeLayout = "2006-01-02T15:04:05.000000Z07:00"

// fields appends the event's fields as a JSON object (json) or Name=value
// pairs (text): through clrevents for CLR events, the trace's metadata for
// EventSource events, else the payload in hex.
func (d *dumper) fields(dst []byte, r *record, dec *decoded, json bool) []byte {
	if dec.ev != nil {
		if json {
			return dec.ev.AppendJSON(dst)
		}
		return dec.ev.AppendText(dst)
	}
	if dec.err == nil && r.meta != nil && len(r.meta.Fields) > 0 {
		var out []byte
		var err error
		if json {
			out, err = r.meta.AppendJSON(dst, r.payload)
		} else {
			out, err = r.meta.AppendText(dst, r.payload)
		}
		if err == nil {
			return out
		}
		dec.err = err
		d.errs++
	}
	if json {
		dst = append(dst, `{"payload":"`...)
		dst = appendHexBytes(dst, r.payload)
		return append(dst, `"}`...)
	}
	dst = append(dst, "payload="...)
	return appendHexBytes(dst, r.payload)
}

func appendHexBytes(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	dst = append(dst, "0x"...)
	for _, c := range b {
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}

func (d *dumper) writeText(r *record, dec *decoded) {
	b := d.buf[:0]
	b = r.time.UTC().AppendFormat(b, timeLayout)
	b = append(b, ' ')
	b = append(b, providerName(r)...)
	b = append(b, '/')
	b = append(b, dec.name...)
	b = append(b, " pid="...)
	b = strconv.AppendUint(b, r.pid, 10)
	b = append(b, " tid="...)
	b = strconv.AppendUint(b, r.tid, 10)
	b = append(b, ' ')
	if dec.err != nil {
		b = append(b, "error="...)
		b = strconv.AppendQuote(b, dec.err.Error())
		b = append(b, ' ')
		b = append(b, "payload="...)
		b = appendHexBytes(b, r.payload)
	} else {
		b = d.fields(b, r, dec, false)
	}
	if dec.extra > 0 {
		b = append(b, " extra="...)
		b = strconv.AppendInt(b, int64(dec.extra), 10)
	}
	b = append(b, '\n')
	d.w.Write(b)
	d.buf = b
}

func (d *dumper) writeJSON(r *record, dec *decoded) {
	b := d.buf[:0]
	b = append(b, `{"time":"`...)
	b = r.time.UTC().AppendFormat(b, timeLayout)
	b = append(b, `","provider":`...)
	b = strconv.AppendQuote(b, providerName(r))
	b = append(b, `,"event":`...)
	b = strconv.AppendQuote(b, dec.name)
	b = append(b, `,"id":`...)
	b = strconv.AppendUint(b, uint64(r.id), 10)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, uint64(r.version), 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendUint(b, r.pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendUint(b, r.tid, 10)
	if dec.err != nil {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, dec.err.Error())
		b = append(b, `,"payload":"`...)
		b = appendHexBytes(b, r.payload)
		b = append(b, '"')
	} else {
		b = append(b, `,"fields":`...)
		b = d.fields(b, r, dec, true)
	}
	if dec.extra > 0 {
		b = append(b, `,"extra":`...)
		b = strconv.AppendInt(b, int64(dec.extra), 10)
	}
	b = append(b, "}\n"...)
	d.w.Write(b)
	d.buf = b
}

// appendJSONString quotes s for JSON (strconv's Go quoting is not JSON for
// control characters and non-ASCII escapes).
func appendJSONString(dst []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(dst, q...)
}

var csvHeader = []string{"index", "time", "provider", "event", "id", "version", "pid", "tid", "field", "value"}

// writeCSV writes the long form: one row per field. The field values are
// those of the JSON form, strings unquoted and arrays or objects as JSON.
func (d *dumper) writeCSV(r *record, dec *decoded) {
	cw := csv.NewWriter(d.w)
	if d.printed == 1 {
		cw.Write(csvHeader)
	}
	row := []string{
		strconv.Itoa(d.printed - 1), r.time.UTC().Format(timeLayout), providerName(r), dec.name,
		strconv.Itoa(int(r.id)), strconv.Itoa(int(r.version)),
		strconv.FormatUint(r.pid, 10), strconv.FormatUint(r.tid, 10), "", "",
	}
	if dec.err != nil {
		row[8], row[9] = "error", dec.err.Error()
		cw.Write(row)
		cw.Flush()
		return
	}
	d.obj = d.fields(d.obj[:0], r, dec, true)
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
	if dec.extra > 0 {
		row[8], row[9] = "extra", strconv.Itoa(dec.extra)
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
