package gcstats

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/clrgo/clrevents/internal/feed"
	"github.com/clrgo/clrevents/internal/textfmt"
)

// The report in its text forms. Times count from origin (the Analyzer's
// Origin: from Read, the trace's start, as PerfView's) in milliseconds. A figure the trace
// does not hold is unknown, shown as "?" in text and HTML and -1 in JSON
// lines and CSV, never as 0: the pause figures of a GC whose suspension
// the trace lacks (HasPause is false), and of a GC whose end it lacks
// (Complete is false; marked *), what needs that end: its pause when the
// runtime was not restarted, its duration without its end event, its
// sizes without its heap statistics. WriteHTML writes the same report as
// a page with charts.

// totalPromoted is Promoted summed over the generations.
func (gc *GC) totalPromoted() uint64 {
	var n uint64
	for _, v := range gc.Promoted {
		n += v
	}
	return n
}

// totalAllocated is Allocated summed over the heaps.
func (gc *GC) totalAllocated() uint64 { return gc.Allocated[0] + gc.Allocated[1] + gc.Allocated[2] }

// allocatedKnown tells whether the trace holds gc's allocation: per-heap
// histories of it and the GC before it, or AllocationTick events, and
// the GC's heap statistics, which close its count.
func (p *Process) allocatedKnown(gc *GC) bool { return gc.HasAllocated && gc.sizesKnown() }

// pauseKnown, durationKnown, sizesKnown and beforeKnown tell which of a
// GC's figures the trace holds (an incomplete GC lacks some).
func (gc *GC) pauseKnown() bool    { return gc.HasPause && (gc.Complete || gc.Pauses > 0) }
func (gc *GC) durationKnown() bool { return gc.Complete || gc.ended }
func (gc *GC) sizesKnown() bool    { return gc.Complete || gc.hasHeapStats }
func (gc *GC) beforeKnown() bool   { return gc.sizesKnown() || gc.perHeap > 0 }

// WriteText writes, for each process, a line that sums it up (GC count,
// workstation or server GC and heaps as far as the trace tells, time
// paused and its share of the process's time in the trace, allocation,
// largest heap), a table by condemned generation, and a table of its GCs
// with PerfView's GCStats columns.
// Footnotes say which GCs the trace does not hold the end of (*), whose
// pause is unknown (?) and whose heap size before is estimated (~).
// Processes of one ID (the system gives an exited process's ID to a new
// one) are named with their starts.
func WriteText(w io.Writer, origin time.Time, procs []*Process) error {
	bw := bufio.NewWriter(w)
	titles := processTitles(origin, procs)
	for i, p := range procs {
		if i > 0 {
			bw.WriteString("\n")
		}
		writeProcessText(bw, origin, p, titles[i])
	}
	return bw.Flush()
}

// Columns lists the keys of a GC's JSON line and the columns of the CSV
// report, in order:
//
//	pid, gc, gen            numbers: the process, GC number, condemned generation
//	                        (processes of one ID follow each other, by start)
//	reason, type            strings: clrevents.GCReason and GCType names
//	                        (NonConcurrentGC, BackgroundGC or ForegroundGC)
//	start_ms                number: the GC's start
//	pause_ms, pauses, suspend_ms
//	                        numbers: the pause, how many, the suspension (-1: unknown)
//	duration_ms             number: start to end (-1: the trace lacks the end)
//	pause_percent           number: PausePercent (-1 without a pause or the GC's end)
//	allocated_bytes         number: Allocated, all heaps (-1: unknown, HasAllocated;
//	                        or the trace lacks the GC's heap statistics)
//	heap_before_bytes       number (-1: unknown); heap_before_estimated a boolean
//	heap_after_bytes        number (-1: the trace lacks the GC's heap statistics)
//	fragmentation_bytes     number: TotalFragmentation (-1 without per-heap histories)
//	promoted_bytes          number: Promoted, all generations (-1 as heap_after_bytes)
//	pinned_objects          number (-1 as heap_after_bytes)
//	heaps                   number (0: unknown)
//	complete                boolean
//	process_start_ms        number: the process's start (Process.Life), -1 when
//	                        the trace does not record it; with pid, it tells
//	                        apart processes of one ID
//	allocated_exact         boolean: AllocatedExact (per-heap histories, not
//	                        AllocationTick events' sample)
func Columns() []string { return append([]string(nil), columns...) }

var columns = []string{"pid", "gc", "gen", "reason", "type", "start_ms", "pause_ms", "pauses", "suspend_ms", "duration_ms", "pause_percent", "allocated_bytes", "heap_before_bytes", "heap_before_estimated", "heap_after_bytes", "fragmentation_bytes", "promoted_bytes", "pinned_objects", "heaps", "complete", "process_start_ms", "allocated_exact"}

