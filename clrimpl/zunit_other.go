//go:build !amd64

package clrimpl

// indexZeroUnit returns the offset of the first zero 16-bit unit at an even
// offset of p, or -1, looking at whole 16-byte blocks only.
func indexZeroUnit(p []byte) int { return indexZeroUnitGo(p) }
