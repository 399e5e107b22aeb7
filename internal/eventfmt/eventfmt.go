// Package eventfmt writes events as clrdump's text and JSON lines and CSV
// rows, for every command that prints events (clrdump, clrtrace watch),
// so that their output is the same byte for byte; and it holds their
// event filters, the flags that set them (AddFilterFlags) and the
// printing they share (Printer, Stats).
package eventfmt

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/textfmt"
	"github.com/clrgo/clrevents/trace"
)

// Decoded is what one event became.
type Decoded struct {
	// Name is the event's name (Event.Name) when its generated type is of
	// its version or the trace names it by the type's TraceEvent name (the
	// kernel's events, "Process/Start", whatever their version), the name
	// of the generated type a newer version decoded with (its
	// Descriptor's), else the trace's (Event.Name), else "idN/vM".
	Name  string
	Event clrimpl.Event // the event decoded into its generated type, or nil
	// Extra holds the payload bytes past the type's fields, but for an
	// event shown under its type's TraceEvent name (a kernel event), which
	// TraceEvent shows by its fields alone.
	Extra []byte
	Err   error // why the payload did not decode
}

// Decode decodes e into its generated type where the reader's tables have
// one.
func Decode(e *trace.Event) Decoded {
	name := e.Name()
	if name == "" {
		name = "id" + strconv.Itoa(int(e.ID())) + "/v" + strconv.Itoa(int(e.Version()))
	}
	ev, n, err := e.DecodeN()
	switch {
	case err == nil:
		d := ev.Descriptor()
		if name == d.DisplayName {
			return Decoded{Name: name, Event: ev}
		}
		if _, exact := e.Type(); !exact {
			name = d.Name
		}
		return Decoded{Name: name, Event: ev, Extra: e.Payload()[n:]}
	case !errors.Is(err, clrimpl.ErrUnknownEvent):
		return Decoded{Name: name, Err: err}
	}
	return Decoded{Name: name}
}

// Filter selects events as clrdump's -provider, -event, -keyword, -pid
// and -tid do.
type Filter struct {
	// Provider and Event are globs (path.Match); Provider matches case
	// insensitively, Event the schema's name or TraceEvent's Task/Opcode
	// name. "" matches everything.
	Provider, Event string
	// Keyword keeps events with any of its bits; 0 keeps all.
	Keyword uint64
	// PID and TID keep one process or thread; -1 keeps all.
	PID, TID int64
}

// String is the filter as clrdump's flags give it (-event "GC*" -pid
// 12), "" when it keeps every event.
func (f *Filter) String() string {
	var b []byte
	for _, g := range [...][2]string{{"provider", f.Provider}, {"event", f.Event}} {
		if g[1] != "" {
			b = fmt.Appendf(b, " -%s %q", g[0], g[1])
		}
	}
	if f.Keyword != 0 {
		b = fmt.Appendf(b, " -keyword %#x", f.Keyword)
	}
	if f.PID >= 0 {
		b = fmt.Appendf(b, " -pid %d", f.PID)
	}
	if f.TID >= 0 {
		b = fmt.Appendf(b, " -tid %d", f.TID)
	}
	if len(b) == 0 {
		return ""
	}
	return string(b[1:])
}

// Check reports a malformed glob.
func (f *Filter) Check() error {
	for _, g := range []string{f.Provider, f.Event} {
		if _, err := path.Match(g, ""); err != nil {
			return errors.New("bad glob " + strconv.Quote(g))
		}
	}
	return nil
}

// Keep applies the filters that need no decoding: all but Event.
func (f *Filter) Keep(e *trace.Event) bool {
	if f.PID >= 0 && e.ProcessID() != f.PID || f.TID >= 0 && e.ThreadID() != f.TID ||
		f.Keyword != 0 && e.Keywords()&f.Keyword == 0 {
		return false
	}
	if f.Provider != "" {
		if ok, _ := path.Match(strings.ToLower(f.Provider), strings.ToLower(e.Provider())); !ok {
			return false
		}
	}
	return true
}

// KeepName applies Event to an event whose name (Decoded.Name) is name:
// it matches that name or the name TraceEvent shows for the event
// (trace.Event.DisplayName: "GC/Start", "Request/Start").
func (f *Filter) KeepName(e *trace.Event, name string) bool {
	if f.Event == "" {
		return true
	}
	if ok, _ := path.Match(f.Event, name); ok {
		return true
	}
	if d := e.DisplayName(); d != name {
		ok, _ := path.Match(f.Event, d)
		return ok
	}
	return false
}

const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// AppendTime appends t in UTC as timeLayout writes it (RFC 3339 with all
// nine digits of the nanoseconds, "Z" for the zone: a trace's clock ticks
// every 100 ns or finer, and events less than a microsecond apart must
// not print the same time), without time.AppendFormat's
// layout interpretation: that was a third of the time of -format text.
// Times before 1970 or after 9999 go through AppendFormat.
func AppendTime(dst []byte, t time.Time) []byte {
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
	ns := uint64(t.Nanosecond())
	var b [30]byte
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
	put2(b[20:], ns/10000000)
	put2(b[22:], ns/100000%100)
	put2(b[24:], ns/1000%100)
	put2(b[26:], ns/10%100)
	b[28] = '0' + byte(ns%10)
	b[29] = 'Z'
	return append(dst, b[:]...)
}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// put2 writes v (< 100) as two digits.
func put2(b []byte, v uint64) {
	b[0], b[1] = digitPairs[2*v], digitPairs[2*v+1]
}

