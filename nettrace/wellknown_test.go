package nettrace

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

// TestDiagnosticSourceFields: the seven well-known events of
// Microsoft-Diagnostics-DiagnosticSource, which the runtime describes with
// no fields (their key/value arguments have no type in a V1 field list),
// decode as TraceEvent decodes them (its test of the same name,
// EventPipeParsing's WellKnownDiagnosticSourceEventsHavePayloads):
// SourceName, EventName and Arguments, key/value pairs after a 16-bit
// count. An event of another name, and one whose metadata has fields,
// keep what the trace says.
func TestDiagnosticSourceFields(t *testing.T) {
	p := append(utf16z("FakeProviderName"), utf16z("FakeEventName")...)
	p = binary.LittleEndian.AppendUint16(p, 2)
	for _, s := range []string{"key1", "val1", "key2", "val2"} {
		p = append(p, utf16z(s)...)
	}
	names := []string{"Event", "Activity1Start", "Activity1Stop", "Activity2Start", "Activity2Stop", "RecursiveActivity1Start", "RecursiveActivity1Stop", "NewDiagnosticListener"}
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 1, tid: 999})
	var metas []wMeta
	var evs []wEvent
	for i, n := range names {
		metas = append(metas, wMeta{id: uint32(i + 1), provider: diagnosticSource, eventID: uint32(i + 3), name: n})
		evs = append(evs, wEvent{meta: uint32(i + 1), seq: uint32(i + 1), thread: 1, capThread: 1, ts: int64(1000 + i), payload: p})
	}
	// The same provider's event with fields of its own keeps them.
	metas = append(metas, wMeta{id: 20, provider: diagnosticSource, eventID: 40, name: "Event", fields: []Field{{Name: "X", Type: TypeInt32}}})
	evs = append(evs, wEvent{meta: 20, seq: uint32(len(evs) + 1), thread: 1, capThread: 1, ts: 2000, payload: binary.LittleEndian.AppendUint32(nil, 5)})
	w.metadata(metas...)
	w.events(true, evs...)
	r, err := NewReader(bytes.NewReader(w.end()))
	if err != nil {
		t.Fatal(err)
	}
	const want = `SourceName="FakeProviderName" EventName="FakeEventName" Arguments=[{Key="key1" Value="val1"} {Key="key2" Value="val2"}]`
	n := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text, err := e.Metadata.AppendText(nil, e.Payload)
		switch {
		case e.Metadata.ID == 20:
			if err != nil || string(text) != "X=5" {
				t.Errorf("the event with fields of its own: %s, %v", text, err)
			}
		case e.Metadata.Name == "NewDiagnosticListener":
			if e.Metadata.Describe() != nil {
				t.Errorf("NewDiagnosticListener, not one of the seven, has fields %v", e.Metadata.Fields)
			}
		default:
			if err != nil || string(text) != want {
				t.Errorf("%s: %s, %v\nwant %s", e.Metadata.Name, text, err, want)
			}
			n++
		}
	}
	if n != 7 {
		t.Errorf("%d of the seven events decoded", n)
	}
}
