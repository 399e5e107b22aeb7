package etl

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/columntest"
)

// tdhProp is one EVENT_PROPERTY_INFO for buildEventInfo.
type tdhProp struct {
	name          string
	flags         uint32
	in, out       uint16 // or struct start and member count
	mapName       string
	count, length uint16
}

var testProvider = clrimpl.MustParseGUID("1c95126e-7eea-49a9-a3fe-a378b03ddb4d")

// buildEventInfo writes a TRACE_EVENT_INFO: the header, the properties,
// then the strings they point at.
func buildEventInfo(id uint16, opcode uint8, provider, task, op string, top int, props []tdhProp) []byte {
	n := eventInfoHeader + propertyInfoSize*len(props)
	b := make([]byte, n)
	var strs []byte
	str := func(at int, s string) {
		if s == "" {
			return
		}
		binary.LittleEndian.PutUint32(b[at:], uint32(n+len(strs)))
		for _, u := range utf16.Encode([]rune(s)) {
			strs = binary.LittleEndian.AppendUint16(strs, u)
		}
		strs = append(strs, 0, 0)
	}
	copy(b, testProvider[:])
	binary.LittleEndian.PutUint16(b[32:], id)
	b[37] = opcode
	binary.LittleEndian.PutUint16(b[38:], 7)
	str(52, provider)
	str(68, task)
	str(72, op)
	binary.LittleEndian.PutUint32(b[100:], uint32(len(props)))
	binary.LittleEndian.PutUint32(b[104:], uint32(top))
	for i, p := range props {
		at := eventInfoHeader + i*propertyInfoSize
		binary.LittleEndian.PutUint32(b[at:], p.flags)
		str(at+4, p.name)
		binary.LittleEndian.PutUint16(b[at+8:], p.in)
		binary.LittleEndian.PutUint16(b[at+10:], p.out)
		if p.flags&propStruct == 0 {
			str(at+12, p.mapName)
		}
		binary.LittleEndian.PutUint16(b[at+16:], p.count)
		binary.LittleEndian.PutUint16(b[at+18:], p.length)
	}
	return append(b, strs...)
}

// buildMapInfo writes a provider GUID and an EVENT_MAP_INFO.
func buildMapInfo(name string, bits bool, entries ...MapEntry) []byte {
	n := mapInfoHeader + 8*len(entries)
	b := make([]byte, n)
	var strs []byte
	off := func(s string) uint32 {
		o := uint32(n + len(strs))
		for _, u := range utf16.Encode([]rune(s)) {
			strs = binary.LittleEndian.AppendUint16(strs, u)
		}
		strs = append(strs, 0, 0)
		return o
	}
	binary.LittleEndian.PutUint32(b, off(name))
	flags := uint32(mapValueMap)
	if bits {
		flags = mapBitMap
	}
	binary.LittleEndian.PutUint32(b[4:], flags)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(entries)))
	for i, e := range entries {
		binary.LittleEndian.PutUint32(b[mapInfoHeader+8*i:], off(e.Name+" ")) // TDH pads names
		binary.LittleEndian.PutUint32(b[mapInfoHeader+8*i+4:], uint32(e.Value))
	}
	return append(append(testProvider[:len(testProvider):len(testProvider)], b...), strs...)
}

func metaEvent(opcode uint8, payload []byte) *Event {
	return &Event{HeaderKind: TraceHeader, ProviderGUID: MetaDataGUID, Opcode: opcode, Payload: payload, Offset: 4096}
}

