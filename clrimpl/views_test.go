package clrimpl

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// units returns the code units of UTF-16LE bytes (an odd last byte dropped).
func codeUnits(b []byte) []uint16 {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return u
}

// refUTF16String decodes with the standard library.
func refUTF16String(b []byte) string { return string(utf16.Decode(codeUnits(b))) }

// refUTF16Valid reports well-formedness with the standard library: decoding
// replaces unpaired surrogates, so only well-formed input survives a round trip.
func refUTF16Valid(b []byte) bool {
	u := codeUnits(b)
	return slices.Equal(utf16.Encode(utf16.Decode(u)), u)
}

// stdJSON encodes v with encoding/json, HTML escaping off.
func stdJSON(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// checkJSONString checks that js is valid JSON that decodes to want and that
// it is what encoding/json writes for want.
func checkJSONString(t testing.TB, what string, js []byte, want string) {
	t.Helper()
	if !json.Valid(js) {
		t.Fatalf("%s: invalid JSON %q", what, js)
	}
	var got string
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got != want {
		t.Fatalf("%s: JSON %s decodes to %q, want %q", what, js, got, want)
	}
	if std := stdJSON(t, want); !bytes.Equal(js, std) {
		t.Fatalf("%s: JSON %s, encoding/json writes %s", what, js, std)
	}
}

// checkUTF16 checks every read method of the view over raw against the
// standard library.
func checkUTF16(t testing.TB, raw []byte) {
	t.Helper()
	s := MakeUTF16(raw)
	want := refUTF16String(raw)
	if got := s.String(); got != want {
		t.Fatalf("MakeUTF16(% x).String() = %q, want %q", raw, got, want)
	}
	if got := s.AppendUTF8([]byte("pre")); string(got) != "pre"+want {
		t.Fatalf("MakeUTF16(% x).AppendUTF8 = %q, want %q", raw, got, "pre"+want)
	}
	if s.Len() != len(raw)/2 || len(s.Bytes()) != len(raw)&^1 || s.IsEmpty() != (len(raw) < 2) {
		t.Fatalf("MakeUTF16(% x): Len %d, Bytes %d, IsEmpty %v", raw, s.Len(), len(s.Bytes()), s.IsEmpty())
	}
	if got, want := s.Valid(), refUTF16Valid(raw); got != want {
		t.Fatalf("MakeUTF16(% x).Valid() = %v, want %v", raw, got, want)
	}
	if !s.EqualString(want) {
		t.Fatalf("MakeUTF16(% x).EqualString(%q) = false", raw, want)
	}
	for _, other := range []string{want + "x", want + "\x00", "x" + want, want + "\xff", "\xff" + want} {
		if s.EqualString(other) {
			t.Fatalf("MakeUTF16(% x).EqualString(%q) = true", raw, other)
		}
	}
	if len(want) > 0 {
		_, size := utf8.DecodeLastRuneInString(want)
		if cut := want[:len(want)-size]; s.EqualString(cut) {
			t.Fatalf("MakeUTF16(% x).EqualString(%q) = true", raw, cut)
		}
		if cut := want[:len(want)-1]; s.EqualString(cut) {
			t.Fatalf("MakeUTF16(% x).EqualString(%q) = true", raw, cut)
		}
	}
	checkJSONString(t, "UTF16.AppendJSON", s.AppendJSON(nil), want)
	if got := s.AppendJSON([]byte("[")); !bytes.Equal(got[1:], s.AppendJSON(nil)) || got[0] != '[' {
		t.Fatalf("AppendJSON does not append: %q", got)
	}
	if !s.Equal(s.Clone()) || !s.Equal(MakeUTF16(bytes.Clone(raw))) {
		t.Fatalf("MakeUTF16(% x) not Equal to its copy", raw)
	}
	if s.Valid() && !s.Equal(UTF16Of(want)) {
		t.Fatalf("UTF16Of(%q) = % x, want % x", want, UTF16Of(want).Bytes(), s.Bytes())
	}
}

func TestUTF16Decode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		raw   []byte
		want  string
		valid bool
	}{
		{"empty", nil, "", true},
		{"empty non-nil", []byte{}, "", true},
		{"odd byte only", []byte{'a'}, "", true},
		{"ascii", u16s("GCHeapStats"), "GCHeapStats", true},
		{"odd trailing byte dropped", append(u16s("ab"), 'c'), "ab", true},
		{"latin", u16s("café"), "café", true},
		{"cjk", u16s("日本語"), "日本語", true},
		{"controls and quotes", u16s("a\"b\\c\n\x01\x7f"), "a\"b\\c\n\x01\x7f", true},
		{"surrogate pair", u16(0xd83d, 0xde00), "😀", true},
		{"pair between ascii", u16('a', 0xd83d, 0xde00, 'b'), "a😀b", true},
		{"max pair", u16(0xdbff, 0xdfff), "\U0010ffff", true},
		{"lone high at end", u16('a', 0xd800), "a\ufffd", false},
		{"lone high then ascii", u16(0xd800, 'a'), "\ufffda", false},
		{"two highs then low", u16(0xd800, 0xd801, 0xdc00), "\ufffd\U00010400", false},
		{"lone low", u16(0xdc00), "\ufffd", false},
		{"reversed pair", u16(0xde00, 0xd83d), "\ufffd\ufffd", false},
		{"high then odd byte", append(u16(0xd800), 0xdc), "\ufffd", false},
		{"real U+FFFD", u16(0xfffd), "\ufffd", true},
		{"NUL unit", u16('a', 0, 'b'), "a\x00b", true},
		{"line separators", u16(0x2028, 0x2029), "\u2028\u2029", true},
		{"edges", u16(0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xffff), "\u007f\u0080\u07ff\u0800\ud7ff\ue000\uffff", true},
	} {
		s := MakeUTF16(tc.raw)
		if got := s.String(); got != tc.want {
			t.Errorf("%s: String() = %q, want %q", tc.name, got, tc.want)
		}
		if got := s.Valid(); got != tc.valid {
			t.Errorf("%s: Valid() = %v, want %v", tc.name, got, tc.valid)
		}
		checkUTF16(t, tc.raw)
	}
}

