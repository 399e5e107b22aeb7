package jitstats

import (
	"strings"

	"github.com/clrgo/clrevents/clrevents"
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
// R2RGetEntryPoint shares Method/Load with the loads and is told apart by
// its manifest symbol.
var kinds = feed.ByDisplayName(
	[]string{"Microsoft-Windows-DotNETRuntime"},
	map[string]kind{
		"Method/JittingStarted":    kJitStart,
		"Method/LoadVerbose":       kLoad,
		"Method/Load":              kLoad,
		"Method/InliningSucceeded": kInlineOK,
		"Method/InliningFailed":    kInlineFailed,
	},
	func(info *clrevents.EventInfo, k kind) (kind, bool) {
		if !strings.HasPrefix(info.Name, "R2RGetEntryPoint") {
			return k, true
		}
		return kR2R, !strings.HasSuffix(info.Name, "Start")
	})

// Needs reports whether the JIT model uses events of this type: a reader
// can skip decoding every other event. It takes an event's Type
// (trace.Event.Type) or a *clrevents.EventInfo; the model knows clrevents'
// types only.
func Needs(typ clrimpl.EventType) bool {
	return kinds[typ] != kNone
}
