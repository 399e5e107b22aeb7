package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clrgo/clrevents/diagnostics"
	"github.com/clrgo/clrevents/internal/numfmt"
)

func collect(sig *diagnostics.Steps, args []string, stderr io.Writer) error {
	fs := newFlags("collect", stderr)
	pid := fs.Int("p", 0, "process ID")
	spec := fs.String("providers", "", "providers, Name[:Keywords[:Level[:Args]]],…")
	profile := fs.String("profile", "", "named profile: "+strings.Join(diagnostics.ProfileNames(), ", ")+" (cpu-sampling when no -providers)")
	dur := fs.Duration("duration", 0, "stop after this long (0: at SIGINT/SIGTERM or when the process exits)")
	out := fs.String("o", "", "output file")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError{errors.New("-o FILE is required")}
	}
	if *dur < 0 {
		return usageError{fmt.Errorf("-duration %v: a length of time, 0 for none", *dur)}
	}
	cfg, err := diagnostics.CollectConfig(*profile, *spec)
	if err != nil {
		return usageError{err}
	}
	cl, err := client(*pid)
	if err != nil {
		return err
	}
	// The trace goes to a file of its own beside -o, which replaces -o
	// only once some of a trace has come: a session that does not start,
	// or a stream that is no trace, leaves a previous file as it was.
	f, err := createOutput(*out)
	if err != nil {
		return fmt.Errorf("process %d: %w", *pid, err)
	}
	s, err := startSession(sig.Stop, cl, cfg, stderr)
	if err != nil {
		f.Discard()
		return err
	}
	defer s.Close()

	// At -duration or the first signal, stop, then copy the rest (the
	// rundown) until the runtime ends the stream or the drain deadline
	// passes; a signal then quits.
	stop := sig.Stop
	if *dur > 0 {
		var cancel context.CancelFunc
		stop, cancel = context.WithTimeout(stop, *dur)
		defer cancel()
	}
	ending := s.EndOn(stop, sig.Quit, drainTimeout, func() {
		sig.Finishing()
		fmt.Fprintf(stderr, "process %d: stopping; waiting up to %v for the rest of the stream (the rundown); %s\n", *pid, drainTimeout, hint(sig))
	})
	// Copy the stream as it comes, and check its framing on the way: a
	// stream that is not a trace, or goes bad, ends the copy at once.
	res := s.Copy(f)
	ending.Release()
	var se *diagnostics.StreamError
	isSE := errors.As(res.Err, &se)
	kept := fmt.Sprintf("kept the %s read so far in %s", numfmt.Size(res.N), *out)
	if res.N == 0 || isSE && !se.Trace {
		// Nothing of a trace: no reader could use the file.
		f.Discard()
		kept = "nothing was written to " + *out
	} else if err := f.Keep(); err != nil && res.WriteErr == nil {
		res.WriteErr = err
	}
	switch {
	case res.WriteErr != nil:
		return fmt.Errorf("process %d: writing %s after %d bytes: %w", *pid, *out, res.N, res.WriteErr)
	case ending.Quit:
		return fmt.Errorf("process %d: interrupted while waiting for the rest of the stream after StopTracing; %s (without the rundown, method names may be missing)", *pid, kept)
	case res.Err == nil && res.Unchecked != nil:
		fmt.Fprintf(stderr, "clrtrace: process %d: the stream was copied but not checked: %v\n", *pid, res.Unchecked)
	case res.Err == nil:
	case isSE:
		if !se.Trace {
			return fmt.Errorf("process %d: %w; %s", *pid, se, kept)
		}
		how := ""
		if !ending.Stopped && !se.Stopped {
			how = "the runtime ended the session: "
		}
		if se.Stopped {
			// The copy ended at the chunk that held the fault.
			kept += fmt.Sprintf(" (well-formed up to byte %s)", numfmt.Thousands(se.Offset))
		}
		return fmt.Errorf("process %d: %s%w; %s", *pid, how, se, kept)
	case errors.Is(res.Err, diagnostics.ErrDrainTimeout):
		return fmt.Errorf("process %d: the runtime did not end the stream within %v of StopTracing; %s (it ends before the end-of-stream tag)", *pid, drainTimeout, kept)
	default:
		return fmt.Errorf("process %d: reading the stream after %d bytes: %w; %s", *pid, res.N, res.Err, kept)
	}
	if ending.StopErr != nil {
		fmt.Fprintf(stderr, "clrtrace: %s\n", oneLine(ending.StopErr.Error()))
	}
	how := "stopped"
	if !ending.Stopped {
		how = "the runtime ended the session"
	}
	fmt.Fprintf(stderr, "process %d: %s; wrote %d bytes to %s\n", *pid, how, res.N, *out)
	return nil
}
