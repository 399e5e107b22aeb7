package clrimpl

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// refZeroUnits is every zero 16-bit unit at an even offset of p, in order.
func refZeroUnits(p []byte) []int {
	var out []int
	for i := 0; i+1 < len(p); i += 2 {
		if p[i] == 0 && p[i+1] == 0 {
			out = append(out, i)
		}
	}
	return out
}

// randomUnits is n bytes in which zero units are frequent or rare (by
// density), and zero byte pairs straddling two units are common.
func randomUnits(r *rand.Rand, n, density int) []byte {
	b := make([]byte, n)
	for i := range b {
		if r.IntN(density) != 0 {
			b[i] = byte(1 + r.IntN(255))
		}
	}
	return b
}

// TestIndexZeroUnits holds the platform's scan and the portable one to
// every zero unit of p, first len(ends) of them, for every length across
// the 16- and 64-byte steps and the overlapping last chunks, odd lengths
// included.
func TestIndexZeroUnits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		b := randomUnits(r, r.IntN(300), 2+r.IntN(60))
		want := refZeroUnits(b)
		k := r.IntN(12)
		if len(want) > k {
			want = want[:k]
		}
		// Sentinels past the answer must stay.
		base := r.IntN(1000)
		for i := range want {
			want[i] += base
		}
		ends := slices.Repeat([]int{-7}, k+1)
		n := indexZeroUnitsGo(b, base, ends[:k])
		if !slices.Equal(ends[:n], want) || ends[k] != -7 {
			t.Fatalf("indexZeroUnitsGo(% x, k=%d) = %v, want %v", b, k, ends[:n], want)
		}
		ends = slices.Repeat([]int{-7}, k+1)
		n = indexZeroUnits(b, base, ends[:k])
		if !slices.Equal(ends[:n], want) || ends[k] != -7 {
			t.Fatalf("indexZeroUnits(% x, k=%d) = %v, want %v", b, k, ends[:n], want)
		}
	}
}

// refReadUTF16ZRun reads the strings one by one with the reference
// reader.
func refReadUTF16ZRun(b []byte, off, k int) (strs [][]byte, next int) {
	next = off
	for range k {
		s, nx, ok := refReadUTF16Z(b, next)
		if !ok {
			return strs, next
		}
		strs = append(strs, s)
		next = nx
	}
	return strs, next
}

func checkUTF16ZEnds(t *testing.T, b []byte, off, k int) {
	t.Helper()
	ends := slices.Repeat([]int{-7}, k+1)
	n, next := UTF16ZEnds(b, off, ends[:k])
	want, wnext := refReadUTF16ZRun(b, off, k)
	if n != len(want) || next != wnext {
		t.Fatalf("UTF16ZEnds(% x, %d, k=%d) = (%d, %d), reference (%d, %d)", b, off, k, n, next, len(want), wnext)
	}
	start := off
	for i := range want {
		if got := b[start:ends[i]]; !bytes.Equal(got, want[i]) {
			t.Fatalf("UTF16ZEnds(% x, %d, k=%d): string %d = % x, reference % x", b, off, k, i, got, want[i])
		}
		start = ends[i] + 2
	}
	if ends[k] != -7 || (n < k && ends[n] != -7) {
		t.Fatalf("UTF16ZEnds(% x, %d, k=%d): wrote ends past the strings it found: %v", b, off, k, ends)
	}
}

func TestUTF16ZEnds(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 50000 {
		b := randomUnits(r, r.IntN(400), 2+r.IntN(80))
		off := r.IntN(len(b)+3) - 1
		checkUTF16ZEnds(t, b, off, r.IntN(20))
	}
	// Strings like a method's namespace, name and signature, then a
	// 2-byte field, at every length of the last string around the 16- and
	// 64-byte steps.
	for n := range 150 {
		var b []byte
		b = append(b, make([]byte, 36)...)
		b = append(b, u16s("System.Collections.Generic")...)
		b = append(b, 0, 0)
		b = append(b, u16s("TryGetValue")...)
		b = append(b, 0, 0)
		for i := range n {
			b = append(b, byte('a'+i%26), 0)
		}
		b = append(b, 0, 0, 1, 0)
		for cut := range len(b) + 1 {
			checkUTF16ZEnds(t, b[:cut], 36, 3)
		}
	}
}

func FuzzUTF16ZEnds(f *testing.F) {
	f.Add(append(append(u16s("ab"), 0, 0), u16s("c")...), 0, uint8(2))
	f.Add([]byte{1, 0x41, 0, 0, 1, 0, 0, 0, 0}, 1, uint8(3))
	f.Add(make([]byte, 70), 3, uint8(9))
	f.Fuzz(func(t *testing.T, b []byte, off int, k uint8) {
		checkUTF16ZEnds(t, b, off, int(k%20))
	})
}
