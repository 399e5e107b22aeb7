package main

import (
	"github.com/clrgo/clrevents/internal/eventfmt"
	"github.com/clrgo/clrevents/trace"
)

// writeCSV writes the long form (eventfmt.CSV): one row per field, built
// in the output buffer itself (out).
func (d *dumper) writeCSV(e *trace.Event, dec *eventfmt.Decoded) {
	if d.printed == 1 {
		d.w.WriteString(eventfmt.CSVHeader)
	}
	d.w.Write(d.csv.Append(d.out(), int64(d.printed-1), e, dec))
}