// randUTF16 returns n code units drawn to hit every decoding case often.
func randUTF16(r *rand.Rand, n int) []byte {
	pool := []uint16{0, 1, '\n', '"', '\\', '<', 0x7f, 0x80, 0xe9, 0x2028, 0x2029, 0xfffd, 0xffff, 0xd7ff, 0xe000}
	b := make([]byte, 0, 2*n+1)
	for range n {
		var u uint16
		switch r.IntN(6) {
		case 0:
			u = uint16(0x20 + r.IntN(0x5f))
		case 1:
			u = pool[r.IntN(len(pool))]
		case 2:
			u = uint16(0xd800 + r.IntN(0x400)) // high surrogate
		case 3:
			u = uint16(0xdc00 + r.IntN(0x400)) // low surrogate
		default:
			u = uint16(r.Uint32())
		}
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	if r.IntN(4) == 0 {
		b = append(b, byte(r.Uint32()))
	}
	return b
}

func TestUTF16Random(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		n := r.IntN(24)
		if i%10 == 0 {
			n = r.IntN(300) // past the stack buffer of String
		}
		checkUTF16(t, randUTF16(r, n))
	}
}

func FuzzUTF16(f *testing.F) {
	f.Add([]byte{})
	f.Add(u16s("GCHeapStats"))
	f.Add(u16(0xd83d, 0xde00, 'a', 0xd800))
	f.Add(u16(0xdc00, 0xd800, 0x2028, '"', '\\', 1))
	f.Add([]byte{0x41})
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkUTF16(t, raw)
	})
}

