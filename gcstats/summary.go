package gcstats

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// GenSummary sums up the complete GCs of one generation, or of all.
type GenSummary struct {
	// Count is the number of complete GCs; Measured how many of them have
	// a pause (HasPause), the GCs TotalPause, MaxPause and MeanPause are
	// over.
	Count, Measured int
	// TotalPause and MaxPause sum up and bound their pauses; TotalDuration
	// sums their durations.
	TotalPause, MaxPause, TotalDuration time.Duration
	// Promoted is the bytes they promoted, all generations together.
	Promoted uint64
}

// MeanPause is TotalPause over Measured (0 without pauses).
func (s GenSummary) MeanPause() time.Duration {
	if s.Measured == 0 {
		return 0
	}
	return s.TotalPause / time.Duration(s.Measured)
}

func (s *GenSummary) add(gc *GC) {
	s.Count++
	if gc.HasPause {
		s.Measured++
		s.TotalPause += gc.Pause
		s.MaxPause = max(s.MaxPause, gc.Pause)
	}
	s.TotalDuration += gc.Duration
	s.Promoted += gc.totalPromoted()
}

// Summary sums up a process's complete GCs.
type Summary struct {
	// Gens sums up the GCs by condemned generation; All every GC.
	Gens [3]GenSummary
	All  GenSummary
	// Span is the process's time in the trace (Process.TimeInTrace), the
	// window PausePercent is measured over.
	Span time.Duration
	// PausePercent is the share of Span the process spent paused for GC,
	// in percent: the pauses of its GCs (All.TotalPause) over Span.
	PausePercent float64
	// Allocated is the bytes the complete GCs counted allocated before
	// them (the sum of their Allocated, all heaps), as PerfView's GCStats
	// totals a process's allocation: what was allocated after the last
	// GC is not in it. HasAllocated tells whether every complete GC knows
	// its allocation; without it, Allocated is unknown, not zero.
	Allocated    uint64
	HasAllocated bool
	// MaxHeap is the largest heap size after a GC.
	MaxHeap uint64
	// Incomplete counts GCs the trace does not hold the end of; they are
	// not in the sums.
	Incomplete int
	// PauseUnknown counts GCs, complete or not, whose pause the trace
	// does not hold (HasPause is false); complete ones are in the counts
	// and durations, not in the pauses.
	PauseUnknown int
	// Missing are the GCs the trace lost, as ranges of their numbers:
	// the runtime numbers a process's GCs one after the other, so numbers
	// absent between two the trace holds are GCs whose events were lost
	// (damage, a cut inside the trace, the runtime's drops). They are in
	// no count or sum, and Span still covers them: PausePercent is low by
	// their pauses.
	Missing []GCRange
}

// GCRange is the GC numbers First to Last, both included.
type GCRange struct{ First, Last int64 }

// MissingCount is how many GCs Missing holds.
func (s Summary) MissingCount() int64 {
	var n int64
	for _, r := range s.Missing {
		n += r.Last - r.First + 1
	}
	return n
}

// Summary sums up the process's complete GCs.
func (p *Process) Summary() Summary {
	var s Summary
	for _, gc := range p.GCs {
		if !gc.HasPause {
			s.PauseUnknown++
		}
		if !gc.Complete {
			s.Incomplete++
			continue
		}
		if g := gc.Generation; g >= 0 && g < len(s.Gens) {
			s.Gens[g].add(gc)
		}
		s.All.add(gc)
		s.MaxHeap = max(s.MaxHeap, gc.HeapAfter)
	}
	start, end := p.TimeInTrace()
	if s.Span = end.Sub(start); s.Span > 0 {
		s.PausePercent = 100 * float64(s.All.TotalPause) / float64(s.Span)
	}
	s.HasAllocated = s.All.Count > 0
	for _, gc := range p.GCs {
		if gc.Complete {
			s.Allocated += gc.totalAllocated()
			s.HasAllocated = s.HasAllocated && gc.HasAllocated
		}
	}
	s.Missing = missingNumbers(p.GCs)
	return s
}

// missingNumbers returns the numbers absent between the lowest and the
// highest of the GCs' (which come in start order: a background GC's
// number is below those of the foreground GCs during it).
func missingNumbers(gcs []*GC) []GCRange {
	nums := make([]int64, 0, len(gcs))
	for _, gc := range gcs {
		nums = append(nums, gc.Number)
	}
	slices.Sort(nums)
	var out []GCRange
	for i := 1; i < len(nums); i++ {
		if nums[i] > nums[i-1]+1 {
			out = append(out, GCRange{nums[i-1] + 1, nums[i] - 1})
		}
	}
	return out
}

// missingText says which GCs the trace lost, or "" when none: "GCs 139
// to 146 (8 in all) are not in the trace, …".
func missingText(s Summary) string {
	if len(s.Missing) == 0 {
		return ""
	}
	var b strings.Builder
	n := s.MissingCount()
	if n == 1 {
		b.WriteString("GC ")
	} else {
		b.WriteString("GCs ")
	}
	for i, r := range s.Missing {
		if i == 5 {
			fmt.Fprintf(&b, " and %d more ranges", len(s.Missing)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if r.First == r.Last {
			fmt.Fprintf(&b, "%d", r.First)
		} else {
			fmt.Fprintf(&b, "%d to %d", r.First, r.Last)
		}
	}
	verb := "is"
	if n > 1 {
		verb = "are"
	}
	fmt.Fprintf(&b, " (%d in all) %s not in the trace, though GCs before and after are: their events were lost (damage, a cut, the runtime's drops); the pause share is low by their pauses", n, verb)
	return b.String()
}
