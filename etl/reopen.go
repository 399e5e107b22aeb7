package etl

import "errors"

// ErrStream is returned by Reopen for a Reader that reads a stream once,
// front to back (NewFileOrderReader, or NewReader on an io.Reader that
// cannot seek): what it has read is gone.
var ErrStream = errors.New("etl: a log read as a stream cannot be read again")

// Reopen returns a new Reader over the same log as r (for a Reader that
// Merge made, the same logs, merged again), from its first event, for a
// second pass over it: a circular or cut log names the threads and
// processes it began inside only in the rundown at its end, which the
// events before it need. Reading r and the new Reader may interleave; the
// new Reader shares r's file, so it can be read while r is open, and
// closing it closes nothing of r's. It is not strict whatever r is
// (SetStrict), and names its logs as r does (SetName).
func (r *Reader) Reopen() (*Reader, error) {
	if m := r.merged; m != nil {
		logs := make([]*Reader, 0, len(m.logs))
		for _, l := range m.logs {
			c, err := l.Reopen()
			if err != nil {
				return nil, err
			}
			logs = append(logs, c)
		}
		return Merge(logs...)
	}
	if r.ra == nil {
		return nil, ErrStream
	}
	c, err := newReaderAt(r.ra, r.base, r.size)
	if err != nil {
		return nil, err
	}
	c.name = r.name
	return c, nil
}
