package clrimpl

import (
	"bytes"
	"testing"
)

func TestGUIDParseString(t *testing.T) {
	const s = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4"
	wire := []byte{0x23, 0x0d, 0x3c, 0xe1, 0xbc, 0xcc, 0x12, 0x4e, 0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}
	for _, in := range []string{s, "{" + s + "}", "{E13C0D23-CCBC-4E12-931B-D9CC2EEE27E4}"} {
		g, err := ParseGUID(in)
		if err != nil || !bytes.Equal(g[:], wire) || g.String() != s {
			t.Errorf("ParseGUID(%q) = % x (%s), %v", in, g[:], g, err)
		}
	}
	if g := GUIDFromFields(0xe13c0d23, 0xccbc, 0x4e12, [8]byte{0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}); g != MustParseGUID(s) {
		t.Errorf("GUIDFromFields = %s", g)
	}
	for _, bad := range []string{"", s[1:], s + "0", "{" + s, "e13c0d23xccbc-4e12-931b-d9cc2eee27e4", "g13c0d23-ccbc-4e12-931b-d9cc2eee27e4"} {
		if _, err := ParseGUID(bad); err == nil {
			t.Errorf("ParseGUID(%q) succeeded", bad)
		}
	}
	var g GUID
	if err := g.UnmarshalText([]byte(s)); err != nil || g.String() != s || g.IsZero() || !(GUID{}).IsZero() {
		t.Errorf("UnmarshalText: %s, %v", g, err)
	}
	if b, _ := g.MarshalText(); string(b) != s {
		t.Errorf("MarshalText = %s", b)
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = g.AppendText(buf[:0]) }); n != 0 {
		t.Errorf("AppendText: %v allocs per run, want 0", n)
	}
}
