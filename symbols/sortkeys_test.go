package symbols

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortKeys checks the radix sort against a comparison sort by (start,
// load, i) on keys like a rundown's (addresses sharing their top bytes, one
// load time) and on keys with every byte varying, negative loads, and
// starts and loads repeated.
func TestSortKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func(i int) methodKey{
		"rundown": func(int) methodKey {
			return methodKey{start: 0x7ffd_0000_0000 + rng.Uint64N(1<<28), load: math.MinInt64, size: 64}
		},
		"random": func(int) methodKey {
			return methodKey{start: rng.Uint64(), load: rng.Int64() - math.MaxInt64/2, size: 1}
		},
		"repeats": func(int) methodKey {
			return methodKey{start: 0x1000 * rng.Uint64N(50), load: int64(rng.IntN(5)) - 2, size: 8}
		},
		"sorted": func(i int) methodKey { return methodKey{start: uint64(i) * 16, load: 7} },
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, 5, radixMin - 1, radixMin, 3*radixMin + 17, 40000} {
			keys := make([]methodKey, n)
			for i := range keys {
				keys[i] = gen(i)
				keys[i].i = uint32(i)
			}
			want := slices.Clone(keys)
			slices.SortStableFunc(want, func(a, b methodKey) int {
				if c := cmp.Compare(a.start, b.start); c != 0 {
					return c
				}
				return cmp.Compare(a.load, b.load)
			})
			got := sortKeys(keys)
			if !slices.Equal(got, want) {
				t.Errorf("%s, %d keys: the radix sort's order differs from a stable sort by start and load", name, n)
			}
		}
	}
}

// TestIndexParen finds the first '(' code unit of UTF-16LE bytes, not a
// '(' byte that is half of another unit.
func TestIndexParen(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want int
	}{
		{[]byte{}, -1},
		{[]byte{'(', 0}, 0},
		{[]byte{'v', 0, '(', 0, ')', 0}, 1},
		{[]byte{0, '(', 'x', 0}, -1},                      // U+2800: '(' as the high byte
		{[]byte{'(', 1, 'a', 0, '(', 0}, 2},               // U+0128 first
		{[]byte{'(', '(', '(', 0}, 1},                     // U+2828, then '('
		{[]byte{'v', 0, 'o', 0, 'i', 0, 'd', 0, '('}, -1}, // a '(' byte with no high byte
	} {
		if got := indexParen(c.b); got != c.want {
			t.Errorf("indexParen(% x) = %d, want %d", c.b, got, c.want)
		}
	}
}
