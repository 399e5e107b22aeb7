// Package readbuf keeps the read buffers (64 KiB) of trace streams that
// have ended for the next streams, and lets package trace hand the
// buffered reader it recognised a stream's format with to the format's
// reader, which then reads from it instead of buffering the bytes again.
//
// A program that reads many traces (a collector's sessions, a dataset's
// traces, profiles built one after the other) makes the buffers about
// once; a trace read through trace.NewReader is copied from its input
// once, not twice.
package readbuf

import (
	"bufio"
	"io"
	"sync"
)

// Size is the size of the buffers.
const Size = 64 << 10

var pool sync.Pool

// Get returns a buffered reader of r, of Size bytes, from the pool if it
// holds one.
func Get(r io.Reader) *bufio.Reader {
	if b, ok := pool.Get().(*bufio.Reader); ok {
		b.Reset(r)
		return b
	}
	return bufio.NewReaderSize(r, Size)
}

// Put gives b, which nothing reads any more, to the next Get.
func Put(b *bufio.Reader) {
	if b == nil || b.Size() != Size {
		return
	}
	b.Reset(nil)
	pool.Put(b)
}

// Handoff is a buffered reader from Get handed to the reader it is given
// to, which reads from it directly and Puts it when its input has ended.
// The one who hands it off reads from it no more. (Only packages of this
// module can make one: a caller's own bufio.Reader is never taken.)
type Handoff struct{ R *bufio.Reader }

// Read reads from the buffered reader.
func (h *Handoff) Read(p []byte) (int, error) { return h.R.Read(p) }
