package schema

import (
	"errors"
	"strings"
	"testing"
)

// TestBrokenManifests loads each small broken manifest in testdata/broken
// and checks the whole error text: file:line: element: message, one line per
// problem.
func TestBrokenManifests(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"unknown_intype.man", []string{
			`unknown_intype.man:25: template T: field "X": unknown inType "win:Int128"`}},
		{"count_missing.man", []string{
			`count_missing.man:25: template T: field "X": count="Nope" names no earlier field of the same template or struct`}},
		// A literal that no payload could hold (clrgen's samples ran out
		// of memory on 100,000,000 elements) or a negative one.
		{"count_huge.man", []string{
			`count_huge.man:25: template T: field "X": count="100000000" is more than an event's payload can hold (at most 65535)`}},
		{"count_negative.man", []string{
			`count_negative.man:25: template T: field "X": count="-1" is negative`}},
		{"count_not_integer.man", []string{
			`count_not_integer.man:26: template T: field "X": count="Name" names a utf16 field, not an integer`}},
		{"count_later.man", []string{
			`count_later.man:25: template T: field "X": count="N" names no earlier field of the same template or struct`}},
		{"length_missing.man", []string{
			`length_missing.man:25: template T: field "X": length="Size" names no earlier field of the same template or struct`}},
		{"length_not_integer.man", []string{
			`length_not_integer.man:26: template T: field "X": length="G" names a guid field, not an integer`}},
		{"binary_no_length.man", []string{
			`binary_no_length.man:25: template T: field "X": win:Binary needs length=`}},
		{"undefined_template.man", []string{
			`undefined_template.man:29: event E2: template "Missing" is not defined`}},
		{"undefined_map.man", []string{
			`undefined_map.man:25: template T: field "X": map "NoSuchMap" is not defined`}},
		{"undefined_task.man", []string{
			`undefined_task.man:29: event E2: task "Loader" is not defined`}},
		{"undefined_opcode.man", []string{
			`undefined_opcode.man:29: event E2: opcode "Load" is not defined (for task "GC")`}},
		{"undefined_level.man", []string{
			`undefined_level.man:29: event E2: level "win:Chatty" is not defined`}},
		{"undefined_keyword.man", []string{
			`undefined_keyword.man:29: event E2: keyword "JitKeyword" is not defined`}},
		{"duplicate_event.man", []string{
			`duplicate_event.man:29: event E_Again: duplicate (provider Test, id 1, version 0): also event E at duplicate_event.man:28`}},
		{"duplicate_symbol.man", []string{
			`duplicate_symbol.man:29: event E: symbol already used at duplicate_symbol.man:28`}},
		{"malformed.man", []string{
			`malformed.man:25: XML: element <data> closed by </field>`}},
		{"bad_number.man", []string{
			`bad_number.man:7: keyword GCKeyword: mask: "0xZZ" is not a 64-bit unsigned number`,
			`bad_number.man:29: event E2: value: "seventy" is not a 16-bit unsigned number`}},
		{"map_message_missing.man", []string{
			`map_message_missing.man:18: map ReasonMap: message "$(string.Map.Large)" is not in the string table`}},
		{"empty_struct.man", []string{
			`empty_struct.man:25: template T: field "Values": struct has no fields`}},
		// An unknown inType with a map: the one error, not a second one
		// about the map "on a invalid field".
		{"unknown_intype_map.man", []string{
			`unknown_intype_map.man:25: template T: field "X": unknown inType "win:Int128"`}},
		{"utf16.man", []string{
			`utf16.man:1: the file is UTF-16 (its byte order mark says so); save it as UTF-8 (iconv -f UTF-16 -t UTF-8) and change its <?xml encoding?> to match`}},
		{"unsupported_attribute.man", []string{
			`unsupported_attribute.man:25: template T: field "X": unsupported attribute scale`}},

		// YAML schemas are checked the same way, with their own lines.
		// yaml.v3 reports a parser error at the line it numbers for the
		// construct being parsed (here the unclosed flow mapping).
		{"syntax.yaml", []string{
			`syntax.yaml:6: YAML: did not find expected ',' or '}'`}},
		{"type.yaml", []string{
			"type.yaml:8: YAML: cannot unmarshal !!str `seventy` into uint16"}},
		{"source_newline.yaml", []string{
			`source_newline.yaml:3: source: "small.man\nmore" has a control character at byte 9`}},
		{"no_symbol.yaml", []string{
			`no_symbol.yaml:7: event value=1 version=0: missing symbol`}},
		{"undefined_template.yaml", []string{
			`undefined_template.yaml:10: template T: field "Reason": map "ReasonMap" is not defined`,
			`undefined_template.yaml:13: event E2: template "Missing" is not defined`}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := "testdata/broken/" + tt.file
			var s *Schema
			var err error
			if strings.HasSuffix(tt.file, ".yaml") {
				s, err = LoadYAML(path)
			} else {
				s, err = LoadManifest(path)
			}
			if err == nil {
				t.Fatalf("loaded without error: %d providers", len(s.Providers))
			}
			if s != nil {
				t.Errorf("returned a schema with the error")
			}
			if got, want := err.Error(), strings.Join(tt.want, "\n"); got != want {
				t.Errorf("error:\n%s\nwant:\n%s", got, want)
			}
			var se *Error
			if !errors.As(err, &se) || se.Pos.File != tt.file || se.Pos.Line == 0 {
				t.Errorf("error is not a located *schema.Error: %#v", err)
			}
		})
	}
}

// TestBrokenLineMatchesSource checks that the reported line is the line of
// the offending element, found independently by text search.
func TestBrokenLineMatchesSource(t *testing.T) {
	tests := []struct{ file, element string }{
		{"unknown_intype.man", `inType="win:Int128"`},
		{"count_later.man", `count="N"`},
		{"undefined_template.man", `template="Missing"`},
		{"duplicate_event.man", `symbol="E_Again"`},
		{"map_message_missing.man", `$(string.Map.Large)`},
		{"empty_struct.man", `<struct name="Values"`},
	}
	for _, tt := range tests {
		_, err := LoadManifest("testdata/broken/" + tt.file)
		var se *Error
		if !errors.As(err, &se) {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if want := lineOf(t, "testdata/broken/"+tt.file, tt.element); se.Pos.Line != want {
			t.Errorf("%s: error at line %d, element %s is on line %d", tt.file, se.Pos.Line, tt.element, want)
		}
	}
}

// TestValidateCollectsAll checks that one run reports every problem, in
// document order.
func TestValidateCollectsAll(t *testing.T) {
	s := loadSmall(t)
	rt := s.Provider("Test-Runtime")
	rt.Event("BulkType").Template = "Nope"
	rt.Template("GCStart_V2").Fields[2].Map = "NoMap"
	err := Validate(s)
	if err == nil {
		t.Fatal("Validate accepted a broken schema")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `map "NoMap" is not defined`) || !strings.Contains(lines[1], `template "Nope" is not defined`) {
		t.Errorf("want two errors (map, then template), got:\n%s", err)
	}
}
