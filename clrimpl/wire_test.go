package clrimpl

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"unicode/utf16"
)

// u16 returns the UTF-16LE bytes of the given code units.
func u16(units ...uint16) []byte {
	b := make([]byte, 0, 2*len(units))
	for _, u := range units {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

// u16s returns the UTF-16LE bytes of s, without terminator.
func u16s(s string) []byte { return u16(utf16.Encode([]rune(s))...) }

// refReadUTF16Z is the obvious implementation ReadUTF16Z must agree with.
func refReadUTF16Z(b []byte, off int) ([]byte, int, bool) {
	if off < 0 || off > len(b) {
		return nil, 0, false
	}
	for i := off; i+1 < len(b); i += 2 {
		if b[i] == 0 && b[i+1] == 0 {
			return b[off:i], i + 2, true
		}
	}
	return nil, 0, false
}

func TestReadUTF16Z(t *testing.T) {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, tc := range []struct {
		name string
		b    []byte
		off  int
		want []byte // nil with ok=false
		next int
		ok   bool
	}{
		{"empty at the very end", cat(u16s("ab"), u16(0)), 4, []byte{}, 6, true},
		{"empty whole buffer", u16(0), 0, []byte{}, 2, true},
		{"off at end", u16s("ab"), 4, nil, 0, false},
		{"off at end of nothing", nil, 0, nil, 0, false},
		{"off past end", u16(0), 3, nil, 0, false},
		{"negative off", u16(0), -1, nil, 0, false},
		{"no terminator", u16s("hello"), 0, nil, 0, false},
		{"half a terminator", append(u16s("hi"), 0), 0, nil, 0, false},
		{"one odd byte", []byte{0}, 0, nil, 0, false},
		{"simple", cat(u16s("Hello"), u16(0), u16s("rest")), 0, u16s("Hello"), 12, true},
		{"at offset", cat([]byte{9, 9, 9}, u16s("GC"), u16(0)), 3, u16s("GC"), 9, true},
		// 'A' then U+0100: bytes 41 00 00 01; the zero pair at odd distance
		// 1 straddles two code units and is not a terminator.
		{"straddling NUL", cat(u16('A', 0x100, 'B'), u16(0)), 0, u16('A', 0x100, 'B'), 8, true},
		{"straddling NUL, none after", u16('A', 0x100, 'B'), 0, nil, 0, false},
		{"straddling NUL from odd off", cat([]byte{1}, u16('A', 0x100), u16(0)), 1, u16('A', 0x100), 7, true},
		// From odd off, the code units are b[1:3], b[3:5]: 00 41 and 00 00.
		{"odd off sees its own units", []byte{7, 0, 0x41, 0, 0, 0}, 1, []byte{0, 0x41}, 5, true},
		{"surrogate pair", cat(u16(0xd83d, 0xde00), u16(0)), 0, u16(0xd83d, 0xde00), 6, true},
		{"trailing odd byte after terminator", cat(u16s("x"), u16(0), []byte{5}), 0, u16s("x"), 4, true},
		// Units with a zero low or high byte are not terminators.
		{"zero bytes in units", cat(u16(0x0100, 0x0001, 0x1000, 0x0010, 0xff00), u16(0)), 0, u16(0x0100, 0x0001, 0x1000, 0x0010, 0xff00), 12, true},
	} {
		s, next, ok := ReadUTF16Z(tc.b, tc.off)
		if ok != tc.ok || next != tc.next || !bytes.Equal(s.Bytes(), tc.want) {
			t.Errorf("%s: ReadUTF16Z(% x, %d) = (% x, %d, %v), want (% x, %d, %v)",
				tc.name, tc.b, tc.off, s.Bytes(), next, ok, tc.want, tc.next, tc.ok)
		}
		if ok && cap(s.Bytes()) != len(s.Bytes()) {
			t.Errorf("%s: cap(Bytes()) = %d, want len %d", tc.name, cap(s.Bytes()), len(s.Bytes()))
		}
		if !ok && (!s.IsEmpty() || next != 0) {
			t.Errorf("%s: failed read returned (% x, %d)", tc.name, s.Bytes(), next)
		}
	}
}

// TestReadUTF16ZEveryPosition puts the terminator at every position relative
// to the 8-byte blocks the scan reads, from every start offset.
func TestReadUTF16ZEveryPosition(t *testing.T) {
	for pre := range 9 {
		for n := range 90 { // past the 64-byte steps of the vectorised scan
			b := bytes.Repeat([]byte{0xff}, pre)
			for i := range n {
				// Units whose bytes are often zero but never both.
				b = binary.LittleEndian.AppendUint16(b, uint16([]uint16{0x0100, 0x0001, 'a', 0x4e00}[i%4]))
			}
			b = append(b, 0, 0, 0x41, 0)
			s, next, ok := ReadUTF16Z(b, pre)
			if !ok || s.Len() != n || next != pre+2*n+2 {
				t.Errorf("pre=%d n=%d: got (len %d, %d, %v), want (len %d, %d, true)", pre, n, s.Len(), next, ok, n, pre+2*n+2)
			}
			// Without the terminator there is nothing to find.
			if _, _, ok := ReadUTF16Z(b[:pre+2*n+1], pre); ok {
				t.Errorf("pre=%d n=%d: found a terminator in a cut buffer", pre, n)
			}
		}
	}
}

func TestReadUTF16ZRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, r.IntN(200))
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = byte(r.IntN(256))
			} // else zero: many near-terminators
		}
		off := r.IntN(len(b)+3) - 1
		checkReadUTF16Z(t, b, off)
	}
}

