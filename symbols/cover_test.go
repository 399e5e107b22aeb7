package symbols

import (
	"math/rand/v2"
	"testing"
)

// TestCoverMatchesScan: the look-up through the tree of ends finds what a
// scan of every method finds (the live method loaded last, whether any
// covers the address, the span the answer holds over), on random maps
// with overlapping, reused and huge ranges (a 4 GiB size, as a garbled
// payload gives).
func TestCoverMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for round := range 300 {
		m := NewMap()
		const pid = 1
		n := 1 + rng.IntN(200)
		for i := range n {
			start := uint64(0x1000 + rng.IntN(0x4000))
			size := uint32(1 + rng.IntN(0x200))
			if rng.IntN(40) == 0 {
				size = 0xFFFFFFFF
			}
			ts := int64(rng.IntN(1000))
			if rng.IntN(5) == 0 {
				m.Observe(pid, ts, unload(uint64(i), 1, start, size))
			} else {
				m.Observe(pid, ts, load(uint64(i), 1, start, size, "N", "M", "void  ()"))
			}
		}
		p := m.procs[pid]
		p.sort()
		for range 200 {
			addr := uint64(0x800 + rng.IntN(0x5000))
			ts := int64(rng.IntN(1100))
			lo := 0
			for lo < p.methods.n && p.sortedAt(lo).start <= addr {
				lo++
			}
			got := coverScan{p: p, lo: lo, addr: addr, ts: ts, best: -1, from: never, to: always}
			p.cover(&got)
			want := coverScan{p: p, lo: lo, addr: addr, ts: ts, best: -1, from: never, to: always}
			for j := lo - 1; j >= 0; j-- {
				if me := p.sortedAt(j); addr-me.start < uint64(me.size) {
					want.visit(j)
				}
			}
			if got.best != want.best || got.covered != want.covered || got.from != want.from || got.to != want.to {
				t.Fatalf("round %d, %#x at %d: cover gives best %d covered %v [%d, %d), the scan %d %v [%d, %d)",
					round, addr, ts, got.best, got.covered, got.from, got.to, want.best, want.covered, want.from, want.to)
			}
		}
	}
}

// BenchmarkResolveGarbledSize is BenchmarkResolveIntern's map with one
// method of 4 GiB below the others, as a damaged trace's garbled size
// gives: every look-up has it below, and must not scan back to it.
func BenchmarkResolveGarbledSize(b *testing.B) {
	m, ips := steadyMap()
	m.Observe(1, 0, load(99999, 1, 0x100, 0xFFFFFFFF, "G", "M", "void  ()"))
	benchResolve(b, m, ips)
}
