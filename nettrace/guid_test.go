package nettrace

import "testing"

func TestEventSourceGUID(t *testing.T) {
	// Name-based GUIDs, checked against GUIDs published for these
	// EventSources (dotnet-counters, DiagnosticSource, Mono profiler).
	for _, tc := range []struct{ name, want string }{
		{"System.Runtime", "49592c0f-5a05-516d-aa4b-a64e02026c89"},
		{"Microsoft-Diagnostics-DiagnosticSource", "adb401e1-5296-51f8-c125-5fda75826144"},
		{"Microsoft-Extensions-Logging", "3ac73b97-af73-50e9-0822-5da4367920d0"},
		{"Microsoft-DotNETRuntimeMonoProfiler", "7f442d82-0f1d-5155-4b8c-1529eb2e31c2"},
		{"microsoft-dotnetruntimemonoprofiler", "7f442d82-0f1d-5155-4b8c-1529eb2e31c2"}, // case-insensitive
	} {
		if got := EventSourceGUID(tc.name).String(); got != tc.want {
			t.Errorf("EventSourceGUID(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestProviderGUID(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"Microsoft-Windows-DotNETRuntime", "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4"},
		{"Microsoft-Windows-DotNETRuntimeRundown", "a669021c-c450-4609-a035-5af59af4df18"},
		{"Microsoft-Windows-DotNETRuntimeStress", "cc2bcbba-16b6-4cf3-8990-d74c2e8af500"},
		{"Microsoft-Windows-DotNETRuntimePrivate", "763fd754-7086-4dfe-95eb-c01a46faf4ca"},
		{"Microsoft-DotNETRuntimeMonoProfiler", "7f442d82-0f1d-5155-4b8c-1529eb2e31c2"},
		// Not name hashes: TPL has a version-4 GUID, the sample profiler a
		// fixed one.
		{"System.Threading.Tasks.TplEventSource", "2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5"},
		{"Microsoft-DotNETCore-SampleProfiler", "3c530d44-97ae-513a-1e6d-783e8f8e03a9"},
		{"System.Runtime", "49592c0f-5a05-516d-aa4b-a64e02026c89"},
	} {
		if got := ProviderGUID(tc.name).String(); got != tc.want {
			t.Errorf("ProviderGUID(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
	if EventSourceGUID("System.Threading.Tasks.TplEventSource") == ProviderGUID("System.Threading.Tasks.TplEventSource") {
		t.Error("TplEventSource's GUID is not its name hash")
	}
	if !ProviderGUID("").IsZero() {
		t.Error("empty name should give the zero GUID")
	}
}