// WriteJSONLines writes one JSON object a line per GC, each process's GCs
// in turn, with the keys Columns lists, each always of the same JSON type.
func WriteJSONLines(w io.Writer, origin time.Time, procs []*Process) error {
	return writeRecords(w, origin, procs, true)
}

// WriteCSV writes a header of Columns, then a record per GC, as
// WriteJSONLines writes them.
func WriteCSV(w io.Writer, origin time.Time, procs []*Process) error {
	return writeRecords(w, origin, procs, false)
}

func writeRecords(w io.Writer, origin time.Time, procs []*Process, json bool) error {
	bw := bufio.NewWriter(w)
	r := textfmt.NewRecords(bw, columns, json)
	for _, p := range procs {
		for _, gc := range p.GCs {
			appendRecord(r, p, gc, origin)
		}
	}
	return bw.Flush()
}

// appendRecord writes a GC's record: its values in the order of columns.
func appendRecord(r *textfmt.Records, p *Process, gc *GC, origin time.Time) {
	promoted := gc.totalPromoted()
	// msOr is d in milliseconds when known, else -1; uintOr v.
	msOr := func(known bool, d time.Duration) {
		if known {
			r.Float(ms(d), 3)
		} else {
			r.Int(-1)
		}
	}
	uintOr := func(known bool, v uint64) {
		if known {
			r.Uint(v)
		} else {
			r.Int(-1)
		}
	}
	r.Int(p.PID)
	r.Int(gc.Number)
	r.Int(int64(gc.Generation))
	r.String(gc.Reason.String())
	r.String(gc.Type.String())
	r.Float(ms(gc.Start.Sub(origin)), 3)
	msOr(gc.pauseKnown(), gc.Pause)
	if gc.pauseKnown() {
		r.Int(int64(gc.Pauses))
	} else {
		r.Int(-1)
	}
	msOr(gc.HasPause, gc.Suspend)
	msOr(gc.durationKnown(), gc.Duration)
	if gc.HasPause && gc.Complete {
		r.Float(gc.PausePercent, 2)
	} else {
		r.Int(-1)
	}
	uintOr(p.allocatedKnown(gc), gc.totalAllocated())
	uintOr(gc.beforeKnown(), gc.HeapBefore)
	r.Bool(gc.HeapBeforeEstimated)
	uintOr(gc.sizesKnown(), gc.HeapAfter)
	uintOr(gc.HasFragmentation, gc.TotalFragmentation())
	uintOr(gc.sizesKnown(), promoted)
	uintOr(gc.sizesKnown(), uint64(gc.PinnedObjects))
	r.Int(int64(gc.Heaps))
	r.Bool(gc.Complete)
	start, _ := p.Life()
	msOr(!start.IsZero(), start.Sub(origin))
	r.Bool(gc.AllocatedExact)
	r.End()
}

func writeProcessText(w *bufio.Writer, origin time.Time, p *Process, title string) {
	s := p.Summary()
	start, end := p.TimeInTrace()
	fmt.Fprintf(w, "%s: %d GCs (%s); paused %s ms, %.2f%% of its %.3f s in the trace (%.3f s to %.3f s from the trace's start); %s; largest heap after a GC %s MB\n",
		title, len(p.GCs), heapsText(p), msString(s.All.TotalPause), s.PausePercent, s.Span.Seconds(),
		start.Sub(origin).Seconds(), end.Sub(origin).Seconds(), allocationText(s), mbString(s.MaxHeap))
	if m := missingText(s); m != "" {
		w.WriteString(m + "\n")
	}
	tw := textfmt.NewTable("gen", "count", "mean pause ms", "max pause ms", "total pause ms", "total duration ms", "promoted MB")
	for g, gs := range s.Gens {
		tw.Row(strconv.Itoa(g), strconv.Itoa(gs.Count), pauseCell(gs, gs.MeanPause()), pauseCell(gs, gs.MaxPause), pauseCell(gs, gs.TotalPause), msString(gs.TotalDuration), mbString(gs.Promoted))
	}
	all := s.All
	tw.Row("all", strconv.Itoa(all.Count), pauseCell(all, all.MeanPause()), pauseCell(all, all.MaxPause), pauseCell(all, all.TotalPause), msString(all.TotalDuration), mbString(all.Promoted))
	tw.Flush(w)
	w.WriteString("\n")
	tw = textfmt.NewTable("GC", "start ms", "gen", "type", "reason", "pause ms", "pauses", "suspend ms", "duration ms", "pause %", "alloc MB", "before MB", "after MB", "free MB", "promoted MB", "pinned", "heaps")
	for _, gc := range p.GCs {
		c := p.cellsOf(gc)
		number := strconv.FormatInt(gc.Number, 10)
		if !gc.Complete {
			number += "*"
		}
		percent := "?"
		if gc.HasPause {
			percent = "-"
			if gc.Complete {
				percent = strconv.FormatFloat(gc.PausePercent, 'f', 1, 64)
			}
		}
		suspend := "?"
		if gc.HasPause {
			suspend = msString(gc.Suspend)
		}
		tw.Row(number, msString(gc.Start.Sub(origin)), strconv.Itoa(gc.Generation), gc.Type.String(), gc.Reason.String(),
			c.pause, c.pauses, suspend, c.duration, percent, c.alloc, c.before, c.after, c.free, c.promoted, c.pinned, strconv.Itoa(gc.Heaps))
	}
	tw.Flush(w)
	if s.Incomplete > 0 {
		fmt.Fprintf(w, "* the trace does not hold this GC's end (%d GCs): what needs it is ?, and the GC is not in the sums\n", s.Incomplete)
	}
	if s.PauseUnknown > 0 {
		fmt.Fprintf(w, "? %s\n", pauseUnknownNote(s.PauseUnknown))
	}
	for _, gc := range p.GCs {
		if gc.HeapBeforeEstimated {
			w.WriteString("~ estimated: the trace has no per-heap history for the GC\n")
			break
		}
	}
}

