package clrevents_test

import (
	"testing"

	"github.com/clrgo/clrevents/clrevents"
)

func TestOptimizationTier(t *testing.T) {
	for tier := clrevents.OptimizationTier(0); tier < 8; tier++ {
		// Jitted (0x8) with the tier in bits 7–9 and the cold-section bit.
		flags := uint32(0x8) | uint32(tier)<<7 | 0x10000000
		v2 := &clrevents.MethodLoadVerboseV2{MethodFlags: clrevents.MethodFlags(flags)}
		if got := v2.MethodLoadUnloadVerboseFields().OptimizationTier(); got != tier {
			t.Errorf("flags %#x: tier %v, want %v", flags, got, tier)
		}
		rundown := &clrevents.MethodDCEndVerboseV1{MethodFlags: clrevents.RundownMethodFlags(flags)}
		if got := rundown.MethodLoadUnloadVerboseFields().OptimizationTier(); got != tier {
			t.Errorf("rundown flags %#x: tier %v, want %v", flags, got, tier)
		}
	}
	// Code the JIT did not compile (a ReadyToRun method in a rundown:
	// MethodFlags 0x100, bits 7–9 reading 2) has no tier, as TraceEvent
	// gives it (was Optimized).
	r2r := &clrevents.MethodDCEndVerboseV1{MethodFlags: 0x100}
	if got := r2r.MethodLoadUnloadVerboseFields().OptimizationTier(); got != clrevents.TierUnknown {
		t.Errorf("ReadyToRun code (flags 0x100): tier %v, want Unknown", got)
	}
	if got := (&clrevents.MethodLoadV1{MethodFlags: 0x100}).MethodLoadUnloadFields().OptimizationTier(); got != clrevents.TierUnknown {
		t.Errorf("MethodLoad of code not jitted: tier %v, want Unknown", got)
	}
	if s := clrevents.TierOptimizedTier1OSR.String(); s != "OptimizedTier1OSR" {
		t.Errorf("String: %q", s)
	}
	if s := clrevents.OptimizationTier(9).String(); s != "OptimizationTier(9)" {
		t.Errorf("String of an unknown tier: %q", s)
	}
}

func TestHeapTotals(t *testing.T) {
	// The gcevents.etl baseline's GC #1: TotalHeapSize=657,192; TotalPromoted=310,952.
	v2 := &clrevents.GCHeapStatsV2{
		GenerationSize0: 584, TotalPromotedSize0: 310952, GenerationSize1: 314184,
		GenerationSize3: 326056, GenerationSize4: 16368,
	}
	f := v2.GCHeapStatsFields()
	if f.TotalHeapSize() != 657192 || f.TotalPromoted() != 310952 {
		t.Errorf("totals %d, %d", f.TotalHeapSize(), f.TotalPromoted())
	}
	// Version 1 has no generation 4.
	v1 := &clrevents.GCHeapStatsV1{GenerationSize0: 1, GenerationSize1: 2, GenerationSize2: 4, GenerationSize3: 8, TotalPromotedSize1: 16}
	if f := v1.GCHeapStatsFields(); f.TotalHeapSize() != 15 || f.TotalPromoted() != 16 || f.HasGenerationSize4 {
		t.Errorf("V1 totals %d, %d, has gen4 %v", f.TotalHeapSize(), f.TotalPromoted(), f.HasGenerationSize4)
	}
}

// TestAllocationAmount: a tick's amount is AllocationAmount64 where the
// version carries it, else AllocationAmount.
func TestAllocationAmount(t *testing.T) {
	v1 := clrevents.GCAllocationTickFields{AllocationAmount: 100000}
	v2 := clrevents.GCAllocationTickFields{AllocationAmount: 1, HasAllocationAmount64: true, AllocationAmount64: 5 << 32}
	if v1.Amount() != 100000 || v2.Amount() != 5<<32 {
		t.Errorf("Amount: %d and %d, want 100000 and %d", v1.Amount(), v2.Amount(), uint64(5<<32))
	}
}

// TestCheckAmount: the amounts a runtime writes pass; a tick whose two
// amounts disagree, a small object heap tick of 4 GiB or more, one of
// more than an address space, and one whose kind names no heap do not.
func TestCheckAmount(t *testing.T) {
	tick := func(lo uint32, n uint64, kind clrevents.GCAllocationKind) clrevents.GCAllocationTickFields {
		return clrevents.GCAllocationTickFields{AllocationAmount: lo, HasAllocationAmount64: true, AllocationAmount64: n, AllocationKind: kind}
	}
	small, large := clrevents.GCAllocationKindSmall, clrevents.GCAllocationKindLarge
	for _, c := range []struct {
		name string
		f    clrevents.GCAllocationTickFields
		ok   bool
	}{
		{"a small tick", tick(100_000, 100_000, small), true},
		{"V1, no 64-bit amount", clrevents.GCAllocationTickFields{AllocationAmount: 100_000}, true},
		{"8 GiB of large objects", tick(5, 8<<30+5, large), true},
		{"amounts disagree", tick(100_000, 200_000, small), false},
		{"a small tick of 128 TiB", tick(100_000, 1<<47+100_000, small), false},
		{"a small tick of 4 GiB", tick(0, 1<<32, small), false},
		{"large, beyond an address space", tick(1, 1<<49+1, large), false},
		{"a heap a later runtime may add", tick(100_000, 100_000, 3), true},
		{"a kind that names no heap", tick(100_000, 100_000, 0x6d00), false},
	} {
		if err := c.f.CheckAmount(); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.name, err, c.ok)
		}
	}
}
