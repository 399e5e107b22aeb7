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

// ustr is a universal provider's string: a 16-bit byte count, then UTF-8.
func ustr(b []byte, s string) []byte {
	return append(binary.LittleEndian.AppendUint16(b, uint16(len(s))), s...)
}

// TestUniversalFields: the events of the universal providers (machine-wide
// collections written as NetTrace V6), which the collectors describe with
// no fields, decode with the layouts TraceEvent reads them with
// (PerfView's UniversalProviders.md and its parsers): varints and strings
// of UTF-8 after a 16-bit count. An event the providers do not define, and
// one whose metadata has fields, keep what the trace says.
func TestUniversalFields(t *testing.T) {
	type ev struct {
		provider, name string
		fields         []Field
		payload        []byte
		want           string // AppendText; "" for an event without fields
	}
	evs := []ev{
		{universalSystem, "ExistingProcess", nil, ustr(ustr(appendVar(nil, 7), "init"), ""), `NamespaceId=7 Name="init" NamespaceName=""`},
		{universalSystem, "ProcessCreate", nil, ustr(ustr(appendVar(nil, 1234), "testhost"), "pod-a"), `NamespaceId=1234 Name="testhost" NamespaceName="pod-a"`},
		{universalSystem, "ProcessMappingMetadata", nil, ustr(ustr(appendVar(nil, 9), `{"type": "ELF","build_id": "4b60"}`), "{}"),
			`Id=9 SymbolMetadata="{\"type\": \"ELF\",\"build_id\": \"4b60\"}" VersionMetadata="{}"`},
		{universalSystem, "ProcessMapping", nil,
			appendVar(ustr(appendVar(appendVar(appendVar(appendVar(nil, 2), 0x7f0000001000), 0x7f0000009000), 0x1000), "/usr/lib/libcoreclr.so"), 9),
			`Id=2 StartAddress=139637976731648 EndAddress=139637976764416 FileOffset=4096 FileName="/usr/lib/libcoreclr.so" MetadataId=9`},
		{universalSystem, "ProcessSymbol", nil,
			ustr(appendVar(appendVar(appendVar(appendVar(nil, 5), 2), 0x10), 0x80), "instance void [app] App.Program::Main(string[])[OptimizedTier1]"),
			`Id=5 MappingId=2 StartAddress=16 EndAddress=128 Name="instance void [app] App.Program::Main(string[])[OptimizedTier1]"`},
		// As one-collect's writer (record-trace) has declared them since
		// 2025: strings as one UTF8CodeUnit, which a reader of the
		// declaration reads as one byte; TraceEvent reads these events
		// with its own layouts whatever they declare, and so do we.
		{universalSystem, "ExistingProcess", oneCollect("NamespaceId", "+Name", "+NamespaceName"), ustr(ustr(appendVar(nil, 7), "dotnet"), "Unknown"),
			`NamespaceId=7 Name="dotnet" NamespaceName="Unknown"`},
		{universalSystem, "ProcessMapping", oneCollect("Id", "StartAddress", "EndAddress", "FileOffset", "+FileName", "MetadataId"),
			appendVar(ustr(appendVar(appendVar(appendVar(appendVar(nil, 11), 0x1000), 0x9000), 0x1000), "/usr/lib/libcoreclr.so"), 1),
			`Id=11 StartAddress=4096 EndAddress=36864 FileOffset=4096 FileName="/usr/lib/libcoreclr.so" MetadataId=1`},
		{universalSystem, "ProcessExit", nil, nil, ""},
		{universalEvents, "cpu", nil, appendVar(nil, 1), `Value=1`},
		{universalEvents, "cswitch", nil, appendVar(nil, 300000), `Value=300000`},
		{universalEvents, "cpu", []Field{{Name: "Weight", Type: TypeVarUInt}}, appendVar(nil, 3), `Weight=3`},
		{universalEvents, "page_fault", nil, appendVar(nil, 1), ""},
		{"Universal.Other", "ProcessCreate", nil, ustr(ustr(appendVar(nil, 1), "x"), ""), ""},
	}
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 1234, tid: 100})
	var metas []wMeta
	var wevs []wEvent
	for i, e := range evs {
		metas = append(metas, wMeta{id: uint32(i + 1), provider: e.provider, eventID: uint32(i), name: e.name, fields: e.fields})
		wevs = append(wevs, wEvent{meta: uint32(i + 1), seq: uint32(i + 1), thread: 1, capThread: 1, ts: int64(1000 + i), payload: e.payload})
	}
	w.metadata(metas...)
	w.events(true, wevs...)
	r, err := NewReader(bytes.NewReader(w.end()))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		e, err := r.Next()
		if err == io.EOF {
			if i != len(evs) {
				t.Errorf("%d events, want %d", i, len(evs))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c := evs[i]
		if c.want == "" {
			if len(e.Metadata.Fields) != 0 {
				t.Errorf("%s/%s: fields %v, want none", c.provider, c.name, e.Metadata.Fields)
			}
			continue
		}
		text, err := e.Metadata.AppendText(nil, e.Payload)
		if err != nil || string(text) != c.want {
			t.Errorf("%s/%s:\n got %s (%v)\nwant %s", c.provider, c.name, text, err, c.want)
		}
		if _, err := e.Metadata.AppendJSON(nil, e.Payload); err != nil {
			t.Errorf("%s/%s: JSON: %v", c.provider, c.name, err)
		}
		// A payload cut short is an error, not a read past its end.
		if len(e.Payload) > 1 {
			if _, err := e.Metadata.AppendText(nil, e.Payload[:len(e.Payload)-1]); err == nil {
				t.Errorf("%s/%s: a payload a byte short decoded", c.provider, c.name)
			}
		}
	}
}

// oneCollect declares fields as one-collect's NetTrace writer does: a
// name with "+" a string (one UTF8CodeUnit), the others VarUInt.
func oneCollect(names ...string) []Field {
	var fs []Field
	for _, n := range names {
		if n[0] == '+' {
			fs = append(fs, Field{Name: n[1:], Type: TypeUTF8CodeUnit})
		} else {
			fs = append(fs, Field{Name: n, Type: TypeVarUInt})
		}
	}
	return fs
}
