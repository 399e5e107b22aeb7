package clrevents

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var ptrSizes = []int{4, 8}

func TestGCStartJSON(t *testing.T) {
	e := &GCStartV2{Count: 7, Depth: 2, Reason: GCReasonInduced, Type: GCType(9), ClrInstanceID: 3, ClientSequenceNumber: 1}
	want := `{"Count":7,"Depth":2,"Reason":"Induced","Type":"GCType(0x9)","ClrInstanceID":3,"ClientSequenceNumber":1}`
	if got := string(e.AppendJSON(nil)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	wantText := `Count=7 Depth=2 Reason=Induced Type=GCType(0x9) ClrInstanceID=3 ClientSequenceNumber=1`
	if got := string(e.AppendText(nil)); got != wantText {
		t.Errorf("got  %s\nwant %s", got, wantText)
	}
}

func TestDecoder(t *testing.T) {
	d := NewDecoder()
	for _, ev := range sampleEvents() {
		info := ev.Info()
		for _, ptr := range ptrSizes {
			payload := ev.Encode(nil, ptr)
			got, n, err := d.Decode(info.Provider, info.ID, info.Version, ptr, payload)
			if err != nil || n != len(payload) || got.Info() != info {
				t.Fatalf("%s: Decode = %v, %d, %v", info, got, n, err)
			}
			if diff := cmp.Diff(ev, got); diff != "" {
				t.Errorf("%s ptr %d: (-want +got)\n%s", info, ptr, diff)
			}
			if allocs := testing.AllocsPerRun(10, func() { d.Decode(info.Provider, info.ID, info.Version, ptr, payload) }); allocs != 0 {
				t.Errorf("%s: Decoder.Decode allocates %v times", info, allocs)
			}
		}
	}
	_, _, err := d.Decode(ProviderRuntime, 65000, 0, 8, nil)
	var ue *UnknownEventError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnknownEvent) || ue.ID != 65000 {
		t.Errorf("unknown event: %v", err)
	}
	if _, _, err := d.Decode(Provider(200), 1, 0, 8, nil); !errors.Is(err, ErrUnknownEvent) {
		t.Errorf("unknown provider: %v", err)
	}
}

// TestLookup checks the table against facts from the manifest.
func TestLookup(t *testing.T) {
	rt, ok := ProviderByName("Microsoft-Windows-DotNETRuntime")
	if !ok || rt != ProviderRuntime || rt.GUID() != MustParseGUID("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4") {
		t.Fatalf("runtime provider: %v %v %v", rt, ok, rt.GUID())
	}
	if p, ok := ProviderByGUID(MustParseGUID("{A669021C-C450-4609-A035-5AF59AF4DF18}")); !ok || p != ProviderRundown {
		t.Errorf("rundown by GUID: %v %v", p, ok)
	}
	// 144 is MethodUnloadVerbose in the runtime provider and
	// MethodDCEndVerbose in the rundown provider.
	for _, c := range []struct {
		p    Provider
		id   uint16
		ver  uint8
		name string
	}{
		{ProviderRuntime, 1, 2, "GCStart_V2"},
		{ProviderRuntime, 144, 1, "MethodUnloadVerbose_V1"},
		{ProviderRundown, 144, 1, "MethodDCEndVerbose_V1"},
		{ProviderRuntime, 303, 0, "AllocationSampled"},
		{ProviderRuntime, 152, 3, "ModuleLoad_V3"},
	} {
		info, ok := Lookup(c.p, c.id, c.ver)
		if !ok || info.Name != c.name {
			t.Errorf("Lookup(%v, %d, %d) = %v, want %s", c.p, c.id, c.ver, info, c.name)
		}
	}
	info, _ := Lookup(ProviderRuntime, 1, 2)
	if info.TaskName != "GarbageCollection" || info.Opcode != OpcodeStart || info.Level != LevelInformational || info.Keywords != uint64(RuntimeGCKeyword) {
		t.Errorf("GCStart_V2 info: %+v", info)
	}
	if _, ok := Lookup(ProviderRuntime, 1, 99); ok {
		t.Error("GCStart v99 found")
	}
}

func TestEnums(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{GCReasonInduced.String(), "Induced"},
		{GCReason(0x11).String(), "InducedAggressive"}, // from overrides.yaml
		{GCReason(0x40).String(), "GCReason(0x40)"},
		{(GCRootFlagsPinning | GCRootFlagsInterior).String(), "Pinning|Interior"},
		{(GCRootFlagsPinning | 0x100).String(), "Pinning|0x100"},
		{GCRootFlags(0).String(), "0"},
		{(RuntimeGCKeyword | RuntimeJitKeyword).String(), "GCKeyword|JitKeyword"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestOlderVersions decodes a version the schema lacks with the newest
// older one when asked, reporting the new fields as extra bytes.
func TestOlderVersions(t *testing.T) {
	v2 := &GCStartV2{Count: 5, Depth: 1, Reason: GCReasonInduced, ClrInstanceID: 9, ClientSequenceNumber: 77}
	payload := append(v2.Encode(nil, 8), 0xAA, 0xBB, 0xCC, 0xDD) // a v3 with one more uint32
	var d Decoder
	if _, _, err := d.Decode(ProviderRuntime, 1, 3, 8, payload); !errors.Is(err, ErrUnknownEvent) {
		t.Fatalf("v3 without OlderVersions: %v", err)
	}
	d.OlderVersions = true
	ev, n, err := d.Decode(ProviderRuntime, 1, 3, 8, payload)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Info().Version != 2 || len(payload)-n != 4 {
		t.Errorf("decoded as version %d with %d extra bytes, want 2 and 4", ev.Info().Version, len(payload)-n)
	}
	if diff := cmp.Diff(Event(v2), ev); diff != "" {
		t.Error(diff)
	}
	if _, _, err := d.Decode(ProviderRuntime, 65000, 3, 8, payload); !errors.Is(err, ErrUnknownEvent) {
		t.Errorf("unknown id with OlderVersions: %v", err)
	}
}
