package gcstats

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"time"
)

// chart is the frame of one SVG chart: the plot area and the scales.
type chart struct {
	width, height, left, right, top, bottom float64
	x0, x1                                  float64 // seconds from the origin
	yTicks                                  []tick  // from 0 to the top of the scale
}

// tick is one mark of an axis and its label.
type tick struct {
	v     float64
	label string
}

// minSpan is the narrowest time axis, in seconds.
const minSpan = 1e-3

func newChart(x0, x1, yMax float64) *chart {
	if x1-x0 < minSpan {
		mid := (x0 + x1) / 2
		x0, x1 = math.Max(0, mid-minSpan/2), math.Max(0, mid-minSpan/2)+minSpan
	}
	return &chart{width: 960, height: 260, left: 64, right: 40, top: 12, bottom: 44, x0: x0, x1: x1, yTicks: valueTicks(yMax)}
}

func (c *chart) x(v float64) float64 {
	return c.left + (v-c.x0)/(c.x1-c.x0)*(c.width-c.left-c.right)
}

func (c *chart) y(v float64) float64 {
	top := c.yTicks[len(c.yTicks)-1].v
	return c.height - c.bottom - v/top*(c.height-c.top-c.bottom)
}

// open writes the SVG element and the axes with their ticks.
func (c *chart) open(w *bufio.Writer, class, yLabel string) {
	fmt.Fprintf(w, "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" role=\"img\">\n", class, c.width, c.height, c.width, c.height)
	for _, t := range c.yTicks {
		y := c.y(t.v)
		fmt.Fprintf(w, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", c.left, y, c.width-c.right, y)
		fmt.Fprintf(w, "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", c.left-6, y+4, t.label)
	}
	xTicks, unit := timeTicks(c.x0, c.x1)
	base := c.height - c.bottom
	for _, t := range xTicks {
		x := c.x(t.v)
		fmt.Fprintf(w, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, base, x, base+4)
		fmt.Fprintf(w, "<text class=\"xtick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x, base+16, t.label)
	}
	fmt.Fprintf(w, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", c.left, base, c.width-c.right, base)
	fmt.Fprintf(w, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", c.left, c.top, c.left, base)
	fmt.Fprintf(w, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time from the trace's start (%s)</text>\n", (c.left+c.width-c.right)/2, c.height-6, unit)
	fmt.Fprintf(w, "<text x=\"12\" y=\"%.1f\" transform=\"rotate(-90 12 %.1f)\" text-anchor=\"middle\">%s</text>\n", (c.top+base)/2, (c.top+base)/2, html.EscapeString(yLabel))
}

// clockSteps are the steps of a time axis longer than a minute or so, in
// seconds: whole minutes and hours, as a clock divides them.
var clockSteps = []float64{30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400}

// timeTicks returns the ticks of a time axis from x0 to x1 seconds (x1 >
// x0 >= 0): the multiples of a round step in it (1, 2 or 5 times a power
// of ten seconds, or whole minutes and hours), three to eight intervals
// in all, and the unit of their labels. A label has the decimals the step
// needs, so that labels differ whatever the span: "11.6074 s" on a
// millisecond's axis 11 s into the trace, "0:40" or "1:30:00" (m:ss,
// h:mm:ss) past a minute.
func timeTicks(x0, x1 float64) ([]tick, string) {
	step := timeStep((x1 - x0) / 8)
	decimals := 0
	if step < 1 {
		decimals = int(-math.Floor(math.Log10(step) + 1e-9))
	}
	scale := math.Pow10(decimals)
	unit := "s"
	switch {
	case x1 >= 3600:
		unit = "h:mm:ss"
	case x1 >= 60:
		unit = "m:ss"
	}
	var ticks []tick
	for k := math.Ceil(x0/step - 1e-9); k*step <= x1+step*1e-9; k++ {
		v := k * step
		ticks = append(ticks, tick{v: v, label: clockLabel(int64(math.Round(v*scale)), decimals, unit)})
	}
	return ticks, unit
}

// timeStep is the round step of a time axis nearest above target seconds.
func timeStep(target float64) float64 {
	if target <= 20 {
		return niceCeil(target)
	}
	for _, s := range clockSteps {
		if target <= s {
			return s
		}
	}
	return 86400 * niceCeil(target/86400)
}

// clockLabel writes u units of 10^-decimals seconds as unit says: "s"
// (12.5 s), "m:ss" (2:05.5) or "h:mm:ss" (1:02:05.5).
func clockLabel(u int64, decimals int, unit string) string {
	scale := int64(math.Pow10(decimals))
	secs, frac := u/scale, u%scale
	var b []byte
	switch unit {
	case "s":
		b = strconv.AppendInt(b, secs, 10)
	case "m:ss":
		b = strconv.AppendInt(b, secs/60, 10)
		b = appendTwo(append(b, ':'), secs%60)
	default:
		b = strconv.AppendInt(b, secs/3600, 10)
		b = appendTwo(append(b, ':'), secs/60%60)
		b = appendTwo(append(b, ':'), secs%60)
	}
	if decimals > 0 {
		f := strconv.FormatInt(frac+scale, 10) // a leading 1 keeps the zeros
		b = append(append(b, '.'), f[1:]...)
	}
	if unit == "s" {
		b = append(b, " s"...)
	}
	return string(b)
}

func appendTwo(b []byte, v int64) []byte {
	if v < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, v, 10)
}

// valueTicks returns the ticks of a value axis from 0 to at least top:
// four or fewer intervals of a round step, labelled with the decimals the
// step needs.
func valueTicks(top float64) []tick {
	if !(top > 0) || math.IsInf(top, 0) {
		top = 1
	}
	step := niceCeil(top / 4)
	decimals := 0
	if step < 1 {
		decimals = int(-math.Floor(math.Log10(step) + 1e-9))
	}
	n := int(math.Ceil(top/step - 1e-9))
	ticks := make([]tick, 0, n+1)
	for k := 0; k <= n; k++ {
		v := float64(k) * step
		ticks = append(ticks, tick{v: v, label: strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return ticks
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p*(1+1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// timeRange is the span of the process's GCs in seconds from origin, with
// a margin.
func timeRange(origin time.Time, p *Process) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, gc := range p.GCs {
		s := pauseOrStart(gc).Sub(origin).Seconds()
		e := gc.Start.Add(gc.Duration).Sub(origin).Seconds()
		lo, hi = math.Min(lo, s), math.Max(hi, math.Max(s, e))
	}
	if lo > hi {
		return 0, 1
	}
	pad := (hi - lo) * 0.02
	return math.Max(0, lo-pad), hi + pad
}

// pauseOrStart is when the GC's pause began, or its start when the trace
// does not hold its pause.
func pauseOrStart(gc *GC) time.Time {
	if gc.HasPause {
		return gc.PauseStart
	}
	return gc.Start
}

// pauseChart draws each GC's pause as a bar at its time, as tall as the
// pause, coloured by generation; a GC whose pause is unknown is a short
// grey mark.
func pauseChart(w *bufio.Writer, origin time.Time, p *Process) {
	x0, x1 := timeRange(origin, p)
	var maxPause float64
	for _, gc := range p.GCs {
		maxPause = math.Max(maxPause, float64(gc.Pause)/float64(time.Millisecond))
	}
	c := newChart(x0, x1, maxPause)
	c.open(w, "pauses", "pause (ms)")
	base := c.height - c.bottom
	for _, gc := range p.GCs {
		x := c.x(pauseOrStart(gc).Sub(origin).Seconds())
		if !gc.pauseKnown() {
			why := "the trace does not hold its suspension"
			if gc.HasPause {
				why = "the trace does not hold its end"
			}
			fmt.Fprintf(w, "<rect class=\"pause unknown\" x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"8\" fill=\"%s\"><title>GC %d (gen %d, %s): pause unknown, %s</title></rect>\n",
				x-1, base-8, unknownColor, gc.Number, gc.Generation, html.EscapeString(gc.Reason.String()), why)
			continue
		}
		h := math.Max(base-c.y(float64(gc.Pause)/float64(time.Millisecond)), 1)
		fmt.Fprintf(w, "<rect class=\"pause gen%d\" x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"%.1f\" fill=\"%s\"><title>GC %d (gen %d, %s): %s ms</title></rect>\n",
			gc.Generation, x-1, base-h, h, genColor(gc.Generation), gc.Number, gc.Generation, html.EscapeString(gc.Reason.String()), msString(gc.Pause))
	}
	w.WriteString("</svg>\n")
}

// heapChart draws the heap's size over time as one line: up to its size
// before each GC (a point, at the GC's pause) and down to its size after
// it (at the GC's end).
func heapChart(w *bufio.Writer, origin time.Time, p *Process) {
	x0, x1 := timeRange(origin, p)
	var top float64
	for _, gc := range p.GCs {
		top = math.Max(top, math.Max(float64(gc.HeapAfter), float64(gc.HeapBefore))/1e6)
	}
	c := newChart(x0, x1, top)
	c.open(w, "heap", "heap (MB)")
	fmt.Fprintf(w, "<polyline class=\"heap-line\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", heapColor)
	// The points in time order: a background GC's end comes after the
	// foreground GCs that ran during it, so the GCs' order (by start)
	// would draw the line back in time.
	type point struct{ x, y float64 }
	var pts []point
	for _, gc := range p.GCs {
		if !gc.Complete {
			continue
		}
		pts = append(pts,
			point{c.x(pauseOrStart(gc).Sub(origin).Seconds()), c.y(float64(gc.HeapBefore) / 1e6)},
			point{c.x(gc.Start.Add(gc.Duration).Sub(origin).Seconds()), c.y(float64(gc.HeapAfter) / 1e6)})
	}
	slices.SortStableFunc(pts, func(a, b point) int { return cmp.Compare(a.x, b.x) })
	for _, pt := range pts {
		fmt.Fprintf(w, "%.1f,%.1f ", pt.x, pt.y)
	}
	w.WriteString("\"/>\n")
	for _, gc := range p.GCs {
		if !gc.Complete {
			continue
		}
		before := mbString(gc.HeapBefore)
		if gc.HeapBeforeEstimated {
			before = "~" + before + " (estimated)"
		}
		fmt.Fprintf(w, "<circle class=\"heap-before\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>GC %d: %s MB before, %s MB after</title></circle>\n",
			c.x(pauseOrStart(gc).Sub(origin).Seconds()), c.y(float64(gc.HeapBefore)/1e6), heapColor, gc.Number, before, mbString(gc.HeapAfter))
	}
	w.WriteString("</svg>\n")
}
