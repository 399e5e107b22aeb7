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
// Origin: the trace's first event) in milliseconds; a GC whose pause the
// trace does not hold (HasPause is false) has its pause figures unknown,
// shown as "?" in text and -1 in JSON lines and CSV, never as 0. WriteHTML
// writes the same report as a page with charts.

// WriteText writes, for each process, a line that sums it up (GC count,
// workstation or server GC, time paused and its share of the process's
// time in the trace, allocation, largest heap), a table by condemned
// generation, and a table of its GCs with PerfView's GCStats columns.
// Footnotes say which GCs the trace does not hold the end of (*), whose
// pause is unknown (?) and whose heap size before is estimated (~).
func WriteText(w io.Writer, origin time.Time, procs []*Process) error {
	bw := bufio.NewWriter(w)
	for i, p := range procs {
		if i > 0 {
			bw.WriteString("\n")
		}
		writeProcessText(bw, origin, p)
	}
	return bw.Flush()
}

// Columns lists the keys of a GC's JSON line and the columns of the CSV
// report, in order:
//
//	pid, gc, gen            numbers: the process, GC number, condemned generation
//	reason, type            strings: clrevents.GCReason and GCType names
//	                        (NonConcurrentGC, BackgroundGC or ForegroundGC)
//	start_ms                number: the GC's start
//	pause_ms, pauses, suspend_ms
//	                        numbers: the pause, how many, the suspension (-1: unknown)
//	duration_ms             number: start to end
//	pause_percent           number: PausePercent (-1 without a pause or the GC's end)
//	heap_before_bytes       number; heap_before_estimated a boolean
//	heap_after_bytes        number
//	fragmentation_bytes     number: TotalFragmentation (-1 without per-heap histories)
//	promoted_bytes          number: Promoted, all generations
//	pinned_objects, heaps   numbers
//	complete                boolean
func Columns() []string { return append([]string(nil), columns...) }

var columns = []string{"pid", "gc", "gen", "reason", "type", "start_ms", "pause_ms", "pauses", "suspend_ms", "duration_ms", "pause_percent", "heap_before_bytes", "heap_before_estimated", "heap_after_bytes", "fragmentation_bytes", "promoted_bytes", "pinned_objects", "heaps", "complete"}

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
			appendRecord(r, p.PID, gc, origin)
		}
	}
	return bw.Flush()
}

// appendRecord writes a GC's record: its values in the order of columns.
func appendRecord(r *textfmt.Records, pid int64, gc *GC, origin time.Time) {
	var promoted uint64
	for _, v := range gc.Promoted {
		promoted += v
	}
	// pause is d, one of gc's pause figures, or -1 when the trace does
	// not hold the GC's pause.
	pause := func(d time.Duration) {
		if gc.HasPause {
			r.Float(ms(d), 3)
		} else {
			r.Int(-1)
		}
	}
	r.Int(pid)
	r.Int(gc.Number)
	r.Int(int64(gc.Generation))
	r.String(gc.Reason.String())
	r.String(gc.Type.String())
	r.Float(ms(gc.Start.Sub(origin)), 3)
	pause(gc.Pause)
	r.Int(int64(gc.Pauses))
	pause(gc.Suspend)
	r.Float(ms(gc.Duration), 3)
	if gc.HasPause && gc.Complete {
		r.Float(gc.PausePercent, 2)
	} else {
		r.Int(-1)
	}
	r.Uint(gc.HeapBefore)
	r.Bool(gc.HeapBeforeEstimated)
	r.Uint(gc.HeapAfter)
	if gc.HasFragmentation {
		r.Uint(gc.TotalFragmentation())
	} else {
		r.Int(-1)
	}
	r.Uint(promoted)
	r.Uint(uint64(gc.PinnedObjects))
	r.Int(int64(gc.Heaps))
	r.Bool(gc.Complete)
	r.End()
}

