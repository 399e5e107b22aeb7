package clrimpl

// indexZeroUnit returns the offset of the first zero 16-bit unit at an even
// offset of p, or -1. It looks at whole 16-byte blocks only, and at all of
// p when len(p) is even and at least 16 (SSE2, in zunit_amd64.s).
//
//go:noescape
func indexZeroUnit(p []byte) int
