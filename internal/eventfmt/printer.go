package eventfmt

import (
	"fmt"
	"io"
	"sort"

	"github.com/clrgo/clrevents/trace"
)

// Printer is the event printing the commands share (clrdump, clrtrace
// watch): it keeps the events the filter keeps, up to a limit, and
// writes them in one of the event formats, counting those that did not
// decode.
type Printer struct {
	Filter Filter
	// Format is "text", "jsonl" or "csv".
	Format string
	// Limit stops the printing after this many events (Done); 0 prints
	// all.
	Limit int
	// Printed counts the events kept; Undecoded holds those whose
	// payload did not decode.
	Printed   int
	Undecoded trace.DecodeErrors
	csv       CSV
}

// Keep decides on e: ok is false when the filter leaves it out; else e
// is counted as printed, and dec is e decoded (Decode).
func (p *Printer) Keep(e *trace.Event) (dec Decoded, ok bool) {
	if !p.Filter.Keep(e) {
		return Decoded{}, false
	}
	dec = Decode(e)
	if !p.Filter.KeepName(e, dec.Name) {
		return Decoded{}, false
	}
	if dec.Err != nil {
		p.Undecoded.AddEvent(e, dec.Err)
	}
	p.Printed++
	return dec, true
}

// Append appends e, decoded as dec (Keep), in Format: a text line, a JSON
// line, or the CSV rows (after the header, before the first event's).
func (p *Printer) Append(b []byte, e *trace.Event, dec *Decoded) []byte {
	failed := dec.Err != nil
	switch p.Format {
	case "jsonl":
		b = AppendJSON(b, e, dec)
	case "csv":
		if p.Printed == 1 {
			b = append(b, CSVHeader...)
		}
		b = p.csv.Append(b, int64(p.Printed-1), e, dec)
	default:
		b = AppendText(b, e, dec)
	}
	if !failed && dec.Err != nil {
		p.Undecoded.AddEvent(e, dec.Err) // a payload that does not fit its description
	}
	return b
}

// Done reports whether Limit events have been printed.
func (p *Printer) Done() bool { return p.Limit > 0 && p.Printed >= p.Limit }

// Stats counts events and their payload bytes by provider and event
// name, as clrdump -stats prints them. The zero value is ready to use.
type Stats struct {
	types map[statsKey]*statsCount
}

type statsKey struct{ provider, name string }

type statsCount struct{ count, bytes int64 }

// Add counts e, under its name as Decode gives it.
func (s *Stats) Add(e *trace.Event, dec *Decoded) {
	if s.types == nil {
		s.types = map[statsKey]*statsCount{}
	}
	k := statsKey{e.Provider(), dec.Name}
	c := s.types[k]
	if c == nil {
		c = &statsCount{}
		s.types[k] = c
	}
	c.count++
	c.bytes += int64(len(e.Payload()))
}

// WriteTo writes the table: count, bytes and provider/event per type,
// the most frequent first, then the totals.
func (s *Stats) WriteTo(w io.Writer) (int64, error) {
	keys := make([]statsKey, 0, len(s.types))
	var total, bytes int64
	for k, c := range s.types {
		keys = append(keys, k)
		total += c.count
		bytes += c.bytes
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := s.types[keys[i]], s.types[keys[j]]
		if a.count != b.count {
			return a.count > b.count
		}
		if keys[i].provider != keys[j].provider {
			return keys[i].provider < keys[j].provider
		}
		return keys[i].name < keys[j].name
	})
	b := fmt.Appendf(nil, "%10s %12s  %s\n", "count", "bytes", "provider/event")
	for _, k := range keys {
		c := s.types[k]
		b = fmt.Appendf(b, "%10d %12d  %s/%s\n", c.count, c.bytes, k.provider, k.name)
	}
	b = fmt.Appendf(b, "%10d %12d  total (%d types)\n", total, bytes, len(keys))
	n, err := w.Write(b)
	return int64(n), err
}
