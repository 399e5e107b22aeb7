package dynamic

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/columntest"
)

// TestDescriptor: a description's descriptor names the event as the
// description does, lists its columns and writes by the description.
func TestDescriptor(t *testing.T) {
	d := &Description{ProviderGUID: testProvider, Provider: "P", ID: 7, Version: 2, Opcode: 1, Task: 3,
		Level: 4, Keywords: 0x10, Name: "Task/Start", Fields: []Field{
			{Name: "Count", Kind: Uint16},
			{Name: "Kind", Kind: Uint8, Map: NewMap("KindMap", false, []MapEntry{{1, "One"}})},
			{Name: "Items", Kind: Array, CountFrom: RefTo(0), Elem: &Field{Kind: Uint32}},
		}}
	desc := d.Descriptor()
	if desc != d.Descriptor() {
		t.Error("a second descriptor")
	}
	if desc.Provider != "P" || desc.ProviderGUID != testProvider || desc.ID != 7 || desc.Version != 2 ||
		desc.Opcode != 1 || desc.Task != 3 || desc.Level != 4 || desc.Keywords != 0x10 ||
		desc.Name != "Task/Start" || desc.DisplayName != "Task/Start" || desc.Fields != clrimpl.FieldWriter(d) {
		t.Errorf("descriptor %+v", desc)
	}
	var names []string
	for _, c := range desc.Columns {
		names = append(names, c.Name+":"+c.Kind.String())
	}
	if got := strings.Join(names, " "); got != "Count:uint16 Kind:uint8 Kind_name:string Items:json" {
		t.Errorf("columns %s", got)
	}
	p := []byte{2, 0, 1, 5, 0, 0, 0, 6, 0, 0, 0}
	out, err := desc.Fields.AppendJSON(nil, p, 8)
	if err != nil || string(out) != `{"Count":2,"Kind":"One","Items":[5,6]}` {
		t.Errorf("%s, %v", out, err)
	}
}

// TestLateMap: a map that arrives after the events that use it replaces
// their descriptions; a description handed out before is left as it
// was, so that its columns and rows keep agreeing.
func TestLateMap(t *testing.T) {
	var s Descriptions
	if err := s.AddEventInfo(buildEventInfo(1001, 0, "Sample-Provider", "Thing", "win:Info", 14, sampleProps)); err != nil {
		t.Fatal(err)
	}
	before := s.Lookup(testProvider, 1001, 0)
	cols := len(before.Columns())
	if err := s.AddEventMapInfo(buildMapInfo("KindMap", false, MapEntry{1, "One"}, MapEntry{2, "Two"})); err != nil {
		t.Fatal(err)
	}
	after := s.Lookup(testProvider, 1001, 0)
	if after == before {
		t.Fatal("the description was not replaced")
	}
	if len(before.Columns()) != cols || len(after.Columns()) != cols+1 {
		t.Errorf("columns: before %d, then %d and %d", cols, len(before.Columns()), len(after.Columns()))
	}
	p := samplePayload()
	b, err := before.AppendJSON(nil, p, 8)
	if err != nil || !strings.Contains(string(b), `"Kind":2`) {
		t.Errorf("before: %s, %v", b, err)
	}
	a, err := after.AppendJSON(nil, p, 8)
	if err != nil || !strings.Contains(string(a), `"Kind":"Two"`) {
		t.Errorf("after: %s, %v", a, err)
	}
	var r columntest.Recorder
	if err := before.AppendColumns(&r, p, 8); err != nil || len(r.Vals) != cols {
		t.Errorf("before: %d values for %d columns, %v", len(r.Vals), cols, err)
	}
	// A map of another provider, or of a name no field uses, changes
	// nothing.
	s.AddEventMapInfo(buildMapInfo("Other", false, MapEntry{1, "X"}))
	if s.Lookup(testProvider, 1001, 0) != after {
		t.Error("an unused map replaced the description")
	}
}

