// Package ours reads a trace's event headers with clrevents' front door,
// package trace, and nothing else: the child program of the harness's
// "program" rows links only this.
package ours

import (
	"fmt"
	"io"

	"github.com/clrgo/clrevents/bench/peer/hdr"
	"github.com/clrgo/clrevents/trace"
)

// Read reads every event of the trace in in, in order o, with the header
// fields a consumer looks at (timestamp, thread, event ID, payload).
func Read(in io.Reader, o trace.Order) (hdr.Sums, error) {
	var h hdr.Sums
	r, err := trace.NewReader(in, trace.WithOrder(o))
	if err != nil {
		return h, fmt.Errorf("ours: %w", err)
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return h, fmt.Errorf("ours: %w", err)
		}
		h.Events++
		h.TS += uint64(e.Timestamp())
		h.TID += uint64(e.ThreadID())
		h.IDs += uint64(e.ID())
		h.Payload += uint64(len(e.Payload()))
	}
}
