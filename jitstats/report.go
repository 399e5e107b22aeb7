package jitstats

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/clrgo/clrevents/internal/feed"
	"github.com/clrgo/clrevents/internal/numfmt"
	"github.com/clrgo/clrevents/internal/textfmt"
)

// The report in its text forms. Times count from origin (the Analyzer's
// Origin: from Read, the trace's start, as PerfView's) in milliseconds.

// WriteText writes, for each process, a line that sums it up (methods
// compiled, their compile time, ReadyToRun methods used), a table by
// tier, the top methods that took longest to compile (Process.Slowest(top):
// every timed method when top <= 0) and the inlining decisions with the
// failures by reason. Processes of one ID (the system gives an exited
// process's ID to a new one) are named with their starts.
func WriteText(w io.Writer, origin time.Time, procs []*Process, top int) error {
	bw := bufio.NewWriter(w)
	titles := make([]feed.Titled, len(procs))
	for i, p := range procs {
		start, _ := p.Life()
		titles[i] = feed.Titled{PID: p.PID, Name: p.Name, Start: start}
	}
	for i, title := range feed.Titles(origin, titles) {
		if i > 0 {
			bw.WriteString("\n")
		}
		writeProcessText(bw, origin, procs[i], title, top)
	}
	return bw.Flush()
}

// Columns lists the keys of a method's JSON line and the columns of the
// CSV report, in order:
//
//	pid          number: the process (processes of one ID follow each
//	             other, by start)
//	method       string: Method.Name
//	method_id    string: Method.MethodID in hex ("0x7ffb1c2d3e40")
//	tier         string: Method.TierName
//	start_ms     number: the compile's start
//	tid          number: the compiling thread
//	jit_ms       number: the compile time (-1 when the trace has no start event for it)
//	il_size, native_size
//	             numbers: bytes
//	process_start_ms
//	             number: the process's start (Process.Life), -1 when the
//	             trace does not record it; with pid, it tells apart
//	             processes of one ID
func Columns() []string { return append([]string(nil), columns...) }

var columns = []string{"pid", "method", "method_id", "tier", "start_ms", "tid", "jit_ms", "il_size", "native_size", "process_start_ms"}

// WriteJSONLines writes one JSON object a line per compiled method, each
// process's methods in turn in the order their code was loaded, with the
// keys Columns lists, each always of the same JSON type.
func WriteJSONLines(w io.Writer, origin time.Time, procs []*Process) error {
	return writeRecords(w, origin, procs, true)
}

// WriteCSV writes a header of Columns, then a record per compiled method,
// as WriteJSONLines writes them.
func WriteCSV(w io.Writer, origin time.Time, procs []*Process) error {
	return writeRecords(w, origin, procs, false)
}

func writeRecords(w io.Writer, origin time.Time, procs []*Process, json bool) error {
	bw := bufio.NewWriter(w)
	r := textfmt.NewRecords(bw, columns, json)
	for _, p := range procs {
		start, _ := p.Life()
		started := !start.IsZero()
		for _, m := range p.Methods {
			r.Int(p.PID)
			r.String(m.Name)
			r.String("0x" + strconv.FormatUint(m.MethodID, 16))
			r.String(m.TierName())
			r.Float(ms(m.Start.Sub(origin)), 3)
			r.Int(m.ThreadID)
			if m.HasJitTime {
				r.Float(ms(m.JitTime), 3)
			} else {
				r.Int(-1)
			}
			r.Uint(uint64(m.ILSize))
			r.Uint(uint64(m.NativeSize))
			if started {
				r.Float(ms(start.Sub(origin)), 3)
			} else {
				r.Int(-1)
			}
			r.End()
		}
	}
	return bw.Flush()
}

func writeProcessText(w *bufio.Writer, origin time.Time, p *Process, title string, top int) {
	s := p.Summary()
	fmt.Fprintf(w, "%s: %d methods compiled in %s ms (%d timed); %d ReadyToRun methods used\n",
		title, s.All.Count, msString(s.All.JitTime), s.All.Timed, p.ReadyToRun)
	if s.Pending > 0 {
		// Started and never loaded in the trace: the trace ended during
		// the compile, or the load event was lost (or the JIT failed).
		fmt.Fprintf(w, "%s started without the method's load in the trace (it ended first, or the event was lost): not counted\n", numfmt.Count(int64(s.Pending), "compile"))
	}
	tw := textfmt.NewTable("tier", "methods", "jit ms", "IL bytes", "native bytes")
	for _, t := range s.Tiers {
		tw.Row(t.Tier.String(), strconv.Itoa(t.Count), msString(t.JitTime), strconv.FormatUint(t.ILSize, 10), strconv.FormatUint(t.NativeSize, 10))
	}
	tw.Row("all", strconv.Itoa(s.All.Count), msString(s.All.JitTime), strconv.FormatUint(s.All.ILSize, 10), strconv.FormatUint(s.All.NativeSize, 10))
	tw.Flush(w)
	if slow := p.Slowest(top); len(slow) > 0 {
		fmt.Fprintf(w, "\nSlowest %d:\n", len(slow))
		tw = textfmt.NewTable("jit ms", "start ms", "tier", "IL", "native", "method")
		tw.LeftLast = true
		for _, m := range slow {
			tw.Row(msString(m.JitTime), msString(m.Start.Sub(origin)), m.TierName(), strconv.FormatUint(uint64(m.ILSize), 10), strconv.FormatUint(uint64(m.NativeSize), 10), m.Name)
		}
		tw.Flush(w)
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
		tw = textfmt.NewTable("failures", "reason")
		tw.LeftLast = true
		for _, r := range reasons {
			tw.Row(strconv.Itoa(in.Reasons[r]), r)
		}
		tw.Flush(w)
	}
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// msString is d in milliseconds with three decimals, as PerfView shows
// times.
func msString(d time.Duration) string { return strconv.FormatFloat(ms(d), 'f', 3, 64) }
