package nettrace

import "bytes"

// trailing looks past the trace's end (a V3–V5 stream's NullReference
// tag, a V6 EndOfStream block, a V1/V2 trailer) for more input. A trace
// ends there: bytes after it were written by something else (a file
// written over a longer one, two traces joined into one file, of which
// the reader reads the first), so they are damage, recorded with how many
// they are and what they begin with, and in strict mode the error that
// ends the trace.
//
// It is called once the end has been read, so it waits only on a source
// that neither ends nor sends more: the runtime closes a session's
// stream after its end, and a file or an archive member ends.
func (r *Reader) trailing() error {
	at := r.s.off
	b, _ := r.s.peek(len(fsHeader))
	if len(b) == 0 {
		return nil // the end of the input (or a read that failed after it)
	}
	what := ""
	switch {
	case bytes.HasPrefix(b, nettraceMagic) || string(b) == fsHeader:
		what = ", beginning with another trace's header (a Reader reads one trace)"
	case allZero(b):
		what = ", beginning with zeros"
	}
	r.s.discardAll()
	r.blkName, r.blkHdrOff = "", at
	n := r.s.off - at
	unit := "bytes"
	if n == 1 {
		unit = "byte"
	}
	e := r.errf(ErrFormat, "", at, "the input goes on %d %s after the trace's end%s", n, unit, what).(*Error)
	if err := r.noteDamage(e, at, n); err != nil {
		return err // strict
	}
	r.damage[len(r.damage)-1].Events = -1 // what follows does not tell
	return nil
}

// nettraceMagic begins a NetTrace file (V4 and later); a .netperf file
// (V1–V3) begins with fsHeader.
var nettraceMagic = []byte("Nettrace")

// allZero reports whether b is all zero bytes.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
