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
// MB .NET Core 3.0 trace under a 4 MiB budget (25 MB with the pool). The
// tables' arrays are
// much alike (every event table begins with the same header columns), so
// one table's arrays serve another's.
//
// Every array is pointer free, so the pool keeps them as bytes, by
// capacity class (minArray<<k bytes), and hands them out as any element
// type. It is the reading side's alone: the flusher gives row sets back
// through their tables, and the budget moves their arrays here.
type arrays struct {
	free  [arrayClasses][][]byte
	bytes int64 // the capacity of the arrays kept
}

const (
	minArray     = 64 // bytes: the smallest array handed out
	arrayClasses = 32
)

// classOf is the class of arrays of at least n bytes.
func classOf(n int) int {
	if n <= minArray {
		return 0
	}
	return bits.Len(uint((n - 1) / minArray))
}

// get returns an array of at least n bytes, from the pool if it has one,
// with its length set to its capacity.
func (a *arrays) get(n int) []byte {
	k := classOf(n)
	if k >= arrayClasses {
		return make([]byte, n)
	}
	// The class asked for, or one of the next two: an array up to four
	// times the size, whole, rather than a new one. (Splitting a big one
	// into halves down to the class would waste less, but a half in use
	// keeps the whole array from the garbage collector while the budget
	// counts the half: the 241 MB trace's export grew to 87 MiB.)
	for j := k; j < min(k+3, arrayClasses); j++ {
		if f := a.free[j]; len(f) > 0 {
			b := f[len(f)-1]
			f[len(f)-1] = nil
			a.free[j] = f[:len(f)-1]
			a.bytes -= int64(cap(b))
			return b[:cap(b)]
		}
	}
	return make([]byte, minArray<<k)
}

// put keeps b's array for another table (an array of at least minArray
// bytes; smaller ones are left to the garbage collector).
func (a *arrays) put(b []byte) {
	c := cap(b)
	if c < minArray {
		return
	}
	// The class whose size c covers: an array grown by append is
	// handed out as the smaller class.
	k := bits.Len(uint(c/minArray)) - 1
	if k >= arrayClasses {
		return
	}
	a.free[k] = append(a.free[k], b[:0])
	a.bytes += int64(c)
}

// trim lets arrays go, the smallest first, until the pool keeps at most
// limit bytes, and returns how many bytes it let go. The big ones are
// kept: get hands them out for smaller arrays too, while small ones
// cannot serve a big one (letting the biggest go first left the pool
// without what the busy tables asked for).
func (a *arrays) trim(limit int64) int64 {
	var n int64
	for k := 0; k < arrayClasses && a.bytes > limit; k++ {
		f := a.free[k]
		for len(f) > 0 && a.bytes > limit {
			c := int64(cap(f[len(f)-1]))
			f[len(f)-1] = nil
			f = f[:len(f)-1]
			a.bytes -= c
			n += c
		}
		a.free[k] = f
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
