package trace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/clrgo/clrevents/internal/numfmt"

	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/nettrace"
)

// ErrDamaged is wrapped by the error that ends a trace in which the reader
// skipped damage: Next returns a *DamageError after the last event it
// could read, instead of io.EOF.
var ErrDamaged = errors.New("damaged trace")

// Damage is a part of a trace that the format reader could not read and
// skipped, going on with the rest (see Reader.Damage): a damaged block or
// buffer, framing it had to search past, events whose metadata was lost,
// or the cut-off end of a truncated trace; or, with nothing skipped
// (Length 0), an EventPipe event block whose events' timestamps do not
// span the range its header states, its events given as read.
type Damage struct {
	Format Format
	// Offset is the first byte skipped, in the trace's (decompressed)
	// bytes, and Length how many were. Events of one kind skipped one by
	// one across an EventPipe trace (their metadata lost) are one record:
	// Offset is the first of them and Length their bytes together.
	Offset, Length int64
	// Events is how many events were lost, where the trace tells
	// (EventPipe from NetTrace V4: the gaps in each thread's sequence
	// numbers; an event left out on its own, as for a garbled timestamp,
	// in any format: 1); -1 where it does not.
	Events int64
	// Missing is, for an ETW log cut short, how many buffers its header
	// says were written beyond those the file holds (whose bytes Length
	// does not count: they are not in the file); 0 otherwise.
	Missing int
	// Err is the format reader's error: a *nettrace.Error or an
	// *etl.FormatError, naming the block or buffer and the offset.
	Err error
}

// String formats the record as one line: how much, where, and the error.
func (d Damage) String() string {
	var b strings.Builder
	if d.Length > 0 {
		b.WriteString(numfmt.Thousands(d.Length))
		b.WriteString(" bytes ")
	}
	b.WriteString("at offset ") // Length 0: nothing skipped
	b.WriteString(strconv.FormatInt(d.Offset, 10))
	switch {
	case d.Events == 1:
		b.WriteString(" (1 event lost)")
	case d.Events > 1:
		fmt.Fprintf(&b, " (%s events lost)", numfmt.Thousands(d.Events))
	}
	b.WriteString(": ")
	b.WriteString(d.Err.Error())
	return b.String()
}

// DamageError ends a trace in which the reader skipped damage. Its
// message names the input, then counts the ranges, bytes and events lost
// and gives the first in full:
//
//	app.nettrace: nettrace: 1 damaged range skipped (65,536 bytes, 5,910 events lost); the first: …
//
// errors.Is(err, ErrDamaged) holds, and so does errors.Is with the format
// reader's sentinels (io.ErrUnexpectedEOF when the trace was cut short,
// nettrace.ErrFormat, etl.ErrTruncated, …); errors.As finds the first
// damage's *nettrace.Error or *etl.FormatError. Where an error of the
// source stopped the reading after the damage (a zipped trace's checksum,
// which damage in its compressed bytes breaks), the message ends with
// "then reading stopped: " and that error, which errors.Is finds too.
type DamageError struct {
	Name   string   // the input's name
	Damage []Damage // every range skipped
	err    error    // the format reader's *nettrace.DamageError or *etl.DamageError
	// stopped is what ended a zipped ETL log's data early (see
	// Reader.stopped); EventPipe's reader keeps its own (Stopped).
	stopped error
}

func (e *DamageError) Error() string {
	s := e.Name + ": " + e.err.Error()
	if e.stopped != nil {
		s += "; then reading stopped: " + e.stopped.Error()
	}
	return s
}

// Unwrap returns ErrDamaged, the format reader's error, and the error that
// stopped the reading early where one did.
func (e *DamageError) Unwrap() []error {
	if e.stopped != nil {
		return []error{ErrDamaged, e.err, e.stopped}
	}
	return []error{ErrDamaged, e.err}
}

// Events returns how many events the damage is known to have lost (a
// lower bound where a record does not tell).
func (e *DamageError) Events() int64 {
	var n int64
	for _, d := range e.Damage {
		n += max(d.Events, 0)
	}
	return n
}

// WithStrict makes the reader stop at the first damage instead of
// skipping it: Next returns the format reader's error for it (and again
// on every later call), as a reader that does not resynchronise would.
// The error is the format reader's own (*nettrace.Error, *etl.FormatError,
// io.ErrUnexpectedEOF for a cut), not a *DamageError: errors.Is(err,
// ErrDamaged) is false. The events before the damage are the same as
// without WithStrict, but for one case: an EventPipe trace cut short
// inside a block stops at that block, where the default reading gives the
// whole events the block still holds (an ETW log's strict reading gives
// those of its cut buffer too).
func WithStrict() Option { return func(c *config) { c.strict = true } }

// Damage returns what the reader has skipped so far, in the order it was
// found; it is complete once Next has returned its last error. It is
// empty in strict mode (WithStrict), where the first damage ends the
// trace.
func (r *Reader) Damage() []Damage {
	var out []Damage
	if r.nt != nil {
		for _, d := range r.nt.Damage() {
			out = append(out, Damage{Format: r.format, Offset: d.Offset, Length: d.Length, Events: d.Events, Err: d.Err})
		}
	}
	if r.et != nil {
		for _, d := range r.et.Damage() {
			out = append(out, Damage{Format: ETL, Offset: d.Offset, Length: d.Length, Events: d.Events, Missing: d.Missing, Err: d.Err})
		}
	}
	return out
}

// damageError makes the trace's DamageError from the format reader's, or
// returns nil when err is not one.
func (r *Reader) damageError(err error) error {
	var nd *nettrace.DamageError
	var ed *etl.DamageError
	if !errors.As(err, &nd) && !errors.As(err, &ed) {
		return nil
	}
	return &DamageError{Name: r.cfg.name, Damage: r.Damage(), err: err, stopped: r.stopped}
}
