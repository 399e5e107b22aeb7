package dataset

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestArraysClasses: get hands out arrays of at least the size asked for,
// of the class's size, aligned for 8-byte elements.
func TestArraysClasses(t *testing.T) {
	var a arrays
	for _, n := range []int{0, 1, 63, 64, 65, 128, 129, 1000, 4096, 100000} {
		b := a.get(n)
		if len(b) < n || len(b) != cap(b) {
			t.Errorf("get(%d): len %d cap %d", n, len(b), cap(b))
		}
		if k := classOf(n); len(b) != minArray<<k {
			t.Errorf("get(%d): %d bytes, class %d is %d", n, len(b), k, minArray<<k)
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); p%8 != 0 {
			t.Errorf("get(%d): array at %#x, not 8-byte aligned", n, p)
		}
	}
}

// TestArraysReuse: an array given back serves the next request of its
// size or a smaller one (a block split from it) without an allocation,
// and blocks given back join into the slab again.
func TestArraysReuse(t *testing.T) {
	var a arrays
	b := a.get(1000) // a 1 KiB block of a new slab
	if cap(b) != 1024 || len(a.slabs) != 1 || a.bytes != 0 {
		t.Fatalf("get(1000): cap %d, %d slabs, pool %d bytes; want 1024, 1 and 0", cap(b), len(a.slabs), a.bytes)
	}
	a.put(b[:0])
	if a.whole != 1 || a.bytes != slabBytes {
		t.Errorf("the block given back: %d slabs wholly free, pool %d bytes; want 1 and %d", a.whole, a.bytes, slabBytes)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		x, y := a.get(1000), a.get(300)
		a.put(x[:0])
		a.put(y[:0])
	}); allocs != 0 {
		t.Errorf("get and put from a pool with room: %v allocations, want 0", allocs)
	}
	if len(a.slabs) != 1 || a.whole != 1 {
		t.Errorf("%d slabs, %d wholly free; want 1 and 1", len(a.slabs), a.whole)
	}
}

// slabBytes is the size of a slab of the zero arrays.
const slabBytes = minArray << maxSlabOrder

// TestArraysBuddy: under random requests and returns of every size, the
// arrays handed out never overlap, keep what their user wrote until given
// back, and lie within slabs at a multiple of their size; once all are
// back every slab is wholly free, and trim(0) lets all of it go.
func TestArraysBuddy(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 5))
	for _, order := range []int{0, minSlabOrder, 11} {
		a := arrays{order: order}
		type held struct {
			b    []byte
			fill byte
		}
		var live []held
		// check tests h's first, middle and last bytes.
		check := func(h held) {
			t.Helper()
			for _, i := range []int{0, len(h.b) / 2, len(h.b) - 1} {
				if h.b[i] != h.fill {
					t.Fatalf("order %d: array of %d bytes at %p: byte %d is %d, its user wrote %d", order, cap(h.b), &h.b[0], i, h.b[i], h.fill)
				}
			}
		}
		for i := range 20000 {
			if len(live) > 0 && (rng.IntN(2) == 0 || len(live) > 300) {
				k := rng.IntN(len(live))
				h := live[k]
				check(h)
				live[k] = live[len(live)-1]
				live = live[:len(live)-1]
				a.put(h.b[:rng.IntN(len(h.b)+1)]) // any length: the capacity is what counts
				continue
			}
			// Any class up to twice a slab's, any size in it.
			c := minArray << rng.IntN(a.slabOrder()+2)
			n := c/2 + 1 + rng.IntN(c/2)
			b := a.get(n)
			if c := minArray << classOf(n); len(b) != cap(b) || len(b) < c || len(b) > 4*c {
				t.Fatalf("get(%d): len %d cap %d", n, len(b), cap(b))
			}
			p := uintptr(unsafe.Pointer(&b[0]))
			if p%8 != 0 {
				t.Fatalf("get(%d): array at %#x, not 8-byte aligned", n, p)
			}
			for _, h := range live {
				if q := uintptr(unsafe.Pointer(&h.b[:1][0])); p < q+uintptr(cap(h.b)) && q < p+uintptr(cap(b)) {
					t.Fatalf("order %d: get(%d) handed out [%#x, +%d), which overlaps [%#x, +%d) in use", order, n, p, cap(b), q, cap(h.b))
				}
			}
			for _, s := range a.slabs {
				if d := p - s.base(); p >= s.base() && d < uintptr(len(s.mem)) && d%uintptr(cap(b)) != 0 {
					t.Fatalf("order %d: a block of %d bytes at offset %d of its slab", order, cap(b), d)
				}
			}
			fill := byte(i)
			for _, j := range []int{0, len(b) / 2, len(b) - 1} {
				b[j] = fill
			}
			live = append(live, held{b, fill})
		}
		for _, h := range live {
			check(h)
			a.put(h.b)
		}
		if a.whole != len(a.slabs) {
			t.Errorf("order %d: all given back, %d of %d slabs wholly free", order, a.whole, len(a.slabs))
		}
		if n := a.trim(0); a.bytes != 0 || len(a.slabs) != 0 || n == 0 {
			t.Errorf("order %d: trim(0) let %d bytes go and keeps %d bytes, %d slabs", order, n, a.bytes, len(a.slabs))
		}
		for k, f := range a.free {
			if len(f) != 0 {
				t.Errorf("order %d: after trim(0) the free list of order %d holds %d entries", order, k, len(f))
			}
		}
	}
}

