package eventfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dynamic"
	"github.com/clrgo/clrevents/internal/textfmt"
	"github.com/clrgo/clrevents/trace"
)

// CSVHeader is the header line of clrdump's CSV long form.
const CSVHeader = "index,time,provider,event,id,version,pid,tid,field,value\n"

// CSV writes events as clrdump's CSV long form: one row per field of an
// event, index,time,provider,event,id,version,pid,tid,field,value, quoted
// as encoding/csv quotes. A field's value is the one its JSON line gives
// it, strings without their quotes, arrays and objects as JSON; an event
// without fields is one row with field and value empty, one whose payload
// did not decode a row "error" with the reason, one nothing describes a
// row "payload" with the payload in hex, and bytes past a template a row
// "extra" in hex.
//
// The rows are built from the columns of what describes the event
// (clrimpl.ColumnAppender over a generated type's or a description's
// Columns), not from its JSON. The zero value is ready to use; it keeps
// its buffers from one event to the next.
type CSV struct {
	rows csvRows
	obj  []byte // the JSON fields of an event only a JSON writer describes
	// styleOf's answer for the last descriptor
	lastDesc  *clrimpl.Descriptor
	lastStyle csvStyle
}

// Append appends the rows of e, decoded as dec (Decode), the index-th
// event of the output. A payload that does not fit its description sets
// dec.Err, as AppendFields does, and gets the "error" row, as one that
// did not decode does.
func (c *CSV) Append(b []byte, index int64, e *trace.Event, dec *Decoded) []byte {
	r := &c.rows
	p := r.prefix[:0]
	p = strconv.AppendInt(p, index, 10)
	p = append(p, ',')
	p = AppendTime(p, e.Time())
	p = append(p, ',')
	p = textfmt.AppendCSVField(p, e.Provider())
	p = append(p, ',')
	p = textfmt.AppendCSVField(p, dec.Name)
	p = append(p, ',')
	p = strconv.AppendUint(p, uint64(e.ID()), 10)
	p = append(p, ',')
	p = strconv.AppendUint(p, uint64(e.Version()), 10)
	p = append(p, ',')
	p = strconv.AppendInt(p, e.ProcessID(), 10)
	p = append(p, ',')
	p = strconv.AppendInt(p, e.ThreadID(), 10)
	p = append(p, ',')
	r.prefix = p
	if dec.Err != nil {
		r.b = b
		r.row("error", dec.Err.Error())
		return r.b
	}
	start := len(b)
	r.begin(b)
	if err := c.fields(e, dec); err != nil {
		r.b = r.b[:start]
		r.n = 0
		if !errors.Is(err, clrimpl.ErrUnknownEvent) {
			// A payload that does not fit its description: the error
			// row, as for one that did not decode.
			dec.Err = err
			r.row("error", err.Error())
			return r.b
		}
		r.payload(e.Payload())
	}
	var buf [2]trace.Derived
	for _, d := range e.AppendDerived(buf[:0]) {
		if d.IsInt {
			r.row(d.Name, strconv.FormatInt(d.Int, 10))
		} else {
			r.row(d.Name, d.Str)
		}
	}
	if r.n == 0 {
		r.row("", "")
	}
	if len(dec.Extra) > 0 {
		r.payloadRow("extra", dec.Extra)
	}
	return r.b
}

