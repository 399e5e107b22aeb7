package schema_test

import (
	"fmt"
	"log"

	"github.com/clrgo/clrevents/schema"
)

// A small schema in the YAML form of clr.yaml: one provider, a map, a
// template and two versions of an event.
const smallYAML = `
source: example.man
providers:
  - name: Microsoft-Windows-DotNETRuntime
    guid: e13c0d23-ccbc-4e12-931b-d9cc2eee27e4
    symbol: MICROSOFT_WINDOWS_DOTNETRUNTIME_PUBLISHER
    keywords:
      - {name: GCKeyword, mask: 0x1}
    tasks:
      - {name: GarbageCollection, value: 1}
    maps:
      - name: GCReasonMap
        kind: valueMap
        entries:
          - {value: 0, name: AllocSmall}
          - {value: 1, name: Induced}
    templates:
      - tid: GCStart
        fields:
          - {name: Count, inType: 'win:UInt32'}
          - {name: Reason, inType: 'win:UInt32', map: GCReasonMap}
      - tid: GCStart_V1
        fields:
          - {name: Count, inType: 'win:UInt32'}
          - {name: Reason, inType: 'win:UInt32', map: GCReasonMap}
          - {name: ClrInstanceID, inType: 'win:UInt16'}
          - {name: Heap, inType: 'win:Pointer'}
          - {name: Name, inType: 'win:UnicodeString'}
    events:
      - {value: 1, version: 0, symbol: GCStart, task: GarbageCollection, opcode: 'win:Start', level: 'win:Informational', keywords: [GCKeyword], template: GCStart}
      - {value: 1, version: 1, symbol: GCStart_V1, task: GarbageCollection, opcode: 'win:Start', level: 'win:Informational', keywords: [GCKeyword], template: GCStart_V1}
`

// Parse a schema (LoadYAML for a file, LoadManifest or ParseManifest for
// the XML manifest), then Lower it: the lowered Model has every name
// resolved and every field's wire kind, size and offset.
func Example() {
	s, err := schema.ParseYAML("example.yaml", []byte(smallYAML))
	if err != nil {
		log.Fatal(err) // names file:line and the element
	}
	m, err := schema.Lower(s)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range m.Providers {
		fmt.Printf("%s {%s}\n", p.Name, p.GUID)
		for _, e := range p.Events {
			fmt.Printf("  %s: id %d v%d, opcode %d, level %d, keywords %#x\n",
				e.Symbol, e.Value, e.Version, e.OpcodeValue, e.LevelValue, e.KeywordsMask)
			t := e.Template
			for _, f := range t.Fields {
				switch {
				case f.Map != nil:
					fmt.Printf("    %s %s (map %s) at %s\n", f.Name, f.Kind, f.Map.Name, f.Offset)
				case f.Fixed:
					fmt.Printf("    %s %s at %s\n", f.Name, f.Kind, f.Offset)
				default:
					fmt.Printf("    %s %s, variable size\n", f.Name, f.Kind)
				}
			}
			if t.Variable() {
				fmt.Printf("    fixed prefix: %d fields, %s bytes\n", t.PrefixLen, t.PrefixSize)
			}
		}
	}
	// Output:
	// Microsoft-Windows-DotNETRuntime {e13c0d23-ccbc-4e12-931b-d9cc2eee27e4}
	//   GCStart: id 1 v0, opcode 1, level 4, keywords 0x1
	//     Count uint32 at 0
	//     Reason uint32 (map GCReasonMap) at 4
	//   GCStart_V1: id 1 v1, opcode 1, level 4, keywords 0x1
	//     Count uint32 at 0
	//     Reason uint32 (map GCReasonMap) at 4
	//     ClrInstanceID uint16 at 8
	//     Heap pointer at 10
	//     Name utf16, variable size
	//     fixed prefix: 4 fields, 10+1*ptr bytes
}

// Load the checked-in CLR schema and apply the overrides, as the generator
// does, then look an event up by provider and symbol.
func ExampleLoadYAML() {
	s, err := schema.LoadYAML("clr.yaml")
	if err != nil {
		log.Fatal(err)
	}
	o, err := schema.LoadOverrides("overrides.yaml")
	if err != nil {
		log.Fatal(err)
	}
	if err := o.Apply(s); err != nil {
		log.Fatal(err)
	}
	p := s.Provider("Microsoft-Windows-DotNETRuntime")
	e := p.Event("GCStart_V2")
	fmt.Printf("%s: id %d version %d, task %s, opcode %s\n", e.Symbol, e.Value, e.Version, e.Task, e.Opcode)
	for _, f := range p.Template(e.Template).Fields {
		if f.Map != "" {
			fmt.Printf("  %s %s, map %s\n", f.Name, f.InType, f.Map)
		} else {
			fmt.Printf("  %s %s\n", f.Name, f.InType)
		}
	}
	// Output:
	// GCStart_V2: id 1 version 2, task GarbageCollection, opcode win:Start
	//   Count win:UInt32
	//   Depth win:UInt32
	//   Reason win:UInt32, map GCReasonMap
	//   Type win:UInt32, map GCTypeMap
	//   ClrInstanceID win:UInt16
	//   ClientSequenceNumber win:UInt64
}