// TestArraysBounded: the slabs hold not much more than what is in use:
// over random requests of up to 32 KiB and returns, while up to 4 MiB
// are in use, the slabs never hold more than twice the most ever in use
// and two slabs. The free blocks of slabs in use are what the budget does
// not count.
func TestArraysBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 6))
	var a arrays
	var live [][]byte
	inUse, mostInUse, mostHeld := 0, 0, 0
	for range 100000 {
		if len(live) > 0 && (rng.IntN(5) < 2 || inUse > 4<<20) {
			k := rng.IntN(len(live))
			inUse -= cap(live[k])
			a.put(live[k])
			live[k] = live[len(live)-1]
			live = live[:len(live)-1]
			continue
		}
		b := a.get(rng.IntN(64<<rng.IntN(10)) + 1)
		inUse += cap(b)
		live = append(live, b)
		mostInUse = max(mostInUse, inUse)
		held := len(a.slabs) * slabBytes
		mostHeld = max(mostHeld, held)
		if held > 2*mostInUse+2*slabBytes {
			t.Fatalf("slabs hold %d bytes; at most %d were ever in use", held, mostInUse)
		}
	}
	if mostInUse < 4<<20 {
		t.Fatalf("at most %d bytes in use: the test did not reach its 4 MiB", mostInUse)
	}
	t.Logf("at most %d bytes in slabs for at most %d in use", mostHeld, mostInUse)
}

// TestArraysNotOurs: an array that was not handed out (made elsewhere)
// is kept whole; a part of a block, and a block given back twice, are
// left alone, so that no memory in use is handed out again.
func TestArraysNotOurs(t *testing.T) {
	var a arrays
	a.put(make([]byte, 0, 1024))
	if a.bytes != 1024 {
		t.Errorf("an array made elsewhere: pool %d bytes, want 1024", a.bytes)
	}
	if b := a.get(1000); cap(b) != 1024 || a.bytes != 0 || len(a.slabs) != 0 {
		t.Errorf("get(1000) with one kept: cap %d, pool %d bytes, %d slabs", cap(b), a.bytes, len(a.slabs))
	}
	x := a.get(4096)
	y := a.get(4096)
	x[0], y[0] = 1, 2
	a.put(x[64:]) // a part
	a.put(y)
	a.put(y) // twice
	for range 64 {
		if z := a.get(4096); &z[0] == &x[0] {
			t.Fatalf("x, in use, handed out again")
		}
	}
	if x[0] != 1 {
		t.Errorf("x overwritten")
	}
}