func TestUTF16Of(t *testing.T) {
	for _, s := range []string{"", "a", "Hello, 世界", "😀🎉", "\U0010ffff", "a\x00b", "\ufffd"} {
		u := UTF16Of(s)
		if want := u16s(s); !bytes.Equal(u.Bytes(), want) {
			t.Errorf("UTF16Of(%q) = % x, want % x", s, u.Bytes(), want)
		}
		if u.String() != s || !u.EqualString(s) || !u.Valid() {
			t.Errorf("UTF16Of(%q) does not round trip: %q", s, u.String())
		}
		if cap(u.Bytes()) != len(u.Bytes()) {
			t.Errorf("UTF16Of(%q): cap %d, len %d", s, cap(u.Bytes()), len(u.Bytes()))
		}
	}
	// Invalid UTF-8 becomes U+FFFD, as string-to-rune conversion does.
	if got, want := UTF16Of("a\xffb\xed\xa0\x80").String(), "a\ufffdb\ufffd\ufffd\ufffd"; got != want {
		t.Errorf("UTF16Of(invalid) = %q, want %q", got, want)
	}
}

func TestOwnedCopies(t *testing.T) {
	// Values built or cloned here own their bytes, with no spare capacity.
	for name, b := range map[string][]byte{
		"UTF16Of":      UTF16Of("abc").Bytes(),
		"UTF16.Clone":  MakeUTF16(u16s("abcde")).Clone().Bytes(),
		"AnsiOf":       AnsiOf("abc").Bytes(),
		"Ansi.Clone":   MakeAnsi([]byte("abcde")).Clone().Bytes(),
		"BinaryOf":     BinaryOf([]byte{1, 2, 3}).Bytes(),
		"Binary.Clone": MakeBinary([]byte{1, 2, 3}).Clone().Bytes(),
	} {
		if cap(b) != len(b) {
			t.Errorf("%s: cap %d, len %d", name, cap(b), len(b))
		}
	}
	if MakeUTF16(nil).Clone().Bytes() != nil || (Binary{}).Clone().Bytes() != nil {
		t.Error("Clone of nil is not nil")
	}
}

func TestUTF16At(t *testing.T) {
	s := UTF16Of("a😀")
	if got := []uint16{s.At(0), s.At(1), s.At(2)}; !slices.Equal(got, []uint16{'a', 0xd83d, 0xde00}) {
		t.Errorf("At = %x", got)
	}
	for _, i := range []int{-1, 3, 1 << 62} {
		checkIndexPanic(t, "UTF16.At", i, func() { s.At(i) })
	}
}

func TestUTF16EqualStringEdges(t *testing.T) {
	for _, tc := range []struct {
		raw  []byte
		str  string
		want bool
	}{
		{nil, "", true},
		{nil, "a", false},
		{u16('a'), "", false},
		{u16(0xd800), "\ufffd", true},        // as String() reads it
		{u16(0xd800), "\xed\xa0\x80", false}, // CESU-style bytes are invalid UTF-8
		{u16(0xd800), "\xff", false},         // invalid UTF-8 never matches
		{u16(0xfffd), "\xff", false},
		{u16(0xfffd), "\xef\xbf", false}, // cut short
		{u16(0xd83d, 0xde00), "😀", true},
		{u16(0xd83d, 0xde00), "\ufffd\ufffd", false},
		{u16(0xe9), "é", true},
		{u16(0xe9), "e\u0301", false},
		{u16(0xe9), "\xc3", false},
		{u16('a', 'b'), "ab", true},
		{u16('a', 'b'), "ac", false},
	} {
		if got := MakeUTF16(tc.raw).EqualString(tc.str); got != tc.want {
			t.Errorf("MakeUTF16(% x).EqualString(%q) = %v, want %v", tc.raw, tc.str, got, tc.want)
		}
	}
}

