package schema

import (
	"strings"
	"testing"
)

// TestUnknownKeys: a misspelt key is an error at its line, in the schema
// and in the overrides, instead of being dropped.
func TestUnknownKeys(t *testing.T) {
	schemaSrc := `source: x.man
providers:
  - name: P
    guid: e13c0d23-ccbc-4e12-931b-d9cc2eee27e4
    symbol: P
    templates:
      - tid: T
        fields:
          - {name: Count, inType: 'win:UInt16'}
          - {name: Values, inType: 'win:UInt32', cout: Count}
    events:
      - {value: 1, version: 0, symbol: E, template: T, levl: 'win:Verbose'}
`
	_, err := ParseYAML("typo.yaml", []byte(schemaSrc))
	for _, want := range []string{
		`typo.yaml:10: YAML: unknown key "cout" (known: align, count, fields, inType, length, map, name, outType, rest, struct, walk)`,
		`typo.yaml:12: YAML: unknown key "levl"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("schema: %v\nwant %q", err, want)
		}
	}
	_, err = ParseOverrides("o.yaml", []byte(`overrides:
  - why: w
    providers: [P]
    map: M
    addEntrys:
      - {value: 0x1, name: A}
`))
	if err == nil || !strings.Contains(err.Error(), `o.yaml:5: YAML: unknown key "addEntrys"`) {
		t.Errorf("overrides: %v", err)
	}
	// Maps keyed by data (goNames) take any key.
	if _, err := ParseOverrides("o.yaml", []byte("overrides:\n  - why: w\n    providers: [P]\n    goNames: {AnyEvent: Name}\n")); err != nil {
		t.Errorf("goNames: %v", err)
	}
}
