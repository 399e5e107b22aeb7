package nettrace

import (
	"crypto/sha1"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/clrgo/clrevents/clrimpl"
)

// Well-known provider GUIDs that are not EventSource's name-based GUIDs, so
// they cannot be computed from the provider name; made at the first
// look-up.
var knownProviders = sync.OnceValue(func() map[string]clrimpl.GUID {
	return map[string]clrimpl.GUID{
		"Microsoft-Windows-DotNETRuntime":                  clrimpl.MustParseGUID("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4"),
		"Microsoft-Windows-DotNETRuntimeRundown":           clrimpl.MustParseGUID("a669021c-c450-4609-a035-5af59af4df18"),
		"Microsoft-Windows-DotNETRuntimeStress":            clrimpl.MustParseGUID("cc2bcbba-16b6-4cf3-8990-d74c2e8af500"),
		"Microsoft-Windows-DotNETRuntimePrivate":           clrimpl.MustParseGUID("763fd754-7086-4dfe-95eb-c01a46faf4ca"),
		"Microsoft-DotNETRuntimeMonoProfiler":              clrimpl.MustParseGUID("7f442d82-0f1d-5155-4b8c-1529eb2e31c2"),
		"System.Diagnostics.Eventing.FrameworkEventSource": clrimpl.MustParseGUID("8e9f5090-2d75-4d03-8a81-e5afbf85daf1"),
		// TplEventSource kept the (random, version 4) GUID of its ETW days.
		"System.Threading.Tasks.TplEventSource": clrimpl.MustParseGUID("2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5"),
		// The sample profiler's GUID is the one .NET Core 2.0 wrote into
		// version 1 traces and TraceEvent registers its parser under; it is
		// not the hash of the name (that would be 84ad50b1-22f8-59cd-333e-718371a1925e).
		"Microsoft-DotNETCore-SampleProfiler": clrimpl.MustParseGUID("3c530d44-97ae-513a-1e6d-783e8f8e03a9"),
	}
})

// eventSourceNamespace is the namespace GUID EventSource hashes provider
// names under, 482C2DB2-C390-47C8-87F8-1A15BFC130FB, in big-endian (text)
// byte order.
var eventSourceNamespace = [16]byte{
	0x48, 0x2C, 0x2D, 0xB2, 0xC3, 0x90, 0x47, 0xC8,
	0x87, 0xF8, 0x1A, 0x15, 0xBF, 0xC1, 0x30, 0xFB,
}

// ProviderGUID returns the GUID of the provider with the given name: the
// registered GUID for the CLR's own providers (Microsoft-Windows-DotNETRuntime
// and its Rundown, Stress and Private siblings, the Mono profiler provider)
// and for the few providers whose GUIDs predate or differ from the name hash
// (TplEventSource, FrameworkEventSource, Microsoft-DotNETCore-SampleProfiler),
// otherwise the GUID EventSource derives from the name (EventSourceGUID).
// It returns the zero GUID for an empty name.
func ProviderGUID(name string) clrimpl.GUID {
	if name == "" {
		return clrimpl.GUID{}
	}
	if g, ok := knownProviders()[name]; ok {
		return g
	}
	return EventSourceGUID(name)
}

// EventSourceGUID computes the name-based GUID that .NET's EventSource gives
// a provider: SHA-1 over the namespace GUID 482C2DB2-C390-47C8-87F8-1A15BFC130FB
// (big-endian bytes) followed by the upper-cased name in UTF-16 big-endian;
// the first 16 bytes of the hash, with the version nibble set to 5, are the
// GUID in its wire (little-endian field) layout.
func EventSourceGUID(name string) clrimpl.GUID {
	h := sha1.New()
	h.Write(eventSourceNamespace[:])
	up := strings.ToUpper(name)
	var buf [2]byte
	for _, u := range utf16.Encode([]rune(up)) {
		buf[0], buf[1] = byte(u>>8), byte(u)
		h.Write(buf[:])
	}
	sum := h.Sum(nil)
	var g clrimpl.GUID
	copy(g[:], sum[:16])
	g[7] = g[7]&0x0F | 0x50
	return g
}
