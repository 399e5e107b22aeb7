package dataset

import (
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

// TestArraysReuse: get hands out a kept array up to four times the size
// asked for, whole (its capacity is what the budget counts: a part handed
// out would keep the rest from the garbage collector uncounted), and
// makes a new one for a smaller request; taking and giving back
// allocates nothing.
func TestArraysReuse(t *testing.T) {
	var a arrays
	a.put(make([]byte, 0, 1024)) // class 4
	if b := a.get(64); cap(b) != 64 || a.bytes != 1024 {
		t.Errorf("get(64) from a pool of one 1024-byte array: cap %d, pool %d bytes; want a new 64-byte array", cap(b), a.bytes)
	}
	b := a.get(300) // class 3: 512 bytes, and 1024 is within two classes
	if cap(b) != 1024 || len(b) != 1024 || a.bytes != 0 {
		t.Errorf("get(300): len %d cap %d, pool %d bytes; want the 1024-byte array whole", len(b), cap(b), a.bytes)
	}
	a.put(b[:0])
	if allocs := testing.AllocsPerRun(100, func() {
		a.put(a.get(1000)[:0])
	}); allocs != 0 {
		t.Errorf("get and put from a pool holding the array: %v allocations, want 0", allocs)
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
	// Every array outgrown is in the pool: 64 + 128 + … + 64 KiB.
	if want := int64(64<<11 - 64); a.bytes != want {
		t.Errorf("pool holds %d bytes, want %d (the arrays outgrown)", a.bytes, want)
	}
	// Given back, the array serves the next column of any type, with
	// no allocation.
	if s = give(&a, s); s != nil {
		t.Errorf("give left the column %d elements", len(s))
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

// TestArraysTrim: trim lets the smallest arrays go first and stops at the
// limit.
func TestArraysTrim(t *testing.T) {
	var a arrays
	for _, c := range []int{64, 64, 256, 4096, 65536} {
		a.put(make([]byte, 0, c))
	}
	if got := a.trim(4096 + 65536); got != 384 || a.bytes != 4096+65536 {
		t.Errorf("trim let %d bytes go, keeps %d; want 384 and %d", got, a.bytes, 4096+65536)
	}
	if got := a.trim(0); got != 4096+65536 || a.bytes != 0 {
		t.Errorf("trim(0) let %d bytes go, keeps %d", got, a.bytes)
	}
	// An array smaller than the smallest class is not kept.
	a.put(make([]byte, 0, 32))
	if a.bytes != 0 {
		t.Errorf("a 32-byte array is kept (%d bytes)", a.bytes)
	}
}