// TestIndexZeroUnit holds the platform's scan and the portable one to the
// same answers where both look (whole 16-byte blocks).
func TestIndexZeroUnit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 50000 {
		b := make([]byte, r.IntN(160))
		for i := range b {
			if r.IntN(8) != 0 {
				b[i] = byte(1 + r.IntN(255))
			}
		}
		want := -1
		for i := 0; i+1 < len(b); i += 2 {
			if b[i] == 0 && b[i+1] == 0 {
				want = i
				break
			}
		}
		blocks := len(b) &^ 15
		wantBlocks := want
		if want >= blocks {
			wantBlocks = -1
		}
		if got := indexZeroUnitGo(b); got != wantBlocks {
			t.Fatalf("indexZeroUnitGo(% x) = %d, want %d", b, got, wantBlocks)
		}
		got := indexZeroUnit(b)
		if got != want && got != wantBlocks {
			t.Fatalf("indexZeroUnit(% x) = %d, want %d (or %d, whole blocks only)", b, got, want, wantBlocks)
		}
	}
}

func checkReadUTF16Z(t *testing.T, b []byte, off int) {
	t.Helper()
	s, next, ok := ReadUTF16Z(b, off)
	ws, wnext, wok := refReadUTF16Z(b, off)
	if ok != wok || next != wnext || !bytes.Equal(s.Bytes(), ws) {
		t.Fatalf("ReadUTF16Z(% x, %d) = (% x, %d, %v), reference (% x, %d, %v)", b, off, s.Bytes(), next, ok, ws, wnext, wok)
	}
	if !ok {
		return
	}
	if len(s.Bytes())%2 != 0 || next != off+len(s.Bytes())+2 || next > len(b) || b[next-2] != 0 || b[next-1] != 0 {
		t.Fatalf("ReadUTF16Z(% x, %d): inconsistent result (% x, %d)", b, off, s.Bytes(), next)
	}
	for i := 0; i < len(s.Bytes()); i += 2 {
		if s.Bytes()[i] == 0 && s.Bytes()[i+1] == 0 {
			t.Fatalf("ReadUTF16Z(% x, %d): string holds a NUL unit at %d", b, off, i)
		}
	}
	// The view aliases b.
	if len(s.Bytes()) > 0 && &s.Bytes()[0] != &b[off] {
		t.Fatalf("ReadUTF16Z(% x, %d): view does not alias the payload", b, off)
	}
}

