package jitstats

import (
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/feed"
)

// kind is what an event means to the JIT model.
type kind uint8

const (
	kNone kind = iota
	kJitStart
	kLoad
	kR2R
	kInlineOK
	kInlineFailed
)

// kinds maps the runtime provider's events to their meaning.
var kinds = feed.ByDisplayName(
	[]string{"Microsoft-Windows-DotNETRuntime"},
	map[string]kind{
		"Method/JittingStarted":     kJitStart,
		"Method/LoadVerbose":        kLoad,
		"Method/Load":               kLoad,
		"Method/R2RGetEntryPoint":   kR2R,
		"Method/InliningSucceeded":  kInlineOK,
		"Method/InliningFailed":     kInlineFailed,
		"Method/InliningFailedAnsi": kInlineFailed,
	})

// Needs reports whether the JIT model decodes events of this type: a
// program that decodes events itself can skip decoding the others for
// the model. It takes an event's type in clrevents
// (trace.Event.DecodeTypeIn with clrevents.Table(), which gives a newer
// runtime's version as the one clrevents has) or a *clrevents.EventInfo;
// the model knows clrevents' types only. The Analyzer still wants every
// event through Add, needed or not: any event of a thread confirms the
// time of the compile the thread's last load ended (see Observe), and the
// ETW kernel's Process/Start begins a new process for a process ID used
// again.
func Needs(typ clrimpl.EventType) bool {
	return kinds[typ] != kNone
}