// TestUTF16Aliasing proves that a view aliases the payload and that Clone
// and String do not.
func TestUTF16Aliasing(t *testing.T) {
	payload := append(u16s("GCStart"), 0, 0, 7, 7)
	s, next, ok := ReadUTF16Z(payload, 0)
	if !ok || next != 16 {
		t.Fatalf("ReadUTF16Z = %v, %d", ok, next)
	}
	c, str := s.Clone(), s.String()
	if &s.Bytes()[0] != &payload[0] {
		t.Fatal("view does not alias the payload")
	}
	payload[0] = 'X' // the buffer is reused for the next event
	if got := s.String(); got != "XCStart" {
		t.Errorf("view after the payload changed = %q, want %q", got, "XCStart")
	}
	if got := c.String(); got != "GCStart" || str != "GCStart" {
		t.Errorf("Clone = %q, String = %q after the payload changed, want %q", got, str, "GCStart")
	}
	// Appending to Bytes cannot overwrite the terminator or what follows.
	_ = append(s.Bytes(), 'Z', 'Z')
	if payload[14] != 0 || payload[15] != 0 || payload[16] != 7 {
		t.Errorf("append to Bytes overwrote the payload: % x", payload)
	}
	m := MakeUTF16(payload[:5])
	payload[2] = 'Y'
	if m.String() != "XY" {
		t.Errorf("MakeUTF16 does not alias: %q", m.String())
	}
	if _ = append(m.Bytes(), 1); payload[4] != 'S' {
		t.Errorf("append to MakeUTF16 Bytes overwrote the payload")
	}
}

func TestAnsi(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string
	}{
		{"", ""},
		{"GCHeap", "GCHeap"},
		{"café", "café"},                  // valid UTF-8 stays
		{"caf\xe9", "café"},               // Latin-1 é
		{"\xe9t\xe9 \xc3\xa9", "été é"},   // mixed: invalid bytes Latin-1, valid UTF-8 kept
		{"\xc3", "Ã"},                     // truncated sequence
		{"\xed\xa0\x80", "í\u00a0\u0080"}, // UTF-8 surrogates are not valid
		{"\xef\xbf\xbd", "\ufffd"},        // a real U+FFFD
		{"\x80\x9f\xff", "\u0080\u009f\u00ff"},
		{"a\"b\\c\n\x01\x7f", "a\"b\\c\n\x01\x7f"},
		{"\xe2\x80\xa8", "\u2028"},
		{"😀", "😀"},
	} {
		checkAnsi(t, []byte(tc.raw))
		if got := MakeAnsi([]byte(tc.raw)).String(); got != tc.want {
			t.Errorf("MakeAnsi(%q).String() = %q, want %q", tc.raw, got, tc.want)
		}
	}
	a := AnsiOf("日本")
	if a.String() != "日本" || a.Len() != 6 || a.IsEmpty() || !(Ansi{}).IsEmpty() {
		t.Errorf("AnsiOf: %q len %d", a.String(), a.Len())
	}
}

// refAnsiString decodes an ANSI string the slow, obvious way.
func refAnsiString(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			r = rune(b[0])
		}
		sb.WriteRune(r)
		b = b[size:]
	}
	return sb.String()
}

func checkAnsi(t testing.TB, raw []byte) {
	t.Helper()
	s := MakeAnsi(raw)
	want := refAnsiString(raw)
	if got := s.String(); got != want {
		t.Fatalf("MakeAnsi(%q).String() = %q, want %q", raw, got, want)
	}
	if got := s.AppendUTF8([]byte("pre")); string(got) != "pre"+want {
		t.Fatalf("MakeAnsi(%q).AppendUTF8 = %q, want %q", raw, got, "pre"+want)
	}
	if !s.EqualString(want) {
		t.Fatalf("MakeAnsi(%q).EqualString(%q) = false", raw, want)
	}
	for _, other := range []string{want + "x", "x" + want, want + "\xff", string(raw) + "\xff"} {
		if s.EqualString(other) {
			t.Fatalf("MakeAnsi(%q).EqualString(%q) = true", raw, other)
		}
	}
	if !utf8.Valid(raw) && s.EqualString(string(raw)) {
		t.Fatalf("MakeAnsi(%q).EqualString(raw) = true", raw)
	}
	checkJSONString(t, "Ansi.AppendJSON", s.AppendJSON(nil), want)
	if !s.Equal(s.Clone()) || s.Len() != len(raw) || (len(raw) > 0 && s.Equal(Ansi{})) {
		t.Fatalf("MakeAnsi(%q): Equal/Clone/Len wrong", raw)
	}
}

func TestAnsiRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "\"", "\\", "\n", "\x01", "é", "\xe9", "\xc3", "\xa9", "😀", "\xf0\x9f", "\u2028", "\xed\xa0\x80", "\ufffd", "\x7f", "\x80"}
	for range 5000 {
		var b []byte
		for range r.IntN(12) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		checkAnsi(t, b)
	}
}

func FuzzAnsi(f *testing.F) {
	f.Add([]byte("caf\xe9"))
	f.Add([]byte("\xe2\x80\xa8\"\\\x01"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkAnsi(t, raw)
	})
}

func TestAnsiAliasing(t *testing.T) {
	payload := []byte("Loader\x00more")
	s, next, ok := ReadAnsiZ(payload, 0)
	if !ok || next != 7 {
		t.Fatalf("ReadAnsiZ = %v, %d", ok, next)
	}
	c := s.Clone()
	payload[0] = 'l'
	if s.String() != "loader" || c.String() != "Loader" {
		t.Errorf("after the payload changed: view %q (want loader), clone %q (want Loader)", s.String(), c.String())
	}
	if _ = append(s.Bytes(), 'X'); payload[6] != 0 {
		t.Error("append to Bytes overwrote the terminator")
	}
	m := MakeAnsi(payload[:3])
	payload[1] = 'O'
	if m.String() != "lOa" {
		t.Errorf("MakeAnsi does not alias: %q", m.String())
	}
}

func TestBinary(t *testing.T) {
	for _, tc := range []struct {
		raw  []byte
		want string
	}{
		{nil, ""},
		{[]byte{}, ""},
		{[]byte{0x0a, 0x1b}, "0x0a1b"},
		{[]byte{0, 0xff, 0x10}, "0x00ff10"},
	} {
		s := MakeBinary(tc.raw)
		if got := s.String(); got != tc.want {
			t.Errorf("MakeBinary(% x).String() = %q, want %q", tc.raw, got, tc.want)
		}
		js := s.AppendJSON(nil)
		checkJSONString(t, "Binary.AppendJSON", js, tc.want)
		if got := s.AppendHex([]byte("x")); string(got) != "x"+tc.want {
			t.Errorf("AppendHex = %q", got)
		}
		if s.Len() != len(tc.raw) || s.IsEmpty() != (len(tc.raw) == 0) || !bytes.Equal(s.Bytes(), tc.raw) {
			t.Errorf("MakeBinary(% x): Len %d IsEmpty %v Bytes % x", tc.raw, s.Len(), s.IsEmpty(), s.Bytes())
		}
		if !s.Equal(BinaryOf(tc.raw)) || !s.Equal(s.Clone()) {
			t.Errorf("MakeBinary(% x) not Equal to its copies", tc.raw)
		}
	}
	if MakeBinary([]byte{1}).Equal(MakeBinary([]byte{1, 0})) {
		t.Error("Binary.Equal ignores length")
	}

	payload := []byte{1, 2, 3}
	view, owned, clone := MakeBinary(payload), BinaryOf(payload), MakeBinary(payload).Clone()
	payload[0] = 9
	if view.Bytes()[0] != 9 || owned.Bytes()[0] != 1 || clone.Bytes()[0] != 1 {
		t.Errorf("aliasing: view %x (want 09…), BinaryOf %x and Clone %x (want 01…)", view.Bytes(), owned.Bytes(), clone.Bytes())
	}
	if _ = append(MakeBinary(payload[:1]).Bytes(), 7); payload[1] != 2 {
		t.Error("append to Bytes overwrote the payload")
	}
}

