package gcstats

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strconv"
	"time"
)

// genColors are the colours the HTML report gives generations 0, 1 and 2
// (the pause bars and the table's generation column).
var genColors = [3]string{"#4e79a7", "#f28e2b", "#e15759"}

// heapColor is the colour of the heap chart's line and points.
const heapColor = "#59a14f"

// unknownColor marks GCs whose pause the trace does not hold.
const unknownColor = "#888"

// WriteHTML writes a self-contained HTML page (inline SVG and CSS, no
// scripts, nothing fetched) with, for each process, its summary, a
// timeline of the GC pauses coloured by generation, the heap's size over
// time (before each GC and after it), and the table of GCs, each
// process named as WriteText names it. Times count from origin (the
// Analyzer's Origin); name titles the page (the trace's name).
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
	titles := processTitles(origin, procs)
	for i, p := range procs {
		writeProcessHTML(bw, origin, p, titles[i])
	}
	bw.WriteString("</body>\n</html>\n")
	return bw.Flush()
}

func writeProcessHTML(w *bufio.Writer, origin time.Time, p *Process, title string) {
	s := p.Summary()
	kind := heapsText(p)
	fmt.Fprintf(w, "<section class=\"process\" data-pid=\"%d\">\n<h2>%s</h2>\n", p.PID, html.EscapeString(title))
	start, end := p.TimeInTrace()
	fmt.Fprintf(w, "<p>%d GCs (%s). Paused %s ms: %.2f%% of the process's %.3f s in the trace (%s to %s from the trace's start). %s. Largest heap after a GC %s MB.</p>\n",
		len(p.GCs), kind, msString(s.All.TotalPause), s.PausePercent, s.Span.Seconds(),
		secondsString(start.Sub(origin)), secondsString(end.Sub(origin)), html.EscapeString(allocationNote(s)), mbString(s.MaxHeap))
	if s.PauseUnknown > 0 {
		fmt.Fprintf(w, "<p>Pauses unknown (marked ? and grey, not in the pause figures): the trace does not hold the suspension of %d of the GCs (it began before the trace, or its events were lost).</p>\n", s.PauseUnknown)
	}
	if m := missingText(s); m != "" {
		fmt.Fprintf(w, "<p>%s.</p>\n", html.EscapeString(m))
	}
	if s.Incomplete > 0 {
		fmt.Fprintf(w, "<p>The trace does not hold the end of %d of the GCs (marked *): what needs it is ?, and they are not in the figures.</p>\n", s.Incomplete)
	}
	w.WriteString("<table class=\"summary\"><tr><th>gen</th><th>count</th><th>mean pause ms</th><th>max pause ms</th><th>total pause ms</th></tr>\n")
	for g, gs := range s.Gens {
		fmt.Fprintf(w, "<tr><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			g, gs.Count, pauseCell(gs, gs.MeanPause()), pauseCell(gs, gs.MaxPause), pauseCell(gs, gs.TotalPause))
	}
	fmt.Fprintf(w, "<tr><td>all</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td></tr>\n</table>\n",
		s.All.Count, pauseCell(s.All, s.All.MeanPause()), pauseCell(s.All, s.All.MaxPause), pauseCell(s.All, s.All.TotalPause))

	w.WriteString("<h3>Pauses</h3>\n<div class=\"legend\">")
	for g, c := range genColors {
		fmt.Fprintf(w, "<span style=\"background:%s\"></span>gen %d", c, g)
	}
	if s.PauseUnknown > 0 || s.Incomplete > 0 {
		fmt.Fprintf(w, "<span style=\"background:%s\"></span>pause unknown", unknownColor)
	}
	w.WriteString("</div>\n")
	pauseChart(w, origin, p)
	w.WriteString("<h3>Heap size</h3>\n<div class=\"legend\">")
	fmt.Fprintf(w, "<span style=\"background:%s\"></span>heap: before each GC (point), after it (end of the drop)", heapColor)
	w.WriteString("</div>\n")
	heapChart(w, origin, p)

	w.WriteString("<h3>GCs</h3>\n<table class=\"gcs\"><tr><th>GC</th><th>start ms</th><th>gen</th><th>type</th><th>reason</th><th>pause ms</th><th>pauses</th><th>duration ms</th><th>alloc MB</th><th>before MB</th><th>after MB</th><th>free after MB</th><th>pinned</th></tr>\n")
	for _, gc := range p.GCs {
		c := p.cellsOf(gc)
		number := strconv.FormatInt(gc.Number, 10)
		if !gc.Complete {
			number += "*"
		}
		fmt.Fprintf(w, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			number, msString(gc.Start.Sub(origin)), gc.Generation,
			html.EscapeString(gc.Type.String()), html.EscapeString(gc.Reason.String()),
			c.pause, c.pauses, c.duration, c.alloc, c.before, c.after, c.free, c.pinned)
	}
	w.WriteString("</table>\n</section>\n")
}

// pauseCell is d, a pause figure of gs, in milliseconds, or "?" when
// none of its GCs has a known pause.
func pauseCell(gs GenSummary, d time.Duration) string {
	if gs.Count > 0 && gs.Measured == 0 {
		return "?"
	}
	return msString(d)
}

func genColor(g int) string {
	if g >= 0 && g < len(genColors) {
		return genColors[g]
	}
	return "#888"
}

func msString(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

func mbString(b uint64) string { return strconv.FormatFloat(float64(b)/1e6, 'f', 3, 64) }

// allocationNote says what the process allocated, or that the trace does
// not say and what would.
func allocationNote(s Summary) string {
	if !s.HasAllocated {
		return "Allocation unknown: the trace has no per-heap histories or AllocationTick events (the GC keyword, 0x1, at level Verbose, 5)"
	}
	return "Allocated " + mbString(s.Allocated) + " MB before its GCs"
}

// secondsString is d in seconds with three decimals.
func secondsString(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + " s"
}
