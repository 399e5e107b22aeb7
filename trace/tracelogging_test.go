package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/baseline"
)

// TestTraceLoggingBaseline: the TraceLogging events of
// primitive-types.etl.zip (a provider writing one field of each primitive
// type) decode, through the metadata each event carries, to the values of
// TraceEvent's baseline. Two print differently:
//
//   - int64_type is declared UInt64 (in-type 10) by its writer. TraceEvent
//     reads every 64-bit integer type as a C# long (DynamicTraceEventParser
//     maps TDH's UInt64 to typeof(long)) and prints -204; we print the
//     UInt64 the metadata declares, 18446744073709551412: the same bits,
//     which is what SameValue compares.
//   - system_time_type, a SYSTEMTIME, is printed by TraceEvent with the
//     seconds' fraction ".03" in every event, whatever the time; ours is
//     the structure's own milliseconds, equal to the FILETIME field's
//     written with it.
func TestTraceLoggingBaseline(t *testing.T) {
	const path = "../testdata/traces/primitive-types.etl.zip"
	bl, err := baseline.ParseFile("../testdata/traces/primitive-types.baseline.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []map[string]any
	var ms []string
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Provider() != "solar_system" {
			continue
		}
		out, err := e.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		d := json.NewDecoder(bytes.NewReader(out))
		d.UseNumber()
		var fields map[string]any // AppendJSON writes the payload's fields
		if err := d.Decode(&fields); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		got = append(got, fields)
		ms = append(ms, baseline.FormatMSec(r.et.RelativeMSec(e.Timestamp())))
	}
	differ := map[string]bool{"system_time_type": true}
	values, i := 0, 0
	for _, b := range bl.Events {
		if b.Provider != "solar_system" {
			continue
		}
		if i >= len(got) {
			t.Fatalf("line %d: ours has %d events", b.Line, len(got))
		}
		if ms[i] != b.MSecText {
			t.Errorf("line %d: at %s ms, ours at %s", b.Line, b.MSecText, ms[i])
		}
		if v, want := got[i]["int64_type"], "-"; v == nil || strings.HasPrefix(v.(json.Number).String(), want) {
			t.Errorf("line %d: int64_type = %v, want the UInt64 its metadata declares", b.Line, v)
		}
		if got[i]["system_time_type"] != got[i]["file_time_type"] {
			t.Errorf("line %d: SYSTEMTIME %v, FILETIME %v", b.Line, got[i]["system_time_type"], got[i]["file_time_type"])
		}
		for _, f := range b.Fields {
			v, ok := got[i][f.Name]
			switch same := ok && baseline.SameValue(v, f.Value); {
			case differ[f.Name] && same:
				t.Errorf("line %d: %s = %v, as the baseline's %s: the stated difference is gone", b.Line, f.Name, v, f.Value)
			case !differ[f.Name] && !same:
				t.Errorf("line %d: %s = %v, baseline %s", b.Line, f.Name, v, f.Value)
			}
			values++
		}
		i++
	}
	if i != len(got) || values < 50 {
		t.Errorf("%d baseline events of %d, %d values compared", i, len(got), values)
	}
}

// TestSelfDescribingStruct: the one TraceLogging event of
// SelfDescribingSingleEvent.etl.zip (provider MySource, event TestEvent)
// holds a struct field, which decodes to the values TraceEvent's test of
// its issue 1618 asserts ({ "b":"Hello", "c":"World!" }), in the text and
// in the JSON.
func TestSelfDescribingStruct(t *testing.T) {
	r, err := Open("../testdata/traces/SelfDescribingSingleEvent.etl.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Provider() != "MySource" {
			continue
		}
		n++
		if e.Name() != "TestEvent" {
			t.Errorf("MySource's event is named %q, want TestEvent", e.Name())
		}
		text, err := e.AppendText(nil)
		if err != nil || string(text) != `a={b="Hello" c="World!"}` {
			t.Errorf("text %q, %v", text, err)
		}
		js, err := e.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ A struct{ B, C string } }
		if err := json.Unmarshal(js, &got); err != nil || got.A.B != "Hello" || got.A.C != "World!" {
			t.Errorf("JSON %s: %+v, %v", js, got, err)
		}
	}
	if n != 1 {
		t.Errorf("%d events of MySource, want 1", n)
	}
}