// viewEvent stands for a generated event type: go-cmp must compare it
// through the views' Equal methods, with no options.
type viewEvent struct {
	ID       uint16
	Name     UTF16
	Module   Ansi
	Blob     Binary
	Counts   Uint32Array
	Handles  PointerArray
	Activity GUID
	Flags    BoolArray
	Sizes    Float64Array
}

func TestCmpUsesEqual(t *testing.T) {
	build := func() viewEvent {
		payload := append(u16s("GCHeapStats"), 0, 0)
		name, _, _ := ReadUTF16Z(payload, 0)
		return viewEvent{
			ID:       4,
			Name:     name,
			Module:   MakeAnsi([]byte("coreclr.dll")),
			Blob:     MakeBinary([]byte{1, 2}),
			Counts:   MakeUint32Array([]byte{1, 0, 0, 0, 2, 0, 0, 0}),
			Handles:  MakePointerArray([]byte{0x10, 0, 0, 0, 0, 0, 0, 0}, 8),
			Activity: MustParseGUID("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4"),
			Flags:    BoolArrayOf(true, false),
			Sizes:    Float64ArrayOf(1.5),
		}
	}
	a, b := build(), build()
	if &a.Name.Bytes()[0] == &b.Name.Bytes()[0] {
		t.Fatal("test needs distinct buffers")
	}
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("cmp.Diff of equal events (-a +b):\n%s", d)
	}
	// Equal by value, whatever the wire form.
	b.Handles = PointerArrayOf(4, 0x10)
	b.Flags = MakeBoolArray([]byte{2, 0, 0, 0, 0, 0, 0, 0})
	b.Counts = Uint32ArrayOf(1, 2)
	if d := cmp.Diff(a, b); d != "" {
		t.Errorf("cmp.Diff with other wire forms (-a +b):\n%s", d)
	}
	b.Name = UTF16Of("GCHeapStatz")
	b.Counts = Uint32ArrayOf(1, 3)
	d := cmp.Diff(a, b)
	var changed []string
	for _, line := range strings.Split(d, "\n") {
		if f := strings.Fields(line); len(f) > 1 && (f[0] == "-" || f[0] == "+") {
			changed = append(changed, f[0]+f[1])
		}
	}
	if want := []string{"-Name:", "+Name:", "-Counts:", "+Counts:"}; !slices.Equal(changed, want) {
		t.Errorf("cmp.Diff of different events changes %q, want %q:\n%s", changed, want, d)
	}
	if !cmp.Equal(viewEvent{}, viewEvent{Name: MakeUTF16([]byte{}), Counts: MakeUint32Array(nil)}) {
		t.Error("empty and zero views differ")
	}
}