func FuzzReadUTF16Z(f *testing.F) {
	f.Add([]byte{}, 0)
	f.Add(u16(0), 0)
	f.Add(append(u16s("Hello"), 0, 0), 0)
	f.Add(u16('A', 0x100, 'B', 0), 0)
	f.Add([]byte{1, 0x41, 0, 0, 1, 0, 0}, 1)
	f.Add(u16s("abc"), 6)
	f.Add(u16s("abc"), 7)
	f.Add(u16s("abc"), -1)
	f.Fuzz(func(t *testing.T, b []byte, off int) {
		checkReadUTF16Z(t, b, off)
	})
}

func TestReadAnsiZ(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    string
		off  int
		want string
		next int
		ok   bool
	}{
		{"simple", "abc\x00def", 0, "abc", 4, true},
		{"empty at the very end", "abc\x00", 3, "", 4, true},
		{"empty whole", "\x00", 0, "", 1, true},
		{"off at end", "abc", 3, "", 0, false},
		{"off past end", "abc\x00", 5, "", 0, false},
		{"negative off", "\x00", -1, "", 0, false},
		{"no terminator", "abc", 0, "", 0, false},
		{"at offset", "x\x00yz\x00", 2, "yz", 5, true},
		{"high bytes", "\xe9t\xe9\x00", 0, "\xe9t\xe9", 4, true},
	} {
		s, next, ok := ReadAnsiZ([]byte(tc.b), tc.off)
		if ok != tc.ok || next != tc.next || string(s.Bytes()) != tc.want {
			t.Errorf("%s: ReadAnsiZ(%q, %d) = (%q, %d, %v), want (%q, %d, %v)",
				tc.name, tc.b, tc.off, s.Bytes(), next, ok, tc.want, tc.next, tc.ok)
		}
		if cap(s.Bytes()) != len(s.Bytes()) {
			t.Errorf("%s: cap(Bytes()) = %d, want %d", tc.name, cap(s.Bytes()), len(s.Bytes()))
		}
	}
}

func TestArrayLen(t *testing.T) {
	b := make([]byte, 100)
	for _, tc := range []struct {
		name     string
		off      int
		count    uint64
		elemSize int
		n        int
		ok       bool
	}{
		{"exact fit", 0, 25, 4, 100, true},
		{"fits with room", 10, 10, 8, 80, true},
		{"one too many", 4, 25, 4, 0, false},
		{"zero count at end", 100, 0, 8, 0, true},
		{"zero count", 0, 0, 16, 0, true},
		{"one at end", 100, 1, 1, 0, false},
		{"off past end", 101, 0, 1, 0, false},
		{"negative off", -1, 0, 1, 0, false},
		{"zero elemSize", 0, 1, 0, 0, false},
		{"negative elemSize", 0, 1, -4, 0, false},
		{"2^32-1 uint32s", 0, math.MaxUint32, 4, 0, false},
		{"2^32 uint64s", 0, 1 << 32, 8, 0, false},
		{"2^32+1 bytes", 0, 1<<32 + 1, 1, 0, false},
		{"2^62 uint32s wraps to 0", 0, 1 << 62, 4, 0, false},
		{"2^61 uint64s wraps to 0", 0, 1 << 61, 8, 0, false},
		{"2^60 GUIDs wraps to 0", 0, 1 << 60, 16, 0, false},
		{"2^62+1 uint32s wraps to 4", 0, 1<<62 + 1, 4, 0, false},
		{"2^64-1 bytes", 0, math.MaxUint64, 1, 0, false},
		{"2^64-1 uint64s", 0, math.MaxUint64, 8, 0, false},
		{"2^63 bytes, negative as int", 0, 1 << 63, 1, 0, false},
		{"2^64-1 of max int", 0, math.MaxUint64, math.MaxInt, 0, false},
	} {
		n, ok := ArrayLen(b, tc.off, tc.count, tc.elemSize)
		if n != tc.n || ok != tc.ok {
			t.Errorf("%s: ArrayLen(len 100, %d, %d, %d) = (%d, %v), want (%d, %v)",
				tc.name, tc.off, tc.count, tc.elemSize, n, ok, tc.n, tc.ok)
		}
	}
}

