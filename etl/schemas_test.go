package etl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/baseline"
)

var writeDescribed = flag.Bool("write-described", false, "rewrite testdata/described.* from the shared net.4.5.2.x86 trace")

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

// fixtureEvent is one event of the fixture: what Schemas and the decoder
// look at, and the time TraceEvent prints.
type fixtureEvent struct {
	ms string
	e  Event
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
	g, err := clrimpl.ParseGUID(guid)
	if err != nil {
		return f, err
	}
	p, err := hex.DecodeString(strings.TrimPrefix(payload, "-"))
	if err != nil {
		return f, err
	}
	f.e = Event{HeaderKind: HeaderKind(kind), ProviderGUID: g, ID: uint16(id), Version: uint8(version),
		Opcode: uint8(opcode), PointerSize: ptr, Payload: p}
	return f, nil
}

// TestWriteDescribedFixture rewrites the fixture when asked to
// (go test ./etl -run TestWriteDescribedFixture -write-described): the
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
	guids := map[clrimpl.GUID]bool{}
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
	r, err := NewReader(bytes.NewReader(netETL(t)))
	if err != nil {
		t.Fatal(err)
	}
	var s Schemas
	var out []string
	var meta []fixtureEvent
	for _, e := range readAllEvents(t, r) {
		ms := baseline.FormatMSec(r.RelativeMSec(e.Timestamp))
		f := fixtureEvent{ms, e}
		if ok, _ := s.Observe(&e); ok {
			meta = append(meta, f)
			continue
		}
		if name, ok := s.ProviderName(e.ProviderGUID); ok && describedProviders[name] && want[ms+" "+strconv.Itoa(len(e.Payload))] {
			guids[e.ProviderGUID] = true
			out = append(out, f.String())
		}
	}
	var keep []string
	for _, f := range meta {
		var g clrimpl.GUID
		copy(g[:], f.e.Payload) // EventInfo and EventMapInfo start with the provider
		if f.e.IsManifestData() {
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
func readAllEvents(t *testing.T, r *Reader) []Event {
	var evs []Event
	for _, e := range readAll(t, r) {
		evs = append(evs, Event{HeaderKind: e.Kind, ProviderGUID: e.GUID, ID: e.ID, Version: e.Version,
			Opcode: e.Opcode, PointerSize: e.Ptr, Payload: e.Payload, Timestamp: e.TS, Offset: e.Offset})
	}
	return evs
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
// testdata decode, through the descriptions the trace carries, to the
// names and field values of TraceEvent's baseline lines.
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
	var s Schemas
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
		if ok, err := s.Observe(e); err != nil {
			t.Fatal(err)
		} else if ok && !e.IsManifestData() {
			continue
		}
		es := s.Lookup(e)
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