func u16(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

// TestEventSourceKinds: the kinds and formats only EventSource metadata
// uses, written as TraceEvent shows them: floats in their shortest 'g'
// form at their own precision (NaN as a string), DateTimes as times or,
// out of range, numbers, Decimals, UTF-8 characters (invalid bytes as
// U+FFFD), character arrays with every character, varints and locations.
func TestEventSourceKinds(t *testing.T) {
	d := &Description{Provider: "P", Name: "E", Fields: []Field{
		{Name: "f", Kind: Float32, Format: FormatG},
		{Name: "big", Kind: Float64, Format: FormatG},
		{Name: "nan", Kind: Float64, Format: FormatG},
		{Name: "json", Kind: Float64},
		{Name: "when", Kind: DateTime},
		{Name: "never", Kind: DateTime},
		{Name: "zero", Kind: FileTime},
		{Name: "dec", Kind: Decimal},
		{Name: "u8", Kind: Array, Count: 3, Elem: &Field{Kind: Char8}},
		{Name: "c16", Kind: Array, PrefixCount: true, Elem: &Field{Kind: Char16}},
		{Name: "v", Kind: VarInt},
		{Name: "rel", Kind: RelLoc, Elem: &Field{Kind: Uint16}},
		{Name: "b", Kind: Uint8, Format: FormatBool},
	}}
	p := binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.1))
	p = binary.LittleEndian.AppendUint64(p, math.Float64bits(1e20))
	p = binary.LittleEndian.AppendUint64(p, math.Float64bits(math.NaN()))
	p = binary.LittleEndian.AppendUint64(p, math.Float64bits(1e20))
	p = binary.LittleEndian.AppendUint64(p, 132404547824039008)
	p = binary.LittleEndian.AppendUint64(p, 1<<63-1)
	p = binary.LittleEndian.AppendUint64(p, 0)
	p = append(p, 0, 0, 2, 0, 0, 0, 0, 0, 0x39, 0x30, 0, 0, 0, 0, 0, 0) // 123.45: flags, hi, lo, mid
	p = append(p, 'a', 0xff, 0)
	p = binary.LittleEndian.AppendUint16(p, 2)
	p = append(p, u16("x\x00")...)
	p = append(p, 3)                                 // -2
	p = binary.LittleEndian.AppendUint32(p, 4<<16|1) // 4 bytes, 1 past the field
	p = append(p, 1, 7, 0, 8, 0)
	want := `{"f":0.1,"big":1e+20,"nan":"NaN","json":100000000000000000000,"when":"2020-07-29T00:06:22.4039008Z",` +
		`"never":9223372036854775807,"zero":"0001-01-01T00:00:00Z","dec":"123.45","u8":"a\ufffd\u0000",` +
		`"c16":"x\u0000","v":-2,"rel":[7,8],"b":true}`
	out, err := d.AppendJSON(nil, p, 8)
	if err != nil || !json.Valid(out) {
		t.Fatalf("%s, %v", out, err)
	}
	if string(out) != strings.Replace(want, `\ufffd`, "\ufffd", 1) {
		t.Errorf("JSON\n got %s\nwant %s", out, want)
	}
	txt, err := d.AppendText(nil, p, 8)
	if err != nil || !strings.HasPrefix(string(txt), `f=0.1 big=1e+20 nan="NaN" json=100000000000000000000 when="2020-07-29`) {
		t.Errorf("text %s, %v", txt, err)
	}
	var r columntest.Recorder
	if err := d.AppendColumns(&r, p, 8); err != nil {
		t.Fatal(err)
	}
	wantVals := []string{"0.10000000149011612", "1e+20", "NaN", "1e+20", "2020-07-29T00:06:22.4039008Z",
		"9223372036854775807", "0001-01-01T00:00:00Z", "123.45", "a\ufffd\x00", "x\x00", "-2", "[7,8]", "true"}
	if strings.Join(r.Vals, "|") != strings.Join(wantVals, "|") {
		t.Errorf("columns\n got %q\nwant %q", r.Vals, wantVals)
	}
	// A location outside the payload.
	bad := append([]byte(nil), p...)
	binary.LittleEndian.PutUint32(bad[len(bad)-9:], 40<<16|1)
	var fe *FieldError
	if _, err := d.AppendJSON(nil, bad, 8); !errors.As(err, &fe) || fe.Field != "rel" || fe.Offset != len(p)-9 ||
		fe.Event != "P/E" || !errors.Is(err, ErrPayload) {
		t.Errorf("bad location: %v", err)
	}
}