// refArrayLen computes ArrayLen with big integers.
func refArrayLen(blen, off int, count uint64, elemSize int) (int, bool) {
	if off < 0 || off > blen || elemSize <= 0 {
		return 0, false
	}
	need := new(big.Int).Mul(new(big.Int).SetUint64(count), big.NewInt(int64(elemSize)))
	if need.Cmp(big.NewInt(int64(blen-off))) > 0 {
		return 0, false
	}
	return int(need.Int64()), true
}

func FuzzArrayLen(f *testing.F) {
	f.Add(100, 0, uint64(25), 4)
	f.Add(100, 4, uint64(25), 4)
	f.Add(0, 0, uint64(0), 1)
	f.Add(16, 0, uint64(1)<<60, 16)
	f.Add(16, 0, uint64(1)<<62+1, 4)
	f.Add(8, 0, uint64(math.MaxUint64), 8)
	f.Add(8, 9, uint64(0), 8)
	f.Add(8, -1, uint64(0), 8)
	f.Fuzz(func(t *testing.T, blen, off int, count uint64, elemSize int) {
		blen &= 1<<16 - 1
		b := make([]byte, blen)
		n, ok := ArrayLen(b, off, count, elemSize)
		wn, wok := refArrayLen(blen, off, count, elemSize)
		if n != wn || ok != wok {
			t.Fatalf("ArrayLen(len %d, %d, %d, %d) = (%d, %v), want (%d, %v)", blen, off, count, elemSize, n, ok, wn, wok)
		}
		if ok {
			_ = b[off : off+n] // must be in bounds
		}
	})
}

func TestPtr(t *testing.T) {
	const v = 0x1122334455667788
	for _, tc := range []struct {
		size int
		wire []byte
		back uint64
	}{
		{4, []byte{0x88, 0x77, 0x66, 0x55}, 0x55667788},
		{8, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, v},
	} {
		b := AppendPtr([]byte{0xee}, v, tc.size)
		if !bytes.Equal(b[1:], tc.wire) {
			t.Errorf("AppendPtr(%#x, %d) = % x, want % x", v, tc.size, b[1:], tc.wire)
		}
		if got := ReadPtr(b, 1, tc.size); got != tc.back {
			t.Errorf("ReadPtr(%d) = %#x, want %#x", tc.size, got, tc.back)
		}
		if got := ReadPtr(append(b, 0xff, 0xff, 0xff, 0xff), 1, tc.size); got != tc.back {
			t.Errorf("ReadPtr(%d) with bytes after = %#x, want %#x", tc.size, got, tc.back)
		}
	}
	if !ValidPtrSize(4) || !ValidPtrSize(8) || ValidPtrSize(0) || ValidPtrSize(2) || ValidPtrSize(16) {
		t.Error("ValidPtrSize is wrong")
	}
}

func TestBool(t *testing.T) {
	if got := AppendBool(nil, true); !bytes.Equal(got, []byte{1, 0, 0, 0}) {
		t.Errorf("AppendBool(true) = % x", got)
	}
	if got := AppendBool([]byte{9}, false); !bytes.Equal(got, []byte{9, 0, 0, 0, 0}) {
		t.Errorf("AppendBool(false) = % x", got)
	}
	for _, tc := range []struct {
		b    []byte
		want bool
	}{
		{[]byte{0, 0, 0, 0}, false},
		{[]byte{1, 0, 0, 0}, true},
		{[]byte{0, 0, 0, 0x80}, true},
		{[]byte{2, 0, 0, 0}, true},
		{[]byte{0, 1, 0, 0}, true},
	} {
		if got := ReadBool(append([]byte{7}, tc.b...), 1); got != tc.want {
			t.Errorf("ReadBool(% x) = %v, want %v", tc.b, got, tc.want)
		}
	}
}

