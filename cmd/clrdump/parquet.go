package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/clrgo/clrevents/dataset"
	"github.com/clrgo/clrevents/trace"
)

// -format parquet: every event of one or many traces into one Parquet
// dataset (package dataset describes the layout).
//
//	clrdump -format parquet -o DIR [-append] [-compression zstd|snappy|none] [-rowgroup N] TRACE...
//
// Each trace is written entirely or not at all (package dataset's
// "Writing, failures and interrupts"). Every path is checked before
// anything is written: one that is not a file writes nothing. A trace
// that fails (it does not read to its end, a file cannot be written)
// leaves nothing in the dataset, and the others go on. On SIGINT or
// SIGTERM the traces being read stop and nothing of them is written; a
// second signal stops at once, and the next run completes or removes
// what that left. When not every trace was written, clrdump ends with a
// line per trace: "written: T" for those this run put in the dataset,
// entirely, "not written: T" for those it wrote nothing of (a trace
// already in the dataset among them). A run that writes nothing leaves
// DIR as it was, not created if it was not there.

type parquetFlags struct {
	appendTo    bool
	compression string
	rowGroup    int
	// interrupt is the context a run stops on; nil means SIGINT and
	// SIGTERM (tests set their own).
	interrupt context.Context
	// workers is how many traces are written at once; 0 means one per
	// processor.
	workers int
	// afterTrace, when set (by tests), is called with each trace's name
	// as soon as its WriteTrace returns.
	afterTrace func(name string)
	// reading: -strict (tests set strict too) and -single-log.
	reading
}

func addParquetFlags(fs *flag.FlagSet) *parquetFlags {
	p := &parquetFlags{}
	fs.BoolVar(&p.appendTo, "append", false, "with -format parquet: add the traces to the dataset already in -o")
	fs.StringVar(&p.compression, "compression", "zstd", "with -format parquet: zstd, snappy or none")
	fs.IntVar(&p.rowGroup, "rowgroup", dataset.DefaultRowGroupRows, fmt.Sprintf("with -format parquet: the most rows in a row group (a trace's tables hold %d MiB of rows at most, so busy tables end theirs sooner)", dataset.DefaultMemoryBudget>>20))
	return p
}

// exitInterrupted is the status after SIGINT, as shells report it.
const exitInterrupted = 130

// run handles -format parquet and returns its exit status, or -1 for the
// other formats.
func (p *parquetFlags) run(fs *flag.FlagSet, format string, rd reading, stderr io.Writer) int {
	if format != "parquet" {
		for _, name := range []string{"append", "compression", "rowgroup"} {
			if isSet(fs, name) {
				fmt.Fprintf(stderr, "clrdump: -%s needs -format parquet\n", name)
				return exitUsage
			}
		}
		return -1
	}
	for _, name := range []string{"profile", "managed-only", "report", "provider", "event", "keyword", "pid", "tid", "n", "stats", "order"} {
		if isSet(fs, name) {
			fmt.Fprintf(stderr, "clrdump: -%s does not apply to -format parquet, which writes every event\n", name)
			return exitUsage
		}
	}
	if p.rowGroup < 1 {
		fmt.Fprintf(stderr, "clrdump: -rowgroup %d: want a number of rows, at least 1\n", p.rowGroup)
		return exitUsage
	}
	switch p.compression {
	case "zstd", "snappy", "none":
	default:
		fmt.Fprintf(stderr, "clrdump: -compression %q: want zstd, snappy or none\n", p.compression)
		return exitUsage
	}
	out := fs.Lookup("o").Value.String() // -o is shared with -profile (profile.go)
	if out == "" || fs.NArg() == 0 {
		fmt.Fprintf(stderr, "usage: clrdump -format parquet -o DIR [-append] TRACE...\n")
		return exitUsage
	}
	// Every path is checked first: a mistyped name among good ones
	// writes nothing, instead of a dataset short of a trace.
	seen := map[string]bool{}
	missing := false
	for _, name := range fs.Args() {
		if name == "-" {
			fmt.Fprintf(stderr, "clrdump: -format parquet reads files, not standard input\n")
			return exitUsage
		}
		if seen[name] {
			fmt.Fprintf(stderr, "clrdump: %s is given twice\n", name)
			return exitUsage
		}
		seen[name] = true
		if fi, err := os.Stat(name); err != nil {
			fmt.Fprintf(stderr, "clrdump: %v\n", err)
			missing = true
		} else if fi.IsDir() {
			fmt.Fprintf(stderr, "clrdump: %s is a directory, not a trace\n", name)
			missing = true
		}
	}
	if missing {
		fmt.Fprintf(stderr, "clrdump: nothing written\n")
		return exitError
	}
	ds, err := dataset.Create(out, dataset.Options{Compression: p.compression, RowGroupRows: p.rowGroup, Append: p.appendTo})
	if err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		if errors.Is(err, dataset.ErrExists) {
			return exitUsage
		}
		return exitError
	}
	for _, name := range ds.Recovered() {
		fmt.Fprintf(stderr, "clrdump: %s: completed the commit of trace %s, begun by a run that stopped (killed, crashed)\n", out, name)
	}
	ctx := p.interrupt
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		// A second signal stops at once: nothing in the dataset is half
		// written, and the next run clears what is left.
		context.AfterFunc(ctx, stop)
	}
	p.strict = p.strict || rd.strict
	p.singleLog = rd.singleLog
	return p.writeDataset(ctx, ds, out, p.withoutSiblings(fs.Args(), stderr), stderr)
}