// TestDecimal: System.Decimal values across the 96-bit range and every
// scale, against math/big.
func TestDecimal(t *testing.T) {
	for _, c := range []struct {
		hi, mid, lo uint32
		scale       int
		neg         bool
	}{
		{0, 0, 0, 0, false}, {0, 0, 0, 3, false}, {0, 0, 12345, 2, true}, {0, 0, 5, 28, false},
		{0xffffffff, 0xffffffff, 0xffffffff, 0, false}, {0xffffffff, 0xffffffff, 0xffffffff, 28, true},
		{1, 0, 0, 10, false}, {0, 1, 0, 29, false}, // a scale beyond 28 counts as 28
	} {
		b := make([]byte, 16)
		flags := uint32(c.scale) << 16
		if c.neg {
			flags |= 0x80000000
		}
		binary.LittleEndian.PutUint32(b[0:], flags)
		binary.LittleEndian.PutUint32(b[4:], c.hi)
		binary.LittleEndian.PutUint32(b[8:], c.lo)
		binary.LittleEndian.PutUint32(b[12:], c.mid)
		v := new(big.Int).SetUint64(uint64(c.hi))
		v.Lsh(v, 64).Or(v, new(big.Int).SetUint64(uint64(c.mid)<<32|uint64(c.lo)))
		s := v.String()
		scale := min(c.scale, 28)
		for len(s) <= scale {
			s = "0" + s
		}
		want := s[:len(s)-scale]
		if scale > 0 {
			want += "." + s[len(s)-scale:]
		}
		if c.neg {
			want = "-" + want
		}
		if got := string(appendDecimal(nil, b, false)); got != want {
			t.Errorf("%+v: %s, want %s", c, got, want)
		}
		if got := string(appendDecimal(nil, b, true)); got != `"`+want+`"` {
			t.Errorf("%+v quoted: %s", c, got)
		}
	}
}

// TestCharArrayColumns: a TDH array of characters whose count another
// field gives is one string column of that many characters, as in the
// JSON form, and the columns after it stay in place.
func TestCharArrayColumns(t *testing.T) {
	var s Descriptions
	s.AddEventInfo(buildEventInfo(5, 0, "P", "T", "", 3, []tdhProp{
		{name: "N", in: uint16(inUInt16), count: 1},
		{name: "Chars", flags: propParamCount, in: uint16(inUnicodeChar), count: 0},
		{name: "After", in: uint16(inUInt32), count: 1},
	}))
	d := s.Lookup(testProvider, 5, 0)
	p := binary.LittleEndian.AppendUint16(nil, 3)
	p = append(p, u16("ab\x00")...)
	p = binary.LittleEndian.AppendUint32(p, 9)
	out, err := d.AppendJSON(nil, p, 8)
	if err != nil || string(out) != `{"N":3,"Chars":"ab","After":9}` {
		t.Errorf("JSON %s, %v", out, err)
	}
	var r columntest.Recorder
	if err := d.AppendColumns(&r, p, 8); err != nil || strings.Join(r.Vals, "|") != "3|ab|9" {
		t.Errorf("columns %q, %v", r.Vals, err)
	}
}

// TestHandMadeDescriptions: descriptions that name fields that are not
// there, arrays without an element type, kinds without a size and
// structs nested past the paths' depth give errors, never a panic.
func TestHandMadeDescriptions(t *testing.T) {
	deep := Field{Name: "leaf", Kind: Uint32}
	for i := 0; i < 3*maxDepth; i++ {
		deep = Field{Name: "s", Kind: Struct, Fields: []Field{deep}}
	}
	for name, d := range map[string]*Description{
		"forward count":  {Fields: []Field{{Name: "a", Kind: Array, CountFrom: RefTo(1), Elem: &Field{Kind: Uint8}}, {Name: "n", Kind: Uint8}}},
		"forward length": {Fields: []Field{{Name: "s", Kind: String16, LengthFrom: RefTo(3)}}},
		"no element":     {Fields: []Field{{Name: "a", Kind: Array, Count: 2}}},
		"no kind":        {Fields: []Field{{Name: "x"}}},
		"deep":           {Fields: []Field{deep}},
	} {
		p := []byte{1, 2}
		_, jerr := d.AppendJSON(nil, p, 8)
		_, terr := d.AppendText(nil, p, 8)
		cerr := d.AppendColumns(&columntest.Recorder{}, p, 8)
		var fe *FieldError
		if !errors.As(jerr, &fe) || terr == nil || cerr == nil {
			t.Errorf("%s: %v, %v, %v", name, jerr, terr, cerr)
		}
	}
}