func TestViewsMarshalJSON(t *testing.T) {
	v := struct {
		Name  UTF16
		Mod   Ansi
		Blob  Binary
		IDs   Uint64Array
		Ptrs  PointerArray
		Guids GUIDArray
	}{UTF16Of("a\"b"), MakeAnsi([]byte("caf\xe9")), BinaryOf([]byte{0xab}), Uint64ArrayOf(1, 1<<63), PointerArrayOf(4, 0x1f), GUIDArrayOf(GUID{1})}
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Name":"a\"b","Mod":"café","Blob":"0xab","IDs":[1,9223372036854775808],"Ptrs":["0x1f"],"Guids":["00000001-0000-0000-0000-000000000000"]}`
	if string(got) != want {
		t.Errorf("json.Marshal =\n%s\nwant\n%s", got, want)
	}
}

func TestViewAllocs(t *testing.T) {
	s := UTF16Of("Microsoft-Windows-DotNETRuntime é 😀 \"quoted\"\n")
	a := MakeAnsi([]byte("System.Private.CoreLib caf\xe9 \"x\"\n"))
	bin := MakeBinary(bytes.Repeat([]byte{0xab}, 32))
	str := s.String()
	astr := a.String()
	buf := make([]byte, 0, 1024)
	var sink bool
	for name, fn := range map[string]func(){
		"UTF16.AppendUTF8":  func() { buf = s.AppendUTF8(buf[:0]) },
		"UTF16.AppendJSON":  func() { buf = s.AppendJSON(buf[:0]) },
		"UTF16.EqualString": func() { sink = s.EqualString(str) },
		"UTF16.Equal":       func() { sink = s.Equal(s) },
		"UTF16.Valid":       func() { sink = s.Valid() },
		"UTF16.Len":         func() { sink = s.Len() == 0 || s.IsEmpty() },
		"Ansi.AppendUTF8":   func() { buf = a.AppendUTF8(buf[:0]) },
		"Ansi.AppendJSON":   func() { buf = a.AppendJSON(buf[:0]) },
		"Ansi.EqualString":  func() { sink = a.EqualString(astr) },
		"Binary.AppendJSON": func() { buf = bin.AppendJSON(buf[:0]) },
		"MakeViews": func() {
			sink = MakeUTF16(buf).IsEmpty() && MakeAnsi(buf).IsEmpty() && MakeBinary(buf).IsEmpty()
		},
	} {
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, n)
		}
	}
	_ = sink
	if n := testing.AllocsPerRun(100, func() { _ = s.String() }); n != 1 {
		t.Errorf("UTF16.String: %v allocs per run, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = a.String() }); n != 1 {
		t.Errorf("Ansi.String: %v allocs per run, want 1", n)
	}
}

// bench40 is a 40-character string with some non-ASCII.
var bench40 = UTF16Of("System.Threading.Tasks.Task`1[Résultat]")

func BenchmarkUTF16AppendUTF8(b *testing.B) {
	for _, bc := range []struct {
		name string
		s    UTF16
	}{
		{"ascii40", UTF16Of("System.Private.CoreLib.dll!Main(string[])"[:40])},
		{"ascii120", UTF16Of(strings.Repeat("System.Private.CoreLib.dll!Main(string[])", 3)[:120])},
		{"mixed40", bench40},
		{"cjk40", UTF16Of(string([]rune(strings.Repeat("日本語の文字列", 6))[:40]))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.s.Bytes())))
			for b.Loop() {
				buf = bc.s.AppendUTF8(buf[:0])
			}
		})
	}
}

func BenchmarkUTF16AppendJSON(b *testing.B) {
	s := UTF16Of("C:\\Program Files\\dotnet\\\"shared\"\\x.dll")
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(len(s.Bytes())))
	for b.Loop() {
		buf = s.AppendJSON(buf[:0])
	}
}

func BenchmarkUTF16String(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(bench40.Bytes())))
	for b.Loop() {
		_ = bench40.String()
	}
}

func BenchmarkUTF16EqualString(b *testing.B) {
	str := bench40.String()
	b.ReportAllocs()
	b.SetBytes(int64(len(bench40.Bytes())))
	for b.Loop() {
		if !bench40.EqualString(str) {
			b.Fatal("not equal")
		}
	}
}

func ExampleMakeUTF16() {
	payload := []byte{'G', 0, 'C', 0, 0, 0} // "GC" and its terminator
	name := MakeUTF16(payload[:4])          // a view: no copy
	kept := name.String()                   // a Go string: a copy
	payload[0] = 'X'                        // the reader reuses its buffer
	fmt.Println(name, kept, name.Len(), name.EqualString("XC"))
	// Output: XC GC 2 true
}

func ExampleUTF16_AppendJSON() {
	buf := make([]byte, 0, 64)
	buf = UTF16Of("C:\\app\"x\".dll").AppendJSON(buf)
	fmt.Println(string(buf))
	// Output: "C:\\app\"x\".dll"
}

