package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/clrgo/clrevents/gcstats"
	"github.com/clrgo/clrevents/internal/feed"
	"github.com/clrgo/clrevents/jitstats"
	"github.com/clrgo/clrevents/trace"
)

// Reports (-report):
//
//	clrdump -report gc|jit [-format text|jsonl|csv|html] [-o FILE] [-pid N] [-n N] TRACE
//
// computes the runtime's GC or JIT activity per process (packages gcstats
// and jitstats) instead of printing events, and writes it with their
// writers: text is a readable table (gcstats.WriteText, jitstats.WriteText;
// for jit, -n sets how many of the slowest methods it lists, 10 by
// default); jsonl is one object per GC or per compiled method, with the
// keys gcstats.Columns and jitstats.Columns list; csv the same as rows
// with a header; html (gc only) a self-contained page with the pause
// timeline and the heap over time (gcstats.WriteHTML). A trace without the
// events is an error that names the keyword to record
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
	reading
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
	if o.topIsSet && (rf.kind != "jit" || o.format != "text") {
		// -n is the number of slowest methods jit's text report lists.
		fmt.Fprintf(stderr, "clrdump: -n does not apply to -report %s -format %s (it is the number of slowest methods -report jit lists in text)\n", rf.kind, o.format)
		return exitUsage
	}
	if !oneTrace(fs, stderr) {
		return exitUsage
	}
	if err := checkOut(o.out); err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	src, err := o.open(fs.Arg(0), stdin)
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
		lost = withDropped(without(err, gcstats.ErrNoEvents), src)
		procs := slices.DeleteFunc(a.Processes(), func(p *gcstats.Process) bool { return o.pid >= 0 && p.PID != o.pid })
		if len(procs) == 0 {
			fmt.Fprintf(stderr, "clrdump: %s%s: %v\n", src.Name(), pidNote(o.pid), feed.NoneRead(a.Missing(o.pid), lost))
			reportLost(stderr, lost)
			return exitError
		}
		write = func(w *bufio.Writer) error {
			switch o.format {
			case "html":
				return gcstats.WriteHTML(w, a.Origin(), procs, src.Name())
			case "jsonl":
				return gcstats.WriteJSONLines(w, a.Origin(), procs)
			case "csv":
				return gcstats.WriteCSV(w, a.Origin(), procs)
			}
			return gcstats.WriteText(w, a.Origin(), procs)
		}
	case "jit":
		a, err := jitstats.Read(src)
		lost = withDropped(without(err, jitstats.ErrNoEvents), src)
		procs := slices.DeleteFunc(a.Processes(), func(p *jitstats.Process) bool { return o.pid >= 0 && p.PID != o.pid })
		if len(procs) == 0 {
			fmt.Fprintf(stderr, "clrdump: %s%s: %v\n", src.Name(), pidNote(o.pid), feed.NoneRead(a.Missing(o.pid), lost))
			reportLost(stderr, lost)
			return exitError
		}
		top := 10
		if o.topIsSet {
			top = o.top
		}
		write = func(w *bufio.Writer) error {
			switch o.format {
			case "jsonl":
				return jitstats.WriteJSONLines(w, a.Origin(), procs)
			case "csv":
				return jitstats.WriteCSV(w, a.Origin(), procs)
			}
			return jitstats.WriteText(w, a.Origin(), procs, top)
		}
	}
	if err := writeOut(o.out, stdout, write); err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	return reportLost(stderr, lost)
}

// reading holds the flags every mode reads traces with.
type reading struct {
	strict    bool // -strict: stop at the first damage
	singleLog bool // -single-log: an ETL file without the logs beside it
}

// options returns the trace options of the flags, after opts.
func (rd reading) options(opts ...trace.Option) []trace.Option {
	if rd.strict {
		opts = append(opts, trace.WithStrict())
	}
	if rd.singleLog {
		opts = append(opts, trace.WithSingleLog())
	}
	return opts
}

// open opens the trace at name, or reads standard input for "-".
func (rd reading) open(name string, stdin io.Reader, opts ...trace.Option) (*trace.Reader, error) {
	opts = rd.options(opts...)
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

// writeOut runs write on a buffered standard output, or on the file out
// ("-" is standard output), which it creates and closes; a write error
// names the file.
func writeOut(out string, stdout io.Writer, write func(*bufio.Writer) error) error {
	w, closeOut := stdout, func() error { return nil }
	if out != "" && out != "-" {
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

// checkOut returns an error when the file -o names cannot be made, before
// a trace is read for it: its folder is missing or not a folder, or it is
// a folder itself. (Whether it can be written is known when it is made.)
func checkOut(out string) error {
	if out == "" || out == "-" {
		return nil
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return fmt.Errorf("-o %s: is a directory", out)
	}
	dir := filepath.Dir(out)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("-o %s: %w", out, err)
	case !fi.IsDir():
		return fmt.Errorf("-o %s: %s is not a directory", out, dir)
	}
	return nil
}
