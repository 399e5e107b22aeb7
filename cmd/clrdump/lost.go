package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/clrgo/clrevents/internal/numfmt"
	"github.com/clrgo/clrevents/trace"
)

// reportLost prints what a trace lost, after the output written from what
// was read: err is the reader's error (damage skipped, a trace cut short)
// joined with the events that did not decode (trace.DecodeErrors), each on
// a line of its own. It returns the exit status: exitError when anything
// was lost, since partial success is not success.
func reportLost(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(stderr, "clrdump: %s\n", line)
	}
	return exitError
}

// without returns err with target left out: nil when err is target (or
// an error that is target with more detail), the rest of a join that
// holds it, else err.
func without(err, target error) error {
	if err == nil || err == target {
		return nil
	}
	is := func(e error) bool { return errors.Is(e, target) }
	if j, ok := err.(interface{ Unwrap() []error }); ok && slices.ContainsFunc(j.Unwrap(), is) {
		var rest []error
		for _, e := range j.Unwrap() {
			if !is(e) {
				rest = append(rest, e)
			}
		}
		return errors.Join(rest...) // nil when target was all there was
	}
	if is(err) {
		return nil // target, or an error that details it
	}
	return err
}

// withDropped joins to err (what the trace lost in reading) the events its
// writer dropped, which the output lacks as much: the runtime's (its
// session's buffer was full) or, for an ETL log, its ETW session's. Call
// it once the reader has read all it will.
func withDropped(err error, r *trace.Reader) error {
	n, bufs := r.Dropped(), r.LostBuffers()
	if n == 0 && bufs == 0 {
		return err
	}
	who := "the runtime dropped"
	why := "its session's buffer was full"
	what := numfmt.Count(int64(n), "event")
	if r.Format() == trace.ETL {
		who, why = "the ETW session lost", "as the log's header counts them"
		switch {
		case n == 0:
			what = numfmt.Count(int64(bufs), "buffer") + " of events"
		case bufs > 0:
			what += " and " + numfmt.Count(int64(bufs), "buffer") + " of events"
		}
	}
	return errors.Join(err, fmt.Errorf("%s: %s %s (%s): they are not in the trace, nor in this output", r.Name(), who, what, why))
}
