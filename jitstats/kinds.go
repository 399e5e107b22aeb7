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

// Needs reports whether the JIT model uses events of this type: a reader
// can skip decoding every other event. It takes an event's Type
// (trace.Event.Type) or a *clrevents.EventInfo; the model knows clrevents'
// types only.
func Needs(typ clrimpl.EventType) bool {
	return kinds[typ] != kNone
}