// fields appends the rows of e's fields from the columns of what
// describes them (its Descriptor, as trace.Event.AppendJSON writes by
// it): the generated type (dec.Event, decoded already), an EventPipe
// event's metadata, an ETW log's own description, a kernel layout. The
// kernel's events that package etl parses by hand have no descriptor:
// their rows come from their JSON.
func (c *CSV) fields(e *trace.Event, dec *Decoded) error {
	r := &c.rows
	if dec.Event != nil {
		r.describe(dec.Event.Descriptor().Columns, csvStyle{names: true})
		dec.Event.AppendColumns(r)
		return nil
	}
	if d := e.Descriptor(); d != nil {
		if d != c.lastDesc {
			c.lastDesc, c.lastStyle = d, styleOf(d)
		}
		r.describe(d.Columns, c.lastStyle)
		return d.Fields.AppendColumns(r, e.Payload(), e.PointerSize())
	}
	obj, err := e.AppendJSON(c.obj[:0])
	c.obj = obj
	if err != nil {
		return err
	}
	eachMember(obj, func(key, val []byte) {
		r.b = append(r.b, r.prefix...)
		r.b = textfmt.AppendCSVField(r.b, key)
		r.b = append(r.b, ',')
		r.b = appendCSVValue(r.b, val)
		r.b = append(r.b, '\n')
		r.n++
	})
	return nil
}

// styleOf is how the values of d's columns are written, as d's JSON
// writes them. Each kind of description writes some values its own way:
// generated types write an empty binary field as "", the descriptions
// package dynamic interprets as "0x"; EventSource metadata (an EventPipe
// event's) writes floats in %g form at their own width; a field bound to
// a map is its name.
func styleOf(d *clrimpl.Descriptor) csvStyle {
	desc, ok := d.Fields.(*dynamic.Description)
	if !ok {
		return csvStyle{names: true} // a generated type's
	}
	var s csvStyle
	s.binaryPrefix = true
	for i := range desc.Fields {
		f := &desc.Fields[i]
		s.names = s.names || f.Map != nil
		s.gFloats = s.gFloats || f.Format == dynamic.FormatG && (f.Kind == dynamic.Float32 || f.Kind == dynamic.Float64)
	}
	return s
}

// csvStyle is how a description writes the values its JSON and its
// columns write differently.
type csvStyle struct {
	// names: a map-bound field is its number and Field_name, and its
	// value is the name. (A description without maps has no such pairs:
	// a field named like one is its own.)
	names bool
	// gFloats: floats in strconv's 'g' form at the column's width (NaN
	// and infinities as such), not encoding/json's (null). The
	// descriptions that write them so write every float so.
	gFloats bool
	// binaryPrefix: empty binary data is "0x", not "".
	binaryPrefix bool
}

// csvRows is a clrimpl.ColumnAppender that writes each value as a row.
type csvRows struct {
	b       []byte // the output
	prefix  []byte // index to tid, and the comma before field
	cols    []clrimpl.Column
	i       int // the column of the next value
	n       int // rows written for the event
	style   csvStyle
	scratch []byte
}

func (r *csvRows) begin(b []byte) {
	r.b, r.n = b, 0
}

func (r *csvRows) describe(cols []clrimpl.Column, style csvStyle) {
	r.cols, r.i, r.style = cols, 0, style
}

// row appends a row of field and value.
func (r *csvRows) row(field, value string) {
	r.b = append(r.b, r.prefix...)
	r.b = textfmt.AppendCSVField(r.b, field)
	r.b = append(r.b, ',')
	r.b = textfmt.AppendCSVField(r.b, value)
	r.b = append(r.b, '\n')
	r.n++
}

// payloadRow appends a row of field and data in hex.
func (r *csvRows) payloadRow(field string, data []byte) {
	r.b = append(r.b, r.prefix...)
	r.b = append(r.b, field...)
	r.b = append(r.b, ',')
	r.b = AppendHex(r.b, data)
	r.b = append(r.b, '\n')
	r.n++
}

// payload appends the row of a payload nothing describes, or that does
// not fit its description.
func (r *csvRows) payload(p []byte) { r.payloadRow("payload", p) }

