// Package numfmt formats numbers for the messages of the readers and
// commands, one way everywhere.
package numfmt

import (
	"strconv"
	"time"
)

// Thousands formats n in decimal with commas between groups of three
// digits: 1,234,567.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := s
	if n < 0 {
		digits = s[1:]
	}
	if len(digits) <= 3 {
		return s
	}
	b := make([]byte, 0, len(s)+len(digits)/3)
	if n < 0 {
		b = append(b, '-')
	}
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, digits[i])
	}
	return string(b)
}

// Count is n things, in the singular for one: "1 field", "1,234 fields".
func Count(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return Thousands(n) + " " + thing + "s"
}

// Size says how big n bytes are, to two significant digits: 12 bytes,
// 344 kB, 1.2 MB, 3.4 GB (decimal units).
func Size(n int64) string {
	if n < 1000 {
		if n == 1 {
			return "1 byte"
		}
		return strconv.FormatInt(n, 10) + " bytes"
	}
	v, unit := float64(n)/1e3, "kB"
	switch {
	case n >= 999_500_000:
		v, unit = float64(n)/1e9, "GB"
	case n >= 999_500:
		v, unit = float64(n)/1e6, "MB"
	}
	if v < 9.95 {
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + unit
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " " + unit
}

// Started tells a process apart from another of its ID by its start:
// "started at 3.000 ms", in milliseconds from origin, or "start not in the
// trace" for a zero start. The GC and JIT reports' titles and the
// profiles' process frames say it alike.
func Started(origin, start time.Time) string {
	if start.IsZero() {
		return "start not in the trace"
	}
	return "started at " + strconv.FormatFloat(float64(start.Sub(origin))/float64(time.Millisecond), 'f', 3, 64) + " ms"
}
