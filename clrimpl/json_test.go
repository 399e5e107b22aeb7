package clrimpl

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"unicode/utf8"
)

func TestAppendJSONString(t *testing.T) {
	cases := []string{
		"", "plain", `"quoted"`, `back\slash`, "tab\tnl\ncr\rbs\bff\f",
		"\x00\x01\x1f\x7f", "<html>&amp;", "é 日本 😀", "\u2028\u2029", "\ufffd",
		"bad \xff byte", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\xe2\x80", "\xe2\x80\xa8\xe2\x80",
	}
	for c := range 256 { // every single byte
		cases = append(cases, string(rune(c)), string([]byte{byte(c)}))
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		b := make([]byte, r.IntN(16))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		checkAppendJSONString(t, s)
	}
}

func checkAppendJSONString(t testing.TB, s string) {
	t.Helper()
	got := AppendJSONString([]byte("x"), s)
	if got[0] != 'x' {
		t.Fatalf("AppendJSONString(%q) does not append", s)
	}
	want := stdJSON(t, s)
	if !bytes.Equal(got[1:], want) {
		t.Fatalf("AppendJSONString(%q) = %s, encoding/json writes %s", s, got[1:], want)
	}
	if !json.Valid(got[1:]) {
		t.Fatalf("AppendJSONString(%q) = %s is not valid JSON", s, got[1:])
	}
	var back string
	if err := json.Unmarshal(got[1:], &back); err != nil {
		t.Fatal(err)
	}
	if utf8.ValidString(s) && back != s {
		t.Fatalf("AppendJSONString(%q) decodes to %q", s, back)
	}
}

func FuzzJSONString(f *testing.F) {
	f.Add("a\"b\\c\x00\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		checkAppendJSONString(t, s)
	})
}

func TestAppendJSONNumbers(t *testing.T) {
	for _, v := range []uint64{0, 1, 9, 10, 1 << 32, 1 << 53, 1<<53 + 1, math.MaxUint64} {
		got := AppendJSONUint(nil, v)
		if !bytes.Equal(got, stdJSON(t, v)) {
			t.Errorf("AppendJSONUint(%d) = %s", v, got)
		}
		var back uint64
		if err := json.Unmarshal(got, &back); err != nil || back != v {
			t.Errorf("AppendJSONUint(%d) reads back as %d, %v", v, back, err)
		}
		hex := AppendJSONHex(nil, v)
		if want := `"0x` + strconv.FormatUint(v, 16) + `"`; string(hex) != want {
			t.Errorf("AppendJSONHex(%d) = %s, want %s", v, hex, want)
		}
		var hs string
		if err := json.Unmarshal(hex, &hs); err != nil {
			t.Errorf("AppendJSONHex(%d) = %s: %v", v, hex, err)
		} else if back, err := strconv.ParseUint(hs, 0, 64); err != nil || back != v {
			t.Errorf("AppendJSONHex(%d) = %s reads back as %d, %v", v, hex, back, err)
		}
	}
	if got := string(AppendJSONHex(nil, 0x1f)); got != `"0x1f"` {
		t.Errorf("AppendJSONHex(0x1f) = %s", got)
	}
	for _, v := range []int64{0, 1, -1, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
		got := AppendJSONInt(nil, v)
		var back int64
		if !bytes.Equal(got, stdJSON(t, v)) || json.Unmarshal(got, &back) != nil || back != v {
			t.Errorf("AppendJSONInt(%d) = %s", v, got)
		}
	}
	for _, v := range []bool{true, false} {
		if got := AppendJSONBool([]byte("x"), v); string(got[1:]) != strconv.FormatBool(v) {
			t.Errorf("AppendJSONBool(%v) = %s", v, got)
		}
	}
}

func TestAppendJSONFloat(t *testing.T) {
	floats := []float64{
		0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 100, 1e6, 1e20, 1e21, 1.5e21, 1e-6, 9.99e-7, 1e-7, 1e-9,
		-1e-10, 123456789.125, 1 << 53, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.MaxFloat32, math.Pi, 1e100, 1e-100, 5e-324, 2.2250738585072014e-308,
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 5000 {
		f := math.Float64frombits(r.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			floats = append(floats, f)
		}
		floats = append(floats, r.Float64()*math.Pow(10, float64(r.IntN(60)-30)))
	}
	for _, f := range floats {
		got := AppendJSONFloat([]byte("x"), f)
		want := stdJSON(t, f)
		if !bytes.Equal(got[1:], want) {
			t.Fatalf("AppendJSONFloat(%v) = %s, encoding/json writes %s", f, got[1:], want)
		}
		var back float64
		if err := json.Unmarshal(got[1:], &back); err != nil || math.Float64bits(back) != math.Float64bits(f) {
			t.Fatalf("AppendJSONFloat(%v) = %s reads back as %v, %v", f, got[1:], back, err)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(AppendJSONFloat(nil, f)); got != "null" {
			t.Errorf("AppendJSONFloat(%v) = %s, want null", f, got)
		}
	}
}

func TestGUIDAppendJSON(t *testing.T) {
	for _, g := range []GUID{{}, MustParseGUID("E13C0D23-CCBC-4E12-931B-D9CC2EEE27E4"), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}} {
		got := g.AppendJSON([]byte("x"))
		want := stdJSON(t, g) // through MarshalText
		if !bytes.Equal(got[1:], want) || string(got[1:]) != `"`+g.String()+`"` {
			t.Errorf("GUID.AppendJSON = %s, want %s", got[1:], want)
		}
		var back GUID
		if err := json.Unmarshal(got[1:], &back); err != nil || back != g {
			t.Errorf("GUID.AppendJSON = %s reads back as %v, %v", got[1:], back, err)
		}
	}
}

func TestJSONAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	g := MustParseGUID("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4")
	s := "C:\\path\\\"x\"\n\u2028\xff é"
	for name, fn := range map[string]func(){
		"AppendJSONString":   func() { buf = AppendJSONString(buf[:0], s) },
		"AppendJSONHex":      func() { buf = AppendJSONHex(buf[:0], math.MaxUint64) },
		"AppendJSONUint":     func() { buf = AppendJSONUint(buf[:0], math.MaxUint64) },
		"AppendJSONInt":      func() { buf = AppendJSONInt(buf[:0], math.MinInt64) },
		"AppendJSONFloat":    func() { buf = AppendJSONFloat(buf[:0], 1.2345678e-9) },
		"appendJSONFloatNaN": func() { buf = AppendJSONFloat(buf[:0], math.NaN()) },
		"AppendJSONBool":     func() { buf = AppendJSONBool(buf[:0], true) },
		"GUID.AppendJSON":    func() { buf = g.AppendJSON(buf[:0]) },
	} {
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, n)
		}
	}
}