// heapsText says which GC the process runs, as far as the trace tells:
// "workstation GC" or "server GC, 4 heaps" when it has the runtime's
// GCSettings event, else from the heap count alone "server GC, 4 heaps"
// for more than one, "1 heap" for one (workstation GC, or server GC on
// one heap), and "heap count unknown" without the GCs' heap histories.
func heapsText(p *Process) string {
	heaps := strconv.Itoa(p.Heaps) + " heaps"
	if p.Heaps == 1 {
		heaps = "1 heap"
	}
	switch {
	case p.HasServerGC && !p.ServerGC:
		return "workstation GC"
	case p.HasServerGC && p.Heaps == 0:
		return "server GC"
	case p.HasServerGC || p.Heaps > 1:
		return "server GC, " + heaps
	case p.Heaps == 1:
		return heaps
	}
	return "heap count unknown"
}

// cells are a GC's figures as the text and HTML tables show them: "?"
// for what the trace does not hold.
type cells struct{ pause, pauses, duration, alloc, before, after, free, promoted, pinned string }

func (p *Process) cellsOf(gc *GC) cells {
	c := cells{"?", "?", "?", "?", "?", "?", "-", "?", "?"}
	if p.allocatedKnown(gc) {
		c.alloc = mbString(gc.totalAllocated())
	}
	if gc.pauseKnown() {
		c.pause, c.pauses = msString(gc.Pause), strconv.Itoa(gc.Pauses)
	}
	if gc.durationKnown() {
		c.duration = msString(gc.Duration)
	}
	if gc.beforeKnown() {
		c.before = mbString(gc.HeapBefore)
		if gc.HeapBeforeEstimated {
			c.before = "~" + c.before
		}
	}
	if gc.sizesKnown() {
		c.after, c.promoted, c.pinned = mbString(gc.HeapAfter), mbString(gc.totalPromoted()), strconv.FormatUint(uint64(gc.PinnedObjects), 10)
	}
	if gc.HasFragmentation {
		c.free = mbString(gc.TotalFragmentation())
	}
	return c
}

// pauseUnknownNote says why n GCs' pauses are unknown: the trace does not
// hold their suspension, which began before it did or was lost (a cut, a
// damaged block, the runtime's drops).
func pauseUnknownNote(n int) string {
	return fmt.Sprintf("the trace does not hold this GC's suspension (it began before the trace, or its events were lost): its pause is unknown (%d of the GCs); it is counted, its pause not summed", n)
}

// allocationText is what the process allocated, or that the trace does
// not say and which events would.
func allocationText(s Summary) string {
	if !s.HasAllocated {
		return "allocation unknown (no per-heap histories or AllocationTick events: record the GC keyword, 0x1, at level Verbose, 5)"
	}
	return mbString(s.Allocated) + " MB allocated before its GCs"
}

// processTitles names procs in a report: "Process 3644 (Test.x86.exe)",
// or "Process 3644" when the trace does not name the executable, and,
// for a process ID two of them have, the start of each (feed.Titles).
func processTitles(origin time.Time, procs []*Process) []string {
	ps := make([]feed.Titled, len(procs))
	for i, p := range procs {
		start, _ := p.Life()
		ps[i] = feed.Titled{PID: p.PID, Name: p.Name, Start: start}
	}
	return feed.Titles(origin, ps)
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
