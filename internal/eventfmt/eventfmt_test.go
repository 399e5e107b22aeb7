package eventfmt

import (
	"flag"
	"math/rand/v2"
	"strings"
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

// TestFilterFlags: the flags set the filter (no flag: everything kept,
// -pid and -tid -1), -keyword reads hex or decimal, and a bad value is an
// error that names its flag.
func TestFilterFlags(t *testing.T) {
	parse := func(args ...string) (*FilterFlags, error) {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		f := AddFilterFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f, f.Parse()
	}
	f, err := parse()
	if err != nil || f.Filter != (Filter{PID: -1, TID: -1}) || f.Limit != 0 {
		t.Errorf("defaults: %+v, %v", f, err)
	}
	f, err = parse("-provider", "*Rundown", "-event", "GC/*", "-keyword", "0x11", "-pid", "7", "-tid", "8", "-n", "3")
	if want := (Filter{Provider: "*Rundown", Event: "GC/*", Keyword: 0x11, PID: 7, TID: 8}); err != nil || f.Filter != want || f.Limit != 3 {
		t.Errorf("%+v, %v; want %+v and -n 3", f, err, want)
	}
	if f, err = parse("-keyword", "17"); err != nil || f.Keyword != 17 {
		t.Errorf("-keyword 17: %+v, %v", f, err)
	}
	for _, c := range [][]string{{"-keyword", "zz"}, {"-provider", "["}, {"-event", "a[b"}} {
		if _, err := parse(c...); err == nil || !strings.HasPrefix(err.Error(), c[0]+" ") {
			t.Errorf("%v: error %v, want one naming %s", c, err, c[0])
		}
	}
}
