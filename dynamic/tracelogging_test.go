package dynamic

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/clrgo/clrevents/clrimpl"
)

// tlMeta builds TraceLogging event metadata: the size, one tag byte of 0,
// the name, then the fields' bytes as given.
func tlMeta(name string, fields ...[]byte) []byte {
	b := []byte{0, 0, 0}
	b = append(append(b, name...), 0)
	for _, f := range fields {
		b = append(b, f...)
	}
	binary.LittleEndian.PutUint16(b, uint16(len(b)))
	return b
}

// tlField is a field's name, NUL, then its type bytes.
func tlField(name string, types ...byte) []byte { return append(append([]byte(name), 0), types...) }

func tlTraits(name string) []byte {
	b := append([]byte{0, 0}, name...)
	b = append(b, 0)
	binary.LittleEndian.PutUint16(b, uint16(len(b)))
	return b
}

func u16s(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

var sampleTLMeta = tlMeta("Request",
	tlField("url", 22),           // counted UTF-16
	tlField("status", 7),         // int32
	tlField("ok", 0x84, 3),       // uint8 as Boolean
	tlField("ids", 0x40|10),      // uint64, count in the payload
	tlField("pair", 0x98, 2),     // struct of the next 2 fields
	tlField("a", 0x86, 4),        // uint16 as hex
	tlField("b", 2),              // NUL-terminated 8-bit string
	tlField("pairs", 0xD8, 1),    // array of structs of 1 field
	tlField("x", 3),              // int8
	tlField("addr", 0x8E, 9),     // binary as IPv6
	tlField("fixed", 0x26, 3, 0), // uint16 × 3, count in the metadata
	tlField("tagged", 0x88, 0x84, 0x80, 0x80, 0x80, 0x01), // uint32 as hex, with a field tag
	tlField("custom", 0x61, 2, 0, 0xAA, 0xBB),             // custom: 2 bytes of schema
)

func sampleTLPayload() []byte {
	p := binary.LittleEndian.AppendUint16(nil, 4)
	p = append(p, u16s("/a")...)
	p = binary.LittleEndian.AppendUint32(p, 0xfffffe0c) // -500
	p = append(p, 1)
	p = binary.LittleEndian.AppendUint16(p, 2)
	p = binary.LittleEndian.AppendUint64(p, 7)
	p = binary.LittleEndian.AppendUint64(p, 8)
	p = binary.LittleEndian.AppendUint16(p, 0xbeef)
	p = append(p, 'h', 'i', 0)
	p = binary.LittleEndian.AppendUint16(p, 3)
	p = append(p, 1, 0xff, 3)
	p = binary.LittleEndian.AppendUint16(p, 16)
	p = append(p, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)
	p = binary.LittleEndian.AppendUint16(p, 1)
	p = binary.LittleEndian.AppendUint16(p, 2)
	p = binary.LittleEndian.AppendUint16(p, 3)
	p = binary.LittleEndian.AppendUint32(p, 0x10)
	p = binary.LittleEndian.AppendUint16(p, 2)
	return append(p, 0xca, 0xfe)
}

const sampleTLJSON = `{"url":"/a","status":-500,"ok":true,"ids":[7,8],"pair":{"a":"0xbeef","b":"hi"},` +
	`"pairs":[{"x":1},{"x":-1},{"x":3}],"addr":"2001:db8::1","fixed":[1,2,3],"tagged":"0x10","custom":"0xcafe"}`

// tlHeader is the header of the test's TraceLogging events.
var tlHeader = Header{ProviderGUID: testProvider, Opcode: 1, Level: 4}

func TestTraceLogging(t *testing.T) {
	var s Descriptions
	traits, payload := tlTraits("My-TL-Provider"), sampleTLPayload()
	if ok, err := s.AddProviderTraits(testProvider, traits); !ok || err != nil {
		t.Fatalf("AddProviderTraits = %v, %v; want the provider named", ok, err)
	}
	if ok, _ := s.AddProviderTraits(testProvider, traits); ok {
		t.Error("a known provider named again")
	}
	if _, err := s.AddProviderTraits(clrimpl.GUID{1}, []byte{3, 0, 0}); err == nil {
		t.Error("traits without a name accepted")
	}
	es := s.TraceLogging(tlHeader, sampleTLMeta, traits)
	if es == nil {
		t.Fatal("no description")
	}
	if es.Name != "Request" || es.Provider != "My-TL-Provider" || es.Opcode != 1 || es.Level != 4 {
		t.Errorf("description %+v", es)
	}
	if s.TraceLogging(tlHeader, sampleTLMeta, traits) != es {
		t.Error("the metadata was parsed again")
	}
	out, err := es.AppendJSON(nil, payload, 8)
	if err != nil || string(out) != sampleTLJSON {
		t.Fatalf("JSON\n got %s (%v)\nwant %s", out, err, sampleTLJSON)
	}
	for n := 0; n < len(payload); n++ {
		if _, err := es.AppendJSON(nil, payload[:n], 8); err == nil {
			t.Fatalf("payload cut to %d bytes decoded", n)
		}
	}
	// The provider name comes from the first event that carries traits.
	other := s.TraceLogging(tlHeader, tlMeta("Ping"), nil)
	if other == nil || other.Name != "Ping" || other.Provider != "My-TL-Provider" {
		t.Errorf("an event without traits: %+v", other)
	}
	if out, err := other.AppendJSON(nil, nil, 8); err != nil || string(out) != "{}" {
		t.Errorf("no fields: %s, %v", out, err)
	}
	// Metadata that does not parse describes nothing, once.
	if d := s.TraceLogging(tlHeader, []byte{200, 0, 0}, nil); d != nil {
		t.Errorf("bad metadata described: %+v", d)
	}
}

func TestTraceLoggingErrors(t *testing.T) {
	for name, c := range map[string]struct {
		meta []byte
		want string
	}{
		"size":         {[]byte{200, 0, 0, 'x', 0}, "metadata size 200"},
		"name":         {tlMeta("Request")[:5], "metadata size"},
		"pointer":      {tlMeta("E", tlField("p", 16)), "in-type 16"},
		"empty struct": {tlMeta("E", tlField("s", 0x98, 0)), "struct s: has no fields"},
		"short struct": {tlMeta("E", tlField("s", 0x98, 3), tlField("a", 3)), "field name"},
		"out-type":     {tlMeta("E", []byte{'f', 0, 0x88}), "out-type"},
		"count":        {tlMeta("E", []byte{'f', 0, 0x26, 1}), "count"},
	} {
		_, err := ParseTraceLogging(tlHeader, c.meta, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	// Every truncation of good metadata fails or describes fewer fields;
	// none panics.
	for n := 0; n < len(sampleTLMeta); n++ {
		m := append([]byte(nil), sampleTLMeta[:n]...)
		if n >= 2 {
			binary.LittleEndian.PutUint16(m, uint16(n))
		}
		if es, err := parseTLMeta(m); err == nil && len(es.Fields) >= 10 {
			t.Fatalf("metadata cut to %d bytes gave %d fields", n, len(es.Fields))
		}
	}
}

// FuzzTraceLogging: no metadata and payload make the TraceLogging parser
// or the decoder panic, and what decodes is valid JSON.
func FuzzTraceLogging(f *testing.F) {
	f.Add(sampleTLMeta, sampleTLPayload())
	f.Add(tlMeta("E", tlField("s", 0xD8, 2), tlField("a", 0x4A), tlField("b", 1)), []byte{2, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 'a', 0, 0, 0})
	f.Fuzz(func(t *testing.T, meta, payload []byte) {
		es, err := parseTLMeta(meta)
		if err != nil {
			return
		}
		out, err := es.AppendJSON(nil, payload, 8)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
		es.AppendText(nil, payload, 4)
		checkColumns(t, es, payload, 8, err == nil)
	})
}