// sampleProps exercises every way a field gets its size: counts and
// lengths from earlier fields, fixed arrays, structs, maps, pointers,
// strings, addresses, times and SIDs.
var sampleProps = []tdhProp{
	{name: "Count", in: uint16(InUInt16), count: 1},
	{name: "Items", flags: propParamCount, in: uint16(InUInt32), count: 0},
	{name: "Len", in: uint16(InUInt32), count: 1},
	{name: "Blob", flags: propParamLength, in: uint16(InBinary), count: 1, length: 2},
	{name: "Name", in: uint16(InUnicodeString), count: 1},
	{name: "Flags", in: uint16(InUInt32), mapName: "FlagMap", count: 1},
	{name: "Kind", in: uint16(InUInt8), mapName: "KindMap", count: 1},
	{name: "Ptr", in: uint16(InPointer), count: 1},
	{name: "Addr", in: uint16(InBinary), out: uint16(OutSocketAddress), count: 1, length: 16},
	{name: "Pairs", flags: propStruct, in: 14, out: 2, count: 2},
	{name: "When", in: uint16(InFileTime), count: 1},
	{name: "User", in: uint16(InSID), count: 1},
	{name: "Tag", in: uint16(InAnsiString), count: 1, length: 4},
	{name: "Delta", in: uint16(InInt16), count: 1},
	// Pairs' members.
	{name: "A", in: uint16(InInt16), count: 1},
	{name: "B", in: uint16(InHexInt32), count: 1},
}

func samplePayload() []byte {
	p := []byte{2, 0, 7, 0, 0, 0, 9, 0, 0, 0, 3, 0, 0, 0, 0xde, 0xad, 0xbe}
	for _, u := range utf16.Encode([]rune("héllo")) {
		p = binary.LittleEndian.AppendUint16(p, u)
	}
	p = append(p, 0, 0)
	p = binary.LittleEndian.AppendUint32(p, 5)     // Flags: 1|4
	p = append(p, 2)                               // Kind
	p = binary.LittleEndian.AppendUint64(p, 0xabc) // Ptr
	p = append(p, 2, 0, 0x1f, 0x90, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0)
	p = binary.LittleEndian.AppendUint16(p, 0xfffe) // A = -2
	p = binary.LittleEndian.AppendUint32(p, 0x10)
	p = binary.LittleEndian.AppendUint16(p, 3)
	p = binary.LittleEndian.AppendUint32(p, 0xff)
	p = binary.LittleEndian.AppendUint64(p, 132404547824039008) // 2020-07-29T00:06:22.4039008Z
	p = append(p, 1, 2, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0, 7, 0, 0, 0)
	p = append(p, 'a', 'b', 0, 0)
	p = binary.LittleEndian.AppendUint16(p, 0xffff) // Delta = -1
	return p
}

const sampleJSON = `{"Count":2,"Items":[7,9],"Len":3,"Blob":"0xdeadbe","Name":"héllo",` +
	`"Flags":"One|Four","Kind":"Two","Ptr":"0xabc","Addr":"10.0.0.1:8080",` +
	`"Pairs":[{"A":-2,"B":"0x10"},{"A":3,"B":"0xff"}],"When":"2020-07-29T00:06:22.4039008Z",` +
	`"User":"S-1-5-18-7","Tag":"ab","Delta":-1}`

