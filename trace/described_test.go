package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dynamic"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/internal/baseline"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/kernelevents"
)

var writeDescribed = flag.Bool("write-described", false, "rewrite testdata/described.* from the shared net.4.5.2.x86 trace")

const (
	netZip      = "../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip"
	netBaseline = "../../shared/fixtures/traces/perfview/net.4.5.2.x86.baseline.txt"
)

const (
	describedEvents   = "testdata/described.events.gz"
	describedBaseline = "testdata/described.baseline.txt"
)

// describedProviders are the providers of the 4.5.2 trace whose events
// the fixture keeps: described by EventInfo events (DNS client, kernel
// process, ETW itself, the shell) or by an EventSource manifest (PerfView).
var describedProviders = map[string]bool{
	"PerfView": true, "Microsoft-Windows-DNS-Client": true, "Microsoft-Windows-Kernel-EventTracing": true,
	"Microsoft-Windows-Immersive-Shell": true, "Microsoft-Windows-Kernel-Process": true,
}

// fixtureEvent is one event of the fixture: what the descriptions and the
// interpreter look at, and the time TraceEvent prints.
type fixtureEvent struct {
	ms string
	e  etl.Event
}

func (f *fixtureEvent) String() string {
	e := &f.e
	return fmt.Sprintf("%s %d %s %d %d %d %d -%s", strings.ReplaceAll(f.ms, ",", ""), e.HeaderKind, e.ProviderGUID,
		e.ID, e.Version, e.Opcode, e.PointerSize, hex.EncodeToString(e.Payload))
}

func parseFixtureEvent(line string) (fixtureEvent, error) {
	var f fixtureEvent
	var kind, id, version, opcode, ptr int
	var guid, payload string
	if _, err := fmt.Sscan(line, &f.ms, &kind, &guid, &id, &version, &opcode, &ptr, &payload); err != nil {
		return f, err
	}
	ms, err := strconv.ParseFloat(f.ms, 64)
	if err != nil {
		return f, err
	}
	f.ms = baseline.FormatMSec(ms)
	g, err := clrevents.ParseGUID(guid)
	if err != nil {
		return f, err
	}
	p, err := hex.DecodeString(strings.TrimPrefix(payload, "-"))
	if err != nil {
		return f, err
	}
	f.e = etl.Event{HeaderKind: etl.HeaderKind(kind), ProviderGUID: g, ID: uint16(id), Version: uint8(version),
		Opcode: uint8(opcode), PointerSize: ptr, Payload: p}
	return f, nil
}

// TestWriteDescribedFixture rewrites the fixture when asked to
// (go test ./trace -run TestWriteDescribedFixture -write-described): the
// baseline lines of describedProviders, the events they show, and the
// EventInfo, EventMapInfo and ManifestData events that describe them.
func TestWriteDescribedFixture(t *testing.T) {
	if !*writeDescribed {
		t.Skip("rewrites the fixture only with -write-described")
	}
	bl, err := baseline.ParseFile(netBaseline)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	guids := map[clrevents.GUID]bool{}
	want := map[string]bool{} // "ms len"
	src, err := os.ReadFile(netBaseline)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Split(string(src), "\n")
	for _, b := range bl.Events {
		if describedProviders[b.Provider] {
			lines = append(lines, all[b.Line-1])
			want[b.MSecText+" "+strconv.Itoa(b.DataLen)] = true
		}
	}
	r, err := etl.NewReader(bytes.NewReader(tracetest.Bytes(t, netZip)))
	if err != nil {
		t.Fatal(err)
	}
	var s Reader
	var out []string
	var meta []fixtureEvent
	for _, e := range readAllEvents(t, r) {
		ms := baseline.FormatMSec(r.RelativeMSec(e.Timestamp))
		f := fixtureEvent{ms, e}
		if ok, _ := s.observeETL(&e); ok {
			meta = append(meta, f)
			continue
		}
		if name, ok := s.descs.ProviderName(e.ProviderGUID); ok && describedProviders[name] && want[ms+" "+strconv.Itoa(len(e.Payload))] {
			guids[e.ProviderGUID] = true
			out = append(out, f.String())
		}
	}
	var keep []string
	for _, f := range meta {
		var g clrevents.GUID
		copy(g[:], f.e.Payload) // EventInfo and EventMapInfo start with the provider
		if isManifestData(&f.e) {
			g = f.e.ProviderGUID
		}
		if guids[g] {
			keep = append(keep, f.String())
		}
	}
	writeGz(t, describedEvents, append(keep, out...))
	if err := os.WriteFile(describedBaseline, []byte(strings.Join(lines, "\n")+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d description events, %d described events, %d baseline lines", len(keep), len(out), len(lines))
}

// readAllEvents copies every event of r.
func readAllEvents(t *testing.T, r *etl.Reader) []etl.Event {
	var evs []etl.Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatalf("after %d events: %v", len(evs), err)
		}
		evs = append(evs, etl.Event{HeaderKind: e.HeaderKind, ProviderGUID: e.ProviderGUID, ID: e.ID,
			Version: e.Version, Opcode: e.Opcode, PointerSize: e.PointerSize, Payload: bytes.Clone(e.Payload),
			Timestamp: e.Timestamp, Offset: e.Offset})
	}
}

