package clrimpl

import (
	"bytes"
	"net/netip"
	"testing"
	"time"
)

func TestFileTime(t *testing.T) {
	for _, c := range []struct {
		ft   FileTime
		text string
	}{
		{0, "0001-01-01T00:00:00Z"},
		{133230003907010610, "2023-03-11T09:26:30.701061Z"},
		{116444736000000000, "1970-01-01T00:00:00Z"},
		{1, "1601-01-01T00:00:00.0000001Z"},
	} {
		if got := string(c.ft.AppendText(nil)); got != c.text {
			t.Errorf("%d: %s, want %s", c.ft, got, c.text)
		}
		if got := string(c.ft.AppendJSON(nil)); got != `"`+c.text+`"` {
			t.Errorf("%d: JSON %s", c.ft, got)
		}
		if back := FileTimeOf(c.ft.Time()); back != c.ft {
			t.Errorf("%d: FileTimeOf(Time()) = %d", c.ft, back)
		}
	}
	if FileTimeOf(time.Time{}) != 0 || !FileTime(0).Time().IsZero() {
		t.Error("the zero time is not FILETIME 0")
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(10, func() { FileTime(133230003907010610).AppendJSON(buf[:0]) }); n != 0 {
		t.Errorf("AppendJSON allocates %v times", n)
	}
}

func TestWBEMSID(t *testing.T) {
	sid := []byte{1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0, 0x20, 2, 0, 0} // S-1-5-32-544
	for _, ptr := range []int{4, 8} {
		wire := append(make([]byte, 2*ptr), sid...)
		wire[0] = 0x10 // the TOKEN_USER's pointer
		wire[ptr] = 7  // its attributes
		n, ok := WBEMSIDLen(append(wire, 0xAA), 0, ptr)
		if !ok || n != len(wire) {
			t.Fatalf("ptr %d: WBEMSIDLen = %d %v, want %d", ptr, n, ok, len(wire))
		}
		s := MakeWBEMSID(wire, ptr)
		if s.String() != "S-1-5-32-544" || string(s.AppendJSON(nil)) != `"S-1-5-32-544"` || s.IsEmpty() || !bytes.Equal(s.SID(), sid) {
			t.Errorf("ptr %d: %s %s", ptr, s, s.AppendJSON(nil))
		}
		if got := AppendWBEMSID(nil, s, ptr); !bytes.Equal(got, wire) {
			t.Errorf("ptr %d: same pointer size: % x, want % x", ptr, got, wire)
		}
		other := 12 - ptr
		again := AppendWBEMSID(nil, s, other)
		m, ok := WBEMSIDLen(again, 0, other)
		back := MakeWBEMSID(again, other)
		if !ok || m != len(again) || !back.Equal(s) || again[other] != 7 {
			t.Errorf("ptr %d written with %d: % x", ptr, other, again)
		}
		// Cut anywhere, the SID does not fit.
		for cut := range len(wire) {
			if _, ok := WBEMSIDLen(wire[:cut], 0, ptr); ok && cut != 4 {
				t.Errorf("ptr %d cut at %d: fits", ptr, cut)
			}
		}
	}
	none := []byte{0, 0, 0, 0, 1, 2}
	if n, ok := WBEMSIDLen(none, 0, 8); !ok || n != 4 {
		t.Errorf("no SID: %d %v", n, ok)
	}
	s := MakeWBEMSID(none[:4], 8)
	if !s.IsEmpty() || s.String() != "" || string(s.AppendJSON(nil)) != `""` || !bytes.Equal(AppendWBEMSID(nil, s, 4), none[:4]) {
		t.Errorf("no SID: %q", s)
	}
	var zero WBEMSID
	if !zero.IsEmpty() || !zero.Equal(s) || !bytes.Equal(AppendWBEMSID(nil, zero, 8), none[:4]) {
		t.Error("the zero WBEMSID is not no SID")
	}
	// A hostile sub-authority count never reads past the buffer.
	bad := append(make([]byte, 16), 1, 255, 0, 0, 0, 0, 0, 5)
	bad[0] = 1
	if _, ok := WBEMSIDLen(bad, 0, 8); ok {
		t.Error("255 sub-authorities in 8 bytes fit")
	}
	if _, ok := WBEMSIDLen(bad, -1, 8); ok {
		t.Error("a negative offset fits")
	}
	if got := WBEMSIDOf(sid); got.String() != "S-1-5-32-544" {
		t.Errorf("WBEMSIDOf: %s", got)
	}
}

func TestAddresses(t *testing.T) {
	v4 := netip.MustParseAddr("10.1.2.3")
	b := AppendIPv4(nil, v4)
	if !bytes.Equal(b, []byte{10, 1, 2, 3}) || ReadIPv4(b, 0) != v4 {
		t.Errorf("IPv4: % x", b)
	}
	if got := AppendIPv4(nil, netip.MustParseAddr("::ffff:10.1.2.3")); !bytes.Equal(got, b) {
		t.Errorf("IPv4 mapped into IPv6: % x", got)
	}
	if got := AppendIPv4(nil, netip.Addr{}); !bytes.Equal(got, []byte{0, 0, 0, 0}) {
		t.Errorf("zero: % x", got)
	}
	v6 := netip.MustParseAddr("2001:db8::1")
	b = AppendIPv6(nil, v6)
	if len(b) != 16 || ReadIPv6(b, 0) != v6 {
		t.Errorf("IPv6: % x", b)
	}
	if got := AppendIPv6(nil, netip.Addr{}); !bytes.Equal(got, make([]byte, 16)) {
		t.Errorf("zero: % x", got)
	}
	if got := string(AppendJSONAddr(nil, v6)); got != `"2001:db8::1"` {
		t.Errorf("JSON %s", got)
	}
	if got := string(AppendJSONAddr(nil, netip.Addr{})); got != `""` {
		t.Errorf("JSON of the zero address %s", got)
	}
}

func TestTrimNUL(t *testing.T) {
	raw := append(UTF16Of("ab").Bytes(), 0, 0, 'c', 0)
	if got := MakeUTF16(raw).TrimNUL(); got.String() != "ab" {
		t.Errorf("UTF16: %q", got)
	}
	// A NUL byte inside a character is no NUL character.
	if got := MakeUTF16([]byte{0, 1, 0, 0}).TrimNUL(); got.Len() != 1 {
		t.Errorf("UTF16 U+0100: %d characters", got.Len())
	}
	if got := MakeAnsi([]byte("ab\x00c")).TrimNUL(); got.String() != "ab" {
		t.Errorf("Ansi: %q", got)
	}
	if got := MakeUTF16(UTF16Of("abc").Bytes()).TrimNUL(); got.String() != "abc" {
		t.Errorf("no NUL: %q", got)
	}
	if got := AppendFixed(nil, []byte("abc"), 5); string(got) != "abc\x00\x00" {
		t.Errorf("AppendFixed pads: %q", got)
	}
	if got := AppendFixed(nil, []byte("abcdef"), 4); string(got) != "abcd" {
		t.Errorf("AppendFixed cuts: %q", got)
	}
}
