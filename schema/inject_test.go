package schema

import (
	"strings"
	"testing"
)

// TestControlCharactersRejected: a newline in a name would end a generated
// comment and let manifest text into generated code; the schema refuses it
// and says where.
func TestControlCharactersRejected(t *testing.T) {
	const yml = `source: x.man
providers:
  - name: P
    guid: e13c0d23-ccbc-4e12-931b-d9cc2eee27e4
    symbol: P
    maps:
      - name: "M\n*/ func init() { panic(1) } /*"
        kind: valueMap
        entries:
          - {value: 0x1, name: One}
    templates:
      - tid: T
        fields:
          - {name: A, inType: 'win:UInt32', outType: "x\ny"}
    events:
      - {value: 1, version: 0, symbol: E, template: T}
`
	_, err := ParseYAML("inject.yaml", []byte(yml))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`inject.yaml:7: map: "M\n*/ func init() { panic(1) } /*" has a control character at byte 1`,
		`inject.yaml:14: template T: field: "x\ny" has a control character at byte 1`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
}

const insertSchema = `source: x.man
providers:
  - name: P
    guid: e13c0d23-ccbc-4e12-931b-d9cc2eee27e4
    symbol: P
    templates:
      - tid: T
        fields:
          - {name: Count, inType: 'win:UInt16'}
          - name: Values
            count: Count
            struct: true
            fields:
              - {name: Index, inType: 'win:UInt16'}
              - {name: Size, inType: 'win:UInt32'}
    events:
      - {value: 1, version: 0, symbol: E, template: T}
`

func TestInsertOverride(t *testing.T) {
	s, err := ParseYAML("x.yaml", []byte(insertSchema))
	if err != nil {
		t.Fatal(err)
	}
	o, err := ParseOverrides("o.yaml", []byte(`overrides:
  - why: padding the manifest leaves out
    providers: [P]
    template: T
    insertAfter: Values.Index
    insert:
      - {name: Padding, inType: 'win:UInt16'}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Apply(s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range s.Providers[0].Templates[0].Fields[1].Fields {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "Index,Padding,Size" {
		t.Errorf("element fields %s", got)
	}
	m, err := Lower(s)
	if err != nil {
		t.Fatal(err)
	}
	if es := m.Providers[0].Templates[0].Fields[1].ElemSize; es != (Size{Bytes: 8}) {
		t.Errorf("element size %v, want 8", es)
	}
	// Applying it again finds the field already there: a stale override.
	err = o.Apply(s)
	if err == nil || !strings.Contains(err.Error(), `o.yaml:2: override of P template T: field "Padding" is already there: drop this override`) {
		t.Errorf("second apply: %v", err)
	}
	for _, c := range []struct{ yaml, want string }{
		{"insertAfter: Values.Nope\n    insert: [{name: X, inType: 'win:UInt8'}]", `no field "Values.Nope"`},
		{"insertAfter: Nope.Index\n    insert: [{name: X, inType: 'win:UInt8'}]", `no struct "Nope"`},
		{"insertAfter: Count", "needs insert"},
	} {
		src := "overrides:\n  - why: w\n    providers: [P]\n    template: T\n    " + c.yaml + "\n"
		o, err := ParseOverrides("o.yaml", []byte(src))
		if err == nil {
			s, _ := ParseYAML("x.yaml", []byte(insertSchema))
			err = o.Apply(s)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}
}
