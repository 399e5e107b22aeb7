package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/clrgo/clrevents/internal/numfmt"

	"github.com/clrgo/clrevents/diagnostics"
	"github.com/clrgo/clrevents/nettrace"
)

func collect(sig *signals, args []string, stderr io.Writer) error {
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
	var cfg diagnostics.SessionConfig
	if *profile != "" || *spec == "" {
		name := *profile
		if name == "" {
			name = "cpu-sampling"
		}
		c, err := diagnostics.Profile(name)
		if err != nil {
			return usageError{err}
		}
		cfg = c
	}
	if *spec != "" {
		ps, err := diagnostics.ParseProviders(*spec)
		if err != nil {
			return usageError{err}
		}
		cfg.Providers = append(cfg.Providers, ps...)
	}
	cl, err := client(*pid)
	if err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return fmt.Errorf("process %d: %w", *pid, err)
	}
	s, err := startSession(sig.stop, cl, cfg, stderr)
	if err != nil {
		f.Close()
		os.Remove(*out)
		return err
	}
	defer s.Close()

	// Copy the stream as it comes, and check its framing on the way: a
	// stream that is not a trace, or goes bad, ends the copy at once.
	var chk nettrace.Checker
	done := make(chan copied, 1)
	go func() { done <- copyStream(f, s, &chk) }()
	var timer <-chan time.Time
	if *dur > 0 {
		t := time.NewTimer(*dur)
		defer t.Stop()
		timer = t.C
	}
	var res copied
	finished, stopped, quit := false, false, false
	var stopErr error
	select {
	case <-sig.stop.Done():
	case <-timer:
	case res = <-done:
		finished = true
	}
	if !finished {
		// Stop, then copy the rest (the rundown) until the runtime ends
		// the stream or the drain deadline passes; a signal now quits.
		stopped = true
		sig.finishing()
		fmt.Fprintf(stderr, "process %d: stopping; waiting up to %v for the rest of the stream (the rundown); %s\n", *pid, drainTimeout, sig.hint())
		stopErr = stopSession(sig.quit, s)
		select {
		case res = <-done:
		default:
			select {
			case res = <-done:
			case <-sig.quit.Done():
				quit = true
				s.Close() // ends the copy now
				res = <-done
			}
		}
	}
	if err := f.Close(); err != nil && res.writeErr == nil {
		res.writeErr = err
	}
	kept := fmt.Sprintf("kept the %s read so far in %s", size(res.n), *out)
	switch {
	case res.writeErr != nil:
		return fmt.Errorf("process %d: writing %s after %d bytes: %w", *pid, *out, res.n, res.writeErr)
	case quit:
		return fmt.Errorf("process %d: interrupted while waiting for the rest of the stream after StopTracing; %s (without the rundown, method names may be missing)", *pid, kept)
	case res.end == io.EOF && res.unchecked != nil:
		fmt.Fprintf(stderr, "clrtrace: process %d: the stream was copied but not checked: %v\n", *pid, res.unchecked)
	case res.end == io.EOF:
		res.end = chk.Close()
		if res.end == nil {
			break
		}
		fallthrough
	case res.bad:
		var ce *nettrace.CheckError
		if !errors.As(res.end, &ce) {
			return fmt.Errorf("process %d: %w", *pid, res.end)
		}
		if chk.Version() == 0 && !errors.Is(ce, nettrace.ErrUnsupported) {
			// Nothing of a trace: no reader can use the file.
			os.Remove(*out)
			return fmt.Errorf("process %d: %w; removed %s", *pid, ce, *out)
		}
		how := ""
		if !stopped && !res.bad {
			how = "the runtime ended the session: "
		}
		if res.bad {
			// The copy ended at the chunk that held the fault.
			kept += fmt.Sprintf(" (well-formed up to byte %s)", numfmt.Thousands(ce.Offset))
		}
		return fmt.Errorf("process %d: %s%w; %s", *pid, how, ce, kept)
	case errors.Is(res.end, diagnostics.ErrDrainTimeout):
		return fmt.Errorf("process %d: the runtime did not end the stream within %v of StopTracing; %s (it ends before the end-of-stream tag)", *pid, drainTimeout, kept)
	default:
		return fmt.Errorf("process %d: reading the stream after %d bytes: %w; %s", *pid, res.n, res.end, kept)
	}
	if stopErr != nil && stopped {
		fmt.Fprintf(stderr, "clrtrace: %s\n", oneLine(stopErr.Error()))
	}
	how := "stopped"
	if !stopped {
		how = "the runtime ended the session"
	}
	fmt.Fprintf(stderr, "process %d: %s; wrote %d bytes to %s\n", *pid, how, res.n, *out)
	return nil
}

// copied is how a copy of the stream ended.
type copied struct {
	n         int64 // bytes copied
	end       error // io.EOF at the end of the stream, else what ended the copy
	bad       bool  // end is the Checker's: the stream is not a trace, or went bad
	writeErr  error // writing the file failed
	unchecked error // the Checker does not know this version: copied unchecked from there on
}

// copyStream copies src to dst byte for byte and checks it with chk as it
// goes, until the end of src or the first fault chk finds. A version chk
// does not know is copied on unchecked.
func copyStream(dst io.Writer, src io.Reader, chk *nettrace.Checker) (res copied) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				res.writeErr = werr
				return res
			}
			res.n += int64(n)
			if res.unchecked == nil {
				if _, cerr := chk.Write(buf[:n]); errors.Is(cerr, nettrace.ErrUnsupported) {
					res.unchecked = cerr
				} else if cerr != nil {
					res.end, res.bad = cerr, true
					return res
				}
			}
		}
		if err != nil {
			res.end = err
			return res
		}
	}
}

// size says how big n bytes are: 12 bytes, 344 kB, 1.2 MB, 3.4 GB.
func size(n int64) string {
	if n < 1000 {
		if n == 1 {
			return "1 byte"
		}
		return fmt.Sprintf("%d bytes", n)
	}
	v, unit := float64(n)/1e3, "kB"
	switch {
	case n >= 999_500_000:
		v, unit = float64(n)/1e9, "GB"
	case n >= 999_500:
		v, unit = float64(n)/1e6, "MB"
	}
	if v < 9.95 {
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}
