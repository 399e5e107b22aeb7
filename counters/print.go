package counters

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// A Printer prints counters as dotnet-counters' console view does: a
// "[Provider] 15:04:05" heading (local time) for each report, then a line
// per counter with its display name, its units ("Count" for a count, a
// rate's as "B / 1 sec") and its value, decimal points aligned. A report
// ends where a counter comes again.
type Printer struct {
	w        io.Writer
	provider string          // the current report's provider
	seen     map[string]bool // counters in the current report
	b        []byte
}

// NewPrinter returns a Printer that writes to w, a write per counter.
func NewPrinter(w io.Writer) *Printer {
	return &Printer{w: w, seen: map[string]bool{}}
}

// Print prints c, after a heading when it begins a report: the first
// counter, one of another provider than the counter before, or one the
// current report has already printed (the next interval's).
func (p *Printer) Print(c *Counter) error {
	b := p.b[:0]
	if p.seen[c.Name] || len(p.seen) == 0 || c.Provider != p.provider {
		clear(p.seen)
		p.provider = c.Provider
		b = fmt.Appendf(b, "[%s] %s\n", c.Provider, c.Time.Local().Format("15:04:05"))
	}
	p.seen[c.Name] = true
	label := c.DisplayName
	if label == "" {
		label = c.Name
	}
	units := c.DisplayUnits
	isRate := c.Kind == Increment
	if units == "count" || isRate && units == "" {
		units = "Count"
	}
	if isRate {
		units += " / " + strconv.FormatFloat(c.RateSeconds(), 'f', -1, 64) + " sec"
	}
	if units != "" {
		label += " (" + units + ")"
	}
	b = fmt.Appendf(b, "    %-52s %s\n", label, formatValue(c.Value()))
	p.b = b
	_, err := p.w.Write(b)
	return err
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
