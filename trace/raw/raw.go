// Package raw is the one place that gives the format readers' own records
// behind package trace's events and readers: an EventPipe event's
// metadata record, thread tables, labels and sequence numbers
// (package nettrace), an ETW event's header kind, flags and extended data
// items (package etl), and the format readers themselves.
//
// Everything the layers above the front door need is in trace's Event
// and Reader, the same for every format; a program that reaches here
// depends on one format. The library's own packages above trace
// (symbols, profile, the reports, dataset, the commands) never import
// raw, and a test enforces that from go list.
package raw

import (
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/nettrace"
	"github.com/clrgo/clrevents/trace"
	"github.com/clrgo/clrevents/trace/internal/rawaccess"
)

// NetTrace returns the EventPipe format reader's record of e, nil for an
// event of an ETW log. It is valid as long as e is.
func NetTrace(e *trace.Event) *nettrace.Event {
	nt, _ := rawaccess.Event(e)
	return nt
}

// ETL returns the ETW format reader's record of e, nil for an event of an
// EventPipe trace. It is valid as long as e is.
func ETL(e *trace.Event) *etl.Event {
	_, et := rawaccess.Event(e)
	return et
}

// Metadata returns the EventPipe metadata record of e (an EventSource
// event's field list), nil for an event of an ETW log or one without.
func Metadata(e *trace.Event) *nettrace.Metadata {
	if nt := NetTrace(e); nt != nil {
		return nt.Metadata
	}
	return nil
}

// NetTraceReader returns the EventPipe format reader under r, nil for an
// ETW log. Reading from it directly takes events from r.
func NetTraceReader(r *trace.Reader) *nettrace.Reader {
	nt, _ := rawaccess.Reader(r)
	return nt
}

// ETLReader returns the ETW format reader under r, nil for an EventPipe
// trace. Reading from it directly takes events from r.
func ETLReader(r *trace.Reader) *etl.Reader {
	_, et := rawaccess.Reader(r)
	return et
}
