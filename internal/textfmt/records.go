package textfmt

import (
	"bufio"
	"strconv"
)

// Records writes a table of records as JSON lines (one object a line, its
// keys the columns) or as CSV (a header of the columns, then one record a
// line). Each record is its values in column order, then End.
type Records struct {
	w    *bufio.Writer
	cols []string
	json bool
	b    []byte
	i    int // the next value's column
}

// NewRecords returns a Records writing to w; for CSV (json false) it
// writes the header line first.
func NewRecords(w *bufio.Writer, cols []string, json bool) *Records {
	r := &Records{w: w, cols: cols, json: json}
	if !json {
		w.Write(AppendCSVRecord(nil, cols...))
	}
	return r
}

// next appends what goes before the next value: the separator, and the
// key in JSON.
func (r *Records) next() {
	switch {
	case !r.json:
		if r.i > 0 {
			r.b = append(r.b, ',')
		}
	case r.i == 0:
		r.b = append(r.b, '{')
	default:
		r.b = append(r.b, ',')
	}
	if r.json {
		r.b = strconv.AppendQuote(r.b, r.cols[r.i])
		r.b = append(r.b, ':')
	}
	r.i++
}

// Int appends an integer.
func (r *Records) Int(v int64) {
	r.next()
	r.b = strconv.AppendInt(r.b, v, 10)
}

// Uint appends an unsigned integer.
func (r *Records) Uint(v uint64) {
	r.next()
	r.b = strconv.AppendUint(r.b, v, 10)
}

// Float appends v with prec decimals.
func (r *Records) Float(v float64, prec int) {
	r.next()
	r.b = strconv.AppendFloat(r.b, v, 'f', prec, 64)
}

// Bool appends true or false.
func (r *Records) Bool(v bool) {
	r.next()
	r.b = strconv.AppendBool(r.b, v)
}

// String appends a string, quoted for JSON or for CSV.
func (r *Records) String(s string) {
	r.next()
	if r.json {
		r.b = AppendJSONString(r.b, s)
	} else {
		r.b = AppendCSVField(r.b, s)
	}
}

// End ends the record and writes it.
func (r *Records) End() {
	if r.json {
		r.b = append(r.b, '}')
	}
	r.w.Write(append(r.b, '\n'))
	r.b, r.i = r.b[:0], 0
}
