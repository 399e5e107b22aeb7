package symbols

import (
	"cmp"
	"slices"
)

// methodKey is a method's entry in the sort that orders a process's
// methods: by start, then load, then arrival (i, its index in methods).
type methodKey struct {
	start   uint64
	load    int64
	i, size uint32
}

// radixMin is the fewest keys sortKeys sorts by radix: below it a
// comparison sort is as quick and needs no second array.
const radixMin = 1024

// sortKeys sorts keys, which are in arrival order (i ascending), by start,
// then load, then i, and returns the sorted keys: keys itself or another
// array of the same length. A rundown lists a process's methods by the
// hundred thousand, in an order of its own; a least-significant-digit
// radix sort, a stable pass for each byte of load and then of start,
// orders them in a few linear passes where a comparison sort's calls to
// its comparison were a sixth of a profile build. A byte that every key
// has the same needs no pass: usually the top bytes of the addresses, and
// every byte of load, which is the same for all the methods a rundown
// lists.
func sortKeys(keys []methodKey) []methodKey {
	if len(keys) < radixMin {
		slices.SortFunc(keys, func(a, b methodKey) int {
			if c := cmp.Compare(a.start, b.start); c != 0 {
				return c
			}
			if c := cmp.Compare(a.load, b.load); c != 0 {
				return c
			}
			return cmp.Compare(a.i, b.i)
		})
		return keys
	}
	// digit d (0–15): byte d%8 of load (d < 8, its sign bit flipped so
	// that unsigned order is signed order) or of start (d >= 8).
	var counts [16][256]uint32
	load0 := keys[0].load
	sameLoad := true
	for _, k := range keys {
		sameLoad = sameLoad && k.load == load0
		for b := range 8 {
			counts[8+b][byte(k.start>>(8*b))]++
		}
	}
	d0 := 8 // the first digit sorted by: the loads only when they differ
	if !sameLoad {
		d0 = 0
		for _, k := range keys {
			l := uint64(k.load) ^ 1<<63
			for b := range 8 {
				counts[b][byte(l>>(8*b))]++
			}
		}
	}
	n := uint32(len(keys))
	src, dst := keys, make([]methodKey, len(keys))
	for d := d0; d < 16; d++ {
		c := &counts[d]
		first := byte((uint64(src[0].load) ^ 1<<63) >> (8 * d))
		if d >= 8 {
			first = byte(src[0].start >> (8 * (d - 8)))
		}
		if c[first] == n {
			continue // every key has this byte
		}
		var at uint32
		for v := range c {
			at, c[v] = at+c[v], at
		}
		shift := 8 * uint(d%8)
		if d < 8 {
			for _, k := range src {
				v := byte((uint64(k.load) ^ 1<<63) >> shift)
				dst[c[v]] = k
				c[v]++
			}
		} else {
			for _, k := range src {
				v := byte(k.start >> shift)
				dst[c[v]] = k
				c[v]++
			}
		}
		src, dst = dst, src
	}
	return src
}
