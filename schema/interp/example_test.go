package interp_test

import (
	"encoding/binary"
	"fmt"
	"log"
	"unicode/utf16"

	"github.com/clrgo/clrevents/schema"
	"github.com/clrgo/clrevents/schema/interp"
)

// A small schema in the YAML form of schema/clr.yaml.
const smallYAML = `
source: example.man
providers:
  - name: Microsoft-Windows-DotNETRuntime
    guid: e13c0d23-ccbc-4e12-931b-d9cc2eee27e4
    symbol: MICROSOFT_WINDOWS_DOTNETRUNTIME_PUBLISHER
    maps:
      - name: GCReasonMap
        kind: valueMap
        entries:
          - {value: 0, name: AllocSmall}
          - {value: 1, name: Induced}
    templates:
      - tid: GCStart_V1
        fields:
          - {name: Count, inType: 'win:UInt32'}
          - {name: Reason, inType: 'win:UInt32', map: GCReasonMap}
          - {name: Heap, inType: 'win:Pointer'}
          - {name: Name, inType: 'win:UnicodeString'}
    events:
      - {value: 1, version: 1, symbol: GCStart_V1, opcode: 'win:Start', level: 'win:Informational', template: GCStart_V1}
`

// Lower a schema, make a Decoder with New, and decode a payload by provider,
// event ID, version and pointer size. (For the full CLR schema use
// gen.Load("schema/clr.yaml", "schema/overrides.yaml") to get the Model.)
func Example() {
	s, err := schema.ParseYAML("example.yaml", []byte(smallYAML))
	if err != nil {
		log.Fatal(err)
	}
	m, err := schema.Lower(s)
	if err != nil {
		log.Fatal(err)
	}
	d, err := interp.New(m)
	if err != nil {
		log.Fatal(err)
	}

	// The payload of a GCStart_V1 event from a 64-bit process: Count 7,
	// Reason 1 (Induced), Heap, then Name as NUL-terminated UTF-16LE.
	le := binary.LittleEndian
	var payload []byte
	payload = le.AppendUint32(payload, 7)
	payload = le.AppendUint32(payload, 1)
	payload = le.AppendUint64(payload, 0x7ff6_1234_0000)
	for _, u := range utf16.Encode([]rune("gc")) {
		payload = le.AppendUint16(payload, u)
	}
	payload = le.AppendUint16(payload, 0)

	v, n, err := d.Decode("Microsoft-Windows-DotNETRuntime", 1, 1, 8, payload)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, %d of %d bytes\n", v.Event.Symbol, n, len(payload))
	fmt.Println("Reason:", v.Get("Reason").Text())
	fmt.Println("Name:", v.Get("Name").String())
	fmt.Println(string(v.AppendJSON(nil)))

	// A short payload is an error naming the event, the field and the offset.
	_, _, err = d.Decode("Microsoft-Windows-DotNETRuntime", 1, 1, 8, payload[:10])
	fmt.Println(err)
	// Output:
	// GCStart_V1, 22 of 22 bytes
	// Reason: Induced
	// Name: gc
	// {"Count":7,"Reason":"Induced","Heap":"0x7ff612340000","Name":"gc"}
	// interp: GCStart_V1: field "Heap" at byte 8: payload too short
}
