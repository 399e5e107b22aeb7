// Command clrdump decodes a .NET runtime trace: an EventPipe file
// (.nettrace, .netperf) or a Windows ETW log (.etl), zipped or not. CLR
// events decode through the generated clrevents package; EventSource events
// decode from the trace's own metadata (an ETW log's also from the
// manifests its EventSources logged, and manifest-based Windows providers
// from the descriptions a merge adds); the kernel's events by their MOF
// layouts; anything else prints its payload in hex.
//
// Usage:
//
//	clrdump [flags] FILE
//	clrdump [flags] -            (standard input: a pipe, zips included)
//
// Output formats (-format):
//
//	text   one event a line: time, provider/event, pid/tid, then Name=value fields
//	jsonl  one JSON object a line (see below)
//	csv    long form, one row per field: index,time,provider,event,id,version,pid,tid,field,value
//	       (an event without fields has one row with field and value empty)
//	parquet  clrdump -format parquet -o DIR [-append] TRACE...: a Parquet dataset
//	       of one or many traces (see parquet.go and package dataset)
//
// Each JSON line has these keys, always of the same JSON type:
//
//	time              string, RFC 3339 UTC with nanoseconds (nine digits)
//	provider, event   strings: the provider's name (its GUID when unknown) and
//	                  the event's name ("id5/v0" when neither the schema nor the
//	                  trace names it)
//	id, version       numbers
//	task, opcode, level
//	                  numbers, from the trace or else the schema; 0 when unknown
//	keywords          string, hex ("0x8000000001"): a 64-bit mask
//	pid, tid          numbers; -1 when the trace does not say
//	cpu               number; only where the trace records the processor
//	size              number: payload bytes
//	activity, related_activity
//	                  strings (GUIDs); only when the event has them
//	fields            object: the decoded payload (CLR events, EventSource
//	                  events, events an ETW log describes itself, and the
//	                  kernel events package etl knows; {} for an EventSource
//	                  event declared without arguments), or
//	                  {"payload":"0x…"} for an event nothing describes;
//	                  after the payload's fields, the values TraceEvent
//	                  derives for a kernel event from the log's others
//	                  (trace.Event.AppendDerived: a file operation's,
//	                  disk I/O's or hard fault's FileName, a registry
//	                  event's KeyHandleName, a context switch's
//	                  OldProcessID and OldProcessName, a ready thread's
//	                  AwakenedProcessID), in text and CSV too
//	extra             string, hex: payload bytes past the template (a newer
//	                  runtime's fields); only when there are some
//	error, payload    strings: why the payload did not decode, and its bytes in
//	                  hex; then there is no "fields"
//
// Inside "fields", each field of an event type always has the same JSON
// type: integers are numbers (64-bit ones too, written exactly in decimal:
// parse them as 64-bit integers, not as float64, which is exact only to
// 2^53); fields the manifest shows in hex (addresses, IDs, handles) and
// keyword masks are "0x…" strings, since they are identities, not
// quantities; enums and flags are strings of their names ("Induced",
// "Pinning|WeakRef"), with unknown values in hex; strings are strings;
// GUIDs are strings; booleans are true/false; arrays are arrays and
// structs objects. EventSource events and the events an ETW log describes
// follow their descriptions' types, with the same rules, but for one: a
// float JSON has no number for (NaN, an infinity) is null in a CLR event
// and the string "NaN", "+Inf" or "-Inf" in a described one (as
// TraceEvent shows those), so a described float field is a number or
// one of those strings.
//
// -stats prints, instead, the count and payload bytes of each event type;
// -profile builds a profile and -report a GC or JIT report (see profile.go
// and report.go for their flags and output).
// Events come in timestamp order, as TraceEvent gives them; -order file
// keeps an EventPipe file's stored order (cheaper: nothing is held back).
//
// A damaged trace loses only what the damage touched: every mode (events,
// -stats, -profile, -report, -format parquet) writes its whole output from
// the events that could be read, then says on standard error what was
// lost: the damaged ranges skipped (the first in full, with its offset),
// the events that did not decode (the first few in full, naming the
// event and its offset, then a count), and the events the trace's writer
// dropped (the runtime, its session's buffer full; an ETW session, as its
// log header counts them), which are not in the trace at all. -strict
// stops at the first damage instead, as a reader that does not
// resynchronise would: the block the damage (or the input's end) falls
// in is not read, the events before the fault in it with it.
//
// Exit status: 0 when the whole trace was read and every event decoded; 1
// when something was lost or failed (after writing what could be: partial
// success is not success); 2 for a usage error.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	// The CLR's event types: registered, they are the tables the trace
	// readers decode with.
	_ "github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/internal/heapfloor"
	"github.com/clrgo/clrevents/trace"
)

