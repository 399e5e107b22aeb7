// Package heapfloor lets a batch command's heap grow to a floor before the
// garbage collector's usual pacing takes over.
//
// The collector's default (GOGC=100) starts a cycle each time the heap
// reaches twice what the last one left live, and at 4 MB before the first:
// a command whose live heap settles at 10–20 MB (a Parquet export's column
// buffers under their memory budget, a profile's tables) runs four or five
// cycles in its first tens of milliseconds, each with a mark phase that
// keeps an idle core busy and turns on write barriers. With a floor, the
// heap may grow to the floor while it is small, and pacing is the default
// once twice the live heap passes the floor, so a command's memory grows
// by at most the floor, never with its input. Go's compiler sizes its
// starting heap the same way.
package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Set raises the heap at which the garbage collector collects to about
// floor bytes, as long as twice the live heap is below it, and returns
// whether it did. A GOGC or GOMEMLIMIT in the environment is the user's
// choice and wins: Set does nothing then. Call it once, at the start of
// main; the setting is the process's.
func Set(floor uint64) bool {
	if floor == 0 || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return false
	}
	f := &floorState{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	// Before the first cycle the collector's goal is its minimum heap,
	// 4 MB, scaled by the percentage.
	setPercent(int(max(100, min(floor*100/minHeap, 100_000))))
	f.arm()
	return true
}

// setPercent sets the collector's percentage (a test's hook).
var setPercent = debug.SetGCPercent

// minHeap is the collector's goal before its first cycle at GOGC=100.
const minHeap = 4 << 20

// floorState follows the collector's cycles, one finalizer a cycle.
type floorState struct {
	floor  uint64
	sample []metrics.Sample
}

// token is what a cycle finds unreachable: its finalizer runs after it.
// (Not a zero-size or tiny object, which may never be finalized.)
type token struct{ _ [16]byte }

func (f *floorState) arm() {
	runtime.SetFinalizer(&token{}, func(*token) { f.cycle() })
}

// cycle sets the percentage for the next cycle from the live heap the
// last one left: the goal is the floor while twice the live heap is
// below it, and from then on the default, for good.
func (f *floorState) cycle() {
	metrics.Read(f.sample)
	live := uint64(0)
	if f.sample[0].Value.Kind() == metrics.KindUint64 {
		live = f.sample[0].Value.Uint64()
	}
	p := percentFor(f.floor, live)
	setPercent(p)
	if p > 100 {
		f.arm()
	}
}

// percentFor is the GOGC percentage whose goal over a live heap of live
// bytes is floor, and at least the default, 100.
func percentFor(floor, live uint64) int {
	if live == 0 || live >= floor/2 {
		return 100
	}
	return int(min(floor*100/live-100, 100_000))
}
