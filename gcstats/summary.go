package gcstats

import "time"

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
	for _, v := range gc.Promoted {
		s.Promoted += v
	}
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
	// Allocated is the bytes allocated in the trace (all heaps), from
	// AllocationTick events; unknown, not zero, without HasAllocated.
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
	for _, v := range p.Allocated {
		s.Allocated += v
	}
	s.HasAllocated = p.HasAllocated
	return s
}
