package clrimpl

import (
	"encoding/binary"
	"math/bits"
)

// indexZeroUnitGo returns the offset of the first zero 16-bit unit at an
// even offset of p, or -1, looking at whole 16-byte blocks only: sixteen
// bytes a step with one branch. The lowest set bit of (v - 0x0001…) &^ v &
// 0x8000… marks the first zero 16-bit lane of v; lanes above it may be
// marked falsely by the borrow, never below. It is indexZeroUnit where no
// vectorised version is written.
func indexZeroUnitGo(p []byte) int {
	const ones, high = 0x0001000100010001, 0x8000800080008000
	for i := 0; i+16 <= len(p); i += 16 {
		v0 := binary.LittleEndian.Uint64(p[i:])
		v1 := binary.LittleEndian.Uint64(p[i+8:])
		t0 := (v0 - ones) &^ v0 & high
		t1 := (v1 - ones) &^ v1 & high
		if t0 != 0 {
			return i + bits.TrailingZeros64(t0)>>4<<1
		}
		if t1 != 0 {
			return i + 8 + bits.TrailingZeros64(t1)>>4<<1
		}
	}
	return -1
}

// indexZeroUnitsGo writes to ends base plus the offsets of the first
// len(ends) zero 16-bit units at even offsets of p, in order, and returns
// how many it found. It looks at all of p: sixteen bytes a step while a
// block has no zero unit, then unit by unit. It is indexZeroUnits where no
// vectorised version is written.
func indexZeroUnitsGo(p []byte, base int, ends []int) int {
	const ones, high = 0x0001000100010001, 0x8000800080008000
	n := 0
	for i := 0; i+2 <= len(p) && n < len(ends); {
		if i+16 <= len(p) {
			v0 := binary.LittleEndian.Uint64(p[i:])
			v1 := binary.LittleEndian.Uint64(p[i+8:])
			if (v0-ones)&^v0&high == 0 && (v1-ones)&^v1&high == 0 {
				i += 16
				continue
			}
		}
		for end := min(i+16, len(p)&^1); i < end && n < len(ends); i += 2 {
			if p[i] == 0 && p[i+1] == 0 {
				ends[n] = base + i
				n++
			}
		}
	}
	return n
}
