package clrevents

import (
	"errors"
	"strconv"
)

// Values that TraceEvent users know as event properties but that the
// payload holds only implicitly. They are methods of the family types, so
// one call serves every version of the event; none is a payload field.

// OptimizationTier is the code a method load describes: how the JIT
// compiled it. The runtime packs it into bits 7–9 of MethodFlags
// (eventtrace.h: MethodFlagsJitOptimizationTierShift = 7, low mask 0x7;
// the values follow eventtrace.cpp's JitOptimizationTier); runtimes before
// .NET Core 3.0 leave the bits 0 (Unknown).
type OptimizationTier uint8

// The tiers, in the runtime's numbering.
const (
	TierUnknown                    OptimizationTier = 0 // not reported (older runtimes)
	TierMinOptJitted               OptimizationTier = 1 // compiled without optimizations (MinOpts)
	TierOptimized                  OptimizationTier = 2 // fully optimized, outside tiering
	TierQuickJitted                OptimizationTier = 3 // tier 0
	TierOptimizedTier1             OptimizationTier = 4 // tier 1
	TierOptimizedTier1OSR          OptimizationTier = 5 // tier 1 on-stack-replacement code for a loop
	TierQuickJittedInstrumented    OptimizationTier = 6 // tier 0 with instrumentation (dynamic PGO)
	TierOptimizedTier1Instrumented OptimizationTier = 7 // tier 1 with instrumentation (dynamic PGO)
)

var tierNames = [...]string{
	"Unknown", "MinOptJitted", "Optimized", "QuickJitted", "OptimizedTier1",
	"OptimizedTier1OSR", "QuickJittedInstrumented", "OptimizedTier1Instrumented",
}

// String returns the tier's name, as TraceEvent and the runtime spell it.
func (t OptimizationTier) String() string {
	if int(t) < len(tierNames) {
		return tierNames[t]
	}
	return "OptimizationTier(" + strconv.Itoa(int(t)) + ")"
}

// tierOf extracts the tier from a MethodFlags value: Unknown for code the
// JIT did not compile (ReadyToRun code, whose bits 7–9 can read as a
// tier), as TraceEvent gives it.
func tierOf(methodFlags MethodFlags) OptimizationTier {
	if methodFlags&MethodFlagsJitted == 0 {
		return TierUnknown
	}
	return OptimizationTier(methodFlags >> 7 & 0x7)
}

// OptimizationTier is the tier of the method's code, from MethodFlags bits
// 7–9; Unknown unless MethodFlags says the JIT compiled it.
func (f MethodLoadUnloadVerboseFields) OptimizationTier() OptimizationTier {
	return tierOf(f.MethodFlags)
}

// OptimizationTier is the tier of the method's code, from MethodFlags bits
// 7–9; Unknown unless MethodFlags says the JIT compiled it.
func (f MethodLoadUnloadFields) OptimizationTier() OptimizationTier {
	return tierOf(f.MethodFlags)
}

// TotalHeapSize is the size of every generation after the GC: generations
// 0, 1 and 2, the large object heap (GenerationSize3) and, from version 2,
// the pinned object heap (GenerationSize4), as TraceEvent totals it.
func (f GCHeapStatsFields) TotalHeapSize() uint64 {
	return f.GenerationSize0 + f.GenerationSize1 + f.GenerationSize2 + f.GenerationSize3 + f.GenerationSize4
}

// TotalPromoted is the bytes promoted out of every generation the GC
// collected (TotalPromotedSize0 to 4), as TraceEvent totals it.
func (f GCHeapStatsFields) TotalPromoted() uint64 {
	return f.TotalPromotedSize0 + f.TotalPromotedSize1 + f.TotalPromotedSize2 + f.TotalPromotedSize3 + f.TotalPromotedSize4
}

// MaxAllocationBytes bounds what one allocation event can stand for: no
// object is larger than a 64-bit process's address space (2^48 bytes on
// x64 and arm64), and no GC heap either (package gcstats bounds heap
// sizes by it). An event that says more holds a garbled payload, as a
// damaged trace's can.
const MaxAllocationBytes = 1 << 48

// Amount is the bytes allocated since the last tick: AllocationAmount64
// where the version carries it (from V2), else AllocationAmount (V0, V1),
// which holds the same below 4 GiB.
func (f GCAllocationTickFields) Amount() uint64 {
	if f.HasAllocationAmount64 {
		return f.AllocationAmount64
	}
	return uint64(f.AllocationAmount)
}

// CheckAmount returns an error when the tick's amounts are not ones a
// runtime writes, as a damaged trace's garbled payloads can be (one bit
// made a tick of 100 KB one of 128 TiB, and an allocation profile of
// 4 GB one of hundreds of terabytes):
//
//   - AllocationAmount is the low 32 bits of AllocationAmount64: the
//     runtime writes the amount and its cast to 32 bits. Every tick of the
//     repository's traces agrees (35,641 of them).
//   - A tick of the small object heap stands for less than 4 GiB: the
//     runtime raises one each time about 100 KB has been allocated, of
//     objects under 85,000 bytes (larger ones go to the large object heap).
//     The largest in the repository's traces is 157,360 bytes.
//   - No tick stands for more than MaxAllocationBytes.
//   - AllocationKind names a heap: 0 to 2 (small, large, pinned) in the
//     runtimes so far, and below 8, leaving room for heaps a later
//     runtime adds. A damaged zipped trace whose inflating shifted the
//     payloads by a few bytes gave 1,753 ticks of kind 0x6d00 whose two
//     amounts agreed, of 119 TB each.
//
// Amount may be the garbled value when it returns an error.
func (f GCAllocationTickFields) CheckAmount() error {
	n := f.Amount()
	switch {
	case f.AllocationKind >= 8:
		return errors.New("AllocationKind " + strconv.FormatUint(uint64(f.AllocationKind), 10) + " names no heap")
	case f.HasAllocationAmount64 && uint64(f.AllocationAmount) != n&0xFFFFFFFF:
		return errors.New("AllocationAmount " + strconv.FormatUint(uint64(f.AllocationAmount), 10) +
			" is not AllocationAmount64 " + strconv.FormatUint(n, 10) + "'s low 32 bits")
	case f.AllocationKind == GCAllocationKindSmall && n >= 1<<32:
		return errors.New("a small object heap tick of " + strconv.FormatUint(n, 10) + " bytes: the runtime ticks about every 100 KB, of objects under 85,000 bytes")
	case n > MaxAllocationBytes:
		return errors.New("AllocationAmount64 " + strconv.FormatUint(n, 10) + " bytes is more than an address space holds")
	}
	return nil
}

// ModuleILFileName is the file name of ModuleILPath (after the last '\' or
// '/'), as TraceEvent gives it. It allocates the string.
func (f ModuleLoadUnloadFields) ModuleILFileName() string {
	p := f.ModuleILPath.String()
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '\\' || p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
