package numfmt

import (
	"math"
	"testing"
	"time"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", -1000: "-1,000", -999: "-999",
		123456: "123,456", 1234567: "1,234,567", -12345678: "-12,345,678",
		math.MaxInt64: "9,223,372,036,854,775,807", math.MinInt64: "-9,223,372,036,854,775,808",
	} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSize: the sizes clrtrace collect reports.
func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 999: "999 bytes", 1000: "1.0 kB", 12345: "12 kB",
		344314: "344 kB", 999_499: "999 kB", 999_500: "1.0 MB", 1_234_567: "1.2 MB", 50_000_000: "50 MB", 3_400_000_000: "3.4 GB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0 fields", 1: "1 field", 2: "2 fields", 1234: "1,234 fields"} {
		if got := Count(n, "field"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestStarted: a process's start as the reports and profiles tell two
// processes of one ID apart.
func TestStarted(t *testing.T) {
	origin := time.Unix(1000, 0)
	for _, c := range []struct {
		start time.Time
		want  string
	}{
		{time.Time{}, "start not in the trace"},
		{origin, "started at 0.000 ms"},
		{origin.Add(3 * time.Millisecond), "started at 3.000 ms"},
		{origin.Add(1234567 * time.Nanosecond), "started at 1.235 ms"},
		{origin.Add(-100 * time.Microsecond), "started at -0.100 ms"},
	} {
		if got := Started(origin, c.start); got != c.want {
			t.Errorf("Started(origin, origin%+v) = %q, want %q", c.start.Sub(origin), got, c.want)
		}
	}
}
