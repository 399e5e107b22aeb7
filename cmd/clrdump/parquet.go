package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"

	"github.com/clrgo/clrevents/dataset"
	"github.com/clrgo/clrevents/trace"
)

// -format parquet: every event of one or many traces into one Parquet
// dataset (package dataset describes the layout).
//
//	clrdump -format parquet -o DIR [-append] [-compression zstd|snappy|none] [-rowgroup N] TRACE...

type parquetFlags struct {
	appendTo    bool
	compression string
	rowGroup    int
	// interrupt is the context a run stops on; nil means SIGINT and
	// SIGTERM (tests set their own).
	interrupt context.Context
}

func addParquetFlags(fs *flag.FlagSet) *parquetFlags {
	p := &parquetFlags{}
	fs.BoolVar(&p.appendTo, "append", false, "with -format parquet: add the traces to the dataset already in -o")
	fs.StringVar(&p.compression, "compression", "zstd", "with -format parquet: zstd, snappy or none")
	fs.IntVar(&p.rowGroup, "rowgroup", dataset.DefaultRowGroupRows, "with -format parquet: rows per row group (bounds memory per table)")
	return p
}

// exitInterrupted is the status after SIGINT, as shells report it.
const exitInterrupted = 130

// run handles -format parquet and returns its exit status, or -1 for the
// other formats.
func (p *parquetFlags) run(fs *flag.FlagSet, format string, stderr io.Writer) int {
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
	out := fs.Lookup("o").Value.String() // -o is shared with -profile (profile.go)
	if out == "" || fs.NArg() == 0 {
		fmt.Fprintf(stderr, "usage: clrdump -format parquet -o DIR [-append] TRACE...\n")
		return exitUsage
	}
	for _, name := range fs.Args() {
		if name == "-" {
			fmt.Fprintf(stderr, "clrdump: -format parquet reads files, not standard input\n")
			return exitUsage
		}
	}
	ds, err := dataset.Create(out, dataset.Options{Compression: p.compression, RowGroupRows: p.rowGroup, Append: p.appendTo})
	if err != nil {
		fmt.Fprintf(stderr, "clrdump: %v\n", err)
		if errors.Is(err, dataset.ErrExists) {
			return exitUsage
		}
		return exitError
	}
	ctx := p.interrupt
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	return writeDataset(ctx, ds, fs.Args(), stderr)
}

// writeDataset writes each trace, as many at once as there are
// processors.
func writeDataset(ctx context.Context, ds *dataset.Dataset, names []string, stderr io.Writer) int {
	var (
		mu     sync.Mutex
		status = exitOK
		wg     sync.WaitGroup
		next   = make(chan string)
	)
	report := func(code int, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, format, args...)
		if code > status {
			status = code
		}
	}
	for range min(runtime.GOMAXPROCS(0), len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range next {
				src, err := trace.Open(name)
				if err != nil {
					report(exitError, "clrdump: %v\n", err)
					continue
				}
				st, err := ds.WriteTrace(ctx, name, src)
				src.Close()
				switch {
				case ctx.Err() != nil:
					return
				case err != nil:
					report(exitError, "clrdump: %v\n", err)
				case st.DecodeErrors > 0:
					report(exitError, "clrdump: %s: %d events did not decode (rows of generic with an error)\n", name, st.DecodeErrors)
				}
			}
		}()
	}
feed:
	for _, name := range names {
		select {
		case next <- name:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "clrdump: interrupted: the traces not finished were not written\n")
		return exitInterrupted
	}
	return status
}
