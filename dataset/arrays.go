package dataset

import (
	"math/bits"
	"slices"
	"unsafe"
)

// arrays keeps the column arrays that a trace's tables let go of (an
// array outgrown, the arrays of a row set the budget takes from its table)
// for any table of the trace to take again. Without it a table's arrays
// grew by doubling into new memory, and a row set the budget emptied got
// new arrays for its next rows: 45 MB allocated and collected for the 4.8
// MB .NET Core 3.0 trace under a 4 MiB budget.
//
// Arrays of up to a slab (1 MiB under the default budget) are blocks of
// slabs, handed out and taken back as a buddy allocator does: a block is
// minArray bytes times a power of two, at an offset in its slab that is a
// multiple of its size; a free block is split in halves down to the size
// asked for, and a block given back joins its buddy (the other half of
// the block they were made from) when that is free too, up to a whole
// slab. The tables ask for
// arrays of every size, each column's growing by doubling and a table's
// next rows sized like its last: a pool of arrays kept whole by size (as
// this was before) had the wrong sizes for half of what was asked and
// made 17 MB of arrays for the 3.0 trace, while the arrays in use at once
// never passed 9 MB; blocks that split and join serve the same requests
// from 11 or 12 slabs, 1 to 3 of them let go under the budget and made
// again. (The other way to serve a size from a bigger array, a part of
// it, kept the whole array from the garbage collector while the pool
// counted the part; a slab is let go only whole.)
//
// Arrays over a slab, and arrays that were not handed out here, are kept
// whole by size class, as before. Every array is pointer free, so the
// pool keeps them as bytes and hands them out as any element type. It is
// the reading side's alone: the flusher gives row sets back through their
// tables, and the budget moves their arrays here.
type arrays struct {
	slabs []*slab // by address
	// free lists the free blocks by order (a block of order k is
	// minArray<<k bytes); an entry is stale unless its slab's state says
	// the block is free and of that order (entries are not removed when
	// a block joins its buddy or is taken).
	free [maxSlabOrder + 1][]block
	// whole counts the slabs wholly free.
	whole int
	// big keeps other arrays by class (minArray<<k bytes).
	big [arrayClasses][][]byte
	// bytes is what trim can let go: the wholly free slabs and the big
	// arrays. The budget counts it; the free blocks of slabs in use it
	// does not (see TestArraysBounded).
	bytes int64
	order int // the slabs' order; 0 for maxSlabOrder
}

const (
	minArray     = 64 // bytes: the smallest array handed out
	arrayClasses = 32
	// A slab is minArray<<order bytes: 1 MiB (maxSlabOrder), or less
	// under a budget of less than 4 MiB (newBudget): a quarter of the
	// budget, at least 16 KiB (minSlabOrder).
	maxSlabOrder = 14
	minSlabOrder = 8
)

// slab is the memory blocks are cut from.
type slab struct {
	mem []byte // minArray<<order bytes
	// state has an entry for each minArray bytes: for the first of a free
	// block its order, for the first of a block in use -2-order, else -1.
	state []int8
	dead  bool // let go by trim
}

// block is a block of a slab.
type block struct {
	s   *slab
	off int32 // in units of minArray
}

// classOf is the class of arrays of at least n bytes.
func classOf(n int) int {
	if n <= minArray {
		return 0
	}
	return bits.Len(uint((n - 1) / minArray))
}

// get returns an array of at least n bytes, from the pool if it has one,
// with its length set to its capacity: minArray<<classOf(n) bytes.
func (a *arrays) get(n int) []byte {
	k := classOf(n)
	order := a.slabOrder()
	if k > order {
		return a.getBig(n, k)
	}
	for j := k; j <= order; j++ {
		for f := a.free[j]; len(f) > 0; f = a.free[j] {
			b := f[len(f)-1]
			a.free[j] = f[:len(f)-1]
			if b.s.dead || b.s.state[b.off] != int8(j) {
				continue // stale
			}
			if j == order {
				a.whole--
				a.bytes -= minArray << order
			}
			return a.take(b, j, k)
		}
	}
	if b := a.getKept(k); b != nil {
		return b
	}
	s := &slab{mem: make([]byte, minArray<<order), state: make([]int8, 1<<order)}
	for i := range s.state {
		s.state[i] = -1
	}
	a.slabs = slices.Insert(a.slabs, a.slabAfter(s.base()), s)
	return a.take(block{s, 0}, order, k)
}

// slabOrder is the order of a slab: a slab is minArray<<slabOrder bytes.
func (a *arrays) slabOrder() int {
	if a.order == 0 {
		return maxSlabOrder
	}
	return a.order
}

// slabOrderFor is the slab order for a budget of limit bytes: a quarter
// of it, from 16 KiB to 1 MiB.
func slabOrderFor(limit int64) int {
	k := bits.Len64(uint64(max(limit/4, minArray))/minArray) - 1
	return min(max(k, minSlabOrder), maxSlabOrder)
}

// slabAfter is the index of the first slab whose memory begins after p.
func (a *arrays) slabAfter(p uintptr) int {
	lo, hi := 0, len(a.slabs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a.slabs[m].base() <= p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// take splits the free block b of order j, taken off the free list,
// down to order k, and hands out its first part.
func (a *arrays) take(b block, j, k int) []byte {
	for j > k {
		j--
		buddy := block{b.s, b.off + 1<<j}
		b.s.state[buddy.off] = int8(j)
		a.free[j] = append(a.free[j], buddy)
	}
	b.s.state[b.off] = int8(-2 - k)
	at := int(b.off) * minArray
	return b.s.mem[at : at+minArray<<k : at+minArray<<k]
}

// getBig hands out an array of class k, beyond a slab: one kept whole or
// a new one.
func (a *arrays) getBig(n, k int) []byte {
	if k >= arrayClasses {
		return make([]byte, n)
	}
	if b := a.getKept(k); b != nil {
		return b
	}
	return make([]byte, minArray<<k)
}

// getKept hands out an array kept whole of class k or one of the next
// two, or nil.
func (a *arrays) getKept(k int) []byte {
	for j := k; j < min(k+3, arrayClasses); j++ {
		if f := a.big[j]; len(f) > 0 {
			b := f[len(f)-1]
			f[len(f)-1] = nil
			a.big[j] = f[:len(f)-1]
			a.bytes -= int64(cap(b))
			return b[:cap(b)]
		}
	}
	return nil
}

func (s *slab) base() uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(s.mem))) }

