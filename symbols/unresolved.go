package symbols

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/clrgo/clrevents/internal/numfmt"
)

// Unresolved says how many of the frames counted (Count, Resolve) did not
// resolve to a method, and why, the most common reason first, one clause
// a reason: "505,490 of 539,860 frames: no method covers the address;
// 7 of 539,860 frames: no method events of their process". When no
// rundown listed a method, the NoMethod clause says so (a rundown lists
// the methods compiled before the trace began, which nothing else names).
// It is "" when every frame resolved.
func (m *Map) Unresolved() string {
	c := m.Counts()
	var total int64
	var reasons []Reason
	for r := Reason(0); r < NumReasons; r++ {
		total += c[r]
		if r != Resolved && c[r] > 0 {
			reasons = append(reasons, r)
		}
	}
	slices.SortStableFunc(reasons, func(a, b Reason) int { return cmp.Compare(c[b], c[a]) })
	out := make([]string, len(reasons))
	for i, r := range reasons {
		out[i] = fmt.Sprintf("%s of %s frames: %s", numfmt.Thousands(c[r]), numfmt.Thousands(total), r)
		if r == NoMethod && m.rundown == 0 {
			out[i] += " (the trace holds no rundown, which lists the methods compiled before it began)"
		}
	}
	return strings.Join(out, "; ")
}
