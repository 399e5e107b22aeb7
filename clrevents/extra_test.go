package clrevents

import (
	"crypto/sha1"
	"testing"
	"unicode/utf16"
)

// eventSourceGUID is the GUID an EventSource derives from its name: SHA-1
// over a fixed namespace and the upper-cased name in UTF-16BE, the first 16
// bytes, version nibble 5, in GUID wire layout.
func eventSourceGUID(name string) GUID {
	ns := []byte{0x48, 0x2C, 0x2D, 0xB2, 0xC3, 0x90, 0x47, 0xC8, 0x87, 0xF8, 0x1A, 0x15, 0xBF, 0xC1, 0x30, 0xFB}
	h := sha1.New()
	h.Write(ns)
	for _, u := range utf16.Encode([]rune(upperASCII(name))) {
		h.Write([]byte{byte(u >> 8), byte(u)})
	}
	var g GUID
	copy(g[:], h.Sum(nil))
	g[7] = g[7]&0x0F | 0x50
	return g
}

func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// TestExtraProviders checks the providers of schema/extra.yaml: their
// GUIDs (the EventPipe provider's is the name hash; the sample profiler's
// is the runtime's constant, which is not), and a ThreadSample payload as
// the shipped traces carry it.
func TestExtraProviders(t *testing.T) {
	if got := eventSourceGUID("System.Runtime").String(); got != "49592c0f-5a05-516d-aa4b-a64e02026c89" {
		t.Fatalf("the name hash of System.Runtime is %s: the algorithm is wrong", got)
	}
	ep, ok := ProviderByName("Microsoft-DotNETCore-EventPipe")
	if !ok || ep != ProviderEventPipe {
		t.Fatalf("ProviderByName(EventPipe) = %v, %v", ep, ok)
	}
	if got, want := ep.GUID(), eventSourceGUID(ep.String()); got != want {
		t.Errorf("EventPipe provider GUID %s, name hash %s", got, want)
	}
	sp, ok := ProviderByName("Microsoft-DotNETCore-SampleProfiler")
	if !ok || sp != ProviderSampleProfiler {
		t.Fatalf("ProviderByName(SampleProfiler) = %v, %v", sp, ok)
	}
	if got := sp.GUID().String(); got != "3c530d44-97ae-513a-1e6d-783e8f8e03a9" {
		t.Errorf("SampleProfiler GUID %s", got)
	}
	if h := eventSourceGUID(sp.String()); h == sp.GUID() {
		t.Errorf("the sample profiler's GUID is its name hash after all: fix schema/extra.yaml's comment")
	}
	if p, ok := ProviderByGUID(sp.GUID()); !ok || p != sp {
		t.Errorf("ProviderByGUID(%s) = %v, %v", sp.GUID(), p, ok)
	}

	d := NewDecoder()
	ev, n, err := d.Decode(sp, 0, 0, 8, []byte{2, 0, 0, 0})
	if err != nil || n != 4 {
		t.Fatalf("ThreadSample: n=%d err=%v", n, err)
	}
	ts, ok := ev.(*ThreadSample)
	if !ok || ts.Type != SampleProfilerSampleTypeManaged || string(ts.AppendText(nil)) != "Type=Managed" {
		t.Errorf("ThreadSample decodes to %#v (%s)", ev, ev.AppendText(nil))
	}

	// ProcessInfo: version 0 has the command line only, version 1 adds
	// the OS and the architecture; one family reads both.
	v0 := (&ProcessInfo{CommandLine: UTF16Of("app.exe")}).Encode(nil, 8)
	v1 := (&ProcessInfoV1{CommandLine: UTF16Of("app"), OSInformation: UTF16Of("macOS"), ArchInformation: UTF16Of("x64")}).Encode(nil, 8)
	for _, c := range []struct {
		version uint8
		payload []byte
		os      string
	}{{0, v0, ""}, {1, v1, "macOS"}} {
		ev, _, err := d.Decode(ep, 1, c.version, 8, c.payload)
		if err != nil {
			t.Fatal(err)
		}
		pi, ok := ev.(ProcessInfoEvent)
		if !ok {
			t.Fatalf("%T is not a ProcessInfoEvent", ev)
		}
		f := pi.ProcessInfoFields()
		if f.HasOSInformation != (c.os != "") || f.OSInformation.String() != c.os {
			t.Errorf("ProcessInfo v%d: %+v", c.version, f)
		}
	}
}
