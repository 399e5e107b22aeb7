package dynamic

import (
	"encoding/binary"
	"testing"
)

// TestTraceLoggingChar16: a 16-bit integer whose out-type is STRING is a
// character (EventSource writes .NET's char so: TraceLoggingDataType.Char16)
// and an array of them a string, as TraceEvent shows them; an 8-bit one
// stays a number, as TraceEvent shows it (primitive-types.baseline.txt's
// char_type=77).
func TestTraceLoggingChar16(t *testing.T) {
	meta := tlMeta("E",
		tlField("c16", 0x86, 2), // UINT16, out-type STRING
		tlField("i16", 0x85, 2), // INT16, out-type STRING
		tlField("c8", 0x84, 2),  // UINT8, out-type STRING
		tlField("arr", 0xC6, 2), // a counted array of UINT16 STRING
		tlField("n16", 6),       // UINT16 with no out-type
	)
	d, err := ParseTraceLogging(Header{}, meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := binary.LittleEndian.AppendUint16(nil, 'A')
	p = binary.LittleEndian.AppendUint16(p, 'z')
	p = append(p, 'b')
	p = binary.LittleEndian.AppendUint16(p, 3)
	p = append(p, u16s("hi")...)
	p = binary.LittleEndian.AppendUint16(p, 0)
	p = binary.LittleEndian.AppendUint16(p, 65)
	js, err := d.AppendJSON(nil, p, 8)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"c16":"A","i16":"z","c8":98,"arr":"hi","n16":65}`; string(js) != want {
		t.Errorf("JSON\n got %s\nwant %s", js, want)
	}
	txt, err := d.AppendText(nil, p, 8)
	if err != nil {
		t.Fatal(err)
	}
	if want := `c16="A" i16="z" c8=98 arr="hi" n16=65`; string(txt) != want {
		t.Errorf("text\n got %s\nwant %s", txt, want)
	}
}

// TestSystemTimeNotADate: a SYSTEMTIME whose parts are no date (unset, a
// month 13, the 31st of February, an hour 24) comes out as its parts,
// which nothing takes for a time, not as the date time.Date would carry
// them over into; a good one is RFC 3339.
func TestSystemTimeNotADate(t *testing.T) {
	d := &Description{Provider: "P", Name: "E", Fields: []Field{{Name: "st", Kind: SystemTime}}}
	st := func(parts ...uint16) []byte {
		var b []byte
		for _, v := range parts {
			b = binary.LittleEndian.AppendUint16(b, v)
		}
		return b
	}
	for _, c := range []struct {
		p          []byte
		json, text string
	}{
		{st(2024, 2, 4, 29, 13, 5, 9, 42), `{"st":"2024-02-29T13:05:09.042Z"}`, `st="2024-02-29T13:05:09.042Z"`},
		{st(0, 0, 0, 0, 0, 0, 0, 0), `{"st":"0000-00-00 00:00:00.000"}`, `st="0000-00-00 00:00:00.000"`},
		{st(2023, 13, 0, 1, 0, 0, 0, 0), `{"st":"2023-13-01 00:00:00.000"}`, `st="2023-13-01 00:00:00.000"`},
		{st(2023, 2, 0, 31, 0, 0, 0, 0), `{"st":"2023-02-31 00:00:00.000"}`, `st="2023-02-31 00:00:00.000"`},
		{st(2023, 2, 0, 29, 0, 0, 0, 0), `{"st":"2023-02-29 00:00:00.000"}`, `st="2023-02-29 00:00:00.000"`},
		{st(2023, 5, 0, 1, 24, 0, 0, 1000), `{"st":"2023-05-01 24:00:00.1000"}`, `st="2023-05-01 24:00:00.1000"`},
	} {
		js, err := d.AppendJSON(nil, c.p, 8)
		if err != nil || string(js) != c.json {
			t.Errorf("% x: JSON %s, %v; want %s", c.p, js, err, c.json)
		}
		txt, err := d.AppendText(nil, c.p, 8)
		if err != nil || string(txt) != c.text {
			t.Errorf("% x: text %s, %v; want %s", c.p, txt, err, c.text)
		}
	}
}
