package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
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
