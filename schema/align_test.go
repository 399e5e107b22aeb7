package schema

import "testing"

// TestAlignNatural checks GCLOHCompact's elements, laid out by the
// align: natural override, against the C layout: {u32, u32, u32, ptr, ptr}.
func TestAlignNatural(t *testing.T) {
	s, err := LoadYAML("clr.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o, err := LoadOverrides("overrides.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Apply(s); err != nil {
		t.Fatal(err)
	}
	m, err := Lower(s)
	if err != nil {
		t.Fatal(err)
	}
	var values *LField
	for _, p := range m.Providers {
		for _, tp := range p.Templates {
			if p.Name == "Microsoft-Windows-DotNETRuntime" && tp.TID == "GCLOHCompact" {
				values = tp.Fields[2]
			}
		}
	}
	if values == nil || values.Align != "natural" {
		t.Fatalf("GCLOHCompact Values: %+v", values)
	}
	for _, c := range []struct {
		ptr              int
		offsets          [5]int
		pad3, size, tail int
	}{
		{4, [5]int{0, 4, 8, 12, 16}, 0, 20, 0},
		{8, [5]int{0, 4, 8, 16, 24}, 4, 32, 0},
	} {
		for i, f := range values.Elem {
			if got := f.Offset.At(c.ptr); got != c.offsets[i] {
				t.Errorf("ptr %d: %s at %d, want %d", c.ptr, f.Name, got, c.offsets[i])
			}
		}
		if got := values.Elem[3].PadBefore.At(c.ptr); got != c.pad3 {
			t.Errorf("ptr %d: padding before TotalRefs %d, want %d", c.ptr, got, c.pad3)
		}
		if got := values.ElemSize.At(c.ptr); got != c.size {
			t.Errorf("ptr %d: element size %d, want %d", c.ptr, got, c.size)
		}
		if got := values.ElemTail.At(c.ptr); got != c.tail {
			t.Errorf("ptr %d: tail %d, want %d", c.ptr, got, c.tail)
		}
	}
}

func TestAlignErrors(t *testing.T) {
	for _, c := range []struct{ align, fields, want string }{
		{"packed", "[{name: A, inType: 'win:UInt32'}]", `align "packed": the only alignment is natural`},
		{"natural", "[{name: S, inType: 'win:UnicodeString'}]", "align natural needs fixed-size element fields"},
	} {
		src := `source: x.man
providers:
  - name: P
    guid: e13c0d23-ccbc-4e12-931b-d9cc2eee27e4
    symbol: P
    templates:
      - tid: T
        fields:
          - {name: Count, inType: 'win:UInt16'}
          - {name: Values, count: Count, struct: true, align: ` + c.align + `, fields: ` + c.fields + `}
`
		_, err := ParseYAML("a.yaml", []byte(src))
		if err == nil || err.Error() != `a.yaml:10: template T: field "Values": `+c.want {
			t.Errorf("%s: %v", c.align, err)
		}
	}
}