const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// heapFloor is the heap clrdump lets grow before its garbage collector
// collects (see heapfloor): an export's or a report's live heap settles
// at 10–20 MB, and collecting from 4 MB on spent a tenth of a small
// trace's Parquet export in the collector.
const heapFloor = 32 << 20

func main() {
	heapfloor.Set(heapFloor)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, isTerminal(os.Stderr)))
}

type options struct {
	format   string
	stats    bool
	order    string
	progress bool
	reading
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, progress bool) int {
	fs := flag.NewFlagSet("clrdump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.format, "format", "text", "output: text, jsonl, csv or parquet (with -o)")
	ff := eventfmt.AddFilterFlags(fs)
	fs.BoolVar(&o.stats, "stats", false, "print counts and payload bytes per event type instead of events")
	fs.StringVar(&o.order, "order", "time", "event order: time (by timestamp, as TraceEvent gives them) or file (as stored)")
	fs.BoolVar(&o.strict, "strict", false, "stop at the first damage in the trace instead of reading on past it (the damaged block is not read)")
	fs.BoolVar(&o.singleLog, "single-log", false, "read an ETL file alone: not with the logs beside it (X.kernel*.etl, X.clr*.etl, X.user*.etl for X.etl) that are otherwise read with it, merged by time, as TraceEvent reads them (an archive holding several logs is read whole either way)")
	pf := addProfileFlags(fs)
	rf := addReportFlags(fs)
	pq := addParquetFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: clrdump [flags] FILE|-\n\nDecodes a .nettrace, .netperf or .etl trace (or a .zip or .gz holding one);\n- reads standard input.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if err := ff.CheckNumbers(); err != nil {
		// Every mode reads -n (events, report rows) and -pid.
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitUsage
	}
	if err := checkModes(fs, o); err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitUsage
	}
	if code := pq.run(fs, o.format, o.reading, stderr); code >= 0 {
		return code
	}
	if code := rf.run(fs, reportOptions{format: o.format, out: pf.out, pid: ff.PID, top: ff.Limit, topIsSet: isSet(fs, "n"), reading: o.reading}, stdin, stdout, stderr); code >= 0 {
		return code
	}
	if code := pf.run(fs, o.format, ff.PID, o.reading, stdin, stdout, stderr); code >= 0 {
		return code
	}
	if !oneTrace(fs, stderr) {
		return exitUsage
	}
	switch o.format {
	case "text", "jsonl", "csv":
	default:
		fmt.Fprintf(stderr, "clrdump: unknown -format %q (want text, jsonl, csv, or parquet with -o DIR)\n", o.format)
		return exitUsage
	}
	if err := ff.Parse(); err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitUsage
	}
	order := trace.TimeOrder
	switch o.order {
	case "time":
	case "file":
		order = trace.FileOrder
	default:
		fmt.Fprintf(stderr, "clrdump: unknown -order %q (want time or file)\n", o.order)
		return exitUsage
	}
	o.progress = progress

	src, err := o.open(fs.Arg(0), stdin, trace.WithOrder(order))
	if err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	defer src.Close()
	switch {
	case order == trace.FileOrder && src.Format() == trace.ETL && streamed(fs.Arg(0)):
		fmt.Fprintf(stderr, "clrdump: %s: an ETW log read from a stream in file order is read once, front to back: events before what the log tells later (its providers' descriptions, its threads' processes) are printed without it; read the file itself, or in time order\n", src.Name())
	case order == trace.FileOrder && src.Order() != trace.FileOrder:
		fmt.Fprintf(stderr, "clrdump: %s: an ETW log read from a file is read in time order (-order file applies to EventPipe traces, and to a log read from a pipe): its processors' buffers are merged so that each event has the process and description the log gives before it\n", src.Name())
	}
	w := bufio.NewWriterSize(stdout, 1<<16)
	d := &dumper{o: o, p: eventfmt.Printer{Filter: ff.Filter, Format: o.format, Limit: ff.Limit}, w: w, stderr: stderr}
	status := d.dump(src)
	if err := w.Flush(); err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		return exitError
	}
	return status
}

// oneTrace reports whether the command line names one trace after the
// flags; if not, it says why (a flag after the trace, which the flag
// package leaves as an argument, or more than one trace) and prints the
// usage.
func oneTrace(fs *flag.FlagSet, stderr io.Writer) bool {
	if fs.NArg() == 1 {
		return true
	}
	if fs.NArg() > 1 {
		why := fmt.Sprintf("one trace at a time, not %d (-format parquet -o DIR takes many)", fs.NArg())
		for _, a := range fs.Args()[1:] {
			if len(a) > 1 && a[0] == '-' {
				why = fmt.Sprintf("flags go before the trace: %s comes after %s", a, fs.Arg(0))
				break
			}
		}
		fmt.Fprintf(stderr, "clrdump: %s\n", why)
	}
	fs.Usage()
	return false
}

