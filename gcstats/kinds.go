package gcstats

import (
	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/feed"
)

// kind is what an event means to the GC model.
type kind uint8

const (
	kNone kind = iota
	kSuspendBegin
	kSuspendEnd
	kRestartEnd
	kStart
	kEnd
	kHeapStats
	kGlobalHistory
	kPerHeapHistory
	kAllocTick
)

// kinds maps the runtime and private providers' events to their meaning.
var kinds = feed.ByDisplayName(
	[]string{"Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimePrivate"},
	map[string]kind{
		"GC/SuspendEEStart":    kSuspendBegin,
		"GC/SuspendEEStop":     kSuspendEnd,
		"GC/RestartEEStop":     kRestartEnd,
		"GC/Start":             kStart,
		"GC/Stop":              kEnd,
		"GC/HeapStats":         kHeapStats,
		"GC/GlobalHeapHistory": kGlobalHistory,
		"GC/PerHeapHistory":    kPerHeapHistory,
		"GC/AllocationTick":    kAllocTick,
	}, nil)

// Needs reports whether the GC model uses events of this type: a reader
// can skip decoding every other event.
func Needs(info *clrevents.EventInfo) bool {
	return kinds[info] != kNone
}