func TestAppendZ(t *testing.T) {
	s := UTF16Of("hé")
	if got, want := AppendUTF16Z([]byte{1}, s), []byte{1, 'h', 0, 0xe9, 0, 0, 0}; !bytes.Equal(got, want) {
		t.Errorf("AppendUTF16Z = % x, want % x", got, want)
	}
	if got, want := AppendUTF16Z(nil, UTF16{}), []byte{0, 0}; !bytes.Equal(got, want) {
		t.Errorf("AppendUTF16Z(empty) = % x, want % x", got, want)
	}
	if got, want := AppendAnsiZ([]byte{1}, AnsiOf("ab")), []byte{1, 'a', 'b', 0}; !bytes.Equal(got, want) {
		t.Errorf("AppendAnsiZ = % x, want % x", got, want)
	}
	if got, want := AppendAnsiZ(nil, Ansi{}), []byte{0}; !bytes.Equal(got, want) {
		t.Errorf("AppendAnsiZ(empty) = % x, want % x", got, want)
	}
	// Round trips through the readers.
	for _, str := range []string{"", "a", "GC heap", "日本語", "😀 x"} {
		w := AppendUTF16Z([]byte{0xff}, UTF16Of(str))
		w = AppendAnsiZ(w, AnsiOf(str))
		u, next, ok := ReadUTF16Z(w, 1)
		if !ok || u.String() != str {
			t.Errorf("UTF-16 round trip of %q = %q, %v", str, u.String(), ok)
		}
		a, next, ok := ReadAnsiZ(w, next)
		if !ok || a.String() != str || next != len(w) {
			t.Errorf("ANSI round trip of %q = %q, %d, %v", str, a.String(), next, ok)
		}
	}
}

func TestGUIDWire(t *testing.T) {
	g := MustParseGUID("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4")
	b := AppendGUID([]byte{1, 2, 3}, g)
	if len(b) != 19 || ReadGUID(b, 3) != g {
		t.Errorf("GUID wire round trip: % x", b)
	}
	want := []byte{0x23, 0x0d, 0x3c, 0xe1, 0xbc, 0xcc, 0x12, 0x4e, 0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}
	if !bytes.Equal(b[3:], want) {
		t.Errorf("GUID wire = % x, want % x", b[3:], want)
	}
}

func TestWireAllocs(t *testing.T) {
	payload := append(u16s("Microsoft-Windows-DotNETRuntime"), 0, 0, 'x', 0)
	buf := make([]byte, 0, 64)
	var sink int
	for name, fn := range map[string]func(){
		"ReadUTF16Z": func() { _, n, _ := ReadUTF16Z(payload, 0); sink += n },
		"ReadAnsiZ":  func() { _, n, _ := ReadAnsiZ(payload, len(payload)-2); sink += n },
		"ArrayLen":   func() { n, _ := ArrayLen(payload, 2, 3, 4); sink += n },
		"ReadPtr":    func() { sink += int(ReadPtr(payload, 0, 8) + ReadPtr(payload, 0, 4)) },
		"AppendPtr":  func() { buf = AppendPtr(AppendPtr(buf[:0], 1, 4), 2, 8) },
		"ReadBool":   func() { _ = ReadBool(payload, 0) },
		"AppendBool": func() { buf = AppendBool(buf[:0], true) },
	} {
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, n)
		}
	}
	_ = sink
}

var benchSink int

// BenchmarkReadUTF16Z reads a 40-character string and its terminator.
func BenchmarkReadUTF16Z(b *testing.B) {
	payload := append(u16s("System.Private.CoreLib.dll!Main(string[])"[:40]), 0, 0, 1, 2)
	b.ReportAllocs()
	b.SetBytes(82)
	for b.Loop() {
		s, next, ok := ReadUTF16Z(payload, 0)
		if !ok {
			b.Fatal("no terminator")
		}
		benchSink += next + s.Len()
	}
}

// BenchmarkReadUTF16ZRef is the two-bytes-at-a-time scan, for comparison.
func BenchmarkReadUTF16ZRef(b *testing.B) {
	payload := append(u16s("System.Private.CoreLib.dll!Main(string[])"[:40]), 0, 0, 1, 2)
	b.ReportAllocs()
	b.SetBytes(82)
	for b.Loop() {
		s, next, ok := refReadUTF16Z(payload, 0)
		if !ok {
			b.Fatal("no terminator")
		}
		benchSink += next + len(s)
	}
}
