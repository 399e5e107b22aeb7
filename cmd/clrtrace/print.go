package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/trace"
)

// filters are clrdump's event filters, with its flag names and meaning.
type filters struct {
	provider, event, keywordS string
	keyword                   uint64
	pid, tid                  int64
	limit                     int
}

func (f *filters) register(fs *flag.FlagSet) {
	fs.StringVar(&f.provider, "provider", "", "only providers whose name matches this glob (case-insensitive); a name without wildcards is also enabled in the session")
	fs.StringVar(&f.event, "event", "", "only events whose name matches this glob: the manifest symbol ('GC*') or TraceEvent's Task/Opcode name ('GC/Start')")
	fs.StringVar(&f.keywordS, "keyword", "", "only events with any of these keyword bits (hex or decimal)")
	fs.Int64Var(&f.pid, "pid", -1, "only events of this process")
	fs.Int64Var(&f.tid, "tid", -1, "only events of this thread")
	fs.IntVar(&f.limit, "n", 0, "stop after this many events are printed (0: until SIGINT or the process exits)")
}

func (f *filters) compile() error {
	if f.keywordS != "" {
		k, err := strconv.ParseUint(f.keywordS, 0, 64)
		if err != nil {
			return fmt.Errorf("-keyword %q: not a number", f.keywordS)
		}
		f.keyword = k
	}
	for _, g := range []string{f.provider, f.event} {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("bad glob %q", g)
		}
	}
	return nil
}

func (f *filters) keep(e *trace.Event) bool {
	if f.pid >= 0 && e.ProcessID() != f.pid || f.tid >= 0 && e.ThreadID() != f.tid ||
		f.keyword != 0 && e.Keywords()&f.keyword == 0 {
		return false
	}
	if f.provider != "" {
		if ok, _ := path.Match(strings.ToLower(f.provider), strings.ToLower(e.Provider())); !ok {
			return false
		}
	}
	if f.event != "" {
		if ok, _ := path.Match(f.event, e.Name()); ok {
			return true
		}
		info, ok := e.Schema()
		if !ok {
			return false
		}
		ok, _ = path.Match(f.event, info.DisplayName)
		return ok
	}
	return true
}

// printer writes events as text lines or JSON lines, flushing after each
// event so that a live session shows at once.
type printer struct {
	w    *bufio.Writer
	json bool
	buf  []byte
	err  error
}

func newPrinter(w io.Writer, json bool) *printer {
	return &printer{w: bufio.NewWriter(w), json: json}
}

// timeLayout is clrdump's: UTC, microseconds.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// print writes e in clrdump's text or JSON-lines form: the same fields,
// keys and value types.
func (p *printer) print(e *trace.Event) {
	name := e.Name()
	var fields, extra []byte
	var derr error
	ev, n, err := e.DecodeN()
	switch {
	case err == nil:
		name = ev.Info().Name
		extra = e.Payload()[n:]
		if p.json {
			fields = ev.AppendJSON(nil)
		} else {
			fields = ev.AppendText(nil)
		}
	case !errors.Is(err, clrevents.ErrUnknownEvent):
		derr = err
	default:
		if m := e.Metadata(); m != nil && len(m.Fields) > 0 {
			if p.json {
				fields, derr = m.AppendJSON(nil, e.Payload())
			} else {
				fields, derr = m.AppendText(nil, e.Payload())
			}
		}
	}
	if name == "" {
		name = "id" + strconv.Itoa(int(e.ID())) + "/v" + strconv.Itoa(int(e.Version()))
	}
	b := p.buf[:0]
	ts := e.Time().UTC().Format(timeLayout)
	if p.json {
		b = fmt.Appendf(b, `{"time":%q,"provider":`, ts)
		b = appendJSON(b, e.Provider())
		b = append(b, `,"event":`...)
		b = appendJSON(b, name)
		b = fmt.Appendf(b, `,"id":%d,"version":%d,"task":%d,"opcode":%d,"level":%d,"keywords":"0x%x","pid":%d,"tid":%d`,
			e.ID(), e.Version(), e.Task(), e.Opcode(), e.Level(), e.Keywords(), e.ProcessID(), e.ThreadID())
		if e.CPU() >= 0 {
			b = fmt.Appendf(b, `,"cpu":%d`, e.CPU())
		}
		b = fmt.Appendf(b, `,"size":%d`, len(e.Payload()))
		if a := e.ActivityID(); !a.IsZero() {
			b = append(b, `,"activity":"`...)
			b = append(a.AppendText(b), '"')
		}
		if a := e.RelatedActivityID(); !a.IsZero() {
			b = append(b, `,"related_activity":"`...)
			b = append(a.AppendText(b), '"')
		}
		switch {
		case derr != nil:
			b = append(b, `,"error":`...)
			b = appendJSON(b, derr.Error())
			b = fmt.Appendf(b, `,"payload":"%x"`, e.Payload())
		case fields != nil:
			b = append(b, `,"fields":`...)
			b = append(b, fields...)
		default:
			b = fmt.Appendf(b, `,"fields":{"payload":"%x"}`, e.Payload())
		}
		if len(extra) > 0 {
			b = fmt.Appendf(b, `,"extra":"%x"`, extra)
		}
		b = append(b, "}\n"...)
	} else {
		b = fmt.Appendf(b, "%s %s/%s pid=%d tid=%d ", ts, e.Provider(), name, e.ProcessID(), e.ThreadID())
		switch {
		case derr != nil:
			b = fmt.Appendf(b, "error=%q payload=%x", derr.Error(), e.Payload())
		case fields != nil:
			b = append(b, fields...)
		default:
			b = fmt.Appendf(b, "payload=%x", e.Payload())
		}
		if len(extra) > 0 {
			b = fmt.Appendf(b, " extra=%x", extra)
		}
		b = append(b, '\n')
	}
	p.buf = b
	if p.err == nil {
		_, p.err = p.w.Write(b)
	}
	if p.err == nil {
		p.err = p.w.Flush()
	}
}

