package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/trace"
)

// printer writes events as clrdump's text lines or JSON lines, flushing
// after each event so that a live session shows at once.
type printer struct {
	w    *bufio.Writer
	json bool
	buf  []byte
	err  error
}

func newPrinter(w io.Writer, json bool) *printer {
	return &printer{w: bufio.NewWriter(w), json: json}
}

// print writes e, decoded as dec.
func (p *printer) print(e *trace.Event, dec *eventfmt.Decoded) {
	if p.json {
		p.buf = eventfmt.AppendJSON(p.buf[:0], e, dec)
	} else {
		p.buf = eventfmt.AppendText(p.buf[:0], e, dec)
	}
	if p.err == nil {
		_, p.err = p.w.Write(p.buf)
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
