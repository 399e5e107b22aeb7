package clrimpl

// indexZeroUnits writes to ends base plus the offsets of the first
// len(ends) zero 16-bit units at even offsets of p, in order, and returns
// how many it found (SSE2, in zunits_amd64.s).
//
//go:noescape
func indexZeroUnits(p []byte, base int, ends []int) int
