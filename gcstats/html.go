package gcstats

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"time"
)

// GenColors are the colours the HTML report gives generations 0, 1 and 2
// (the pause bars and the table's generation column).
var GenColors = [3]string{"#4e79a7", "#f28e2b", "#e15759"}

// HeapColors are the colours of the heap chart: the size after each GC
// and the size before it.
var HeapColors = [2]string{"#59a14f", "#b07aa1"}

// WriteHTML writes a self-contained HTML page (inline SVG and CSS, no
// scripts, nothing fetched) with, for each process, its summary, a
// timeline of the GC pauses coloured by generation, the heap's size before
// and after each GC over time, and the table of GCs. Times count from
// origin; name titles the page (the trace's name).
func WriteHTML(w io.Writer, origin time.Time, procs []*Process, name string) error {
	bw := bufio.NewWriter(w)
	title := "GC report: " + name
	fmt.Fprintf(bw, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%s</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 32px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { padding: 2px 8px; text-align: right; border-bottom: 1px solid #ddd; }
th { background: #f4f4f4; }
svg { display: block; margin: 8px 0; }
svg text { font: 11px system-ui, sans-serif; fill: #444; }
.axis { stroke: #888; stroke-width: 1; }
.grid { stroke: #e4e4e4; stroke-width: 1; }
.legend span { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; }
</style>
</head>
<body>
<h1>%s</h1>
`, html.EscapeString(title), html.EscapeString(title))
	for _, p := range procs {
		writeProcessHTML(bw, origin, p)
	}
	bw.WriteString("</body>\n</html>\n")
	return bw.Flush()
}

func writeProcessHTML(w *bufio.Writer, origin time.Time, p *Process) {
	s := p.Summary()
	kind := "workstation GC"
	if p.Heaps > 1 {
		kind = fmt.Sprintf("server GC, %d heaps", p.Heaps)
	}
	title := fmt.Sprintf("Process %d", p.PID)
	if p.Name != "" {
		title += " (" + p.Name + ")"
	}
	fmt.Fprintf(w, "<section class=\"process\" data-pid=\"%d\">\n<h2>%s</h2>\n", p.PID, html.EscapeString(title))
	fmt.Fprintf(w, "<p>%d GCs (%s); %.2f%% of %.3f s paused; %s MB allocated; largest heap after a GC %s MB.</p>\n",
		len(p.GCs), kind, s.PausePercent, s.Span.Seconds(), mbString(s.Allocated), mbString(s.MaxHeap))
	w.WriteString("<table class=\"summary\"><tr><th>gen</th><th>count</th><th>mean pause ms</th><th>max pause ms</th><th>total pause ms</th></tr>\n")
	for g, gs := range s.Gens {
		fmt.Fprintf(w, "<tr><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			g, gs.Count, msString(gs.MeanPause()), msString(gs.MaxPause), msString(gs.TotalPause))
	}
	fmt.Fprintf(w, "<tr><td>all</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>\n</table>\n",
		s.All.Count, msString(s.All.MeanPause()), msString(s.All.MaxPause), msString(s.All.TotalPause))

	w.WriteString("<h3>Pauses</h3>\n<div class=\"legend\">")
	for g, c := range GenColors {
		fmt.Fprintf(w, "<span style=\"background:%s\"></span>gen %d", c, g)
	}
	w.WriteString("</div>\n")
	pauseChart(w, origin, p)
	w.WriteString("<h3>Heap size</h3>\n<div class=\"legend\">")
	fmt.Fprintf(w, "<span style=\"background:%s\"></span>after GC<span style=\"background:%s\"></span>before GC", HeapColors[0], HeapColors[1])
	w.WriteString("</div>\n")
	heapChart(w, origin, p)

	w.WriteString("<h3>GCs</h3>\n<table class=\"gcs\"><tr><th>GC</th><th>start ms</th><th>gen</th><th>type</th><th>reason</th><th>pause ms</th><th>pauses</th><th>duration ms</th><th>before MB</th><th>after MB</th><th>free after MB</th><th>pinned</th></tr>\n")
	for _, gc := range p.GCs {
		before := mbString(gc.HeapBefore)
		if gc.HeapBeforeEstimated {
			before = "~" + before
		}
		free := "-"
		if gc.HasFragmentation {
			free = mbString(gc.TotalFragmentation())
		}
		fmt.Fprintf(w, "<tr><td>%d</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td></tr>\n",
			gc.Number, msString(gc.Start.Sub(origin)), gc.Generation,
			html.EscapeString(gc.Type.String()), html.EscapeString(gc.Reason.String()),
			msString(gc.Pause), gc.Pauses, msString(gc.Duration), before, mbString(gc.HeapAfter), free, gc.PinnedObjects)
	}
	w.WriteString("</table>\n</section>\n")
}

func genColor(g int) string {
	if g >= 0 && g < len(GenColors) {
		return GenColors[g]
	}
	return "#888"
}

func msString(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

func mbString(b uint64) string { return strconv.FormatFloat(float64(b)/1e6, 'f', 3, 64) }

// chart is the frame of one SVG chart: the plot area and the scales.
type chart struct {
	width, height, left, right, top, bottom float64
	x0, x1, y1                              float64 // data ranges: x in seconds, y from 0
}

func newChart(x0, x1, y1 float64) *chart {
	if x1 <= x0 {
		x1 = x0 + 1
	}
	if y1 <= 0 {
		y1 = 1
	}
	return &chart{width: 960, height: 260, left: 64, right: 40, top: 12, bottom: 36, x0: x0, x1: x1, y1: niceCeil(y1)}
}

func (c *chart) x(v float64) float64 {
	return c.left + (v-c.x0)/(c.x1-c.x0)*(c.width-c.left-c.right)
}

func (c *chart) y(v float64) float64 {
	return c.height - c.bottom - v/c.y1*(c.height-c.top-c.bottom)
}

// open writes the SVG element and the axes with five ticks each.
func (c *chart) open(w *bufio.Writer, class, yLabel string) {
	fmt.Fprintf(w, "<svg class=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" role=\"img\">\n", class, c.width, c.height, c.width, c.height)
	for i := 0; i <= 4; i++ {
		v := c.y1 * float64(i) / 4
		y := c.y(v)
		fmt.Fprintf(w, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", c.left, y, c.width-c.right, y)
		fmt.Fprintf(w, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", c.left-6, y+4, strconv.FormatFloat(v, 'g', 4, 64))
	}
	for i := 0; i <= 4; i++ {
		v := c.x0 + (c.x1-c.x0)*float64(i)/4
		x := c.x(v)
		fmt.Fprintf(w, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s s</text>\n", x, c.height-c.bottom+16, strconv.FormatFloat(v, 'f', 2, 64))
	}
	fmt.Fprintf(w, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", c.left, c.height-c.bottom, c.width-c.right, c.height-c.bottom)
	fmt.Fprintf(w, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", c.left, c.top, c.left, c.height-c.bottom)
	fmt.Fprintf(w, "<text x=\"12\" y=\"%.1f\" transform=\"rotate(-90 12 %.1f)\" text-anchor=\"middle\">%s</text>\n", (c.top+c.height-c.bottom)/2, (c.top+c.height-c.bottom)/2, html.EscapeString(yLabel))
}

// timeRange is the span of the process's GCs in seconds from origin.
func timeRange(origin time.Time, p *Process) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, gc := range p.GCs {
		s := gc.PauseStart.Sub(origin).Seconds()
		e := gc.Start.Add(gc.Duration).Sub(origin).Seconds()
		lo, hi = math.Min(lo, s), math.Max(hi, math.Max(s, e))
	}
	if lo > hi {
		return 0, 1
	}
	pad := (hi - lo) * 0.02
	return math.Max(0, lo-pad), hi + pad
}

// pauseChart draws each GC's pause as a bar at its time, as tall as the
// pause, coloured by generation.
func pauseChart(w *bufio.Writer, origin time.Time, p *Process) {
	x0, x1 := timeRange(origin, p)
	var maxPause float64
	for _, gc := range p.GCs {
		maxPause = math.Max(maxPause, float64(gc.Pause)/float64(time.Millisecond))
	}
	c := newChart(x0, x1, maxPause)
	c.open(w, "pauses", "pause (ms)")
	for _, gc := range p.GCs {
		pause := float64(gc.Pause) / float64(time.Millisecond)
		x := c.x(gc.PauseStart.Sub(origin).Seconds())
		y := c.y(pause)
		h := math.Max(c.height-c.bottom-y, 1)
		fmt.Fprintf(w, "<rect class=\"pause gen%d\" x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"%.1f\" fill=\"%s\"><title>GC %d (gen %d, %s): %s ms</title></rect>\n",
			gc.Generation, x-1, c.height-c.bottom-h, h, genColor(gc.Generation), gc.Number, gc.Generation, html.EscapeString(gc.Reason.String()), msString(gc.Pause))
	}
	w.WriteString("</svg>\n")
}

// heapChart draws the heap's size after each GC as a line, and its size
// before each GC as points.
func heapChart(w *bufio.Writer, origin time.Time, p *Process) {
	x0, x1 := timeRange(origin, p)
	var top float64
	for _, gc := range p.GCs {
		top = math.Max(top, math.Max(float64(gc.HeapAfter), float64(gc.HeapBefore))/1e6)
	}
	c := newChart(x0, x1, top)
	c.open(w, "heap", "heap (MB)")
	fmt.Fprintf(w, "<polyline class=\"heap-after\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", HeapColors[0])
	for _, gc := range p.GCs {
		if !gc.Complete {
			continue
		}
		fmt.Fprintf(w, "%.1f,%.1f ", c.x(gc.Start.Add(gc.Duration).Sub(origin).Seconds()), c.y(float64(gc.HeapAfter)/1e6))
	}
	w.WriteString("\"/>\n")
	for _, gc := range p.GCs {
		if !gc.Complete {
			continue
		}
		fmt.Fprintf(w, "<circle class=\"heap-before\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>GC %d: %s MB before, %s MB after</title></circle>\n",
			c.x(gc.PauseStart.Sub(origin).Seconds()), c.y(float64(gc.HeapBefore)/1e6), HeapColors[1], gc.Number, mbString(gc.HeapBefore), mbString(gc.HeapAfter))
	}
	w.WriteString("</svg>\n")
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
