// Command clrtrace traces running .NET processes over the runtime's
// diagnostics IPC channel, in pure Go.
//
//	clrtrace ps
//	clrtrace collect -p PID [-providers SPEC] [-profile NAME] [-duration D] -o FILE
//	clrtrace watch -p PID [-format text|jsonl] [-provider GLOB] [-event GLOB] [-keyword MASK] [-pid N] [-tid N] [-n N]
//	clrtrace counters -p PID [-interval S]
//	clrtrace serve [-listen ADDR] [-token-file FILE] [-tls-cert F -tls-key F] [-pid PID ...] [-keep-exited D]
//
// ps lists the .NET processes this user can trace: PID and command line.
//
// collect writes the session's nettrace stream to FILE, byte for byte as
// the runtime sends it (clrdump, PerfView and TraceEvent read it), and
// checks its framing on the way (diagnostics.Session.Copy). It ends
// after D, on SIGINT or SIGTERM, or when the process exits: clrtrace then
// sends StopTracing on a new connection and copies the rest of the stream,
// the rundown that resolves method addresses, until the runtime ends it
// (at most 30 s); a second SIGINT or SIGTERM during that wait (or the
// first, after -duration) ends it at once, keeping what came. A stream
// that is not a trace, goes bad, or ends in the middle of a block or
// before its end-of-stream tag is a failure that says what was seen and
// at which byte; the file keeps what was read. The trace is written to a
// new file beside -o, which replaces -o only once some of a trace has
// come: when the session does not start, or none of the stream is a
// trace, a file already at -o is left as it was. -providers takes dotnet-trace's
// Name[:Keywords[:Level[:Args]]] list; -profile one of
// diagnostics.ProfileNames (cpu-sampling, the default); both together
// enable the union, a provider in both with -providers' keywords and
// level (as dotnet-trace takes them). The newest CollectTracing command the request needs
// is tried first; an older runtime that does not know it gets the closest
// older one, and clrtrace says what that loses.
//
// watch prints the events live, as clrdump prints a file (text or JSON
// lines, with clrdump's filters -provider, -event, -keyword, -pid, -tid
// and -n). It enables the runtime provider with dotnet-trace's default
// keywords, plus every provider -provider names without wildcards. Like
// counters, it stops the session at SIGINT or SIGTERM, prints the rest of
// the stream, and quits at once on the next one.
//
// counters prints the System.Runtime EventCounters every S seconds (1 by
// default), as dotnet-counters does (package counters); more often when
// another session on the process asked a shorter interval, which the
// runtime then reports at for every session.
//
// serve is an always-on collector of every .NET process it finds (package
// monitor, whose doc lists the endpoints and access rules), until SIGINT
// or SIGTERM.
//
// Every failure is one line on stderr naming the process and what
// happened, and exit status 1; usage errors exit 2.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	// The CLR's event types: registered, they are the tables the trace
	// readers decode with (watch).
	_ "github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/counters"
	"github.com/clrgo/clrevents/diagnostics"
	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/monitor"
	"github.com/clrgo/clrevents/trace"
)

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	os.Exit(run(sigs, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  clrtrace ps
  clrtrace collect -p PID [-providers SPEC] [-profile NAME] [-duration D] -o FILE
  clrtrace watch -p PID [-format text|jsonl] [-provider GLOB] [-event GLOB] [-keyword MASK] [-pid N] [-tid N] [-n N]
  clrtrace counters -p PID [-interval S]
  clrtrace serve [-listen ADDR] [-token-file FILE] [-tls-cert F -tls-key F] [-pid PID ...] [-keep-exited D]
`

// Timeouts: a command's answer, and the rundown after a stop (a variable
// for tests).
const commandTimeout = 10 * time.Second

var drainTimeout = 30 * time.Second

// run is the command; sigs delivers SIGINT and SIGTERM (nil: none).
func run(sigs <-chan os.Signal, args []string, stdout, stderr io.Writer) int {
	// The first SIGINT or SIGTERM asks the command to finish (stop the
	// session and take the rest of the stream, the rundown), the next to
	// quit at once, as Go's tools do; once a command finishes on its own
	// (-duration, -n) the first quits.
	sig := diagnostics.NewSteps(sigs)
	defer sig.Release()
	ctx := sig.Stop
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "ps":
		if len(args) > 1 {
			fmt.Fprint(stderr, usage)
			return 2
		}
		err = ps(ctx, stdout, stderr)
	case "collect":
		err = collect(sig, args[1:], stderr)
	case "watch":
		err = watch(sig, args[1:], stdout, stderr)
	case "counters":
		err = showCounters(sig, args[1:], stdout, stderr)
	case "serve":
		err = serve(sig.Stop, args[1:], stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "clrtrace: unknown command %q\n%s", args[0], usage)
		return 2
	}
	var ue usageError
	var pe flagParseError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &pe):
		return 2 // the flag package printed it, with the usage
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "clrtrace %s: %v\n", args[0], ue.error)
		return 2
	}
	fmt.Fprintf(stderr, "clrtrace: %s\n", oneLine(err.Error()))
	return 1
}

type usageError struct{ error }

// flagParseError is a usage error the flag package has already printed.
type flagParseError struct{ error }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("clrtrace "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return flagParseError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// client finds process pid's endpoint.
func client(pid int) (*diagnostics.Client, error) {
	if pid <= 0 {
		return nil, usageError{errors.New("-p PID is required")}
	}
	return diagnostics.NewClient(pid)
}

func ps(ctx context.Context, stdout, stderr io.Writer) error {
	procs, err := diagnostics.Processes()
	if err != nil {
		return fmt.Errorf("listing processes: %w", err)
	}
	if len(procs) == 0 {
		// Nothing on stdout, so that scripts see an empty list; a person
		// sees why.
		fmt.Fprintln(stderr, "clrtrace: no .NET process with a diagnostic socket found (looked in each process's TMPDIR, ours and /tmp)")
	}
	for _, p := range procs {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		info, err := diagnostics.NewClientAddress(p.PID, p.Address).ProcessInfo(c)
		cancel()
		if err != nil {
			fmt.Fprintf(stdout, "%7d  (no answer: %s)\n", p.PID, oneLine(err.Error()))
			continue
		}
		fmt.Fprintf(stdout, "%7d  %s\n", p.PID, info.CommandLine)
	}
	return nil
}

// startSession starts cfg on pid and reports on stderr what was started.
func startSession(ctx context.Context, cl *diagnostics.Client, cfg diagnostics.SessionConfig, stderr io.Writer) (*diagnostics.Session, error) {
	c, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	s, err := cl.StartSession(c, cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "process %d: %v\n", cl.PID(), s)
	return s, nil
}

// hint is what to press to quit now.
func hint(sig *diagnostics.Steps) string {
	if sig.Stop.Err() != nil {
		return "^C again to quit now"
	}
	return "^C to quit now"
}

func watch(sig *diagnostics.Steps, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("watch", stderr)
	pid := fs.Int("p", 0, "process ID")
	format := fs.String("format", "text", "output: text or jsonl")
	f := eventfmt.AddFilterFlags(fs)
	fs.Lookup("provider").Usage += "; a name without wildcards is also enabled in the session"
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format != "text" && *format != "jsonl" {
		return usageError{fmt.Errorf("-format %q: text or jsonl", *format)}
	}
	if err := f.Parse(); err != nil {
		return usageError{err}
	}
	cl, err := client(*pid)
	if err != nil {
		return err
	}
	var named []string // providers -provider names without wildcards
	for _, name := range strings.Split(f.Provider, ",") {
		if name != "" && !strings.ContainsAny(name, "*?[") {
			named = append(named, name)
		}
	}
	ls, err := liveSession(sig, cl, diagnostics.WatchConfig(named...), stderr)
	if err != nil {
		return err
	}
	r := ls.r
	p := eventfmt.Printer{Filter: f.Filter, Format: *format, Limit: f.Limit}
	var buf []byte
	var dropped uint64
	var werr error // the first error writing stdout
	err = each(r, func(e *trace.Event) bool {
		if d := r.Dropped(); d != dropped {
			// Say so as it happens: the output has gaps from here.
			dropped = d
			fmt.Fprintf(stderr, "clrtrace: process %d: the runtime has dropped %d events so far (its buffer was full)\n", *pid, d)
		}
		dec, ok := p.Keep(e)
		if !ok {
			return true
		}
		// A write per event, so that a live session shows at once.
		buf = p.Append(buf[:0], e, &dec)
		if werr == nil {
			_, werr = stdout.Write(buf)
		}
		if p.Done() {
			sig.Finishing()
			c, cancel := context.WithTimeout(context.Background(), commandTimeout)
			ls.s.Stop(c, drainTimeout) // then the rest of the stream, the rundown
			cancel()
			return false
		}
		return true
	})
	var damage *trace.DamageError
	if err = ls.end(err); err != nil && !errors.As(err, &damage) {
		return err
	}
	if werr != nil {
		return fmt.Errorf("process %d: %w", *pid, werr)
	}
	fmt.Fprintf(stderr, "process %d: %d events printed, %d dropped by the runtime\n", *pid, p.Printed, r.Dropped())
	// Damage the reader skipped, and events that did not decode: the
	// stream was printed, but not all of it.
	if lost := errors.Join(err, p.Undecoded.Err()); lost != nil { // err: nil or the damage
		return errors.New(strings.ReplaceAll(lost.Error(), "\n", "; ")) // each names the session
	}
	return nil
}

func showCounters(sig *diagnostics.Steps, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("counters", stderr)
	pid := fs.Int("p", 0, "process ID")
	interval := fs.Float64("interval", 1, "seconds between reports")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *interval <= 0 {
		return usageError{fmt.Errorf("-interval %v: must be more than 0", *interval)}
	}
	cl, err := client(*pid)
	if err != nil {
		return err
	}
	ls, err := liveSession(sig, cl, diagnostics.CountersConfig(*interval), stderr)
	if err != nil {
		return err
	}
	p := counters.NewPrinter(stdout)
	var perr error // the first error writing stdout
	err = each(ls.r, func(e *trace.Event) bool {
		c, err := counters.Decode(e)
		switch {
		case errors.Is(err, counters.ErrNotCounters):
		case err != nil:
			fmt.Fprintf(stderr, "clrtrace: process %d: %s\n", *pid, oneLine(err.Error()))
		case perr == nil:
			perr = p.Print(&c)
		}
		return true
	})
	if err := ls.end(err); err != nil {
		return err
	}
	return perr
}

// live is a session and its live reader.
type live struct {
	pid    int
	s      *diagnostics.Session
	r      *trace.Reader
	ending *diagnostics.Ending
}

// liveSession starts cfg and opens its live reader; at the first SIGINT
// or SIGTERM it stops the session, and the reader then gets the rundown
// and the end of the stream; at the next it closes the session at once.
// The signals are watched from the session's start: a runtime that has
// not begun the stream (one suspended at startup begins it only once
// resumed) is stopped, and quit, while the reader waits for it. end
// releases it all.
func liveSession(sig *diagnostics.Steps, cl *diagnostics.Client, cfg diagnostics.SessionConfig, stderr io.Writer) (*live, error) {
	s, err := startSession(sig.Stop, cl, cfg, stderr)
	if err != nil {
		return nil, err
	}
	l := &live{pid: cl.PID(), s: s}
	l.ending = s.EndOn(sig.Stop, sig.Quit, drainTimeout, func() {
		fmt.Fprintf(stderr, "process %d: stopping; waiting up to %v for the end of the stream; %s\n", l.pid, drainTimeout, hint(sig))
	})
	l.r, err = s.ReaderContext(sig.Quit)
	if err != nil {
		l.ending.Release()
		s.Close()
		if l.ending.Quit {
			return nil, fmt.Errorf("process %d: interrupted while waiting for the stream to begin", l.pid)
		}
		return nil, err
	}
	return l, nil
}

// end turns the error that ended the stream into the one to report, and
// releases the session.
func (l *live) end(err error) error {
	l.ending.Release()
	l.r.Close()
	l.s.Close()
	if l.ending.Quit {
		return fmt.Errorf("process %d: interrupted while waiting for the end of the stream", l.pid)
	}
	if !l.ending.Stopped && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, trace.ErrEmpty)) {
		// Not stopped here, and cut: the process ended it, as one that
		// exits does (collect says the same).
		return fmt.Errorf("%w; the runtime ended the session before the stream's end: the process exited?", err)
	}
	return err
}

// each calls fn for every event until the end of the stream or until fn
// returns false.
func each(r *trace.Reader, fn func(*trace.Event) bool) error {
	for {
		e, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !fn(e) {
			return nil
		}
	}
}

// serve runs the collector (package monitor) until ctx ends.
func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	var c monitor.Config
	c.AddFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	return c.Serve(ctx, func(f string, v ...any) { fmt.Fprintf(stderr, "clrtrace: %s\n", oneLine(fmt.Sprintf(f, v...))) })
}
