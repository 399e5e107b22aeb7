package profile

import (
	"cmp"
	"math"
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

// TestNanos: the conversion of clock ticks to nanoseconds gives what the
// two-division formula gives (floor of the whole ticks' seconds, plus the
// rest's nanoseconds rounded down), for clocks that divide a second and
// clocks that do not, ticks of every size and negative ones. (For a clock
// faster than 9.2 GHz that formula overflows where the one division does
// not; no trace has one.)
func TestNanos(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ref := func(ticks, freq int64) int64 {
		hi, lo := ticks/freq, ticks%freq
		return hi*1e9 + lo*1e9/freq
	}
	for _, freq := range []int64{1e9, 1e7, 1, 3, 2_400_000_000, 2_893_435_000, 10_000_001, 9_000_000_007} {
		b := NewBuilder(Options{Kind: CPU}, 0, freq)
		ticks := []int64{0, 1, -1, freq - 1, freq, freq + 1, math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 / 1_000_000_000}
		for range 2000 {
			ticks = append(ticks, rng.Int64N(1<<rng.IntN(63)), -rng.Int64N(1<<40))
		}
		for _, tk := range ticks {
			if got, want := b.nanos(tk), ref(tk, freq); got != want {
				t.Fatalf("freq %d: nanos(%d) = %d, want %d", freq, tk, got, want)
			}
		}
	}
}