// TestJSONSafeQuad: the four-unit test agrees with jsonSafe for every code
// unit in every lane, next to safe and unsafe neighbours.
func TestJSONSafeQuad(t *testing.T) {
	ref := func(v uint64) bool {
		for i := 0; i < 64; i += 16 {
			u := uint16(v >> i)
			if u >= utf8.RuneSelf || !jsonSafe[u] {
				return false
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(5, 6))
	neighbours := []uint16{'a', ' ', '~', 0x7f, '!', '#', '[', ']', 0, 0x1f, '"', '\\', 0x80, 0x22 + 0x100, 0x5c00}
	for lane := 0; lane < 64; lane += 16 {
		for u := 0; u < 1<<16; u++ {
			for k := 0; k < 3; k++ {
				var v uint64
				for i := 0; i < 64; i += 16 {
					v |= uint64(neighbours[r.IntN(len(neighbours))]) << i
				}
				v = v&^(0xffff<<lane) | uint64(u)<<lane
				if got, want := jsonSafeQuad(v), ref(v); got != want {
					t.Fatalf("jsonSafeQuad(%#016x) = %v, want %v", v, got, want)
				}
			}
		}
	}
}

// TestUTF16ASCIIRandom: mostly-ASCII strings, which take the four-unit
// paths, with the odd unit that must be escaped or is not ASCII.
func TestUTF16ASCIIRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	odd := []uint16{0, 1, '\n', '"', '\\', 0x7f, 0x80, 0xe9, 0x2028, 0xd800, 0xdc00}
	for range 20000 {
		n := r.IntN(40)
		b := make([]byte, 0, 2*n+1)
		for range n {
			u := uint16(0x20 + r.IntN(0x5f))
			if r.IntN(12) == 0 {
				u = odd[r.IntN(len(odd))]
			}
			b = binary.LittleEndian.AppendUint16(b, u)
		}
		checkUTF16(t, b)
	}
}

// rundownStrings is a MethodDCEndVerbose-like run of UTF-16 strings
// (namespace, name, signature), as .NET rundown events carry them.
func rundownStrings() []byte {
	var b []byte
	for _, s := range []string{
		"System.Collections.Generic.Dictionary`2[System.__Canon,System.__Canon]", "TryInsert",
		"instance bool  (!0,!1,value class System.Collections.Generic.InsertionBehavior)",
		"System.String", "Concat", "string  (string,string)",
		"System.Runtime.CompilerServices.AsyncTaskMethodBuilder`1+AsyncStateMachineBox`1[System.Threading.Tasks.VoidTaskResult,Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpProtocol+<ProcessRequestsAsync>d__223`1[System.__Canon]]",
		"MoveNext", "instance void  ()",
		"System.Linq.Enumerable", "Any", "bool  (class System.Collections.Generic.IEnumerable`1<!!0>)",
		"System.Text.Json.JsonSerializer", "WriteCore", "void  (class System.Text.Json.Utf8JsonWriter,!!0&,class System.Text.Json.JsonSerializerOptions)",
		"Program", "Main", "void  (string[])",
	} {
		b = append(b, u16s(s)...)
		b = append(b, 0, 0)
	}
	return b
}

// BenchmarkUTF16Z: the terminator scan alone, over rundownStrings (see
// BENCHMARKS.md, issue 17, and bench/proposals/utf16z-16byte.diff).
func BenchmarkUTF16Z(b *testing.B) {
	p := rundownStrings()
	b.Run("impl=ReadUTF16Z", func(b *testing.B) {
		b.SetBytes(int64(len(p)))
		for i := 0; i < b.N; i++ {
			for off := 0; off < len(p); {
				_, next, ok := ReadUTF16Z(p, off)
				if !ok {
					b.Fatal("no terminator")
				}
				off = next
			}
		}
	})
}
