package eventfmt

import (
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
