package gcstats

import "time"

// GenSummary sums up the complete GCs of one generation, or of all.
type GenSummary struct {
	// Count is the number of complete GCs.
	Count int
	// TotalPause and MaxPause sum up and bound their pauses; TotalDuration
	// sums their durations.
	TotalPause, MaxPause, TotalDuration time.Duration
	// Promoted is the bytes they promoted, all generations together.
	Promoted uint64
}

// MeanPause is TotalPause over Count (0 without GCs).
func (s GenSummary) MeanPause() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.TotalPause / time.Duration(s.Count)
}

func (s *GenSummary) add(gc *GC) {
	s.Count++
	s.TotalPause += gc.Pause
	s.MaxPause = max(s.MaxPause, gc.Pause)
	s.TotalDuration += gc.Duration
	for _, v := range gc.Promoted {
		s.Promoted += v
	}
}

// Summary sums up a process's complete GCs.
type Summary struct {
	// Gens sums up the GCs by condemned generation; All every GC.
	Gens [3]GenSummary
	All  GenSummary
	// Span is the time from the first complete GC's pause to the end of
	// the last GC, the window PausePercent is measured over.
	Span time.Duration
	// PausePercent is the share of Span the process spent paused for GC,
	// in percent.
	PausePercent float64
	// Allocated is the bytes allocated in the trace (all heaps), from
	// AllocationTick events; MaxHeap the largest heap size after a GC.
	Allocated, MaxHeap uint64
	// Incomplete counts GCs the trace does not hold the end of; they are
	// not in the sums.
	Incomplete int
}

// Summary sums up the process's complete GCs.
func (p *Process) Summary() Summary {
	var s Summary
	var first time.Time
	for _, gc := range p.GCs {
		if !gc.Complete {
			s.Incomplete++
			continue
		}
		if first.IsZero() {
			first = gc.PauseStart
		}
		if g := gc.Generation; g >= 0 && g < len(s.Gens) {
			s.Gens[g].add(gc)
		}
		s.All.add(gc)
		s.MaxHeap = max(s.MaxHeap, gc.HeapAfter)
	}
	if !first.IsZero() && p.s.lastEnd.After(first) {
		s.Span = p.s.lastEnd.Sub(first)
		s.PausePercent = 100 * float64(s.All.TotalPause) / float64(s.Span)
	}
	for _, v := range p.Allocated {
		s.Allocated += v
	}
	return s
}
