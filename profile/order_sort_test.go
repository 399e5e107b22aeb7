package profile

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStableOrder: stableOrder gives what a stable sort of the indices by
// time gives, on times in runs (as a trace read in file order has them),
// with ties inside and across runs, one run, none, and random times; nil
// exactly when the times are already in order.
func TestStableOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := map[string][]int64{
		"empty":  nil,
		"one":    {5},
		"sorted": {1, 2, 2, 3, 7},
		"two":    {3, 1},
		"ties":   {4, 4, 1, 4, 1, 4},
	}
	for k := range 40 {
		// Runs of one thread after another's, as blocks hold them.
		var ts []int64
		threads := 1 + rng.IntN(20)
		clock := make([]int64, threads)
		for range rng.IntN(5000) {
			th := rng.IntN(threads)
			for range 1 + rng.IntN(50) {
				clock[th] += int64(rng.IntN(3)) // ties are common
				ts = append(ts, clock[th])
			}
		}
		cases["runs"+string(rune('A'+k%26))+string(rune('0'+k/26))] = ts
	}
	random := make([]int64, 3000)
	for i := range random {
		random[i] = rng.Int64N(100)
	}
	cases["random"] = random

	for name, ts := range cases {
		got := stableOrder(ts)
		want := make([]int32, len(ts))
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortStableFunc(want, func(x, y int32) int { return cmp.Compare(ts[x], ts[y]) })
		if slices.IsSorted(ts) {
			if got != nil {
				t.Errorf("%s: in order already, got an order", name)
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s (%d times): not the stable order", name, len(ts))
		}
	}
}

// BenchmarkStableOrder orders a million times in runs of 1–200 from 16
// threads, as a long trace's samples come in file order.
func BenchmarkStableOrder(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ts []int64
	clock := make([]int64, 16)
	for len(ts) < 1<<20 {
		th := rng.IntN(16)
		for range 1 + rng.IntN(200) {
			clock[th] += int64(rng.IntN(1000))
			ts = append(ts, clock[th])
		}
	}
	for _, impl := range []string{"natural-merge", "slices.SortStableFunc"} {
		b.Run(impl, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if impl == "natural-merge" {
					stableOrder(ts)
					continue
				}
				o := make([]int32, len(ts))
				for i := range o {
					o[i] = int32(i)
				}
				slices.SortStableFunc(o, func(x, y int32) int { return cmp.Compare(ts[x], ts[y]) })
			}
		})
	}
}
