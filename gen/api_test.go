package gen_test

import (
	"testing"

	"github.com/clrgo/clrevents/gen"
)

// TestAPI: the names the built-in schema's package has, with what each
// stands for, as clrgen diff compares them.
func TestAPI(t *testing.T) {
	m, _, err := gen.LoadWith(gen.LoadConfig{Overrides: gen.BuiltinOverrides, Extra: []string{gen.BuiltinExtra}})
	if err != nil {
		t.Fatal(err)
	}
	api, err := gen.API(m)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"GCStartV2":                    "Microsoft-Windows-DotNETRuntime event 1 v2 (GCStart_V2, shown as GC/Start)",
		"GCStartFields":                "fields of family GCStart",
		"GCStartFields.Reason":         "GCReason",
		"KindMethodLoadVerbose":        "MethodLoadUnloadVerboseKind(3): MethodLoadVerbose",
		"GCStartV2.Depth":              "uint32",
		"GCStartV2.Reason":             "uint32 as GCReason",
		"GCReason":                     "enum of uint32",
		"RuntimeGCKeyword":             "keyword 0x1 of Microsoft-Windows-DotNETRuntime",
		"MethodJitInliningFailedAnsi":  "Microsoft-Windows-DotNETRuntime event 186 v0 (MethodJitInliningFailedAnsi, shown as Method/InliningFailedAnsi)",
		"MethodDetails.TypeParameters": "array of uint64",
	} {
		if got := api[name]; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
