package gcstats

import (
	"github.com/clrgo/clrevents/clrimpl"
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
	kRuntimeStart
	kSettings
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
		"GC/Settings":          kSettings, // the private provider's
		// The runtime provider's RuntimeInformationStart; the rundown
		// provider's RuntimeInformationDCStart, a running runtime's,
		// is not one of these providers'.
		"Runtime/Start": kRuntimeStart,
	})

// Needs reports whether the GC model decodes events of this type: a
// program that decodes events itself can skip decoding the others for
// the model. It takes an event's type in clrevents
// (trace.Event.DecodeTypeIn with clrevents.Table(), which gives a newer
// runtime's version as the one clrevents has) or a *clrevents.EventInfo;
// the model knows clrevents' types only. The Analyzer still wants every
// event through Add, needed or not: each moves the process's time in the
// trace, which the pause share is measured over, and the ETW kernel's
// Process/Start begins a new process for a process ID used again.
func Needs(typ clrimpl.EventType) bool {
	return kinds[typ] != kNone
}
