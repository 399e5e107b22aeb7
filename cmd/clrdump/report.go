package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/jitstats"
	"github.com/clrgo/clrevents/trace"
)

// Reports (-report):
//
//	clrdump -report gc|jit [-format text|jsonl|csv|html] [-o FILE] [-pid N] [-n N] TRACE
//
// computes the runtime's GC or JIT activity per process (packages gcstats
// and jitstats) instead of printing events. text is a readable table (for
// jit, -n sets how many of the slowest methods it lists; 10 by default);
// jsonl is one object per GC or per compiled method; csv the same as rows
// with a header; html (gc only) a self-contained page with the pause
// timeline and the heap over time. Times are milliseconds from the
// trace's first event. Every GCStart is a GC; one whose suspension the
// trace does not hold (it began before the trace) has its pause unknown:
// "?" in text, -1 in jsonl and csv. Keys of a GC line: pid, gc, gen,
// reason, type (NonConcurrentGC, BackgroundGC or ForegroundGC, as
// TraceEvent names them), start_ms, pause_ms (-1: unknown), pauses,
// suspend_ms (-1: unknown), duration_ms, pause_percent (-1 without a
// pause or the GC's end), heap_before_bytes, heap_before_estimated,
// heap_after_bytes, fragmentation_bytes (the free space left in the heap
// after the GC; -1 when the trace has no per-heap history for it),
// promoted_bytes, pinned_objects, heaps, complete. Keys of a method
// line: pid, method, method_id, tier, start_ms, tid, jit_ms (-1 when the
// trace has no start event for it), il_size, native_size. A trace
// without the events is an error that names the keyword to record
// (gcstats.ErrNoEvents, jitstats.ErrNoEvents).

// reportFlags are the flags of -report mode.
type reportFlags struct {
	kind string
}

func addReportFlags(fs *flag.FlagSet) *reportFlags {
	rf := &reportFlags{}
	fs.StringVar(&rf.kind, "report", "", "compute a report instead of printing events: gc or jit (-format text, jsonl, csv; gc also html)")
	return rf
}

// reportOptions are the flags -report shares with the rest of clrdump.
type reportOptions struct {
	format   string
	out      string
	pid      int64
	top      int
	topIsSet bool
	strict   bool
}