func TestEventInfoDecode(t *testing.T) {
	var s Schemas
	info := buildEventInfo(1001, 0, "Sample-Provider", "Thing", "win:Info", 14, sampleProps)
	if ok, err := s.Observe(metaEvent(OpEventInfo, info)); !ok || err != nil {
		t.Fatalf("Observe(EventInfo) = %v, %v", ok, err)
	}
	// The maps arrive after the event that uses them, as in real traces.
	for _, m := range [][]byte{
		buildMapInfo("FlagMap", true, MapEntry{4, "Four"}, MapEntry{1, "One"}, MapEntry{0, "None"}),
		buildMapInfo("KindMap", false, MapEntry{1, "One"}, MapEntry{2, "Two"}),
	} {
		if ok, err := s.Observe(metaEvent(OpEventMapInfo, m)); !ok || err != nil {
			t.Fatalf("Observe(EventMapInfo) = %v, %v", ok, err)
		}
	}
	e := &Event{HeaderKind: EventHeader, ProviderGUID: testProvider, ID: 1001, PointerSize: 8, Payload: samplePayload()}
	es := s.Lookup(e)
	if es == nil {
		t.Fatal("no schema")
	}
	if es.Name != "Thing" || es.Provider != "Sample-Provider" || es.Task != 7 {
		t.Errorf("name %q provider %q task %d", es.Name, es.Provider, es.Task)
	}
	if name, _ := s.ProviderName(testProvider); name != "Sample-Provider" {
		t.Errorf("ProviderName = %q", name)
	}
	out, err := es.AppendJSON(nil, e.Payload, 8)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != sampleJSON {
		t.Errorf("JSON\n got %s\nwant %s", out, sampleJSON)
	}
	if !json.Valid(out) {
		t.Error("invalid JSON")
	}
	txt, err := es.AppendText(nil, e.Payload, 8)
	if err != nil {
		t.Fatal(err)
	}
	if want := `Count=2 Items=[7 9] Len=3 Blob=0xdeadbe Name="héllo" Flags="One|Four" Kind="Two" Ptr=0xabc`; !strings.HasPrefix(string(txt), want) {
		t.Errorf("text\n got %s\nwant %s…", txt, want)
	}
	// Values a map does not name, as the generated enums write them.
	odd := append([]byte(nil), e.Payload...)
	odd[29], odd[33] = 0x0d, 3 // Flags 1|4|8, Kind 3
	if out, err := es.AppendJSON(nil, odd, 8); err != nil || !strings.Contains(string(out), `"Flags":"One|Four|0x8","Kind":"KindMap(0x3)"`) {
		t.Errorf("unnamed values: %s, %v", out, err)
	}
	// Every truncation fails with the field and offset, never a panic.
	for n := 0; n < len(e.Payload); n++ {
		_, err := es.AppendJSON(nil, e.Payload[:n], 8)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Offset > n || fe.Field == "" {
			t.Fatalf("payload cut to %d bytes: %v", n, err)
		}
	}
	// The error names the element and member.
	var fe *FieldError
	if _, err := es.AppendJSON(nil, e.Payload[:67], 8); !errors.As(err, &fe) || fe.Field != "Pairs[1].B" || fe.Offset != 66 {
		t.Errorf("cut inside Pairs[1].B: %v", err)
	}
	// With 4-byte pointers the pointer takes 4 bytes and the rest shifts.
	p4 := append(append([]byte(nil), e.Payload[:38]...), e.Payload[42:]...)
	out4, err := es.AppendJSON(nil, p4, 4)
	if err != nil || string(out4) != sampleJSON {
		t.Errorf("4-byte pointers: %s, %v", out4, err)
	}
}

func TestEventInfoNames(t *testing.T) {
	for _, c := range []struct {
		task, op string
		opcode   uint8
		want     string
	}{
		{"Create", "win:Info", 0, "Create"},
		{"ProcessStart", "win:Start", 1, "ProcessStart/Start"},
		{"ETW_TASK_PROVIDER", "ETW_OPCODE_ENABLE", 18, "ETW_TASK_PROVIDER/ETW_OPCODE_ENABLE"},
		{"", "", 0, "EventID(5)"},
	} {
		es, err := parseEventInfo(buildEventInfo(5, c.opcode, "P", c.task, c.op, 0, nil))
		if err != nil {
			t.Fatal(err)
		}
		if es.Name != c.want {
			t.Errorf("task %q opcode %q: %q, want %q", c.task, c.op, es.Name, c.want)
		}
	}
}

func TestEventInfoErrors(t *testing.T) {
	good := buildEventInfo(1, 0, "P", "T", "", 2, sampleProps[:2])
	badOffset := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(badOffset[52:], uint32(len(good)+10))
	forward := buildEventInfo(1, 0, "P", "T", "", 2, []tdhProp{{name: "Items", flags: propParamCount, in: uint16(InUInt32), count: 1}, {name: "Count", in: uint16(InUInt16)}})
	unknown := buildEventInfo(1, 0, "P", "T", "", 1, []tdhProp{{name: "X", in: 99}})
	tooMany := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(tooMany[100:], 1<<30)
	badStruct := buildEventInfo(1, 0, "P", "T", "", 1, []tdhProp{{name: "S", flags: propStruct, in: 5, out: 3}})
	for name, c := range map[string]struct {
		p    []byte
		want string
	}{
		"short":         {good[:100], "payload of 100 bytes, want at least 112"},
		"string offset": {badOffset, "has no terminator"},
		"forward count": {forward, "count property 1 is not an earlier property"},
		"in-type":       {unknown, "in-type 99"},
		"properties":    {tooMany, "exceed the payload"},
		"struct":        {badStruct, "struct members 5..8 outside"},
	} {
		_, err := ParseEventInfo(metaEvent(OpEventInfo, c.p))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "offset 4096") {
			t.Errorf("%s: %v, want %q and the event's offset", name, err, c.want)
		}
	}
	if _, _, err := ParseEventMapInfo(metaEvent(OpEventMapInfo, buildMapInfo("M", false)[:20])); err == nil {
		t.Error("short map accepted")
	}
	if _, err := ParseEventInfo(&Event{Offset: 1}); err == nil {
		t.Error("ParseEventInfo of another event accepted")
	}
}