func (p *printer) flush() error {
	if p.err != nil {
		return p.err
	}
	return p.w.Flush()
}

func appendJSON(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// counterPrinter prints EventCounters payloads as dotnet-counters does:
// a [Provider] heading per report, then each counter's display name, its
// units (a rate as "units / interval") and its value.
type counterPrinter struct {
	w    *bufio.Writer
	seen map[string]bool // counters in the current report
	err  error
}

func newCounterPrinter(w io.Writer) *counterPrinter {
	return &counterPrinter{w: bufio.NewWriter(w), seen: map[string]bool{}}
}

// event prints one EventCounters event, decoded from its metadata.
func (c *counterPrinter) event(e *trace.Event) error {
	m := e.Metadata()
	if m == nil {
		return fmt.Errorf("%s/EventCounters at offset %d: no metadata to decode it", e.Provider(), e.Offset())
	}
	js, err := m.AppendJSON(nil, e.Payload())
	if err != nil {
		return fmt.Errorf("%s/EventCounters at offset %d: %w", e.Provider(), e.Offset(), err)
	}
	var v struct{ Payload map[string]any }
	if err := json.Unmarshal(js, &v); err != nil || v.Payload == nil {
		return fmt.Errorf("%s/EventCounters at offset %d: payload is not a counter: %s", e.Provider(), e.Offset(), js)
	}
	p := v.Payload
	name, _ := p["Name"].(string)
	if c.seen[name] || len(c.seen) == 0 {
		clear(c.seen)
		fmt.Fprintf(c.w, "[%s] %s\n", e.Provider(), e.Time().Local().Format("15:04:05"))
	}
	c.seen[name] = true
	label, _ := p["DisplayName"].(string)
	if label == "" {
		label = name
	}
	units, _ := p["DisplayUnits"].(string)
	value, isRate := num(p["Increment"])
	if !isRate {
		value, _ = num(p["Mean"])
	}
	if units == "count" || isRate && units == "" {
		units = "Count"
	}
	if isRate {
		units += " / " + rateSeconds(p) + " sec"
	}
	if units != "" {
		label += " (" + units + ")"
	}
	fmt.Fprintf(c.w, "    %-52s %s\n", label, formatValue(value))
	if c.err == nil {
		c.err = c.w.Flush()
	}
	return nil
}

func (c *counterPrinter) flush() error {
	if c.err != nil {
		return c.err
	}
	return c.w.Flush()
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// rateSeconds returns the rate's interval in seconds as dotnet-counters
// shows it: from the payload's Series ("Interval=1000", milliseconds),
// else IntervalSec, else 1.
func rateSeconds(p map[string]any) string {
	if s, ok := p["Series"].(string); ok {
		if ms, ok := strings.CutPrefix(s, "Interval="); ok {
			if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 {
				return strconv.FormatFloat(v/1000, 'f', -1, 64)
			}
		}
	}
	if v, ok := num(p["IntervalSec"]); ok && v > 0 {
		return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
	}
	return "1"
}

// formatValue formats a counter value as dotnet-counters does: up to
// three decimals ("##,###,##0.###"), thousands separated, padded so that
// decimal points line up in a 15-character column, and 0.####e+00 from
// 10^8 on.
func formatValue(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprintf("%15s    ", strconv.FormatFloat(v, 'f', -1, 64))
	}
	if math.Abs(v) >= 100_000_000 {
		m := strconv.FormatFloat(v, 'e', 4, 64) // d.dddde±XX
		mant, exp, _ := strings.Cut(m, "e")
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		return fmt.Sprintf("%15s   ", mant+"e"+exp)
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', 3, 64)
	ip, fp, _ := strings.Cut(s, ".")
	fp = strings.TrimRight(fp, "0")
	var out []byte
	if v < 0 && (ip != "0" || fp != "") {
		out = append(out, '-')
	}
	for i := range len(ip) {
		if i > 0 && (len(ip)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, ip[i])
	}
	if fp == "" {
		out = append(out, "    "...)
	} else {
		out = append(out, '.')
		out = append(out, fp...)
		out = append(out, strings.Repeat(" ", 3-len(fp))...)
	}
	return fmt.Sprintf("%19s", out)
}
