package gen

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/clrgo/clrevents/schema"
)

// GoName turns a manifest name into an exported Go identifier, always the
// same way: the runs of letters and digits, each with its first letter
// upper-cased, joined. "GCStart_V2" → "GCStartV2", "win:DC_Start" →
// "WinDCStart". A name that would start with a digit, or that has no letter
// or digit at all, is an error: it needs an explicit name in the schema.
func GoName(s string) (string, error) {
	var b strings.Builder
	up := true
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r)) || r > unicode.MaxASCII {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	n := b.String()
	if n == "" {
		return "", fmt.Errorf("%q has no letters or digits to make a Go name of", s)
	}
	if unicode.IsDigit(rune(n[0])) {
		return "", fmt.Errorf("%q would make a Go name starting with a digit", s)
	}
	return n, nil
}

// ProviderShort is the prefix of a provider's Go names: the provider name
// without "Microsoft-Windows-DotNET" or "Microsoft-DotNET", and without a
// leading "Runtime" when something follows it. Microsoft-Windows-DotNETRuntime
// → Runtime, …RuntimeRundown → Rundown, Microsoft-DotNETRuntimeMonoProfiler →
// MonoProfiler, Microsoft-DotNETCore-SampleProfiler → SampleProfiler.
func ProviderShort(name string) (string, error) {
	s := name
	for _, p := range []string{"Microsoft-Windows-DotNET", "Microsoft-DotNETCore-", "Microsoft-DotNET"} {
		s = strings.TrimPrefix(s, p)
	}
	if len(s) > len("Runtime") {
		s = strings.TrimPrefix(s, "Runtime")
	}
	return GoName(s)
}

// MapTypeName is a map's Go type: the map name without a trailing "Map",
// prefixed by the provider's short name except for the runtime provider,
// whose maps are the common case. GCReasonMap → GCReason; the rundown
// provider's ModuleFlagsMap → RundownModuleFlags.
func MapTypeName(provShort, mapName string) (string, error) {
	n, err := GoName(strings.TrimSuffix(mapName, "Map"))
	if err != nil {
		return "", err
	}
	if provShort == "Runtime" {
		return n, nil
	}
	return provShort + n, nil
}

// standardOpcodeName: "win:DC_Start" → "DCStart".
func standardName(s string) (string, error) { return GoName(strings.TrimPrefix(s, "win:")) }

// names is the package scope: every identifier the generator declares, with
// what declared it, so a clash is reported instead of resolved.
type names struct {
	used map[string]string
	errs []error
}

func (n *names) declare(id, what string, pos schema.Pos) {
	n.declareHint(id, what, pos, "rename one in the schema")
}

// declareHint is declare with the advice a clash of id gives.
func (n *names) declareHint(id, what string, pos schema.Pos, hint string) {
	if n.used == nil {
		n.used = map[string]string{}
	}
	if prev, ok := n.used[id]; ok {
		n.errs = append(n.errs, &schema.Error{Pos: pos, What: what,
			Msg: fmt.Sprintf("Go name %s is already used by %s; %s", id, prev, hint)})
		return
	}
	n.used[id] = fmt.Sprintf("%s (%s)", what, pos)
}

// shellNames are the package-level functions and types every generated
// package declares whatever its schema (emit_shell.go); reserveShell adds
// the aliases of clrimpl's names and the standard levels and opcodes.
var shellNames = []string{
	"Event", "EventInfo", "Events", "Lookup", "Table",
	"FamilyInfo", "Families",
	"Provider", "Providers", "ProviderByName", "ProviderByGUID",
	"Decoder", "NewDecoder",
}

// reserveShell declares the names every generated package has, so that a
// schema name that would take one is an error that says so.
func (n *names) reserveShell() {
	if n.used == nil {
		n.used = map[string]string{}
	}
	for _, id := range shellNames {
		n.used[id] = "the generated package's own " + id
	}
	for _, id := range aliasTypes {
		n.used[id] = "the generated package's own " + id + " (clrimpl." + id + ")"
	}
	for _, id := range aliasVars {
		n.used[id] = "the generated package's own " + id + " (clrimpl." + id + ")"
	}
	for _, k := range kindAliases {
		for _, id := range append(append([]string(nil), k.types...), k.vars...) {
			n.used[id] = "the generated package's own " + id + " (clrimpl." + id + ")"
		}
	}
	for _, l := range schema.StandardLevels {
		id, _ := standardName(l.Name)
		n.used["Level"+id] = "the standard level " + l.Name
	}
	for _, o := range schema.StandardOpcodes {
		id, _ := standardName(o.Name)
		n.used["Opcode"+id] = "the standard opcode " + o.Name
	}
}

func (n *names) fail(pos schema.Pos, what string, err error) {
	n.errs = append(n.errs, &schema.Error{Pos: pos, What: what, Msg: err.Error()})
}

// methodNames are the methods of generated event and element types; a field
// may not take one of these names.
var methodNames = map[string]bool{
	"Info": true, "Decode": true, "Encode": true, "AppendJSON": true, "AppendText": true, "String": true,
	"AppendColumns": true, "Descriptor": true,
}