// checkModes reports flags that ask for two things at once: -profile,
// -report and -stats each say what clrdump does instead of printing
// events, and -stats prints its table as text only.
func checkModes(fs *flag.FlagSet, o options) error {
	var modes []string
	for _, name := range []string{"profile", "report", "stats"} {
		if isSet(fs, name) {
			modes = append(modes, "-"+name)
		}
	}
	if len(modes) > 1 {
		return fmt.Errorf("%s each choose what clrdump does: give one", strings.Join(modes, " and "))
	}
	if o.stats && isSet(fs, "format") && o.format != "text" && o.format != "parquet" {
		return fmt.Errorf("-stats prints a text table: -format %s does not apply", o.format)
	}
	// The event filters choose which events are printed: a profile or a
	// report is built from every event (a model needs them all), so a
	// filter there would be ignored; -pid picks its processes.
	if len(modes) == 1 && modes[0] != "-stats" {
		for _, name := range []string{"provider", "event", "keyword", "tid"} {
			if isSet(fs, name) {
				return fmt.Errorf("-%s chooses the events printed; %s is built from every event (-pid picks the process)", name, modes[0])
			}
		}
		if modes[0] == "-profile" && isSet(fs, "n") {
			return fmt.Errorf("-n limits the events printed; -profile is built from every event")
		}
	}
	return nil
}

type dumper struct {
	o      options
	p      eventfmt.Printer
	stats  eventfmt.Stats
	w      *bufio.Writer
	stderr io.Writer
	read   int64
	// pidSeen: an event read gave its process (a trace may record
	// none: -pid then matches nothing, for that reason).
	pidSeen bool
}

func (d *dumper) dump(src *trace.Reader) int {
	var lastProgress time.Time
	var readErr error
	for {
		e, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		d.read++
		if !d.pidSeen && e.ProcessID() >= 0 {
			d.pidSeen = true
		}
		if d.o.progress && d.read%4096 == 0 && time.Since(lastProgress) > 250*time.Millisecond {
			lastProgress = time.Now()
			fmt.Fprintf(d.stderr, "\r%d events, offset %.1f MB", d.read, float64(e.Offset())/1e6)
		}
		dec, ok := d.p.Keep(e)
		switch {
		case !ok:
			continue
		case d.o.stats:
			d.stats.Add(e, &dec)
		default:
			d.w.Write(d.p.Append(d.out(), e, &dec))
		}
		if d.p.Done() {
			break
		}
	}
	d.clearProgress()
	if d.o.stats {
		d.stats.WriteTo(d.w)
	} else if d.p.Printed == 0 && d.p.Format == "csv" {
		d.w.WriteString(eventfmt.CSVHeader) // a table without rows, not nothing
	}
	if d.p.Printed == 0 && d.read > 0 {
		switch f := d.p.Filter.String(); {
		case d.p.Filter.PID >= 0 && !d.pidSeen:
			fmt.Fprintf(d.stderr, "clrdump: none of the %d events read matched %s: the trace records no process IDs (every event's pid is -1, as in a .NET Core 2.0 trace's)\n", d.read, f)
		case f != "":
			fmt.Fprintf(d.stderr, "clrdump: none of the %d events read matched %s; -stats lists the trace's events by name\n", d.read, f)
		}
	}
	// The whole output first, then what the trace lost (what its writer
	// dropped too, when the output was to hold every event).
	d.w.Flush()
	lost := errors.Join(readErr, d.p.Undecoded.Err())
	if !d.p.Done() {
		lost = withDropped(lost, src)
	}
	return reportLost(d.stderr, lost)
}

// out is the output buffer's free space, for one event's output to be
// built in place and handed to Write at once (bufio.Writer's
// AvailableBuffer): the bytes are copied once, not built elsewhere and
// copied in. It flushes first when too little is left for an event, so
// that appending rarely outgrows it.
func (d *dumper) out() []byte {
	if d.w.Available() < 16<<10 {
		d.w.Flush()
	}
	return d.w.AvailableBuffer()
}

func (d *dumper) clearProgress() {
	if d.o.progress && d.read >= 4096 {
		fmt.Fprintf(d.stderr, "\r%60s\r", "")
	}
}

// streamed reports whether the trace named name is read as a stream,
// once, front to back: standard input, or a file that is not a regular
// one (a FIFO).
func streamed(name string) bool {
	if name == "-" {
		return true
	}
	fi, err := os.Stat(name)
	return err == nil && !fi.Mode().IsRegular()
}