// run runs -report mode after the flags were parsed; it returns -1 when
// -report was not given.
func (rf *reportFlags) run(fs *flag.FlagSet, o reportOptions, stdin io.Reader, stdout, stderr io.Writer) int {
	if rf.kind == "" {
		return -1
	}
	switch rf.kind {
	case "gc", "jit":
	default:
		fmt.Fprintf(stderr, "clrdump: unknown -report %q (want gc or jit)\n", rf.kind)
		return exitUsage
	}
	switch o.format {
	case "text", "jsonl", "csv":
	case "html":
		if rf.kind != "gc" {
			fmt.Fprintf(stderr, "clrdump: -format html goes with -report gc\n")
			return exitUsage
		}
	default:
		fmt.Fprintf(stderr, "clrdump: unknown -format %q with -report (want text, jsonl, csv or html)\n", o.format)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	src, err := openTrace(fs.Arg(0), stdin, o.strict)
	if err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	defer src.Close()

	var write func(w *bufio.Writer) error
	var lost error // what the trace lost: damage, events that did not decode
	switch rf.kind {
	case "gc":
		a, err := gcstats.Read(src)
		lost = without(err, gcstats.ErrNoEvents)
		procs := filterGC(a.Processes(), o.pid)
		if len(procs) == 0 {
			fmt.Fprintf(stderr, "clrdump: %s%s: %v\n", src.Name(), pidNote(o.pid), gcstats.ErrNoEvents)
			reportLost(stderr, lost)
			return exitError
		}
		write = func(w *bufio.Writer) error { return writeGCReport(w, o.format, a.Origin(), procs, src.Name()) }
	case "jit":
		a, err := jitstats.Read(src)
		lost = without(err, jitstats.ErrNoEvents)
		procs := filterJIT(a.Processes(), o.pid)
		if len(procs) == 0 {
			fmt.Fprintf(stderr, "clrdump: %s%s: %v\n", src.Name(), pidNote(o.pid), jitstats.ErrNoEvents)
			reportLost(stderr, lost)
			return exitError
		}
		top := 10
		if o.topIsSet {
			top = o.top
		}
		write = func(w *bufio.Writer) error { return writeJITReport(w, o.format, a.Origin(), procs, top) }
	}
	if err := writeOut(o.out, stdout, write); err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	return reportLost(stderr, lost)
}

// openTrace opens the trace at name, or reads standard input for "-";
// strict stops it at the first damage.
func openTrace(name string, stdin io.Reader, strict bool, opts ...trace.Option) (*trace.Reader, error) {
	if strict {
		opts = append(opts, trace.WithStrict())
	}
	if name == "-" {
		return trace.NewReader(stdin, append(opts, trace.WithName("standard input"))...)
	}
	return trace.Open(name, opts...)
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func pidNote(pid int64) string {
	if pid < 0 {
		return ""
	}
	return ": process " + strconv.FormatInt(pid, 10)
}

// writeOut runs write on a buffered standard output, or on the file out,
// which it creates and closes; a write error names the file.
func writeOut(out string, stdout io.Writer, write func(*bufio.Writer) error) error {
	w, closeOut := stdout, func() error { return nil }
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		w, closeOut = f, f.Close
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if err != nil && out != "" {
		return fmt.Errorf("%s: %w", out, err)
	}
	return err
}

func filterGC(ps []*gcstats.Process, pid int64) []*gcstats.Process {
	var out []*gcstats.Process
	for _, p := range ps {
		if pid < 0 || p.PID == pid {
			out = append(out, p)
		}
	}
	return out
}

func filterJIT(ps []*jitstats.Process, pid int64) []*jitstats.Process {
	var out []*jitstats.Process
	for _, p := range ps {
		if pid < 0 || p.PID == pid {
			out = append(out, p)
		}
	}
	return out
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// appendMS appends d in milliseconds with three decimals, as PerfView shows
// times.
func appendMS(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, ms(d), 'f', 3, 64)
}

func mb(b uint64) string { return strconv.FormatFloat(float64(b)/1e6, 'f', 3, 64) }

// gcColumns are the keys of a GC line in jsonl and the header of csv.
var gcColumns = []string{"pid", "gc", "gen", "reason", "type", "start_ms", "pause_ms", "pauses", "suspend_ms", "duration_ms", "pause_percent", "heap_before_bytes", "heap_before_estimated", "heap_after_bytes", "fragmentation_bytes", "promoted_bytes", "pinned_objects", "heaps", "complete"}

// gcRow appends the values of a GC's line to b, each after sep (JSON key
// or CSV comma); strings go through str (JSON or CSV quoting).
func gcRow(b []byte, pid int64, gc *gcstats.GC, origin time.Time, sep func([]byte, int) []byte, str func([]byte, string) []byte) []byte {
	var promoted uint64
	for _, v := range gc.Promoted {
		promoted += v
	}
	for i := range gcColumns {
		b = sep(b, i)
		switch i {
		case 0:
			b = strconv.AppendInt(b, pid, 10)
		case 1:
			b = strconv.AppendInt(b, gc.Number, 10)
		case 2:
			b = strconv.AppendInt(b, int64(gc.Generation), 10)
		case 3:
			b = str(b, gc.Reason.String())
		case 4:
			b = str(b, gc.Type.String())
		case 5:
			b = appendMS(b, gc.Start.Sub(origin))
		case 6:
			b = appendPauseMS(b, gc, gc.Pause)
		case 7:
			b = strconv.AppendInt(b, int64(gc.Pauses), 10)
		case 8:
			b = appendPauseMS(b, gc, gc.Suspend)
		case 9:
			b = appendMS(b, gc.Duration)
		case 10:
			if gc.HasPause && gc.Complete {
				b = strconv.AppendFloat(b, gc.PausePercent, 'f', 2, 64)
			} else {
				b = append(b, "-1"...)
			}
		case 11:
			b = strconv.AppendUint(b, gc.HeapBefore, 10)
		case 12:
			b = strconv.AppendBool(b, gc.HeapBeforeEstimated)
		case 13:
			b = strconv.AppendUint(b, gc.HeapAfter, 10)
		case 14:
			if gc.HasFragmentation {
				b = strconv.AppendUint(b, gc.TotalFragmentation(), 10)
			} else {
				b = append(b, "-1"...)
			}
		case 15:
			b = strconv.AppendUint(b, promoted, 10)
		case 16:
			b = strconv.AppendUint(b, uint64(gc.PinnedObjects), 10)
		case 17:
			b = strconv.AppendInt(b, int64(gc.Heaps), 10)
		case 18:
			b = strconv.AppendBool(b, gc.Complete)
		}
	}
	return b
}

// appendPauseMS appends d, one of gc's pause figures, in milliseconds, or
// -1 when the trace does not hold the GC's pause.
func appendPauseMS(b []byte, gc *gcstats.GC, d time.Duration) []byte {
	if !gc.HasPause {
		return append(b, "-1"...)
	}
	return appendMS(b, d)
}

var jitColumns = []string{"pid", "method", "method_id", "tier", "start_ms", "tid", "jit_ms", "il_size", "native_size"}

// jitRow appends the values of a method's line, as gcRow does a GC's.
func jitRow(b []byte, pid int64, m *jitstats.Method, origin time.Time, sep func([]byte, int) []byte, str func([]byte, string) []byte) []byte {
	for i := range jitColumns {
		b = sep(b, i)
		switch i {
		case 0:
			b = strconv.AppendInt(b, pid, 10)
		case 1:
			b = str(b, m.Name)
		case 2:
			b = str(b, "0x"+strconv.FormatUint(m.MethodID, 16))
		case 3:
			b = str(b, m.TierName())
		case 4:
			b = appendMS(b, m.Start.Sub(origin))
		case 5:
			b = strconv.AppendInt(b, m.ThreadID, 10)
		case 6:
			if m.HasJitTime {
				b = appendMS(b, m.JitTime)
			} else {
				b = append(b, "-1"...)
			}
		case 7:
			b = strconv.AppendUint(b, uint64(m.ILSize), 10)
		case 8:
			b = strconv.AppendUint(b, uint64(m.NativeSize), 10)
		}
	}
	return b
}

// jsonSep and csvSep separate a row's values in jsonl and csv.
func jsonSep(cols []string) func([]byte, int) []byte {
	return func(b []byte, i int) []byte {
		if i == 0 {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, cols[i])
		return append(b, ':')
	}
}

func csvSep(b []byte, i int) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	return b
}

func jsonStr(b []byte, s string) []byte { return eventfmt.AppendJSONString(b, s) }

func csvStr(b []byte, s string) []byte { return appendCSVField(b, s) }

func writeCSVHeader(w *bufio.Writer, cols []string) {
	var b []byte
	for i, c := range cols {
		b = csvSep(b, i)
		b = csvStr(b, c)
	}
	w.Write(append(b, '\n'))
}

// writeRows writes the lines of a jsonl or csv report: rows calls emit
// once per line with the function that appends that line's values.
func writeRows(w *bufio.Writer, format string, cols []string, rows func(emit func(row rowFunc))) {
	var b []byte
	sep, str, end := csvSep, csvStr, "\n"
	if format == "jsonl" {
		sep, str, end = jsonSep(cols), jsonStr, "}\n"
	} else {
		writeCSVHeader(w, cols)
	}
	rows(func(row rowFunc) {
		b = row(b[:0], sep, str)
		w.Write(append(b, end...))
	})
}

// rowFunc appends one line's values, each after sep, strings through str.
type rowFunc func(b []byte, sep func([]byte, int) []byte, str func([]byte, string) []byte) []byte

func writeGCReport(w *bufio.Writer, format string, origin time.Time, procs []*gcstats.Process, name string) error {
	switch format {
	case "html":
		return gcstats.WriteHTML(w, origin, procs, name)
	case "text":
		for i, p := range procs {
			if i > 0 {
				w.WriteString("\n")
			}
			writeGCText(w, origin, p)
		}
	default:
		writeRows(w, format, gcColumns, func(emit func(rowFunc)) {
			for _, p := range procs {
				for _, gc := range p.GCs {
					emit(func(b []byte, sep func([]byte, int) []byte, str func([]byte, string) []byte) []byte {
						return gcRow(b, p.PID, gc, origin, sep, str)
					})
				}
			}
		})
	}
	return nil
}

func writeGCText(w *bufio.Writer, origin time.Time, p *gcstats.Process) {
	s := p.Summary()
	heaps := "workstation GC"
	if p.Heaps > 1 {
		heaps = fmt.Sprintf("server GC, %d heaps", p.Heaps)
	}
	start, end := p.TimeInTrace()
	fmt.Fprintf(w, "%s: %d GCs (%s); paused %s ms, %.2f%% of its %.3f s in the trace (%.3f s to %.3f s from the trace's start); %s; max heap %s MB\n",
		processTitle(p.PID, p.Name), len(p.GCs), heaps, fmtMS(s.All.TotalPause), s.PausePercent, s.Span.Seconds(),
		start.Sub(origin).Seconds(), end.Sub(origin).Seconds(), allocationNote(s), mb(s.MaxHeap))
	tw := newTable(w, "gen", "count", "mean pause ms", "max pause ms", "total pause ms", "total duration ms", "promoted MB")
	for g := range s.Gens {
		gs := s.Gens[g]
		tw.row(strconv.Itoa(g), strconv.Itoa(gs.Count), pauseCell(gs, gs.MeanPause()), pauseCell(gs, gs.MaxPause), pauseCell(gs, gs.TotalPause), fmtMS(gs.TotalDuration), mb(gs.Promoted))
	}
	all := s.All
	tw.row("all", strconv.Itoa(all.Count), pauseCell(all, all.MeanPause()), pauseCell(all, all.MaxPause), pauseCell(all, all.TotalPause), fmtMS(all.TotalDuration), mb(all.Promoted))
	tw.flush()
	w.WriteString("\n")
	tw = newTable(w, "GC", "start ms", "gen", "type", "reason", "pause ms", "pauses", "suspend ms", "duration ms", "pause %", "before MB", "after MB", "free MB", "promoted MB", "pinned", "heaps")
	for _, gc := range p.GCs {
		var promoted uint64
		for _, v := range gc.Promoted {
			promoted += v
		}
		before := mb(gc.HeapBefore)
		if gc.HeapBeforeEstimated {
			before = "~" + before
		}
		number := strconv.FormatInt(gc.Number, 10)
		if !gc.Complete {
			number += "*"
		}
		free := "-"
		if gc.HasFragmentation {
			free = mb(gc.TotalFragmentation())
		}
		pause, pauses, suspend, percent := "?", "?", "?", "?"
		if gc.HasPause {
			pause, pauses, suspend = fmtMS(gc.Pause), strconv.Itoa(gc.Pauses), fmtMS(gc.Suspend)
			percent = "-"
			if gc.Complete {
				percent = strconv.FormatFloat(gc.PausePercent, 'f', 1, 64)
			}
		}
		tw.row(number, fmtMS(gc.Start.Sub(origin)), strconv.Itoa(gc.Generation), gc.Type.String(), gc.Reason.String(),
			pause, pauses, suspend, fmtMS(gc.Duration), percent, before, mb(gc.HeapAfter), free, mb(promoted),
			strconv.FormatUint(uint64(gc.PinnedObjects), 10), strconv.Itoa(gc.Heaps))
	}
	tw.flush()
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

// pauseCell is d, a pause figure of gs, or "?" when none of its GCs has a
// known pause.
func pauseCell(gs gcstats.GenSummary, d time.Duration) string {
	if gs.Count > 0 && gs.Measured == 0 {
		return "?"
	}
	return fmtMS(d)
}

// allocationNote is what the process allocated, or that the trace does not
// say and which events would.
func allocationNote(s gcstats.Summary) string {
	if !s.HasAllocated {
		return "allocation unknown (no AllocationTick events: record the GC keyword, 0x1, at level Verbose, 5)"
	}
	return mb(s.Allocated) + " MB allocated"
}

func fmtMS(d time.Duration) string { return string(appendMS(nil, d)) }

func writeJITReport(w *bufio.Writer, format string, origin time.Time, procs []*jitstats.Process, top int) error {
	if format == "text" {
		for i, p := range procs {
			if i > 0 {
				w.WriteString("\n")
			}
			writeJITText(w, origin, p, top)
		}
		return nil
	}
	writeRows(w, format, jitColumns, func(emit func(rowFunc)) {
		for _, p := range procs {
			for _, m := range p.Methods {
				emit(func(b []byte, sep func([]byte, int) []byte, str func([]byte, string) []byte) []byte {
					return jitRow(b, p.PID, m, origin, sep, str)
				})
			}
		}
	})
	return nil
}

func writeJITText(w *bufio.Writer, origin time.Time, p *jitstats.Process, top int) {
	s := p.Summary()
	fmt.Fprintf(w, "%s: %d methods compiled in %s ms (%d timed); %d ReadyToRun methods used\n",
		processTitle(p.PID, p.Name), s.All.Count, fmtMS(s.All.JitTime), s.All.Timed, p.ReadyToRun)
	tw := newTable(w, "tier", "methods", "jit ms", "IL bytes", "native bytes")
	for _, t := range s.Tiers {
		tw.row(t.Tier.String(), strconv.Itoa(t.Count), fmtMS(t.JitTime), strconv.FormatUint(t.ILSize, 10), strconv.FormatUint(t.NativeSize, 10))
	}
	tw.row("all", strconv.Itoa(s.All.Count), fmtMS(s.All.JitTime), strconv.FormatUint(s.All.ILSize, 10), strconv.FormatUint(s.All.NativeSize, 10))
	tw.flush()
	if slow := p.Slowest(top); len(slow) > 0 {
		fmt.Fprintf(w, "\nSlowest %d:\n", len(slow))
		tw = newTable(w, "jit ms", "start ms", "tier", "IL", "native", "method")
		for _, m := range slow {
			tw.row(fmtMS(m.JitTime), fmtMS(m.Start.Sub(origin)), m.TierName(), strconv.FormatUint(uint64(m.ILSize), 10), strconv.FormatUint(uint64(m.NativeSize), 10), m.Name)
		}
		tw.flush()
	}
	if in := p.Inlining; in.Failed+in.Succeeded > 0 {
		fmt.Fprintf(w, "\nInlining: %d succeeded, %d failed\n", in.Succeeded, in.Failed)
		reasons := make([]string, 0, len(in.Reasons))
		for r := range in.Reasons {
			reasons = append(reasons, r)
		}
		sort.Slice(reasons, func(i, j int) bool {
			a, b := in.Reasons[reasons[i]], in.Reasons[reasons[j]]
			return a > b || a == b && reasons[i] < reasons[j]
		})
		tw = newTable(w, "failures", "reason")
		for _, r := range reasons {
			tw.row(strconv.Itoa(in.Reasons[r]), r)
		}
		tw.flush()
	}
}

// table lays out rows in columns: numbers right-aligned, a last column of
// names (methods, reasons) left-aligned.
type table struct {
	w    *bufio.Writer
	rows [][]string
}

func newTable(w *bufio.Writer, header ...string) *table {
	return &table{w: w, rows: [][]string{header}}
}

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) flush() {
	header := t.rows[0]
	width := make([]int, len(header))
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	last := len(header) - 1
	leftLast := header[last] == "method" || header[last] == "reason"
	for _, r := range t.rows {
		for i, c := range r {
			if i > 0 {
				t.w.WriteString("  ")
			}
			pad := width[i] - len(c)
			if i == last && leftLast {
				t.w.WriteString(c)
				continue
			}
			for ; pad > 0; pad-- {
				t.w.WriteByte(' ')
			}
			t.w.WriteString(c)
		}
		t.w.WriteByte('\n')
	}
	t.rows = t.rows[:1]
}

// processTitle is "Process 3644 (Test.x86.exe)", or "Process 3644" when
// the trace does not name the executable.
func processTitle(pid int64, name string) string {
	if name == "" {
		return "Process " + strconv.FormatInt(pid, 10)
	}
	return "Process " + strconv.FormatInt(pid, 10) + " (" + name + ")"
}