// field begins the row of the next column and returns the column; ok is
// false for the number of a map-bound field, whose row is its name's.
func (r *csvRows) field() (c clrimpl.Column, ok bool) {
	if r.i >= len(r.cols) {
		// More values than columns: a description that does not keep
		// its contract. Name them by position rather than fail.
		c = clrimpl.Column{Name: "column" + strconv.Itoa(r.i)}
	} else {
		c = r.cols[r.i]
	}
	r.i++
	name := c.Name
	if r.style.names {
		if r.i < len(r.cols) && isNameOf(r.cols[r.i], c) {
			return c, false
		}
		if r.i >= 2 && isNameOf(c, r.cols[r.i-2]) {
			name = r.cols[r.i-2].Name
		}
	}
	r.b = append(r.b, r.prefix...)
	r.b = textfmt.AppendCSVField(r.b, name)
	r.b = append(r.b, ',')
	r.n++
	return c, true
}

// isNameOf reports whether c is the Field_name column of field f.
func isNameOf(c, f clrimpl.Column) bool {
	return c.Kind == clrimpl.ColumnString && len(c.Name) == len(f.Name)+5 &&
		c.Name[:len(f.Name)] == f.Name && c.Name[len(f.Name):] == "_name"
}

func (r *csvRows) Bool(v bool) {
	if _, ok := r.field(); ok {
		r.b = append(strconv.AppendBool(r.b, v), '\n')
	}
}

func (r *csvRows) Int(v int64) {
	if c, ok := r.field(); ok {
		if c.Hex {
			r.b = strconv.AppendUint(append(r.b, "0x"...), uint64(v), 16)
		} else {
			r.b = strconv.AppendInt(r.b, v, 10)
		}
		r.b = append(r.b, '\n')
	}
}

func (r *csvRows) Uint(v uint64) {
	if c, ok := r.field(); ok {
		if c.Hex {
			r.b = strconv.AppendUint(append(r.b, "0x"...), v, 16)
		} else {
			r.b = strconv.AppendUint(r.b, v, 10)
		}
		r.b = append(r.b, '\n')
	}
}

func (r *csvRows) Float(v float64) {
	c, ok := r.field()
	if !ok {
		return
	}
	if r.style.gFloats {
		bits := 64
		if c.Kind == clrimpl.ColumnFloat32 {
			bits = 32
		}
		r.b = strconv.AppendFloat(r.b, v, 'g', -1, bits)
	} else {
		r.b = clrimpl.AppendJSONFloat(r.b, v)
	}
	r.b = append(r.b, '\n')
}

func (r *csvRows) GUID(v clrimpl.GUID) {
	if _, ok := r.field(); ok {
		r.b = append(v.AppendText(r.b), '\n')
	}
}

func (r *csvRows) Bytes(v []byte) {
	if c, ok := r.field(); ok {
		switch c.Kind {
		case clrimpl.ColumnBinary:
			if len(v) > 0 || r.style.binaryPrefix {
				r.b = AppendHex(r.b, v)
			}
		case clrimpl.ColumnJSON:
			r.b = appendCSVValue(r.b, v)
		default:
			r.b = textfmt.AppendCSVField(r.b, v)
		}
		r.b = append(r.b, '\n')
	}
	if cap(v) > cap(r.scratch) {
		r.scratch = make([]byte, 0, cap(v)) // room for the next large value
	}
}

func (r *csvRows) Scratch() []byte { return r.scratch[:0] }

// appendCSVValue appends the CSV field for a JSON value: a string's
// contents, anything else as it is. A string with escapes, control bytes
// or invalid UTF-8 goes through encoding/json.
func appendCSVValue(dst, val []byte) []byte {
	if len(val) == 0 || val[0] != '"' {
		return textfmt.AppendCSVField(dst, val)
	}
	if n := len(val); n >= 2 && val[n-1] == '"' && plainJSONString(val[1:n-1]) {
		return textfmt.AppendCSVField(dst, val[1:n-1])
	}
	var s string
	if json.Unmarshal(val, &s) == nil {
		return textfmt.AppendCSVField(dst, s)
	}
	return textfmt.AppendCSVField(dst, val)
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
