package eventfmt

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendTime: AppendTime writes what AppendFormat writes with
// timeLayout, in UTC, for times across and beyond the four-digit years.
func TestAppendTime(t *testing.T) {
	times := []time.Time{
		time.Unix(0, 0), time.Unix(-1, 999999999), time.Unix(-1, 0), time.Unix(951782400, 0), // 2000-02-29
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1600, 2, 29, 12, 0, 0, 1000, time.UTC), time.Date(2100, 3, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)),
		{},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		times = append(times, time.Unix(r.Int64N(1<<38)-1<<37, r.Int64N(1e9)))
	}
	for _, tm := range times {
		want := tm.UTC().Format(timeLayout)
		if got := string(AppendTime(nil, tm)); got != want {
			t.Fatalf("AppendTime(%v) = %s, want %s", tm, got, want)
		}
	}
}

func BenchmarkAppendTime(b *testing.B) {
	tm := time.Date(2019, 6, 15, 12, 34, 56, 123456789, time.UTC)
	var buf []byte
	b.Run("appendTime", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf = AppendTime(buf[:0], tm)
		}
	})
	b.Run("AppendFormat", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf = tm.UTC().AppendFormat(buf[:0], timeLayout)
		}
	})
}

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
