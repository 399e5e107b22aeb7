package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	for _, c := range []struct {
		floor, live uint64
		want        int
	}{
		{32 << 20, 8 << 20, 300},   // goal 32 MB: four times the live heap
		{32 << 20, 10 << 20, 220},  // 10 MB * 3.2
		{32 << 20, 16 << 20, 100},  // twice the live heap is the floor: the default
		{32 << 20, 40 << 20, 100},  // above it
		{32 << 20, 0, 100},         // nothing known
		{32 << 20, 100, 100_000},   // bounded
		{1 << 30, 1 << 20, 102300}, // bounded too
	} {
		if got := percentFor(c.floor, c.live); got != min(c.want, 100_000) {
			t.Errorf("percentFor(%d, %d) = %d, want %d", c.floor, c.live, got, min(c.want, 100_000))
		}
	}
}

func TestEnvironmentWins(t *testing.T) {
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(v, "100")
			var set []int
			setPercent = func(p int) int { set = append(set, p); return 100 }
			defer func() { setPercent = debug.SetGCPercent }()
			if Set(64 << 20) {
				t.Errorf("Set with %s in the environment took effect", v)
			}
			if len(set) != 0 {
				t.Errorf("Set with %s in the environment set GOGC to %v", v, set)
			}
		})
	}
}

var sink [][]byte

// TestFloor runs the collector for real: no cycle while the heap stays
// under the floor, and the default percentage once a cycle finds twice
// the live heap above it. The setting is the process's, so this is one
// test, its steps in order.
func TestFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 80 MB")
	}
	for _, v := range []string{"GOGC", "GOMEMLIMIT"} {
		if os.Getenv(v) != "" {
			t.Skipf("%s is set in the environment, so Set leaves the collector to it (TestEnvironmentWins)", v)
		}
	}
	var mu sync.Mutex
	var set []int
	setPercent = func(p int) int {
		mu.Lock()
		set = append(set, p)
		mu.Unlock()
		return debug.SetGCPercent(p)
	}
	defer func() {
		setPercent = debug.SetGCPercent
		debug.SetGCPercent(100)
	}()
	runtime.GC()
	const floor = 64 << 20
	if !Set(floor) {
		t.Fatal("Set did not take effect")
	}
	if len(set) != 1 || set[0] != floor*100/minHeap {
		t.Fatalf("Set set GOGC to %v, want [%d] (the floor over the 4 MB minimum heap)", set, floor*100/minHeap)
	}

	// 24 MB of garbage in 64 KiB pieces: at GOGC=100 the heap would
	// reach its 4 MB goal several times over.
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for range 384 {
		sink = append(sink[:0], make([]byte, 64<<10))
	}
	runtime.ReadMemStats(&ms1)
	if n := ms1.NumGC - ms0.NumGC; n != 0 {
		t.Errorf("%d collections while 24 MB of garbage stayed under a 64 MB floor, want none", n)
	}

	// A live heap of 40 MB: twice it is above the floor. The cycle's
	// finalizer sets the default and stops following.
	sink = sink[:0]
	for range 640 {
		sink = append(sink, make([]byte, 64<<10))
	}
	runtime.GC()
	last := func() int {
		mu.Lock()
		defer mu.Unlock()
		return set[len(set)-1]
	}
	for deadline := time.Now().Add(5 * time.Second); last() != 100; {
		if time.Now().After(deadline) {
			t.Fatalf("after a cycle with 40 MB live GOGC was set to %v, want 100 last", set)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	n := len(set)
	mu.Unlock()
	sink = nil
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(set) != n {
		t.Errorf("GOGC set again after the default was reached: %v", set)
	}
}
