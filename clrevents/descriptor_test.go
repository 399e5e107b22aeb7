package clrevents

import (
	"bytes"
	"slices"
	"sync"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
)

// TestDescriptor checks every event type's Descriptor against the facts of
// its EventInfo and provider. (What the descriptor writes, for every cut
// payload too, and that it allocates nothing, the generated TestSamples
// checks through clrimpltest.)
func TestDescriptor(t *testing.T) {
	for _, ev := range sampleEvents() {
		info := ev.Info()
		d := info.Descriptor()
		if d == nil || ev.Descriptor() != d || info.New().Descriptor() != d {
			t.Fatalf("%s: Descriptor %p, of a value %p, of a new value %p: not one shared descriptor", info, d, ev.Descriptor(), info.New().Descriptor())
		}
		p := info.Provider.Info()
		if d.Provider != p.Name || d.ProviderGUID != p.GUID || d.ID != info.ID || d.Version != info.Version ||
			d.Name != info.Name || d.DisplayName != info.DisplayName || d.Task != info.Task || d.Opcode != info.Opcode ||
			d.Level != info.Level || d.Keywords != info.Keywords || !slices.Equal(d.Columns, info.Columns) {
			t.Errorf("%s: descriptor %+v differs from the EventInfo %+v", info, *d, *info)
		}
		if d.Fields == nil {
			t.Fatalf("%s: no Fields", info)
		}
	}
}

// TestDescriptorConcurrent writes payloads of one event type through its
// shared descriptor from several goroutines at once: each call decodes
// into a value of its own (run it with -race too).
func TestDescriptorConcurrent(t *testing.T) {
	samples := []Event{
		&GCStartV2{Count: 1, Depth: 2, Reason: GCReasonInduced, ClrInstanceID: 3},
		&GCStartV2{Count: 99, Depth: 1, Reason: GCReasonAllocSmall, ClientSequenceNumber: 12345},
	}
	d := samples[0].Descriptor()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := samples[g%2]
			payload, want := ev.Encode(nil, 8), ev.AppendJSON(nil)
			var buf []byte
			for range 2000 {
				var err error
				buf, err = d.Fields.AppendJSON(buf[:0], payload, 8)
				if err != nil || !bytes.Equal(buf, want) {
					t.Errorf("goroutine %d: %s, %v; want %s", g, buf, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestTable checks the package's Table against Lookup and the Decoder:
// every event type by provider name and by GUID, the registration, and
// the fallback to an older version.
func TestTable(t *testing.T) {
	tab := Table()
	if tab.Package() != "clrevents" || tab.Len() != len(Events()) {
		t.Fatalf("Table() = %s with %d types, want clrevents with %d", tab.Package(), tab.Len(), len(Events()))
	}
	if !slices.Contains(clrimpl.Tables(), tab) {
		t.Errorf("clrimpl.Tables() = %v does not list the package's table", clrimpl.Tables())
	}
	for i := range Events() {
		info := Events()[i]
		if tab.Type(i) != clrimpl.EventType(info) {
			t.Fatalf("Table().Type(%d) = %v, want %s", i, tab.Type(i), info)
		}
		name, guid := info.Provider.String(), info.Provider.GUID()
		for _, by := range []struct {
			name string
			guid clrimpl.GUID
		}{{name, clrimpl.GUID{}}, {"", guid}, {"Some-Other-Name", guid}} {
			if typ, ok := tab.Lookup(by.name, by.guid, info.ID, info.Version); !ok || typ != clrimpl.EventType(info) {
				t.Fatalf("%s: Lookup(%q, %v) = %v, %v", info, by.name, by.guid, typ, ok)
			}
		}
	}
	if typ, ok := tab.Lookup("Some-Other-Name", clrimpl.GUID{1}, 1, 2); ok {
		t.Errorf("Lookup of an unknown provider = %v", typ)
	}
	// GCStart has versions 0 to 2: version 7 is none of them, and its
	// newest older version is 2, as the Decoder's OlderVersions says.
	if typ, ok := tab.Lookup(ProviderRuntime.String(), GUID{}, 1, 7); ok {
		t.Errorf("Lookup(GCStart version 7) = %v", typ)
	}
	typ, ok := tab.LookupOlder(ProviderRuntime.String(), GUID{}, 1, 7)
	dec := &Decoder{OlderVersions: true}
	ev, _, err := dec.Decode(ProviderRuntime, 1, 7, 8, (&GCStartV2{}).Encode(nil, 8))
	if !ok || err != nil || typ != clrimpl.EventType(ev.Info()) || ev.Info().Name != "GCStart_V2" {
		t.Errorf("LookupOlder(GCStart version 7) = %v, %v; the Decoder gives %v, %v", typ, ok, ev, err)
	}
}
