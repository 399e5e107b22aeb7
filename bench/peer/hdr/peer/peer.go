// Package peer reads a trace's event headers with the Go peer,
// github.com/pyroscope-io/dotnetdiag, and nothing else: the child program
// of the harness's "program" rows links only this.
package peer

import (
	"fmt"
	"io"

	"github.com/clrgo/clrevents/bench/peer/hdr"
	dnettrace "github.com/pyroscope-io/dotnetdiag/nettrace"
)

// Read reads every event of the trace in in with the peer, with only its
// event handler set: the least the peer can do to hand out each event's
// header (it then neither parses metadata, stack nor sequence point
// blocks), and so the hardest comparison for us. It does not know the
// events' IDs (IDs stays 0).
func Read(in io.Reader) (hdr.Sums, error) {
	var h hdr.Sums
	s := dnettrace.NewStream(in)
	if _, err := s.Open(); err != nil {
		return h, fmt.Errorf("peer: %w", err)
	}
	s.EventHandler = func(b *dnettrace.Blob) error {
		h.Events++
		h.TS += uint64(b.Header.TimeStamp)
		h.TID += uint64(b.Header.ThreadID)
		h.Payload += uint64(b.Payload.Len())
		return nil
	}
	return h, Drain(s)
}

// Drain reads the stream to its end, each block going to the stream's
// handlers.
func Drain(s *dnettrace.Stream) error {
	for {
		err := s.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("peer: %w", err)
		}
	}
}