func writeProcessText(w *bufio.Writer, origin time.Time, p *Process) {
	s := p.Summary()
	heaps := "workstation GC"
	if p.Heaps > 1 {
		heaps = fmt.Sprintf("server GC, %d heaps", p.Heaps)
	}
	start, end := p.TimeInTrace()
	fmt.Fprintf(w, "%s: %d GCs (%s); paused %s ms, %.2f%% of its %.3f s in the trace (%.3f s to %.3f s from the trace's start); %s; largest heap after a GC %s MB\n",
		processTitle(p.PID, p.Name), len(p.GCs), heaps, msString(s.All.TotalPause), s.PausePercent, s.Span.Seconds(),
		start.Sub(origin).Seconds(), end.Sub(origin).Seconds(), allocationText(s), mbString(s.MaxHeap))
	tw := textfmt.NewTable("gen", "count", "mean pause ms", "max pause ms", "total pause ms", "total duration ms", "promoted MB")
	for g, gs := range s.Gens {
		tw.Row(strconv.Itoa(g), strconv.Itoa(gs.Count), pauseCell(gs, gs.MeanPause()), pauseCell(gs, gs.MaxPause), pauseCell(gs, gs.TotalPause), msString(gs.TotalDuration), mbString(gs.Promoted))
	}
	all := s.All
	tw.Row("all", strconv.Itoa(all.Count), pauseCell(all, all.MeanPause()), pauseCell(all, all.MaxPause), pauseCell(all, all.TotalPause), msString(all.TotalDuration), mbString(all.Promoted))
	tw.Flush(w)
	w.WriteString("\n")
	tw = textfmt.NewTable("GC", "start ms", "gen", "type", "reason", "pause ms", "pauses", "suspend ms", "duration ms", "pause %", "before MB", "after MB", "free MB", "promoted MB", "pinned", "heaps")
	for _, gc := range p.GCs {
		var promoted uint64
		for _, v := range gc.Promoted {
			promoted += v
		}
		before := mbString(gc.HeapBefore)
		if gc.HeapBeforeEstimated {
			before = "~" + before
		}
		number := strconv.FormatInt(gc.Number, 10)
		if !gc.Complete {
			number += "*"
		}
		free := "-"
		if gc.HasFragmentation {
			free = mbString(gc.TotalFragmentation())
		}
		pause, pauses, suspend, percent := "?", "?", "?", "?"
		if gc.HasPause {
			pause, pauses, suspend = msString(gc.Pause), strconv.Itoa(gc.Pauses), msString(gc.Suspend)
			percent = "-"
			if gc.Complete {
				percent = strconv.FormatFloat(gc.PausePercent, 'f', 1, 64)
			}
		}
		tw.Row(number, msString(gc.Start.Sub(origin)), strconv.Itoa(gc.Generation), gc.Type.String(), gc.Reason.String(),
			pause, pauses, suspend, msString(gc.Duration), percent, before, mbString(gc.HeapAfter), free, mbString(promoted),
			strconv.FormatUint(uint64(gc.PinnedObjects), 10), strconv.Itoa(gc.Heaps))
	}
	tw.Flush(w)
	if s.Incomplete > 0 {
		fmt.Fprintf(w, "* the trace does not hold this GC's end (%d GCs); it is not in the sums\n", s.Incomplete)
	}
	if s.PauseUnknown > 0 {
		fmt.Fprintf(w, "? the trace began after this GC's suspension: its pause is unknown (%d of the GCs); it is counted, its pause not summed\n", s.PauseUnknown)
	}
	for _, gc := range p.GCs {
		if gc.HeapBeforeEstimated {
			w.WriteString("~ estimated: the trace has no per-heap history for the GC\n")
			break
		}
	}
}

// allocationText is what the process allocated, or that the trace does
// not say and which events would.
func allocationText(s Summary) string {
	if !s.HasAllocated {
		return "allocation unknown (no AllocationTick events: record the GC keyword, 0x1, at level Verbose, 5)"
	}
	return mbString(s.Allocated) + " MB allocated"
}

// processTitle is "Process 3644 (Test.x86.exe)", or "Process 3644" when
// the trace does not name the executable.
func processTitle(pid int64, name string) string { return feed.ProcessTitle(pid, name) }

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
