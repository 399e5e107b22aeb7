package nettrace

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/clrgo/clrevents/dynamic"
	"github.com/clrgo/clrevents/internal/columntest"
)

// TestMetadataColumns: an EventSource event's columns, one per field,
// typed by its metadata, with the values AppendJSON writes.
func TestMetadataColumns(t *testing.T) {
	u16 := func(s string) []byte {
		var b []byte
		for _, u := range utf16.Encode([]rune(s)) {
			b = binary.LittleEndian.AppendUint16(b, u)
		}
		return b
	}
	m := &Metadata{Provider: "P", Name: "E", Fields: []Field{
		{Name: "ok", Type: TypeBoolean32},
		{Name: "c", Type: TypeUTF16CodeUnit},
		{Name: "sb", Type: TypeSByte},
		{Name: "i16", Type: TypeInt16},
		{Name: "u32", Type: TypeUInt32},
		{Name: "i64", Type: TypeInt64},
		{Name: "f", Type: TypeSingle},
		{Name: "d", Type: TypeDouble},
		{Name: "g", Type: TypeGUID},
		{Name: "s", Type: TypeNullTerminatedUTF16String},
		{Name: "when", Type: TypeDateTime},
		{Name: "ids", Type: TypeArray, Elem: &Field{Type: TypeInt32}},
		{Name: "chars", Type: TypeArray, Elem: &Field{Type: TypeUTF16CodeUnit}},
		{Name: "tag", Type: TypeFixedLengthArray, Count: 3, Elem: &Field{Type: TypeUTF8CodeUnit}},
		{Name: "o", Type: TypeObject, Fields: []Field{{Name: "x", Type: TypeByte}}},
		{Name: "v", Type: TypeVarInt},
		{Name: "uv", Type: TypeVarUInt},
	}}
	p := binary.LittleEndian.AppendUint32(nil, 1)
	p = append(p, u16("é")...)
	p = append(p, 0xfe)
	p = binary.LittleEndian.AppendUint16(p, 0xfffd)
	p = binary.LittleEndian.AppendUint32(p, 7)
	p = binary.LittleEndian.AppendUint64(p, ^uint64(4))
	p = binary.LittleEndian.AppendUint32(p, 0x3fc00000)         // 1.5
	p = binary.LittleEndian.AppendUint64(p, 0x4004000000000000) // 2.5
	p = append(p, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
	p = append(append(p, u16("hi")...), 0, 0)
	p = binary.LittleEndian.AppendUint64(p, 132404547824039008)
	p = binary.LittleEndian.AppendUint16(p, 2)
	p = binary.LittleEndian.AppendUint32(p, 5)
	p = binary.LittleEndian.AppendUint32(p, 6)
	p = binary.LittleEndian.AppendUint16(p, 2)
	p = append(p, u16("ab")...)
	p = append(p, 'x', 'y', 'z', 9)
	p = append(p, 3)       // zig-zag -2
	p = append(p, 0x80, 1) // 128
	var names []string
	for _, c := range m.Describe().Columns() {
		names = append(names, c.Name+":"+c.Kind.String())
	}
	wantCols := "ok:bool c:string sb:int8 i16:int16 u32:uint32 i64:int64 f:float32 d:float64 g:guid s:string when:string " +
		"ids:json chars:string tag:string o:json v:int64 uv:uint64"
	if got := strings.Join(names, " "); got != wantCols {
		t.Errorf("columns\n got %s\nwant %s", got, wantCols)
	}
	var r columntest.Recorder
	if err := m.Describe().AppendColumns(&r, p, 8); err != nil {
		t.Fatal(err)
	}
	want := []string{"true", "é", "-2", "-3", "7", "-5", "1.5", "2.5", "04030201-0605-0807-090a-0b0c0d0e0f10", "hi",
		"2020-07-29T00:06:22.4039008Z", "[5,6]", "ab", "xyz", `{"x":9}`, "-2", "128"}
	if strings.Join(r.Vals, "|") != strings.Join(want, "|") {
		t.Errorf("values\n got %q\nwant %q", r.Vals, want)
	}
	// Every cut payload fails as AppendJSON does.
	for n := 0; n < len(p); n++ {
		_, jerr := m.AppendJSON(nil, p[:n])
		cerr := m.Describe().AppendColumns(&columntest.Recorder{}, p[:n], 8)
		if (jerr == nil) != (cerr == nil) {
			t.Fatalf("cut to %d: JSON %v, columns %v", n, jerr, cerr)
		}
	}
}

// TestMetadataDecodeAllocs: an EventSource payload with arrays and a
// nested object writes as JSON without allocating when the buffer has
// room; its errors still name the element ("names[1]").
func TestMetadataDecodeAllocs(t *testing.T) {
	str := &Field{Type: TypeNullTerminatedUTF16String}
	m := &Metadata{Provider: "P", Name: "E", Fields: []Field{
		{Name: "names", Type: TypeArray, Elem: str},
		{Name: "o", Type: TypeObject, Fields: []Field{{Name: "x", Type: TypeByte}, {Name: "pairs", Type: TypeArray,
			Elem: &Field{Type: TypeObject, Fields: []Field{{Name: "s", Type: TypeNullTerminatedUTF16String}}}}}},
	}}
	p := []byte{2, 0, 'a', 0, 0, 0, 'b', 0, 0, 0, 9, 2, 0, 'c', 0, 0, 0, 'd', 0, 0, 0}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { m.AppendJSON(buf[:0], p) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
	out, err := m.AppendJSON(nil, p)
	if err != nil || string(out) != `{"names":["a","b"],"o":{"x":9,"pairs":[{"s":"c"},{"s":"d"}]}}` {
		t.Errorf("%s, %v", out, err)
	}
	for cut, want := range map[int]string{8: "names[1]", 19: "o.pairs[1].s"} {
		_, err := m.AppendJSON(nil, p[:cut])
		var pe *dynamic.FieldError
		if !errors.As(err, &pe) || pe.Field != want {
			t.Errorf("cut to %d: %v, want field %s", cut, err, want)
		}
	}
}

// TestDescribe: the description of a metadata record carries its
// identity; a record without fields, or whose field list did not parse,
// has none (its payload stays undescribed), though AppendJSON still
// writes what fields there are.
func TestDescribe(t *testing.T) {
	m := &Metadata{Provider: "P", ProviderGUID: ProviderGUID("P"), EventID: 3, Version: 1, Name: "E", Level: 4,
		Keywords: 8, Opcode: 1, Fields: []Field{{Name: "x", Type: TypeInt32}}}
	d := m.Describe()
	if d == nil || d != m.Describe() {
		t.Fatalf("description %p, then %p", d, m.Describe())
	}
	desc := d.Descriptor()
	if desc.Provider != "P" || desc.ProviderGUID != m.ProviderGUID || desc.ID != 3 || desc.Version != 1 ||
		desc.Name != "E" || desc.Level != 4 || desc.Keywords != 8 || desc.Opcode != 1 || len(desc.Columns) != 1 {
		t.Errorf("descriptor %+v", desc)
	}
	if (&Metadata{Provider: "P"}).Describe() != nil {
		t.Error("a description without fields")
	}
	broken := &Metadata{Provider: "P", Fields: m.Fields, FieldsErr: errors.New("bad tag")}
	if broken.Describe() != nil {
		t.Error("a description of a field list that did not parse")
	}
	if out, err := broken.AppendJSON(nil, []byte{1, 0, 0, 0}); err != nil || string(out) != `{"x":1}` {
		t.Errorf("AppendJSON %s, %v", out, err)
	}
	if out, err := (&Metadata{}).AppendJSON(nil, nil); err != nil || string(out) != "{}" {
		t.Errorf("no fields: %s, %v", out, err)
	}
}

// TestCharArraysStopAtNUL: an array of characters of any kind (counted,
// fixed-length, at a relative or data location), UTF-16 or UTF-8, is a
// string up to its first NUL, as TraceEvent reads every array of
// characters (its GetFixedUnicodeStringAt and GetFixedAnsiStringAt).
func TestCharArraysStopAtNUL(t *testing.T) {
	m := &Metadata{Provider: "P", Name: "E", Fields: []Field{
		{Name: "fixed8", Type: TypeFixedLengthArray, Count: 4, Elem: &Field{Type: TypeUTF8CodeUnit}},
		{Name: "fixed16", Type: TypeFixedLengthArray, Count: 3, Elem: &Field{Type: TypeUTF16CodeUnit}},
		{Name: "counted", Type: TypeArray, Elem: &Field{Type: TypeUTF16CodeUnit}},
		{Name: "rel", Type: TypeRelLoc, Elem: &Field{Type: TypeUTF16CodeUnit}},
		{Name: "whole", Type: TypeFixedLengthArray, Count: 2, Elem: &Field{Type: TypeUTF8CodeUnit}},
	}}
	p := []byte("ab\x00\x00")
	p = append(p, 'x', 0, 'y', 0, 0, 0)
	p = binary.LittleEndian.AppendUint16(p, 3)
	p = append(p, 'h', 0, 0, 0, 'i', 0)
	relAt := len(p)
	p = append(p, 0, 0, 0, 0)
	p = append(p, "ok"...)
	rel := len(p)
	p = append(p, 'Q', 0, 0, 0, 'R', 0)
	binary.LittleEndian.PutUint32(p[relAt:], uint32(6<<16|(rel-(relAt+4))))
	js, err := m.AppendJSON(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"fixed8":"ab","fixed16":"xy","counted":"h","rel":"Q","whole":"ok"}`; string(js) != want {
		t.Errorf("JSON\n got %s\nwant %s", js, want)
	}
}
