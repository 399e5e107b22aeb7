package diagnostics

import (
	"errors"
	"io"

	"github.com/clrgo/clrevents/nettrace"
)

// CopyResult says how Session.Copy ended.
type CopyResult struct {
	// N is how many bytes were written to the writer.
	N int64
	// Err is nil when the runtime ended the stream and what it sent is a
	// whole trace. Otherwise it says why not: a *StreamError when what
	// came is not a trace, goes bad, or ends before its end; an error
	// wrapping ErrDrainTimeout when the runtime did not end the stream
	// by Stop's deadline; else the error that ended reading the stream (a
	// session closed meanwhile). It is nil after a WriteErr.
	Err error
	// WriteErr is the error writing to the writer, which ended the copy.
	WriteErr error
	// Unchecked is set when the stream is of a version the check does not
	// know (a newer runtime's): it was copied from there on unchecked,
	// and Err says only whether reading it failed.
	Unchecked error
}

// A StreamError says how a session's stream is not a whole trace: what
// was seen and at which byte, as the check of its framing found it
// (nettrace.Checker; Unwrap gives its *nettrace.CheckError).
type StreamError struct {
	// Offset is the stream byte where the fault begins.
	Offset int64
	// Trace is false when nothing of the stream is a trace: no reader can
	// use what was copied.
	Trace bool
	// Stopped is true when the fault ended the copy as the stream came:
	// the writer holds the stream up to the chunk with the fault. It is
	// false for a stream that ended early.
	Stopped bool
	err     *nettrace.CheckError
}

// Error returns the check's message, e.g. "the stream ended in the middle
// of an EventBlock at byte 1,234,567 (65,536-byte block, 12,000 bytes
// read)".
func (e *StreamError) Error() string { return e.err.Error() }

// Unwrap returns the *nettrace.CheckError.
func (e *StreamError) Unwrap() error { return e.err }

// Copy copies the session's stream to w byte for byte, as the runtime
// sends it, until the runtime ends it (after Stop, once the rundown is
// written; or when the process exits), the session is closed, or the
// stream goes bad; and it checks the stream's framing on the way (headers,
// object tags, type names, block sizes and padding, the end-of-stream
// tag), so that what was copied is known to be a whole trace, or how it
// is not. A stream that is not a trace, or goes bad, ends the copy at
// once.
//
// Copy blocks: call Stop or Close from another goroutine to end it.
func (s *Session) Copy(w io.Writer) CopyResult {
	var res CopyResult
	var chk nettrace.Checker
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				res.WriteErr = werr
				return res
			}
			res.N += int64(n)
			if res.Unchecked == nil {
				if _, cerr := chk.Write(buf[:n]); errors.Is(cerr, nettrace.ErrUnsupported) {
					res.Unchecked = cerr
				} else if cerr != nil {
					res.Err = streamError(&chk, cerr, true)
					return res
				}
			}
		}
		switch {
		case err == io.EOF && res.Unchecked == nil:
			if cerr := chk.Close(); cerr != nil {
				res.Err = streamError(&chk, cerr, false)
			}
			return res
		case err == io.EOF:
			return res
		case err != nil:
			res.Err = err
			return res
		}
	}
}

// streamError makes the check's verdict a *StreamError.
func streamError(chk *nettrace.Checker, err error, stopped bool) error {
	var ce *nettrace.CheckError
	if !errors.As(err, &ce) {
		return err
	}
	return &StreamError{
		Offset: ce.Offset, Stopped: stopped, err: ce,
		Trace: chk.Version() != 0 || errors.Is(ce, nettrace.ErrUnsupported),
	}
}
