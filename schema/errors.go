package schema

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a problem with input, located at a file and line. What names the
// element, e.g. `event GCStart_V2: field "Depth"`.
type Error struct {
	Pos  Pos
	What string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.String())
	b.WriteString(": ")
	if e.What != "" {
		b.WriteString(e.What)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// errList collects located errors so one run reports every problem, not
// just the first.
type errList struct {
	errs []error
	// lenient makes skip record its problem in skipped instead of errs.
	lenient bool
	skipped []error
}

const maxErrors = 50

func (l *errList) add(pos Pos, what, format string, args ...any) {
	if len(l.errs) == maxErrors {
		l.errs = append(l.errs, errors.New("too many errors"))
	}
	if len(l.errs) > maxErrors {
		return
	}
	l.errs = append(l.errs, &Error{Pos: pos, What: what, Msg: fmt.Sprintf(format, args...)})
}

// count is how many problems the list holds, skipped ones included.
func (l *errList) count() int { return len(l.errs) + len(l.skipped) }

func (l *errList) err() error { return errors.Join(l.errs...) }

// skip reports an override that does not apply to the schema at hand (its
// target is absent, or the schema already says what it says): an error,
// unless the list is lenient.
func (l *errList) skip(pos Pos, what, format string, args ...any) {
	if !l.lenient {
		l.add(pos, what, format, args...)
		return
	}
	l.skipped = append(l.skipped, &Error{Pos: pos, What: what, Msg: fmt.Sprintf(format, args...)})
}

func eventWhat(e *Event) string {
	if e.Symbol == "" {
		return fmt.Sprintf("event value=%d version=%d", e.Value, e.Version)
	}
	return "event " + e.Symbol
}

func fieldWhat(owner string, path string) string { return fmt.Sprintf("%s: field %q", owner, path) }