// manifestData splits xml into ManifestData events of chunk bytes.
func manifestData(g clrimpl.GUID, xml string, chunk int) []*Event {
	var parts []string
	for len(xml) > chunk {
		parts = append(parts, xml[:chunk])
		xml = xml[chunk:]
	}
	parts = append(parts, xml)
	var evs []*Event
	for i, part := range parts {
		p := []byte{1, 1, 0, 0x5B, 0, 0, 0, 0}
		binary.LittleEndian.PutUint16(p[4:], uint16(len(parts)))
		binary.LittleEndian.PutUint16(p[6:], uint16(i))
		evs = append(evs, &Event{HeaderKind: EventHeader, ProviderGUID: g, ID: ManifestDataID, Version: 1,
			Opcode: ManifestDataOpcode, Payload: append(p, part...), Offset: int64(1000 * (i + 1))})
	}
	return evs
}

const sampleManifest = `<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">
 <instrumentation xmlns:win="http://manifests.microsoft.com/win/2004/08/windows/events">
  <events xmlns="http://schemas.microsoft.com/win/2004/08/events">
<provider name="My-Source" guid="{1c95126e-7eea-49a9-a3fe-a378b03ddb4d}" symbol="My-Source">
 <tasks>
  <task name="Request" value="1"/>
  <task name="Batch" value="2"/>
 </tasks>
 <opcodes>
  <opcode name="Flush" value="11"/>
 </opcodes>
 <keywords>
  <keyword name="Net" mask="0x4"/>
 </keywords>
 <maps>
  <valueMap name="Color">
   <map value="0x0" message="$(string.map_Color.Red)"/>
   <map value="0x1" message="$(string.map_Color.Blue)"/>
  </valueMap>
 </maps>
 <events>
  <event value="1" version="0" level="win:Informational" keywords="Net" opcode="win:Start" task="Request" template="RequestArgs"/>
  <event value="2" version="1" level="win:Verbose" opcode="Flush" task="Batch" template="BatchArgs"/>
 </events>
 <templates>
  <template tid="RequestArgs">
   <data name="url" inType="win:UnicodeString"/>
   <data name="color" inType="win:Int32" map="Color"/>
   <data name="ok" inType="win:Boolean"/>
  </template>
  <template tid="BatchArgs">
   <data name="n" inType="win:UInt16"/>
   <data name="ids" inType="win:Int64" count="n"/>
   <data name="when" inType="win:Double"/>
  </template>
 </templates>
</provider>
</events>
</instrumentation>
<localization>
 <resources culture="en-US">
  <stringTable>
   <string id="map_Color.Red" value="Red"/>
   <string id="map_Color.Blue" value="Blue"/>
  </stringTable>
 </resources>
</localization>
</instrumentationManifest>`