// put keeps b's array for another table: a block goes back to its slab,
// joined with its free buddies; another array of at least minArray bytes
// is kept whole (smaller ones are left to the garbage collector).
func (a *arrays) put(b []byte) {
	c := cap(b)
	if c < minArray {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b[:1])))
	if i := a.slabAfter(p) - 1; i >= 0 {
		s := a.slabs[i]
		if d := p - s.base(); d < uintptr(len(s.mem)) {
			k := classOf(c)
			if d%minArray != 0 || c != minArray<<k || s.state[d/minArray] != int8(-2-k) {
				// Not a block handed out whole: only a part of one, or a
				// block given back twice, could be; neither is. Leave it
				// (the block stays in use, its slab kept).
				return
			}
			a.release(s, int32(d/minArray), k)
			return
		}
	}
	k := bits.Len(uint(c/minArray)) - 1 // the class c covers: an array grown by append serves the smaller
	if k >= arrayClasses {
		return
	}
	a.big[k] = append(a.big[k], b[:0])
	a.bytes += int64(c)
}

// release frees the block of order k at off in s, joining it with its
// buddy while that is free.
func (a *arrays) release(s *slab, off int32, k int) {
	s.state[off] = -1
	order := a.slabOrder()
	for k < order {
		buddy := off ^ 1<<k
		if s.state[buddy] != int8(k) {
			break
		}
		s.state[buddy] = -1 // its free list entry is now stale
		off &^= 1 << k
		k++
	}
	s.state[off] = int8(k)
	if f := a.free[k]; len(f) == cap(f) && len(f) >= 64 {
		a.compact(k) // rather than grow the list with stale entries
	}
	a.free[k] = append(a.free[k], block{s, off})
	if k == order {
		a.whole++
		a.bytes += minArray << order
	}
}

// compact drops the stale entries of the free list of order k.
func (a *arrays) compact(k int) {
	a.free[k] = slices.DeleteFunc(a.free[k], func(b block) bool { return b.s.dead || b.s.state[b.off] != int8(k) })
}

// trim lets arrays go until the pool keeps at most limit bytes of what it
// counts, and returns how many bytes it let go: wholly free slabs first,
// then the big arrays, the smallest first (get hands out big ones for
// smaller arrays too, while small ones cannot serve a big one).
func (a *arrays) trim(limit int64) int64 {
	var n int64
	if a.whole > 0 && a.bytes > limit {
		a.slabs = slices.DeleteFunc(a.slabs, func(s *slab) bool {
			if a.bytes <= limit || s.state[0] != int8(a.slabOrder()) {
				return false
			}
			s.dead = true
			a.whole--
			a.bytes -= int64(len(s.mem))
			n += int64(len(s.mem))
			return true
		})
		// The free lists let go of the slabs let go.
		for k := range a.free {
			a.compact(k)
		}
	}
	for k := 0; k < arrayClasses && a.bytes > limit; k++ {
		f := a.big[k]
		for len(f) > 0 && a.bytes > limit {
			c := int64(cap(f[len(f)-1]))
			f[len(f)-1] = nil
			f = f[:len(f)-1]
			a.bytes -= c
			n += c
		}
		a.big[k] = f
	}
	return n
}

// sizeOf is the size of a T.
func sizeOf[T any]() int {
	var v T
	return int(unsafe.Sizeof(v))
}

// asBytes is s's array as bytes, its whole capacity.
func asBytes[T any](s []T) []byte {
	if cap(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s[:1]))), cap(s)*sizeOf[T]())
}

// fromBytes is b's array as a []T of length 0. b comes from get, whose
// arrays are at least minArray bytes and so aligned for any element
// type the tables use (8 bytes at most).
func fromBytes[T any](b []byte) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/sizeOf[T]())[:0]
}

// grow returns s with room for more elements beyond its length, from a's
// pool (its old array goes there); without a pool, as slices.Grow.
func grow[T any](a *arrays, s []T, more int) []T {
	if cap(s)-len(s) >= more {
		return s
	}
	if a == nil {
		return slices.Grow(s, max(more, len(s))) // doubling, as append
	}
	need := (len(s) + max(more, len(s))) * sizeOf[T]() // doubling, as append
	t := fromBytes[T](a.get(need))
	t = append(t, s...)
	a.put(asBytes(s))
	return t
}

// give puts s's array into a's pool (none: it is left to the garbage
// collector) and returns s emptied of it.
func give[T any](a *arrays, s []T) []T {
	if a != nil {
		a.put(asBytes(s))
	}
	return nil
}

// push appends v to s, growing it from a's pool.
func push[T any](a *arrays, s []T, v T) []T {
	if len(s) == cap(s) {
		s = grow(a, s, 1)
	}
	return append(s, v)
}

// pushAll appends v to s, growing it from a's pool.
func pushAll[T any](a *arrays, s []T, v []T) []T {
	if cap(s)-len(s) < len(v) {
		s = grow(a, s, len(v))
	}
	return append(s, v...)
}