func writeGz(t *testing.T, name string, lines []string) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte(strings.Join(lines, "\n") + "\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, buf.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
}

// TestSchemasFixture: the described events of the 4.5.2 trace kept in
// testdata decode, through the descriptions the trace carries (as the
// Reader collects and finds them), to the names and field values of
// TraceEvent's baseline lines.
func TestSchemasFixture(t *testing.T) {
	f, err := os.Open(describedEvents)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	bl, err := baseline.ParseFile(describedBaseline)
	if err != nil {
		t.Fatal(err)
	}
	var s Reader
	type key struct {
		ms, name string
		n        int
	}
	got := map[key][]map[string]any{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fe, err := parseFixtureEvent(sc.Text())
		if err != nil {
			t.Fatal(err)
		}
		e := &fe.e
		if ok, err := s.observeETL(e); err != nil {
			t.Fatal(err)
		} else if ok && !isManifestData(e) {
			continue
		}
		es := s.lookupETL(e)
		if es == nil {
			t.Fatalf("event %s has no description", sc.Text()[:60])
		}
		out, err := es.AppendJSON(nil, e.Payload, e.PointerSize)
		if err != nil {
			t.Fatal(err)
		}
		d := json.NewDecoder(bytes.NewReader(out))
		d.UseNumber()
		var fields map[string]any
		if err := d.Decode(&fields); err != nil {
			t.Fatalf("%s: %s: %v", es.Name, out, err)
		}
		k := key{fe.ms, es.Provider + "/" + es.Name, len(e.Payload)}
		got[k] = append(got[k], fields)
		// The text form holds the same values.
		txt, err := es.AppendText(nil, e.Payload, e.PointerSize)
		if err != nil {
			t.Fatal(err)
		}
		for name := range fields {
			if len(fields) > 0 && !bytes.Contains(txt, []byte(name+"=")) {
				t.Errorf("%s: text %s lacks %s", es.Name, txt, name)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	values := 0
	names := map[string]bool{}
	for _, b := range bl.Events {
		cands, ok := got[key{b.MSecText, b.FullName(), b.DataLen}]
		if !ok {
			t.Errorf("line %d: no %s at %s ms with %d bytes", b.Line, b.FullName(), b.MSecText, b.DataLen)
			continue
		}
		names[b.FullName()] = true
		for _, f := range b.Fields {
			if f.Name == "PayloadLength" {
				continue // TraceEvent's, not the payload's
			}
			// Events at the same time and of the same size: any of them.
			match := false
			for _, c := range cands {
				v, ok := c[f.Name]
				match = match || ok && baseline.SameValue(v, f.Value)
			}
			if !match {
				t.Errorf("line %d: %s %s = %v, baseline %s", b.Line, b.FullName(), f.Name, cands[0][f.Name], f.Value)
			}
			values++
		}
	}
	if len(bl.Events) < 40 || values < 100 {
		t.Fatalf("only %d lines, %d values compared", len(bl.Events), values)
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	t.Logf("%d baseline lines, %d values, %d event names: %s", len(bl.Events), values, len(list), strings.Join(list, ", "))
}

// TestObserveETL: the events that carry descriptions are told apart by
// their headers (KernelTraceControl's MetaData class, an EventSource's
// ManifestData event, a TraceLogging event's extended items); one that
// does not parse is an error naming the event's offset, and the events
// it would have described stay undescribed.
func TestObserveETL(t *testing.T) {
	var r Reader
	meta := func(opcode uint8, p []byte) *etl.Event {
		return &etl.Event{HeaderKind: etl.TraceHeader, ProviderGUID: dynamic.MetaDataGUID, Opcode: opcode,
			Payload: p, Offset: 4096}
	}
	for name, e := range map[string]*etl.Event{
		"EventInfo":    meta(dynamic.OpEventInfo, make([]byte, 50)),
		"EventMapInfo": meta(dynamic.OpEventMapInfo, make([]byte, 20)),
		"ManifestData": {HeaderKind: etl.EventHeader, ProviderGUID: clrevents.GUID{1}, ID: dynamic.ManifestDataID,
			Opcode: dynamic.ManifestDataOpcode, Payload: []byte{1, 1, 0, 0}, Offset: 4096},
		"TraceLogging traits": {HeaderKind: etl.EventHeader, ProviderGUID: clrevents.GUID{2}, Offset: 4096,
			Extended: []etl.ExtendedItem{{Type: etl.ExtProvTraits, Data: []byte{3, 0, 0}}}},
	} {
		ok, err := r.observeETL(e)
		if !ok && name != "TraceLogging traits" || err == nil || !strings.Contains(err.Error(), "offset 4096") {
			t.Errorf("%s: %v, %v; want an error at offset 4096", name, ok, err)
		}
	}
	// Other events of the MetaData class, and events of other providers,
	// describe nothing.
	for _, e := range []*etl.Event{meta(7, nil), {HeaderKind: etl.EventHeader, ID: dynamic.ManifestDataID}} {
		if ok, err := r.observeETL(e); ok || err != nil {
			t.Errorf("%+v: %v, %v", e, ok, err)
		}
	}

	// A TraceLogging event: named by its traits, described by its
	// metadata, found again without parsing.
	tl := &etl.Event{HeaderKind: etl.EventHeader, ProviderGUID: clrevents.GUID{3}, ID: 9, Opcode: 1, Level: 4,
		Extended: []etl.ExtendedItem{
			{Type: etl.ExtEventSchemaTL, Data: []byte{8, 0, 0, 'E', 0, 'n', 0, 7}}, // E { n int32 }
			{Type: etl.ExtProvTraits, Data: []byte{5, 0, 'T', 'L', 0}},
		}, Payload: []byte{0xfe, 0xff, 0xff, 0xff}}
	if ok, err := r.observeETL(tl); !ok || err != nil {
		t.Fatalf("traits: %v, %v", ok, err)
	}
	if name, _ := r.descs.ProviderName(tl.ProviderGUID); name != "TL" {
		t.Errorf("provider %q", name)
	}
	d := r.lookupETL(tl)
	if d == nil || d.Name != "E" || d.Provider != "TL" || d.ID != 9 || d.Level != 4 {
		t.Fatalf("TraceLogging description %+v", d)
	}
	if out, err := d.AppendJSON(nil, tl.Payload, 8); err != nil || string(out) != `{"n":-2}` {
		t.Errorf("%s, %v", out, err)
	}
	if r.lookupETL(tl) != d {
		t.Error("the metadata was parsed again")
	}
	if n := testing.AllocsPerRun(100, func() { r.lookupETL(tl) }); n != 0 {
		t.Errorf("lookup of a TraceLogging description: %v allocations", n)
	}
}

// TestDescriptor: in the repository's traces, every event that something
// describes has a Descriptor, named as the event is, and AppendJSON writes
// exactly what its FieldWriter writes; descriptors are made once per event
// type (per metadata record or description). An event of a generated type
// has that type's own Descriptor (a kernel event, kernelevents' type's,
// named by its display name), and AppendJSON writes what its decoded
// value writes.
func TestDescriptor(t *testing.T) {
	for _, c := range []struct {
		path                             string
		generated, metadata, etw, kernel int // events described by each, at least
		kernelNames, eventNames          int // distinct names of kernel and other described events, at least
	}{
		{path: "../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip", generated: 1000, metadata: 3, eventNames: 3},
		{path: "../testdata/traces/net.4.5.2.x86.contention-exception.etl.zip", generated: 100, etw: 14, kernel: 100, kernelNames: 10, eventNames: 1},
	} {
		r, err := Open(c.path)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		byName := map[string]*clrimpl.Descriptor{}
		var out []byte
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			d := e.Descriptor()
			if typ, ok := e.Type(); ok {
				_, kernel := typ.(*kernelevents.EventInfo)
				if d != typ.Descriptor() || !kernel && d.Name != e.Name() || kernel && d.DisplayName != e.Name() {
					t.Fatalf("%s/%s: descriptor %p (%q), want its type's %p", e.Provider(), e.Name(), d, d.Name, typ.Descriptor())
				}
				ev, err := e.Decode()
				if err != nil {
					t.Fatalf("%s/%s: %v", e.Provider(), e.Name(), err)
				}
				if ev.Descriptor() != d {
					t.Errorf("%s/%s: decoded a %s", e.Provider(), e.Name(), ev.Descriptor().Name)
				}
				want := string(ev.AppendJSON(nil))
				if out, err = e.AppendJSON(out[:0]); err != nil || string(out) != want {
					t.Errorf("%s/%s: AppendJSON %s, %v; its decoded value %s", e.Provider(), e.Name(), out, err, want)
				}
				if kernel {
					counts["kernel"]++
					byName["kernel "+e.Provider()+"/"+e.Name()+" "+d.Name] = d
					continue
				}
				counts["generated"]++
				continue
			}
			if d == nil {
				continue
			}
			if ev, err := e.Decode(); err == nil {
				// A newer version of a kernel event than kernelevents
				// has, decoded with the newest it has.
				if _, ok := ev.(kernelevents.Event); !ok || ev.Descriptor() != d || d.DisplayName != e.Name() {
					t.Fatalf("%s/%s: decoded a %T (%s), descriptor %s", e.Provider(), e.Name(), ev, ev.Descriptor().Name, d.Name)
				}
				counts["kernel"]++
				continue
			}
			kind := "etw"
			if r.Format() != ETL {
				kind = "metadata"
			}
			counts[kind]++
			if d.Name != e.Name() {
				t.Errorf("%s event %q: descriptor named %q", kind, e.Name(), d.Name)
			}
			key := kind + " " + e.Provider() + "/" + e.Name()
			if prev, ok := byName[key]; ok && prev != d {
				t.Errorf("%s: a second descriptor", key)
			}
			byName[key] = d
			want, werr := d.Fields.AppendJSON(nil, e.Payload(), e.PointerSize())
			out, err = e.AppendJSON(out[:0])
			switch {
			case werr == nil && (err != nil || string(out) != string(want)):
				t.Errorf("%s: AppendJSON %s, %v; descriptor %s", key, out, err, want)
			case werr != nil && err == nil:
				t.Errorf("%s: AppendJSON succeeds where its descriptor fails (%v)", key, werr)
			}
		}
		r.Close()
		names := map[string]int{}
		for k := range byName {
			kind, _, _ := strings.Cut(k, " ")
			names[kind]++
		}
		t.Logf("%s: %v events, %v names", c.path, counts, names)
		if counts["generated"] < c.generated || counts["metadata"] < c.metadata || counts["etw"] < c.etw || counts["kernel"] < c.kernel ||
			names["kernel"] < c.kernelNames || names["metadata"]+names["etw"] < c.eventNames {
			t.Errorf("%s: %v events, %v names; want more", c.path, counts, names)
		}
	}
}
