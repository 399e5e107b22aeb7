package clrevents

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
)

// recorder is a ColumnAppender that writes every value it is given, so two
// runs of AppendColumns can be compared call for call.
type recorder struct {
	out     []byte
	scratch []byte
}

func (r *recorder) Bool(v bool)         { r.out = fmt.Appendf(r.out, "bool %v;", v) }
func (r *recorder) Int(v int64)         { r.out = fmt.Appendf(r.out, "int %d;", v) }
func (r *recorder) Uint(v uint64)       { r.out = fmt.Appendf(r.out, "uint %d;", v) }
func (r *recorder) Float(v float64)     { r.out = fmt.Appendf(r.out, "float %v;", v) }
func (r *recorder) GUID(v clrimpl.GUID) { r.out = fmt.Appendf(r.out, "guid %v;", v) }
func (r *recorder) Bytes(v []byte)      { r.out = fmt.Appendf(r.out, "bytes %q;", v) }
func (r *recorder) Scratch() []byte     { return r.scratch[:0] }
func (r *recorder) reset()              { r.out = r.out[:0] }
func newRecorder() *recorder {
	return &recorder{out: make([]byte, 0, 1<<16), scratch: make([]byte, 0, 1<<16)}
}

// columns returns what e.AppendColumns gives r, in a slice of its own.
func (r *recorder) columns(e clrimpl.Event) []byte {
	r.reset()
	e.AppendColumns(r)
	return slices.Clone(r.out)
}

// discard is a ColumnAppender that keeps nothing.
type discard struct{ scratch []byte }

func (*discard) Bool(bool)         {}
func (*discard) Int(int64)         {}
func (*discard) Uint(uint64)       {}
func (*discard) Float(float64)     {}
func (*discard) GUID(clrimpl.GUID) {}
func (*discard) Bytes([]byte)      {}
func (d *discard) Scratch() []byte { return d.scratch[:0] }

// TestDescriptor checks every event type's Descriptor: one shared value,
// the same from the type, its values and its EventInfo; the facts of the
// EventInfo and of its provider; and a Fields that writes a payload as the
// decoded event's own writers do, at both pointer sizes, with the
// decoder's error for every cut payload, allocating nothing.
func TestDescriptor(t *testing.T) {
	buf := make([]byte, 0, 1<<16)
	rec := newRecorder()
	var dis clrimpl.ColumnAppender = &discard{make([]byte, 0, 1<<16)}
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
		for _, ptr := range ptrSizes {
			payload := ev.Encode(nil, ptr)
			got := info.New()
			if _, err := got.Decode(payload, ptr); err != nil {
				t.Fatal(err)
			}
			if out, err := d.Fields.AppendJSON([]byte("x"), payload, ptr); err != nil || !bytes.Equal(out, append([]byte("x"), got.AppendJSON(nil)...)) {
				t.Errorf("%s ptr %d: Fields.AppendJSON = %s, %v; the event writes %s", info, ptr, out, err, got.AppendJSON(nil))
			}
			if out, err := d.Fields.AppendText(nil, payload, ptr); err != nil || !bytes.Equal(out, got.AppendText(nil)) {
				t.Errorf("%s ptr %d: Fields.AppendText = %s, %v; the event writes %s", info, ptr, out, err, got.AppendText(nil))
			}
			wantCols := rec.columns(got)
			rec.reset()
			if err := d.Fields.AppendColumns(rec, payload, ptr); err != nil || !bytes.Equal(rec.out, wantCols) {
				t.Errorf("%s ptr %d: Fields.AppendColumns gives %s (%v); the event's AppendColumns %s", info, ptr, rec.out, err, wantCols)
			}
			for cut := range len(payload) {
				_, want := info.New().Decode(payload[:cut:cut], ptr)
				out, err := d.Fields.AppendJSON([]byte("x"), payload[:cut:cut], ptr)
				if err == nil || err.Error() != want.Error() || string(out) != "x" {
					t.Errorf("%s ptr %d cut at %d: Fields.AppendJSON = %q, %v; Decode gives %v", info, ptr, cut, out, err, want)
					break
				}
				if _, err := d.Fields.AppendText(nil, payload[:cut:cut], ptr); err == nil || err.Error() != want.Error() {
					t.Errorf("%s ptr %d cut at %d: Fields.AppendText: %v; Decode gives %v", info, ptr, cut, err, want)
					break
				}
				rec.reset()
				if err := d.Fields.AppendColumns(rec, payload[:cut:cut], ptr); err == nil || err.Error() != want.Error() || len(rec.out) != 0 {
					t.Errorf("%s ptr %d cut at %d: Fields.AppendColumns: %v after %q; Decode gives %v", info, ptr, cut, err, rec.out, want)
					break
				}
			}
			_, want := info.New().Decode(payload, 6)
			if _, err := d.Fields.AppendJSON(nil, payload, 6); fmt.Sprint(err) != fmt.Sprint(want) {
				t.Errorf("%s: Fields.AppendJSON with pointer size 6: %v; Decode gives %v", info, err, want)
			}
			if allocs := testing.AllocsPerRun(10, func() { d.Fields.AppendJSON(buf[:0], payload, ptr) }); allocs != 0 {
				t.Errorf("%s ptr %d: Fields.AppendJSON allocates %v times", info, ptr, allocs)
			}
			if allocs := testing.AllocsPerRun(10, func() { d.Fields.AppendText(buf[:0], payload, ptr) }); allocs != 0 {
				t.Errorf("%s ptr %d: Fields.AppendText allocates %v times", info, ptr, allocs)
			}
			if allocs := testing.AllocsPerRun(10, func() { d.Fields.AppendColumns(dis, payload, ptr) }); allocs != 0 {
				t.Errorf("%s ptr %d: Fields.AppendColumns allocates %v times", info, ptr, allocs)
			}
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