func TestManifestData(t *testing.T) {
	var s Schemas
	evs := manifestData(testProvider, sampleManifest, 700)
	if len(evs) < 3 {
		t.Fatalf("%d chunks", len(evs))
	}
	req := &Event{HeaderKind: EventHeader, ProviderGUID: testProvider, ID: 1, PointerSize: 8}
	for i, e := range evs {
		if ok, err := s.Observe(e); !ok || err != nil {
			t.Fatalf("chunk %d: %v, %v", i, ok, err)
		}
		if i < len(evs)-1 && s.Lookup(req) != nil {
			t.Fatalf("described after chunk %d of %d", i, len(evs))
		}
		if ms := s.Lookup(e); ms == nil || ms.Name != "ManifestData" {
			t.Fatalf("chunk %d has no ManifestData schema", i)
		}
	}
	es := s.Lookup(req)
	if es == nil {
		t.Fatal("event 1 not described after the last chunk")
	}
	if es.Name != "Request/Start" || es.Provider != "My-Source" || es.Keywords != 4 || es.Level != 4 || es.Opcode != 1 {
		t.Errorf("event 1: %+v", es)
	}
	if ms := s.Lookup(evs[0]); ms.Provider != "My-Source" {
		t.Errorf("ManifestData provider %q", ms.Provider)
	}
	p := []byte{'h', 0, 'i', 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}
	if out, err := es.AppendJSON(nil, p, 8); err != nil || string(out) != `{"url":"hi","color":"Blue","ok":true}` {
		t.Errorf("event 1: %s, %v", out, err)
	}
	batch := s.Lookup(&Event{HeaderKind: EventHeader, ProviderGUID: testProvider, ID: 2, Version: 1})
	if batch == nil || batch.Name != "Batch/Flush" || batch.Opcode != 11 {
		t.Fatalf("event 2: %+v", batch)
	}
	p = binary.LittleEndian.AppendUint16(nil, 2)
	p = binary.LittleEndian.AppendUint64(p, 5)
	p = binary.LittleEndian.AppendUint64(p, ^uint64(0))
	p = binary.LittleEndian.AppendUint64(p, 0x3ff8000000000000) // 1.5
	if out, err := batch.AppendJSON(nil, p, 8); err != nil || string(out) != `{"n":2,"ids":[5,-1],"when":1.5}` {
		t.Errorf("event 2: %s, %v", out, err)
	}
	// A count larger than the payload fails before anything is read.
	p[0] = 0xff
	if _, err := batch.AppendJSON(nil, p, 8); err == nil || !strings.Contains(err.Error(), "field ids at payload offset 2") {
		t.Errorf("count 255: %v", err)
	}
}

