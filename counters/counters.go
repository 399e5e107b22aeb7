// Package counters reads the EventCounters a .NET process reports:
// System.Runtime's (CPU usage, GC heap size, allocation rate, thread pool
// queue length, …) and any EventSource's, each in an EventCounters event
// whose one field, Payload, holds the counter's report for an interval.
// Decode turns such an event, from any trace or live session the front
// door reads, into a typed Counter; a Printer prints counters as
// dotnet-counters' console view does.
//
//	cfg := diagnostics.CountersConfig(1) // System.Runtime, every second
//	s, _ := client.StartSession(ctx, cfg)
//	r, _ := s.Reader()
//	for {
//		e, err := r.Next()
//		…
//		c, err := counters.Decode(e)
//		if errors.Is(err, counters.ErrNotCounters) {
//			continue
//		}
//		fmt.Println(c.Name, c.Value())
//	}
//
// EventSource writes two kinds of report: a mean counter's (EventCounter,
// PollingCounter: Mean, StandardDeviation, Count, Min, Max over the
// interval) and an incrementing counter's (IncrementingEventCounter,
// IncrementingPollingCounter: the Increment over the interval, a rate).
package counters

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/clrgo/clrevents/trace"
)

// ErrNotCounters is Decode's error for an event that is not an
// EventCounters event.
var ErrNotCounters = errors.New("not an EventCounters event")

// Kind is the kind of a counter's report.
type Kind uint8

const (
	// Mean is a mean counter's report: Mean, StandardDeviation, Count,
	// Min and Max of the values recorded in the interval.
	Mean Kind = iota
	// Increment is an incrementing counter's report: how much it grew in
	// the interval (Increment), a rate.
	Increment
)

// String returns "Mean" or "Increment".
func (k Kind) String() string {
	if k == Increment {
		return "Increment"
	}
	return "Mean"
}

// Counter is one counter's report for one interval.
type Counter struct {
	// Provider is the EventSource that reports it ("System.Runtime"),
	// Time the event's time.
	Provider string
	Time     time.Time

	// Name identifies the counter ("cpu-usage"); DisplayName names it
	// for people ("CPU Usage"); DisplayUnits is its unit ("%", "B", "MB",
	// "" for a plain count).
	Name, DisplayName, DisplayUnits string
	Kind                            Kind

	// A Mean report's figures: the values recorded in the interval.
	Mean, StandardDeviation, Min, Max float64
	Count                             int64

	// An Increment report's growth over the interval, and the time unit
	// its rate is shown over ("00:00:01"), as EventSource gives them.
	Increment            float64
	DisplayRateTimeScale string

	// IntervalSec is the interval the report covers, in seconds, as the
	// runtime measured it; Series is the interval the session asked for
	// ("Interval=1000", milliseconds); CounterType is "Mean" or "Sum";
	// Metadata holds the counter's tags ("key:value,…"), often "".
	IntervalSec float64
	Series      string
	CounterType string
	Metadata    string
}

// Value is the counter's value as dotnet-counters shows it: the Increment
// of an incrementing counter, the Mean of a mean counter.
func (c *Counter) Value() float64 {
	if c.Kind == Increment {
		return c.Increment
	}
	return c.Mean
}

// RateSeconds is the interval, in seconds, an incrementing counter's rate
// is over, as dotnet-counters shows it: the session's (Series, in
// milliseconds), else the one measured (IntervalSec, to the millisecond),
// else 1.
func (c *Counter) RateSeconds() float64 {
	if ms, ok := strings.CutPrefix(c.Series, "Interval="); ok {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v > 0 {
			return v / 1000
		}
	}
	if c.IntervalSec > 0 {
		return math.Round(c.IntervalSec*1000) / 1000
	}
	return 1
}

// payload is an EventCounters payload as the event's JSON gives it. The
// runtime writes the event with EventSource.Write, whose one argument (an
// object with a Payload property) an EventPipe trace's metadata describes
// as a field without a name: {"": {"Payload": {…}}}. An ETW log's
// TraceLogging description lays the argument's properties out as the
// event's own fields: {"Payload": {…}}. Both are read.
type payload struct {
	Payload *counterPayload
}

// counterPayload is the runtime's CounterPayload, a mean counter's or an
// incrementing counter's.
type counterPayload struct {
	Name, DisplayName, DisplayUnits, DisplayRateTimeScale string
	Series, CounterType, Metadata                         string
	Mean, StandardDeviation, Min, Max, IntervalSec        number
	Count                                                 number
	Increment                                             *number
}

func (p *payload) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	if raw, ok := fields["Payload"]; ok {
		return json.Unmarshal(raw, &p.Payload)
	}
	if raw, ok := fields[""]; ok {
		var w struct{ Payload *counterPayload }
		if err := json.Unmarshal(raw, &w); err != nil {
			return err
		}
		p.Payload = w.Payload
	}
	return nil
}

// number is a JSON number, or a string holding one: EventPipe
// descriptions write NaN and the infinities as "NaN", "+Inf" and "-Inf";
// null (ETW descriptions' NaN and infinities) is NaN.
type number float64

func (n *number) UnmarshalJSON(b []byte) error {
	s := string(b)
	switch {
	case s == "null":
		*n = number(math.NaN())
		return nil
	case len(s) >= 2 && s[0] == '"':
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%s is not a number", b)
	}
	*n = number(v)
	return nil
}

// Decode reads the counter report an EventCounters event holds, decoded
// by the event's own description (an EventPipe trace's metadata, an ETW
// log's). Another event is ErrNotCounters; an EventCounters event whose
// payload does not decode, or is not a counter's report, is an error
// naming the event and its offset.
func Decode(e *trace.Event) (Counter, error) {
	if e.Name() != "EventCounters" {
		return Counter{}, ErrNotCounters
	}
	where := func() string { return fmt.Sprintf("%s/EventCounters at offset %d", e.Provider(), e.Offset()) }
	js, err := e.AppendJSON(nil)
	if err != nil {
		return Counter{}, fmt.Errorf("%s: %w", where(), err)
	}
	var p payload
	if err := json.Unmarshal(js, &p); err != nil || p.Payload == nil {
		return Counter{}, fmt.Errorf("%s: payload is not a counter: %s", where(), js)
	}
	f := p.Payload
	c := Counter{
		Provider: e.Provider(), Time: e.Time(),
		Name: f.Name, DisplayName: f.DisplayName, DisplayUnits: f.DisplayUnits,
		Mean: float64(f.Mean), StandardDeviation: float64(f.StandardDeviation), Min: float64(f.Min), Max: float64(f.Max),
		Count:                int64(f.Count),
		DisplayRateTimeScale: f.DisplayRateTimeScale,
		IntervalSec:          float64(f.IntervalSec), Series: f.Series, CounterType: f.CounterType, Metadata: f.Metadata,
	}
	if f.Increment != nil {
		c.Kind, c.Increment = Increment, float64(*f.Increment)
	}
	return c, nil
}
