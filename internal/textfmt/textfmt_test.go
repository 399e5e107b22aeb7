package textfmt

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// refAppendJSONString is appendJSONString as it was, a byte at a time.
func refAppendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// TestAppendJSONString: the eight-byte test agrees with the byte loop, and
// so does the result.
func TestAppendJSONString(t *testing.T) {
	ref := func(v uint64) bool {
		for i := 0; i < 64; i += 8 {
			c := byte(v >> i)
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(3, 4))
	near := []byte{'a', ' ', '~', '!', '#', '[', ']', 0x1f, 0x7f, 0x80, 0xff, '"', '\\', 0}
	for lane := 0; lane < 64; lane += 8 {
		for c := 0; c < 256; c++ {
			for range 50 {
				var v uint64
				for i := 0; i < 64; i += 8 {
					v |= uint64(near[r.IntN(len(near))]) << i
				}
				v = v&^(0xff<<lane) | uint64(c)<<lane
				if got, want := jsonPlain8(v), ref(v); got != want {
					t.Fatalf("jsonPlain8(%#016x) = %v, want %v", v, got, want)
				}
			}
		}
	}
	for range 20000 {
		b := make([]byte, r.IntN(30))
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0x5f))
			if r.IntN(15) == 0 {
				b[i] = near[r.IntN(len(near))]
			}
		}
		want := refAppendJSONString(nil, string(b))
		if got := AppendJSONString([]byte("x"), string(b)); string(got) != "x"+string(want) {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", b, got[1:], want)
		}
	}
}

// TestAppendCSVField: fields are written as encoding/csv writes them.
func TestAppendCSVField(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pool := []string{"a", "Z", "0", " ", "\t", ",", "\"", "\r", "\n", "\\", "\\.", ".", "\u00a0", "\u0085", "é", "\u2028", "\x00", "\x1f", "\xff", "{", "[", ":"}
	var fields []string
	for range 30000 {
		var sb strings.Builder
		for range r.IntN(8) {
			sb.WriteString(pool[r.IntN(len(pool))])
		}
		fields = append(fields, sb.String())
	}
	fields = append(fields, "", `\.`, " x", "x ", `""`)
	for _, f := range fields {
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		w.Write([]string{"p", f})
		w.Flush()
		if got := "p," + string(AppendCSVField(nil, f)) + "\n"; got != want.String() {
			t.Fatalf("AppendCSVField(%q) = %q, want %q", f, got, want.String())
		}
		if got := "p," + string(AppendCSVField(nil, []byte(f))) + "\n"; got != want.String() {
			t.Fatalf("AppendCSVField([]byte(%q)) = %q, want %q", f, got, want.String())
		}
	}
	var want bytes.Buffer
	w := csv.NewWriter(&want)
	w.Write(fields[:100])
	w.Flush()
	if got := AppendCSVRecord(nil, fields[:100]...); string(got) != want.String() {
		t.Fatalf("AppendCSVRecord = %q, want %q", got, want.String())
	}
}