// AppendFields appends the event's fields as a JSON object (json) or
// Name=value pairs (text): dec's decoded event, else what
// trace.Event.AppendJSON writes them by (its Descriptor: an EventSource
// event's metadata, an ETW log's own description, a kernel layout; else
// package etl's kernel parsers), else the payload in hex. A payload that does not fit its
// description sets dec.Err (and the payload is written in hex).
func AppendFields(dst []byte, e *trace.Event, dec *Decoded, json bool) []byte {
	if dec.Event != nil {
		if json {
			return appendDerived(dec.Event.AppendJSON(dst), len(dst), e, true)
		}
		return appendDerived(dec.Event.AppendText(dst), len(dst), e, false)
	}
	if dec.Err == nil {
		var out []byte
		var err error
		if json {
			out, err = e.AppendJSON(dst)
		} else {
			out, err = e.AppendText(dst)
		}
		if err == nil {
			return appendDerived(out, len(dst), e, json)
		}
		if !errors.Is(err, clrimpl.ErrUnknownEvent) {
			dec.Err = err // a payload that does not fit its description
		}
	}
	if json {
		dst = append(dst, `{"payload":"`...)
		dst = AppendHex(dst, e.Payload())
		return append(dst, `"}`...)
	}
	dst = append(dst, "payload="...)
	return AppendHex(dst, e.Payload())
}

// appendDerived appends to the fields e's payload gave (b[start:]: a
// JSON object, or Name=value pairs) the values TraceEvent shows among
// them that other events of the log give it (trace.Event.AppendDerived:
// a file operation's FileName, a context switch's OldProcessID, ...), as
// more members of the object or more pairs.
func appendDerived(b []byte, start int, e *trace.Event, json bool) []byte {
	var buf [2]trace.Derived
	ds := e.AppendDerived(buf[:0])
	if len(ds) == 0 {
		return b
	}
	if json {
		b = b[:len(b)-1] // the object's '}'
	}
	for _, d := range ds {
		switch {
		case json && len(b) > start+1:
			b = append(b, ',')
			fallthrough
		case json:
			b = textfmt.AppendJSONString(b, d.Name)
			b = append(b, ':')
		default:
			if len(b) > start {
				b = append(b, ' ')
			}
			b = append(b, d.Name...)
			b = append(b, '=')
		}
		if d.IsInt {
			b = strconv.AppendInt(b, d.Int, 10)
		} else {
			b = textfmt.AppendJSONString(b, d.Str)
		}
	}
	if json {
		b = append(b, '}')
	}
	return b
}

func AppendHex(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	dst = append(dst, "0x"...)
	for _, c := range b {
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}

// AppendText appends the event as one line of clrdump's text form:
// time, provider/event, pid and tid, then its fields (or its error and
// payload), and the bytes past the template.
func AppendText(b []byte, e *trace.Event, dec *Decoded) []byte {
	b = AppendTime(b, e.Time())
	b = append(b, ' ')
	b = append(b, e.Provider()...)
	b = append(b, '/')
	b = append(b, dec.Name...)
	b = append(b, " pid="...)
	b = strconv.AppendInt(b, e.ProcessID(), 10)
	b = append(b, " tid="...)
	b = strconv.AppendInt(b, e.ThreadID(), 10)
	b = append(b, ' ')
	if dec.Err == nil {
		n := len(b)
		if b = AppendFields(b, e, dec, false); len(b) == n {
			b = b[:n-1] // no fields: no space after tid
		}
		if dec.Err != nil {
			// The payload did not fit its description: the error
			// form, as for one that did not decode.
			b = b[:n]
		}
	}
	if dec.Err != nil {
		b = append(b, "error="...)
		b = strconv.AppendQuote(b, dec.Err.Error())
		b = append(b, ' ')
		b = append(b, "payload="...)
		b = AppendHex(b, e.Payload())
	}
	if len(dec.Extra) > 0 {
		b = append(b, " extra="...)
		b = AppendHex(b, dec.Extra)
	}
	return append(b, '\n')
}

// AppendJSON appends the event as one JSON line of clrdump's -format
// jsonl (cmd/clrdump documents the keys and their types).
func AppendJSON(b []byte, e *trace.Event, dec *Decoded) []byte {
	b = append(b, `{"time":"`...)
	b = AppendTime(b, e.Time())
	b = append(b, `","provider":`...)
	b = textfmt.AppendJSONString(b, e.Provider())
	b = append(b, `,"event":`...)
	b = textfmt.AppendJSONString(b, dec.Name)
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
	if dec.Err == nil {
		n := len(b)
		b = append(b, `,"fields":`...)
		b = AppendFields(b, e, dec, true)
		if dec.Err != nil {
			// The payload did not fit its description: the error
			// form, as for one that did not decode.
			b = b[:n]
		}
	}
	if dec.Err != nil {
		b = append(b, `,"error":`...)
		b = textfmt.AppendJSONString(b, dec.Err.Error())
		b = append(b, `,"payload":"`...)
		b = AppendHex(b, e.Payload())
		b = append(b, '"')
	}
	if len(dec.Extra) > 0 {
		b = append(b, `,"extra":"`...)
		b = AppendHex(b, dec.Extra)
		b = append(b, '"')
	}
	return append(b, "}\n"...)
}