func TestManifestDataErrors(t *testing.T) {
	for name, c := range map[string]struct {
		xml  string
		want string
	}{
		"xml":    {"<instrumentationManifest><instrumentation>", "manifest:"},
		"guid":   {strings.Replace(sampleManifest, "{1c95126e-7eea-49a9-a3fe-a378b03ddb4d}", "nope", 1), `guid "nope"`},
		"intype": {strings.Replace(sampleManifest, "win:Double", "win:Quad", 1), `inType "win:Quad"`},
		"count":  {strings.Replace(sampleManifest, `count="n"`, `count="m"`, 1), `count "m" is neither`},
		"task":   {strings.Replace(sampleManifest, `value="2"/>`, `value="x"/>`, 1), `task Batch: "x"`},
	} {
		var s Schemas
		var err error
		for _, e := range manifestData(testProvider, c.xml, 1<<20) {
			_, err = s.Observe(e)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "offset 1000") {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	var s Schemas
	e := manifestData(testProvider, sampleManifest, 1<<20)[0]
	e.Payload[3] = 0
	if _, err := s.Observe(e); err == nil {
		t.Error("ManifestData without its magic accepted")
	}
}

// FuzzEventInfo: no description and payload make the parser or the
// decoder panic or read out of bounds, and what decodes is valid JSON.
func FuzzEventInfo(f *testing.F) {
	f.Add(buildEventInfo(1001, 0, "Sample-Provider", "Thing", "win:Info", 14, sampleProps), samplePayload(), true)
	f.Add(buildEventInfo(1, 0, "P", "T", "", 2, sampleProps[:2]), []byte{200, 0, 1, 2, 3, 4}, false)
	f.Add(buildMapInfo("M", true, MapEntry{1, "A"}), []byte{}, false)
	f.Fuzz(func(t *testing.T, info, payload []byte, wide bool) {
		ptr := 4
		if wide {
			ptr = 8
		}
		var s Schemas
		s.Observe(metaEvent(OpEventMapInfo, info))
		s.Observe(metaEvent(OpEventInfo, info))
		es, err := parseEventInfo(info)
		if err != nil {
			return
		}
		s.add(es)
		out, err := es.AppendJSON(nil, payload, ptr)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
		es.AppendText(nil, payload, ptr)
		checkColumns(t, es, payload, ptr, err == nil)
	})
}

// FuzzManifestData: no manifest makes the EventSource manifest reader or
// the decoder of what it describes panic.
func FuzzManifestData(f *testing.F) {
	f.Add([]byte(sampleManifest), []byte{'h', 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0})
	f.Add([]byte(`<instrumentationManifest><instrumentation><events><provider guid="{1c95126e-7eea-49a9-a3fe-a378b03ddb4d}"><events><event value="1" template="t"/></events><templates><template tid="t"><struct name="s" count="2"><data name="x" inType="win:UInt8"/></struct></template></templates></provider></events></instrumentation></instrumentationManifest>`), []byte{1, 2})
	f.Fuzz(func(t *testing.T, xml, payload []byte) {
		provs, err := parseEventSourceManifest(xml)
		if err != nil {
			return
		}
		for _, p := range provs {
			for _, es := range p.events {
				out, err := es.AppendJSON(nil, payload, 8)
				if err == nil && !json.Valid(out) {
					t.Fatalf("invalid JSON %s", out)
				}
				checkColumns(t, es, payload, 8, err == nil)
			}
		}
	})
}

// TestEventInfoStructBlowUp: structs that share their members cannot make
// a description of exponential size: eight layers of ten structs, each
// holding the ten of the next layer, would be 10^8 fields.
func TestEventInfoStructBlowUp(t *testing.T) {
	var props []tdhProp
	for layer := 0; layer < 8; layer++ {
		for i := 0; i < 10; i++ {
			if layer == 7 {
				props = append(props, tdhProp{name: "v", in: uint16(InUInt8), count: 1})
			} else {
				props = append(props, tdhProp{name: "s", flags: propStruct, in: uint16(10 * (layer + 1)), out: 10, count: 1})
			}
		}
	}
	_, err := parseEventInfo(buildEventInfo(1, 0, "P", "T", "", 10, props))
	if err == nil || !strings.Contains(err.Error(), "more than 4096 fields") {
		t.Fatalf("got %v", err)
	}
}

// TestSchemaColumns: a described event's columns, one per field (two for
// a map-bound one), typed as the generated events' are, with the values
// the JSON form has.
func TestSchemaColumns(t *testing.T) {
	var s Schemas
	s.Observe(metaEvent(OpEventInfo, buildEventInfo(1001, 0, "Sample-Provider", "Thing", "win:Info", 14, sampleProps)))
	s.Observe(metaEvent(OpEventMapInfo, buildMapInfo("KindMap", false, MapEntry{1, "One"}, MapEntry{2, "Two"})))
	e := &Event{HeaderKind: EventHeader, ProviderGUID: testProvider, ID: 1001, PointerSize: 8, Payload: samplePayload()}
	es := s.Lookup(e)
	var names []string
	for _, c := range es.Columns() {
		h := ""
		if c.Hex {
			h = "(hex)"
		}
		names = append(names, c.Name+":"+c.Kind.String()+h)
	}
	want := "Count:uint16 Items:json Len:uint32 Blob:binary Name:string Flags:uint32 Kind:uint8 Kind_name:string " +
		"Ptr:uint64(hex) Addr:string Pairs:json When:string User:string Tag:string Delta:int16"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("columns\n got %s\nwant %s", got, want)
	}
	var r columntest.Recorder
	if err := es.AppendColumns(&r, e.Payload, 8); err != nil {
		t.Fatal(err)
	}
	wantVals := []string{"2", "[7,9]", "3", "\xde\xad\xbe", "héllo", "5", "2", "Two", "2748", "10.0.0.1:8080",
		`[{"A":-2,"B":"0x10"},{"A":3,"B":"0xff"}]`, "2020-07-29T00:06:22.4039008Z", "S-1-5-18-7", "ab", "-1"}
	if strings.Join(r.Vals, "|") != strings.Join(wantVals, "|") {
		t.Errorf("values\n got %q\nwant %q", r.Vals, wantVals)
	}
	if err := es.AppendColumns(&columntest.Recorder{}, e.Payload[:20], 8); err == nil {
		t.Error("a short payload gave a row")
	}
}

// checkColumns: a row of es's columns for payload has one value per
// column when the payload decodes, and fails when it does not.
func checkColumns(t *testing.T, es *EventSchema, payload []byte, ptr int, decodes bool) {
	var r columntest.Recorder
	err := es.AppendColumns(&r, payload, ptr)
	if (err == nil) != decodes {
		t.Fatalf("columns: %v, JSON decodes: %v", err, decodes)
	}
	if err == nil && len(r.Vals) != len(es.Columns()) {
		t.Fatalf("%d values for %d columns", len(r.Vals), len(es.Columns()))
	}
}

// TestSchemaDecodeAllocs: decoding a described payload allocates nothing
// when the buffer has room: numbers, strings, maps, times, SIDs and
// addresses are written in place.
func TestSchemaDecodeAllocs(t *testing.T) {
	var s Schemas
	s.Observe(metaEvent(OpEventInfo, buildEventInfo(1001, 0, "Sample-Provider", "Thing", "win:Info", 14, sampleProps)))
	s.Observe(metaEvent(OpEventMapInfo, buildMapInfo("KindMap", false, MapEntry{1, "One"}, MapEntry{2, "Two"})))
	s.Observe(metaEvent(OpEventMapInfo, buildMapInfo("FlagMap", true, MapEntry{4, "Four"}, MapEntry{1, "One"})))
	e := &Event{HeaderKind: EventHeader, ProviderGUID: testProvider, ID: 1001, PointerSize: 8, Payload: samplePayload()}
	es := s.Lookup(e)
	tl := tlEvent(sampleTLMeta, sampleTLPayload(), "P")
	tls := s.Lookup(tl)
	buf := make([]byte, 0, 4096)
	for name, f := range map[string]func(){
		"TDH JSON":         func() { es.AppendJSON(buf[:0], e.Payload, 8) },
		"TDH text":         func() { es.AppendText(buf[:0], e.Payload, 8) },
		"TraceLogging":     func() { tls.AppendJSON(buf[:0], tl.Payload, 8) },
		"TraceLogging get": func() { s.Lookup(tl) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations", name, n)
		}
	}
}

// BenchmarkSchemaDecode: a described payload to JSON, and to a row of
// columns, through its description: the synthetic TDH event (every kind of
// field), a TraceLogging event and a kernel TCP send.
func BenchmarkSchemaDecode(b *testing.B) {
	var s Schemas
	s.Observe(metaEvent(OpEventInfo, buildEventInfo(1001, 0, "Sample-Provider", "Thing", "win:Info", 14, sampleProps)))
	s.Observe(metaEvent(OpEventMapInfo, buildMapInfo("KindMap", false, MapEntry{1, "One"}, MapEntry{2, "Two"})))
	tdh := &Event{HeaderKind: EventHeader, ProviderGUID: testProvider, ID: 1001, PointerSize: 8, Payload: samplePayload()}
	tl := tlEvent(sampleTLMeta, sampleTLPayload(), "P")
	send := pl{}.u32(4).u32(65652).u32(0x4d00800a).u32(0x3700800a).u16(0xbd01).u16(0x16fa).u32(1534).u32(1534).u32(0).ptr(0, 8)
	tcp := kev(GroupTcpIP, 10, 8, send)
	for _, c := range []struct {
		name string
		es   *EventSchema
		e    *Event
	}{{"tdh", s.Lookup(tdh), tdh}, {"tracelogging", s.Lookup(tl), tl}, {"kernel-tcp-send", KernelSchema(tcp), tcp}} {
		buf := make([]byte, 0, 4096)
		b.Run("to=json/event="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.e.Payload)))
			for i := 0; i < b.N; i++ {
				if _, err := c.es.AppendJSON(buf[:0], c.e.Payload, 8); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("to=columns/event="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.e.Payload)))
			var r discardColumns
			for i := 0; i < b.N; i++ {
				if err := c.es.AppendColumns(&r, c.e.Payload, 8); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// discardColumns is a clrimpl.ColumnAppender that keeps nothing.
type discardColumns struct{ scratch [256]byte }

func (r *discardColumns) Bool(bool)         {}
func (r *discardColumns) Int(int64)         {}
func (r *discardColumns) Uint(uint64)       {}
func (r *discardColumns) Float(float64)     {}
func (r *discardColumns) GUID(clrimpl.GUID) {}
func (r *discardColumns) Bytes([]byte)      {}
func (r *discardColumns) Scratch() []byte   { return r.scratch[:0] }
