package main

import (
	"io"

	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/trace"
)

// printer writes events as clrdump's text lines or JSON lines, a write
// per event, so that a live session shows at once.
type printer struct {
	w    io.Writer
	json bool
	buf  []byte
	err  error // the first write error
}

// print writes e, decoded as dec.
func (p *printer) print(e *trace.Event, dec *eventfmt.Decoded) {
	if p.json {
		p.buf = eventfmt.AppendJSON(p.buf[:0], e, dec)
	} else {
		p.buf = eventfmt.AppendText(p.buf[:0], e, dec)
	}
	if p.err == nil {
		_, p.err = p.w.Write(p.buf)
	}
}