// withoutSiblings leaves out of names the ETW logs that another of them
// is read with (trace.Siblings: X.kernel.etl beside X.etl), saying so on
// stderr, so that a dataset does not hold their events twice. With
// -single-log every name is read alone, and kept.
func (p *parquetFlags) withoutSiblings(names []string, stderr io.Writer) []string {
	if p.singleLog {
		return names
	}
	readWith := map[string]string{} // a sibling's path: the name it is read with
	for _, name := range names {
		sibs, err := trace.Siblings(name)
		if err != nil {
			continue
		}
		for _, s := range sibs[1:] {
			readWith[filepath.Clean(s)] = name
		}
	}
	if len(readWith) == 0 {
		return names
	}
	var kept []string
	for _, name := range names {
		if with, ok := readWith[filepath.Clean(name)]; ok {
			fmt.Fprintf(stderr, "clrdump: %s: read with %s, the log it lies beside (-single-log reads each alone)\n", name, with)
			continue
		}
		kept = append(kept, name)
	}
	return kept
}

// sideLogClash refuses an ETW log whose events the dataset holds already
// through a log added before, and that another run read as one with it
// (trace.Siblings): X.etl when X.kernel.etl is in the dataset on its
// own, or X.kernel.etl when X.etl (read with it) is. withoutSiblings
// does the same among the names of one run. With -single-log each log is
// read alone, and nothing is refused.
func (p *parquetFlags) sideLogClash(ds *dataset.Dataset, name string) error {
	if p.singleLog {
		return nil
	}
	if sibs, err := trace.Siblings(name); err == nil {
		for _, s := range sibs[1:] {
			if ds.Holds(s) {
				return fmt.Errorf("%s: not added: it is read with %s, which the dataset holds on its own, so that log's events would be in it twice (-single-log adds this log alone)", name, s)
			}
		}
	}
	dir, file := filepath.Split(name)
	lower := strings.ToLower(file)
	for _, kind := range []string{".kernel", ".clr", ".user"} {
		i := strings.Index(lower, kind)
		if i <= 0 || !strings.HasSuffix(lower, ".etl") {
			continue
		}
		primary := filepath.Join(dir, file[:i]+".etl")
		if !ds.Holds(primary) {
			continue
		}
		if sibs, err := trace.Siblings(primary); err == nil && slices.Contains(sibs, filepath.Join(dir, file)) {
			return fmt.Errorf("%s: not added: the dataset holds %s, which was read with it, so its events are in the dataset already (-single-log adds this log alone)", name, primary)
		}
	}
	return nil
}

// writeDataset writes each trace, as many at once as there are
// processors, closes the dataset, and when not every trace was written
// says which were.
func (p *parquetFlags) writeDataset(ctx context.Context, ds *dataset.Dataset, out string, names []string, stderr io.Writer) int {
	var (
		mu      sync.Mutex
		status  = exitOK
		wg      sync.WaitGroup
		next    = make(chan int)
		written = make([]bool, len(names)) // by index, each set by one worker
	)
	report := func(code int, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, format, args...)
		if code > status {
			status = code
		}
	}
	workers := p.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	for range min(workers, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				name := names[i]
				if err := p.sideLogClash(ds, name); err != nil {
					report(exitError, "clrdump: %v\n", err)
					continue
				}
				src, err := trace.Open(name, p.options()...)
				if err != nil {
					report(exitError, "clrdump: %v\n", err)
					continue
				}
				st, err := ds.WriteTrace(ctx, name, src)
				dropped := withDropped(nil, src)
				src.Close()
				if p.afterTrace != nil {
					p.afterTrace(name)
				}
				// WriteTrace's answer is the truth, whenever the
				// interrupt came: nil means the trace is in the dataset.
				switch {
				case err == nil:
					written[i] = true
					// Written with every event that could be read; what
					// the trace lost is still a failure of the run.
					if st.Damage != nil {
						report(exitError, "clrdump: %v (the dataset holds the events read)\n", st.Damage)
					}
					if st.Undecoded != nil {
						report(exitError, "clrdump: %s: %v (rows of generic with an error)\n", name, st.Undecoded)
					}
					if dropped != nil {
						report(exitError, "clrdump: %v\n", dropped)
					}
				case ctx.Err() != nil && errors.Is(err, ctx.Err()):
					// interrupted: the summary says so
				default:
					report(exitError, "clrdump: %v\n", err)
				}
			}
		}()
	}
feed:
	for i := range names {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ds.Close(); err != nil {
		report(exitError, "clrdump: %v\n", err)
	}
	n := 0
	for _, ok := range written {
		if ok {
			n++
		}
	}
	if n == len(names) {
		return status
	}
	interrupted := ctx.Err() != nil
	what := "clrdump: "
	if interrupted {
		what += "interrupted: "
	}
	fmt.Fprintf(stderr, "%s%d of %d traces written to %s, each entirely; this run wrote nothing of the others:\n", what, n, len(names), out)
	for i, name := range names {
		if written[i] {
			fmt.Fprintf(stderr, "clrdump: written: %s\n", name)
		} else {
			fmt.Fprintf(stderr, "clrdump: not written: %s\n", name)
		}
	}
	if interrupted {
		return exitInterrupted
	}
	return exitError
}