// TestArraysGrow: grow keeps the elements, takes its array from the pool
// and gives the old one back; without a pool it grows as append.
func TestArraysGrow(t *testing.T) {
	var a arrays
	var s []int64
	for i := range 10000 {
		s = push(&a, s, int64(i))
	}
	for i, v := range s {
		if v != int64(i) {
			t.Fatalf("element %d is %d", i, v)
		}
	}
	// Every array outgrown is back in the slab, which the 128 KiB one in
	// use keeps from being wholly free.
	if len(a.slabs) != 1 || a.whole != 0 || a.bytes != 0 {
		t.Errorf("%d slabs, %d wholly free, pool %d bytes; want 1, 0 and 0", len(a.slabs), a.whole, a.bytes)
	}
	// Given back, the array serves the next column of any type, with
	// no allocation.
	if s = give(&a, s); s != nil {
		t.Errorf("give left the column %d elements", len(s))
	}
	if a.whole != 1 || a.bytes != slabBytes {
		t.Errorf("the column given back: %d slabs wholly free, pool %d bytes", a.whole, a.bytes)
	}
	var f []float32
	if allocs := testing.AllocsPerRun(100, func() {
		f = pushAll(&a, f[:0], []float32{0.5})
		for range 20000 {
			f = push(&a, f, 1.5)
		}
		f = give(&a, f)
	}); allocs != 0 {
		t.Errorf("filling a column from the pool: %v allocations, want 0", allocs)
	}
	var n []span
	n = push(nil, n, span{1, 2})
	n = pushAll(nil, n, []span{{3, 4}, {5, 6}})
	if len(n) != 3 || n[2] != (span{5, 6}) {
		t.Errorf("without a pool: %v", n)
	}
}

// TestArraysTrim: trim lets wholly free slabs go first, then the arrays
// kept whole, the smallest first, and stops at the limit; a slab in use
// stays.
func TestArraysTrim(t *testing.T) {
	var a arrays
	for _, c := range []int{64, 64, 256, 4096} {
		a.put(make([]byte, 0, c))
	}
	x := a.get(slabBytes / 2) // a slab in use
	y := a.get(slabBytes)     // a second slab, wholly
	a.put(y)
	if a.bytes != 64+64+256+4096+slabBytes || len(a.slabs) != 2 {
		t.Fatalf("pool %d bytes, %d slabs", a.bytes, len(a.slabs))
	}
	if got := a.trim(4096); got != slabBytes+64+64+256 || a.bytes != 4096 || len(a.slabs) != 1 {
		t.Errorf("trim(4096) let %d bytes go, keeps %d and %d slabs; want %d, 4096 and 1", got, a.bytes, len(a.slabs), slabBytes+384)
	}
	if got := a.trim(0); got != 4096 || a.bytes != 0 || len(a.slabs) != 1 {
		t.Errorf("trim(0) let %d bytes go, keeps %d and %d slabs", got, a.bytes, len(a.slabs))
	}
	a.put(x)
	if got := a.trim(0); got != slabBytes || len(a.slabs) != 0 {
		t.Errorf("trim(0) with the slab given back let %d bytes go, %d slabs left", got, len(a.slabs))
	}
	// An array smaller than the smallest class is not kept.
	a.put(make([]byte, 0, 32))
	if a.bytes != 0 {
		t.Errorf("a 32-byte array is kept (%d bytes)", a.bytes)
	}
}

// TestSlabOrderFor: a slab is a quarter of the budget, from 16 KiB to
// 1 MiB.
func TestSlabOrderFor(t *testing.T) {
	for _, c := range []struct {
		limit int64
		want  int
	}{{4 << 20, 14}, {64 << 20, 14}, {1 << 20, 12}, {64 << 10, 8}, {1, 8}, {3 << 20, 13}} {
		if got := slabOrderFor(c.limit); got != c.want {
			t.Errorf("slabOrderFor(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}
