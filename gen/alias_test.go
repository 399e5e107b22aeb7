package gen_test

import (
	"strings"
	"testing"

	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/schema"
)

// TestMapAliases: a name given to two values prints for both (one constant,
// the first value); two names for one value print the first.
func TestMapAliases(t *testing.T) {
	src := `source: alias.man
providers:
  - name: Microsoft-Windows-DotNETRuntime
    guid: e13c0d23-ccbc-4e12-931b-d9cc2eee27e4
    symbol: P
    maps:
      - name: KindMap
        kind: valueMap
        entries:
          - {value: 0x1, name: A}
          - {value: 0x1, name: B}
          - {value: 0x2, name: Same}
          - {value: 0x3, name: Same}
      - name: FlagsMap
        kind: bitMap
        entries:
          - {value: 0x1, name: F1}
          - {value: 0x1, name: F1Alias}
          - {value: 0x2, name: F2}
    templates:
      - tid: T
        fields:
          - {name: K, inType: 'win:UInt32', map: KindMap}
          - {name: F, inType: 'win:UInt32', map: FlagsMap}
    events:
      - {value: 1, version: 0, symbol: E, template: T}
`
	s, err := schema.ParseYAML("alias.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m, err := schema.Lower(s)
	if err != nil {
		t.Fatal(err)
	}
	files, err := gen.Generate(m, gen.Config{Sources: "alias.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	enums := string(files["runtime_enums_gen.go"])
	for _, want := range []string{
		"KindA    Kind = 0x1", "KindB    Kind = 0x1", "KindSame Kind = 0x2", // constants: one per name
		"case 0x1:\n\t\treturn append(b, \"A\"...), nil", // the first name of a value
		"case 0x3:\n\t\treturn append(b, \"Same\"...), nil",
		`{
	Name:  "F1",
	Value: 0x1,
}, {
	Name:  "F2",
	Value: 0x2,
}}`, // one flag name per value
	} {
		if !strings.Contains(enums, want) {
			t.Errorf("generated enums lack %q:\n%s", want, enums)
		}
	}
	if strings.Contains(enums, `"F1Alias"}`) {
		t.Error("the flag table names 0x1 twice")
	}
}
