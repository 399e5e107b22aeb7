package counters

import (
	"math"
	"testing"
)

// TestFormatValue: dotnet-counters' examples, with the integer part ending
// in column 15 and room for three decimals after it.
func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{
		1421893.21:  "      1,421,893.21 ",
		0.123:       "              0.123",
		-0.123:      "             -0.123",
		7:           "              7    ",
		-675430.9:   "       -675,430.9  ",
		-12675430.9: "    -12,675,430.9  ",
		0:           "              0    ",
		4.9012e25:   "     4.9012e+25   ",
		math.Inf(1): "           +Inf    ",
	} {
		if got := formatValue(v); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", v, got, want)
		}
	}
}
