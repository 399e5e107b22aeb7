package trace

import (
	"errors"
	"fmt"
	"strings"

	"github.com/clrgo/clrevents/internal/numfmt"
)

// ErrUndecoded is wrapped by the error a DecodeErrors gives for events that
// did not decode.
var ErrUndecoded = errors.New("events did not decode")

// ErrNotCredible is wrapped by the error of an event that decoded but
// holds values no runtime writes: a size larger than an address space, a
// generation the GC does not have, an end earlier than its beginning. A
// damaged trace's payloads and timestamps can be garbled while its
// framing holds, so the layers above this package check what they use,
// leave such an event out, and name it among the events that did not
// decode (DecodeErrors), as they do events whose payload is too short.
var ErrNotCredible = errors.New("values no runtime writes")

// DecodeErrors collects the errors of events a consumer needed that did
// not decode (Event.Decode's *DecodeError, which names the input, the
// event's offset, the event and the field), so that one bad payload never
// stops a profile or a report and the report still says which: it counts
// them and keeps the first few in full. The zero value is ready to use.
type DecodeErrors struct {
	n     int
	first []error
}

// decodeErrorsKept is how many errors DecodeErrors keeps in full.
const decodeErrorsKept = 3

// Add notes an event that did not decode; a nil err (an event that did)
// is not counted.
func (d *DecodeErrors) Add(err error) {
	if err == nil {
		return
	}
	d.n++
	if len(d.first) < decodeErrorsKept {
		d.first = append(d.first, err)
	}
}

// Len returns how many errors were added.
func (d *DecodeErrors) Len() int { return d.n }

// Err returns nil when nothing was added, else an error that counts the
// events and gives the first few in full:
//
//	2 events did not decode: app.nettrace: event at offset 1234: clrevents: GCStart_V2: …; app.nettrace: event at offset 5678: …
//	1,204 events did not decode; the first 3: …; …; … (and 1,201 more)
//
// errors.Is(err, ErrUndecoded) holds, and errors.As finds the first
// *DecodeError.
func (d *DecodeErrors) Err() error {
	if d.n == 0 {
		return nil
	}
	return &undecoded{n: d.n, first: d.first}
}

type undecoded struct {
	n     int
	first []error
}

func (e *undecoded) Error() string {
	var b strings.Builder
	if e.n == 1 {
		b.WriteString("1 event did not decode: ")
	} else {
		b.WriteString(numfmt.Thousands(int64(e.n)))
		b.WriteString(" events did not decode")
		if e.n > len(e.first) {
			b.WriteString("; the first ")
			b.WriteString(numfmt.Thousands(int64(len(e.first))))
		}
		b.WriteString(": ")
	}
	for i, err := range e.first {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	if more := e.n - len(e.first); more > 0 {
		b.WriteString(" (and ")
		b.WriteString(numfmt.Thousands(int64(more)))
		b.WriteString(" more)")
	}
	return b.String()
}

func (e *undecoded) Unwrap() []error { return append([]error{ErrUndecoded}, e.first...) }

// AddEvent notes that event e did not decode: err as it is when it is
// Decode's *DecodeError, else wrapped in one naming the input, the event's
// offset and name.
func (d *DecodeErrors) AddEvent(e *Event, err error) {
	var de *DecodeError
	if !errors.As(err, &de) {
		err = &DecodeError{Name: e.r.cfg.name, Offset: e.Offset(), Err: fmt.Errorf("%s: %w", e.Name(), err)}
	}
	d.Add(err)
}
