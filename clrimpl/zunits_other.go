//go:build !amd64

package clrimpl

// indexZeroUnits writes to ends base plus the offsets of the first
// len(ends) zero 16-bit units at even offsets of p, in order, and returns
// how many it found.
func indexZeroUnits(p []byte, base int, ends []int) int { return indexZeroUnitsGo(p, base, ends) }
