package gen_test

import (
	"fmt"
	"log"
	"sort"

	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/schema"
)

// A tiny schema in the YAML form of schema/clr.yaml: one provider, one task,
// one event.
const tinyYAML = `
source: tiny.man
providers:
  - name: Microsoft-Windows-DotNETRuntime
    guid: e13c0d23-ccbc-4e12-931b-d9cc2eee27e4
    symbol: MICROSOFT_WINDOWS_DOTNETRUNTIME_PUBLISHER
    tasks:
      - {name: GarbageCollection, value: 1}
    templates:
      - tid: GCStart
        fields:
          - {name: Count, inType: 'win:UInt32'}
    events:
      - {value: 1, version: 0, symbol: GCStart, task: GarbageCollection, opcode: 'win:Start', level: 'win:Informational', template: GCStart}
`

// Lower a schema (gen.Load reads one from a file and applies overrides),
// then Generate the package's files in memory; WriteDir writes them.
func Example() {
	s, err := schema.ParseYAML("tiny.yaml", []byte(tinyYAML))
	if err != nil {
		log.Fatal(err)
	}
	m, err := schema.Lower(s)
	if err != nil {
		log.Fatal(err)
	}
	files, err := gen.Generate(m, gen.Config{Package: "tiny", Sources: "tiny.yaml"})
	if err != nil {
		log.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Println(name)
	}
	// Output:
	// package_gen.go
	// runtime_enums_gen.go
	// runtime_garbagecollection_gen.go
	// table_gen.go
}
