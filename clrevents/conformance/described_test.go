package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/baseline"
	"github.com/clrgo/clrevents/trace"
)

// ownParsers are the providers whose events TraceEvent decodes with parsers
// of its own (TplEtwProviderTraceEventParser), not from the trace's
// metadata: their fields have the parser's names ("ContinuationId" where
// the EventSource declares "ContinuwWithTaskId") and enumerations. Their
// names, counts, times and threads are compared; their fields are not.
var ownParsers = map[string]bool{"System.Threading.Tasks.TplEventSource": true}

// describedEvent is what the test keeps of the events of one name of a
// provider that describes its own events (EventSource, TraceLogging).
type describedEvent struct {
	count  int
	ts     int64   // the earliest event's
	msec   float64 // its time, in ms from the trace's sync time
	tid    int64
	act    string         // its activity ID, 32 hexadecimal digits; "" for none
	fields map[string]any // its fields, as our JSON gives them
	err    error
}

// TestSelfDescribedBaselines holds the events of providers outside the
// schema, which EventPipe traces describe themselves (EventSource's
// metadata, TraceLogging's self-describing form), to TraceEvent's
// baselines: for each line, the events of that name are as
// many as TraceEvent counted, and the earliest has its time, thread and
// field values. Events are named by trace.Event.DisplayName, the name
// TraceEvent shows: with the opcode the event name implies ("Request/Start"
// for RequestStart) or the metadata gives ("TestEvent3/24"), and the Task
// Parallel Library's as TraceEvent's parser for it names them
// ("TaskExecute/Start" for TaskStarted).
func TestSelfDescribedBaselines(t *testing.T) {
	ran := 0
	for _, tf := range baselineTraces(t) {
		if tf.Baseline == "" || tf.ETL {
			continue
		}
		lines, err := parseEventPipeBaseline(tf.Baseline)
		if err != nil {
			t.Fatal(err)
		}
		var want []blEvent
		for _, b := range lines {
			if _, ok := clrevents.ProviderByName(b.Provider); !ok {
				want = append(want, b)
			}
		}
		if len(want) == 0 {
			continue
		}
		ran++
		t.Run(tf.Name, func(t *testing.T) {
			ours, err := describedEvents(tf.Path)
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, b := range want {
				e := ours[b.Provider+"/"+b.Name]
				if e == nil {
					t.Errorf("line %d: %s/%s: no events of that DisplayName", b.Line, b.Provider, b.Name)
					continue
				}
				checked++
				where := fmt.Sprintf("line %d: %s/%s", b.Line, b.Provider, b.Name)
				if e.count != b.Count {
					t.Errorf("%s: %d events, TraceEvent %d", where, e.count, b.Count)
				}
				if got := fmt.Sprintf("%.4f", e.msec); got != b.MSec || e.tid != b.TID {
					t.Errorf("%s: the first at %s ms on thread %d, TraceEvent's at %s on %d", where, got, e.tid, b.MSec, b.TID)
				}
				if e.err != nil {
					t.Errorf("%s: %v", where, e.err)
					continue
				}
				if ownParsers[b.Provider] {
					continue
				}
				for _, f := range b.Fields {
					if f.Name == "ActivityID" {
						// The header's, which TraceEvent's V3 reader
						// prints with the fields.
						if !strings.EqualFold(e.act, f.Value) {
							t.Errorf("%s: activity %q, TraceEvent %q", where, e.act, f.Value)
						}
						continue
					}
					v, ok := e.fields[f.Name]
					if !ok {
						t.Errorf("%s: no field %q (ours: %v)", where, f.Name, e.fields)
						continue
					}
					if !sameDescribed(v, f.Value) {
						t.Errorf("%s: %s = %v, TraceEvent %s", where, f.Name, v, f.Value)
					}
				}
			}
			if checked == 0 {
				t.Errorf("none of the %d lines of self-described events compared", len(want))
			}
			t.Logf("%d of %d lines of self-described events compared", checked, len(want))
		})
	}
	if ran == 0 {
		t.Fatal("no trace whose baseline has self-described events")
	}
}

// describedEvents reads the trace's events of providers outside the
// manifest, by provider/DisplayName.
func describedEvents(path string) (map[string]*describedEvent, error) {
	r, err := trace.Open(path, trace.WithOrder(trace.TimeOrder))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	info := r.Info()
	out := map[string]*describedEvent{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if _, ok := clrevents.ProviderByName(e.Provider()); ok {
			continue
		}
		k := e.Provider() + "/" + e.DisplayName()
		d := out[k]
		if d == nil {
			d = &describedEvent{ts: e.Timestamp(), tid: e.ThreadID()}
			if a := e.ActivityID(); !a.IsZero() {
				d.act = strings.ReplaceAll(a.String(), "-", "")
			}
			d.msec = float64(e.Timestamp()-info.SyncTimestamp) * 1000 / float64(max(info.ClockFrequency, 1))
			d.fields, d.err = fieldsJSON(e)
			out[k] = d
		}
		d.count++
	}
}

// fieldsJSON is the event's fields as our JSON writes them.
func fieldsJSON(e *trace.Event) (map[string]any, error) {
	if e.Descriptor() == nil && len(e.Payload()) == 0 {
		return map[string]any{}, nil // described with no fields
	}
	b, err := e.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("our JSON %s: %v", b, err)
	}
	return m, nil
}

// sameDescribed reports whether ours, a field's value from our JSON, is
// what TraceEvent printed as want: an array or a struct (TraceEvent writes
// both as JSON, a TraceLogging struct as the value of an unnamed
// attribute) element by element, else as baseline.SameValue compares.
func sameDescribed(ours any, want string) bool {
	if strings.HasPrefix(want, "[") || strings.HasPrefix(want, "{") {
		var w any
		d := json.NewDecoder(strings.NewReader(want))
		d.UseNumber()
		if d.Decode(&w) != nil {
			return false
		}
		return sameTree(ours, w)
	}
	return baseline.SameValue(ours, want)
}

// sameTree compares two decoded JSON values, numbers by value.
func sameTree(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !sameTree(v, y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameTree(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && baseline.SameValue(x, y.String())
	}
	return reflect.DeepEqual(a, b)
}
