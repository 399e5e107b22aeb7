package clrevents_test

// Benchmarks: generated decoders on real (and a few synthetic) payloads, the
// Decoder over real mixes of CLR events, AppendJSON, and the trace readers
// end to end; with an encoding/binary.Read decoder as a baseline.
// BENCHMARKS.md has the figures and `make bench` (bench/run) reproduces
// them. Nothing here runs under plain `go test`: traces are loaded lazily,
// inside the benchmarks, and cached for the process.
//
// Names use benchstat's key=value form, so that
//
//	benchstat -row .name -col /impl
//
// puts the generated decoder and its baselines side by side.

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/nettrace"
	"github.com/clrgo/clrevents/schema/interp"
	"github.com/clrgo/clrevents/trace"
)

const (
	benchRepoTraces   = "../testdata/traces"
	benchSharedTraces = "../../shared/fixtures/traces/perfview"

	trace30  = "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"    // shared, 4.8 MB, GC-heavy runtime events
	trace21  = "eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip"   // shared, 10 MB, rundown
	trace20  = "eventpipe-dotnetcore2.0-linux-objver2.netperf.zip"       // shared, 62 MB, rundown + GC + samples
	trace50  = "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip" // repo, 0.5 MB, rundown
	traceETL = "net.4.5.2.x86.etl.zip"                                   // shared, 4.4 MB ETW, x86
)

// traceFile is an unzipped trace held in memory.
type traceFile struct {
	data []byte
	err  error
}

var traceCache sync.Map // path -> *traceFile (behind a once)

type onceTrace struct {
	once sync.Once
	tf   traceFile
}

// benchTrace returns the decompressed bytes of a trace: from testdata when
// repo is true, else from ../shared, skipping the benchmark when ../shared
// is not there.
func benchTrace(tb testing.TB, name string, repo bool) []byte {
	tb.Helper()
	p := filepath.Join(benchSharedTraces, name)
	if repo {
		p = filepath.Join(benchRepoTraces, name)
	} else if _, err := os.Stat(p); err != nil {
		tb.Skipf("shared trace %s not available (%v); the shared fixtures live in ../shared next to the repository", name, err)
	}
	v, _ := traceCache.LoadOrStore(p, &onceTrace{})
	ot := v.(*onceTrace)
	ot.once.Do(func() { ot.tf.data, ot.tf.err = unzipTrace(p) })
	if ot.tf.err != nil {
		tb.Fatal(ot.tf.err)
	}
	return ot.tf.data
}

// unzipTrace reads the one .nettrace, .netperf or .etl member of a zip.
func unzipTrace(path string) ([]byte, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	for _, f := range zr.File {
		switch strings.ToLower(filepath.Ext(f.Name)) {
		case ".nettrace", ".netperf", ".etl":
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	return nil, fmt.Errorf("%s holds no trace", path)
}

// record is one CLR event of a trace, its payload copied.
type record struct {
	p       clrevents.Provider
	id      uint16
	version uint8
	ptrSize int
	payload []byte
}

// providerCache resolves a provider name or GUID to a clrevents.Provider,
// remembering the last answer: events come in runs of one provider, and a
// trace's provider strings are shared, so the common case is one string
// comparison of equal pointers.
type providerCache struct {
	meta    *nettrace.Metadata
	name    string
	guid    clrevents.GUID
	p       clrevents.Provider
	ok      bool
	started bool
}

func (c *providerCache) byName(name string) (clrevents.Provider, bool) {
	if !c.started || name != c.name {
		c.p, c.ok = clrevents.ProviderByName(name)
		c.name, c.started = name, true
	}
	return c.p, c.ok
}

// byMeta is byName keyed first by the event's metadata record, which a
// nettrace Reader never reuses: a pointer comparison when the metadata
// repeats.
func (c *providerCache) byMeta(m *nettrace.Metadata, name string) (clrevents.Provider, bool) {
	if m != c.meta || m == nil {
		c.meta = m
		return c.byName(name)
	}
	return c.p, c.ok
}

func (c *providerCache) byGUID(g clrevents.GUID) (clrevents.Provider, bool) {
	if !c.started || g != c.guid {
		c.p, c.ok = clrevents.ProviderByGUID(g)
		c.guid, c.started = g, true
	}
	return c.p, c.ok
}

var recordCache sync.Map // trace name -> *onceRecords

type onceRecords struct {
	once sync.Once
	recs []record
	err  error
}

// traceRecords returns every event of a trace whose provider and
// (ID, version) the schema knows, payloads copied into one buffer.
func traceRecords(tb testing.TB, name string, repo bool) []record {
	tb.Helper()
	data := benchTrace(tb, name, repo)
	v, _ := recordCache.LoadOrStore(name, &onceRecords{})
	or := v.(*onceRecords)
	or.once.Do(func() { or.recs, or.err = readRecords(name, data) })
	if or.err != nil {
		tb.Fatal(or.err)
	}
	return or.recs
}

func readRecords(name string, data []byte) ([]record, error) {
	var recs []record
	var buf []byte
	add := func(p clrevents.Provider, id uint16, v uint8, ps int, payload []byte) {
		if _, known := clrevents.Lookup(p, id, v); !known {
			return
		}
		start := len(buf)
		buf = append(buf, payload...)
		recs = append(recs, record{p, id, v, ps, buf[start:len(buf):len(buf)]})
	}
	var pc providerCache
	if strings.Contains(name, ".etl") {
		r, err := etl.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if p, ok := pc.byGUID(e.ProviderGUID); ok {
				add(p, e.ID, e.Version, e.PointerSize, e.Payload)
			}
		}
	} else {
		r, err := nettrace.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if p, ok := pc.byName(e.Provider); ok {
				add(p, e.ID, e.Version, e.PointerSize, e.Payload)
			}
		}
	}
	// buf grew while recs were taken; re-slice the payloads into the final
	// buffer so that they are contiguous, as in a reader's block.
	off := 0
	for i := range recs {
		n := len(recs[i].payload)
		recs[i].payload = buf[off : off+n : off+n]
		off += n
	}
	return recs, nil
}

// realPayload returns the payload of median length among the events of
// the given name (the manifest symbol, e.g. "GCStart_V2") in a trace.
func realPayload(tb testing.TB, trace string, repo bool, event string) (payload []byte, ptrSize int) {
	tb.Helper()
	var cands []record
	for _, r := range traceRecords(tb, trace, repo) {
		if info, _ := clrevents.Lookup(r.p, r.id, r.version); info.Name == event {
			cands = append(cands, r)
		}
	}
	if len(cands) == 0 {
		tb.Fatalf("%s has no %s event", trace, event)
	}
	slices.SortStableFunc(cands, func(a, b record) int { return len(a.payload) - len(b.payload) })
	m := cands[len(cands)/2]
	return m.payload, m.ptrSize
}

// Synthetic payloads, for event versions no trace at hand carries. Values
// are plausible ones for a 64-bit server process.

func synthGCHeapStatsV2() []byte {
	e := clrevents.GCHeapStatsV2{
		GenerationSize0: 0x1a2b38, TotalPromotedSize0: 0x3f1c0,
		GenerationSize1: 0x5c8a0, TotalPromotedSize1: 0x12e40,
		GenerationSize2: 0x7d3c218, TotalPromotedSize2: 0x7a11e08,
		GenerationSize3: 0x1f4a8c0, TotalPromotedSize3: 0x1f4a8c0,
		FinalizationPromotedSize: 0x1c8, FinalizationPromotedCount: 7,
		PinnedObjectCount: 3, SinkBlockCount: 41, GCHandleCount: 1283, ClrInstanceID: 8,
		GenerationSize4: 0x2d8f0, TotalPromotedSize4: 0x2d8f0,
	}
	return e.Encode(nil, 8)
}

func synthGCAllocationTickV4() []byte {
	e := clrevents.GCAllocationTickV4{
		AllocationAmount: 0x19000, AllocationKind: 0, ClrInstanceID: 8,
		AllocationAmount64: 0x19000, TypeID: 0x7ff9a1c3d2e8,
		TypeName:  clrevents.UTF16Of("System.Collections.Generic.Dictionary`2+Entry[System.String,System.Object][]"),
		HeapIndex: 2, Address: 0x1f3c2b41a28, ObjectSize: 0x2f0,
	}
	return e.Encode(nil, 8)
}

// synthBulkType is a BulkType of 20 types with names, a quarter of them
// generic with one or two type parameters.
func synthBulkType() []byte {
	names := []string{
		"System.String", "System.Object", "System.Int32", "System.Byte[]", "System.Char[]",
		"System.Collections.Generic.List`1", "System.Collections.Generic.Dictionary`2",
		"System.Collections.Generic.Dictionary`2+Entry[]", "System.Threading.Tasks.Task`1",
		"System.Threading.Tasks.Task", "System.Net.Http.HttpRequestMessage",
		"System.Net.Http.Headers.HttpRequestHeaders", "Microsoft.AspNetCore.Http.DefaultHttpContext",
		"Microsoft.Extensions.Logging.Logger`1", "System.Text.Json.JsonSerializerOptions",
		"System.Runtime.CompilerServices.AsyncTaskMethodBuilder`1+AsyncStateMachineBox`1",
		"System.Buffers.SharedArrayPool`1+ThreadLocalArray[]", "System.IO.MemoryStream",
		"System.Threading.CancellationTokenSource", "MyService.Controllers.OrdersController",
	}
	elems := make([]clrevents.BulkTypeValuesElem, len(names))
	for i, n := range names {
		el := clrevents.BulkTypeValuesElem{
			TypeID: 0x7ff9a1c30000 + uint64(i)*0x1a8, ModuleID: 0x7ff9a1a10000,
			TypeNameID: 0x02000000 + uint32(i), Flags: 0, CorElementType: 0x12,
			Name: clrevents.UTF16Of(n),
		}
		if strings.Contains(n, "`") {
			ps := []uint64{0x7ff9a1c30000}
			if strings.Contains(n, "`2") {
				ps = append(ps, 0x7ff9a1c301a8)
			}
			el.TypeParameterCount = uint32(len(ps))
			el.TypeParameters = clrimpl.Uint64ArrayOf(ps...)
		}
		elems[i] = el
	}
	e := clrevents.BulkType{Count: uint32(len(elems)), ClrInstanceID: 8, Values: clrevents.BulkTypeValuesIterOf(elems...)}
	return e.Encode(nil, 8)
}

// benchEvent is one event type benchmarked on one payload.
type benchEvent struct {
	name    string // Go type
	symbol  string // manifest symbol
	trace   string // "" for synthetic
	repo    bool
	synth   func() []byte
	newType func() clrevents.Event
}

var benchEvents = []benchEvent{
	// Fixed size.
	{name: "GCStartV2", symbol: "GCStart_V2", trace: trace30, newType: func() clrevents.Event { return new(clrevents.GCStartV2) }},
	{name: "GCHeapStatsV1", symbol: "GCHeapStats_V1", trace: trace30, newType: func() clrevents.Event { return new(clrevents.GCHeapStatsV1) }},
	{name: "GCHeapStatsV2", symbol: "GCHeapStats_V2", synth: synthGCHeapStatsV2, newType: func() clrevents.Event { return new(clrevents.GCHeapStatsV2) }},
	// Strings.
	{name: "GCAllocationTickV3", symbol: "GCAllocationTick_V3", trace: trace30, newType: func() clrevents.Event { return new(clrevents.GCAllocationTickV3) }},
	{name: "GCAllocationTickV4", symbol: "GCAllocationTick_V4", synth: synthGCAllocationTickV4, newType: func() clrevents.Event { return new(clrevents.GCAllocationTickV4) }},
	{name: "MethodLoadVerboseV1", symbol: "MethodLoadVerbose_V1", trace: trace30, newType: func() clrevents.Event { return new(clrevents.MethodLoadVerboseV1) }},
	{name: "MethodLoadVerboseV2", symbol: "MethodLoadVerbose_V2", trace: trace30, newType: func() clrevents.Event { return new(clrevents.MethodLoadVerboseV2) }},
	{name: "ModuleLoadV2", symbol: "ModuleLoad_V2", trace: trace30, newType: func() clrevents.Event { return new(clrevents.ModuleLoadV2) }},
	{name: "MethodDCEndVerboseV1", symbol: "MethodDCEndVerbose_V1", trace: trace50, repo: true, newType: func() clrevents.Event { return new(clrevents.MethodDCEndVerboseV1) }},
	// Arrays.
	{name: "MethodILToNativeMap", symbol: "MethodILToNativeMap", trace: trace30, newType: func() clrevents.Event { return new(clrevents.MethodILToNativeMap) }},
	{name: "GCBulkMovedObjectRanges", symbol: "GCBulkMovedObjectRanges", trace: trace30, newType: func() clrevents.Event { return new(clrevents.GCBulkMovedObjectRanges) }},
	{name: "BulkType", symbol: "BulkType", synth: synthBulkType, newType: func() clrevents.Event { return new(clrevents.BulkType) }},
}

// payload returns the event's benchmark payload and pointer size.
func (be *benchEvent) payload(tb testing.TB) ([]byte, int) {
	if be.synth != nil {
		return be.synth(), 8
	}
	return realPayload(tb, be.trace, be.repo, be.symbol)
}

var (
	sinkInt   int
	sinkErr   error
	sinkEvent clrevents.Event
	sinkBytes []byte
	sinkAny   any
)

// Baseline: a plain decoder built on encoding/binary.Read, as one would
// write it by hand without a generator: packed wire structs, a
// bytes.Reader, strings read code unit by code unit into a Go string,
// arrays into Go slices.

type gcStartV2Wire struct {
	Count, Depth, Reason, Type uint32
	ClrInstanceID              uint16
	ClientSequenceNumber       uint64
}

type gcHeapStatsV2Wire struct {
	GenerationSize0, TotalPromotedSize0 uint64
	GenerationSize1, TotalPromotedSize1 uint64
	GenerationSize2, TotalPromotedSize2 uint64
	GenerationSize3, TotalPromotedSize3 uint64
	FinalizationPromotedSize            uint64
	FinalizationPromotedCount           uint64
	PinnedObjectCount, SinkBlockCount   uint32
	GCHandleCount                       uint32
	ClrInstanceID                       uint16
	GenerationSize4, TotalPromotedSize4 uint64
}

type gcAllocationTickV4Wire struct {
	AllocationAmount, AllocationKind uint32
	ClrInstanceID                    uint16
	AllocationAmount64               uint64
	TypeID                           uint64 // 64-bit pointer
	TypeName                         string
	HeapIndex                        uint32
	Address                          uint64 // 64-bit pointer
	ObjectSize                       uint64
}

type methodILToNativeMapWire struct {
	MethodID, ReJITID uint64
	MethodExtent      uint8
	CountOfMapEntries uint16
	ILOffsets         []uint32
	NativeOffsets     []uint32
	ClrInstanceID     uint16
}

var le = binary.LittleEndian

func readUTF16ZBinary(r io.Reader) (string, error) {
	var units []uint16
	for {
		var u uint16
		if err := binary.Read(r, le, &u); err != nil {
			return "", err
		}
		if u == 0 {
			return string(utf16.Decode(units)), nil
		}
		units = append(units, u)
	}
}

func readGCAllocationTickV4Binary(r io.Reader, w *gcAllocationTickV4Wire) error {
	var head struct {
		AllocationAmount, AllocationKind uint32
		ClrInstanceID                    uint16
		AllocationAmount64, TypeID       uint64
	}
	if err := binary.Read(r, le, &head); err != nil {
		return err
	}
	name, err := readUTF16ZBinary(r)
	if err != nil {
		return err
	}
	var tail struct {
		HeapIndex           uint32
		Address, ObjectSize uint64
	}
	if err := binary.Read(r, le, &tail); err != nil {
		return err
	}
	*w = gcAllocationTickV4Wire{head.AllocationAmount, head.AllocationKind, head.ClrInstanceID,
		head.AllocationAmount64, head.TypeID, name, tail.HeapIndex, tail.Address, tail.ObjectSize}
	return nil
}

func readMethodILToNativeMapBinary(r io.Reader, w *methodILToNativeMapWire) error {
	var head struct {
		MethodID, ReJITID uint64
		MethodExtent      uint8
		CountOfMapEntries uint16
	}
	if err := binary.Read(r, le, &head); err != nil {
		return err
	}
	il := make([]uint32, head.CountOfMapEntries)
	native := make([]uint32, head.CountOfMapEntries)
	if err := binary.Read(r, le, il); err != nil {
		return err
	}
	if err := binary.Read(r, le, native); err != nil {
		return err
	}
	var id uint16
	if err := binary.Read(r, le, &id); err != nil {
		return err
	}
	*w = methodILToNativeMapWire{head.MethodID, head.ReJITID, head.MethodExtent, head.CountOfMapEntries, il, native, id}
	return nil
}

// BenchmarkDecode decodes one payload per op, for each event with:
//
//   - impl=gen: the generated decoder, called through the Event interface as
//     the Decoder calls it;
//   - impl=gen-direct (fixed-size events): the generated decoder called on
//     the concrete type;
//   - impl=binary.Read (a few events): the encoding/binary.Read decoders
//     above;
//   - impl=interp: the reference decoder, schema/interp, with the event
//     looked up once (its Event.Decode).
func BenchmarkDecode(b *testing.B) {
	for i := range benchEvents {
		be := &benchEvents[i]
		b.Run("event="+be.name+"/impl=gen", func(b *testing.B) {
			p, ps := be.payload(b)
			ev := be.newType()
			runDecode(b, p, func() (int, error) { return ev.Decode(p, ps) })
		})
		if direct := directDecoders[be.name]; direct != nil {
			b.Run("event="+be.name+"/impl=gen-direct", func(b *testing.B) {
				p, ps := be.payload(b)
				direct(b, p, ps)
			})
		}
		if read := binaryReaders[be.name]; read != nil {
			b.Run("event="+be.name+"/impl=binary.Read", func(b *testing.B) {
				p, _ := be.payload(b)
				var r bytes.Reader
				runDecode(b, p, func() (int, error) {
					r.Reset(p)
					err := read(&r)
					return len(p) - r.Len(), err
				})
			})
		}
		b.Run("event="+be.name+"/impl=interp", func(b *testing.B) {
			p, ps := be.payload(b)
			info := be.newType().Info()
			ie := interpEvent(b, info)
			runDecode(b, p, func() (int, error) {
				v, n, err := ie.Decode(ps, p)
				sinkAny = v
				return n, err
			})
		})
	}
}

// runDecode times decode, which decodes p once.
func runDecode(b *testing.B, p []byte, decode func() (int, error)) {
	if _, err := decode(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n, err := decode()
		sinkInt += n
		if err != nil {
			sinkErr = err
		}
	}
}

// directDecoders call the generated Decode on the concrete type, with no
// interface or closure call in the loop.
var directDecoders = map[string]func(b *testing.B, p []byte, ps int){
	"GCStartV2": func(b *testing.B, p []byte, ps int) {
		var ev clrevents.GCStartV2
		b.SetBytes(int64(len(p)))
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			n, err := ev.Decode(p, ps)
			sinkInt += n
			if err != nil {
				sinkErr = err
			}
		}
		sinkInt += int(ev.Count)
	},
	"GCHeapStatsV1": func(b *testing.B, p []byte, ps int) {
		var ev clrevents.GCHeapStatsV1
		b.SetBytes(int64(len(p)))
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			n, err := ev.Decode(p, ps)
			sinkInt += n
			if err != nil {
				sinkErr = err
			}
		}
		sinkInt += int(ev.GenerationSize0)
	},
	"GCHeapStatsV2": func(b *testing.B, p []byte, ps int) {
		var ev clrevents.GCHeapStatsV2
		b.SetBytes(int64(len(p)))
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			n, err := ev.Decode(p, ps)
			sinkInt += n
			if err != nil {
				sinkErr = err
			}
		}
		sinkInt += int(ev.GenerationSize0)
	},
}

var (
	bwGCStartV2           gcStartV2Wire
	bwGCHeapStatsV2       gcHeapStatsV2Wire
	bwGCAllocationTickV4  gcAllocationTickV4Wire
	bwMethodILToNativeMap methodILToNativeMapWire
)

// binaryReaders are the encoding/binary.Read baselines, by event.
var binaryReaders = map[string]func(r *bytes.Reader) error{
	"GCStartV2":           func(r *bytes.Reader) error { return binary.Read(r, le, &bwGCStartV2) },
	"GCHeapStatsV2":       func(r *bytes.Reader) error { return binary.Read(r, le, &bwGCHeapStatsV2) },
	"GCAllocationTickV4":  func(r *bytes.Reader) error { return readGCAllocationTickV4Binary(r, &bwGCAllocationTickV4) },
	"MethodILToNativeMap": func(r *bytes.Reader) error { return readMethodILToNativeMapBinary(r, &bwMethodILToNativeMap) },
}

var (
	interpOnce sync.Once
	interpDec  *interp.Decoder
	interpErr  error
)

// interpDecoder returns the reference decoder for the checked-in schema,
// extra providers and overrides: the inputs clrevents was generated from.
func interpDecoder(tb testing.TB) *interp.Decoder {
	tb.Helper()
	interpOnce.Do(func() {
		m, err := gen.Load("../schema/clr.yaml", "../schema/overrides.yaml", "../schema/extra.yaml")
		if err != nil {
			interpErr = err
			return
		}
		interpDec, interpErr = interp.New(m)
	})
	if interpErr != nil {
		tb.Fatal(interpErr)
	}
	return interpDec
}

// interpEvent finds the reference decoder's event for info.
func interpEvent(tb testing.TB, info *clrevents.EventInfo) *interp.Event {
	tb.Helper()
	ip, ok := interpDecoder(tb).ProviderByName(info.Provider.String())
	if !ok {
		tb.Fatalf("interp has no provider %s", info.Provider)
	}
	ie, ok := ip.Event(info.ID, info.Version)
	if !ok {
		tb.Fatalf("interp has no %s", info)
	}
	return ie
}

// mixes are the real corpora the Decoder and AppendJSON run over: every
// event of the trace whose (provider, ID, version) the schema has.
var mixes = []struct {
	name  string
	trace string
	repo  bool
}{
	{"dotnetcore3.0-gc", trace30, false},     // 70k events: GC (allocation ticks, suspensions, heap stats, moved ranges), JIT, loader
	{"dotnetcore5.0-rundown", trace50, true}, // 2k events: method/module rundown with names and IL maps
	{"net4.5.2-etl", traceETL, false},        // ETW, x86: rundown, stack walks, allocation ticks
}

func mixBytes(recs []record) int64 {
	var n int64
	for i := range recs {
		n += int64(len(recs[i].payload))
	}
	return n
}

// BenchmarkDecoder decodes every CLR event of a real trace, in file order,
// from memory: one op is one pass over the corpus; ns/event is the figure
// to read. impl=gen is clrevents.Decoder.Decode; impl=interp is the
// reference decoder's Provider.Decode (its provider resolved beforehand,
// as the Decoder's is).
func BenchmarkDecoder(b *testing.B) {
	for _, m := range mixes {
		b.Run("mix="+m.name+"/impl=gen", func(b *testing.B) {
			recs := traceRecords(b, m.trace, m.repo)
			dec := clrevents.NewDecoder()
			runMix(b, recs, func(recs []record) (errs int) {
				for i := range recs {
					r := &recs[i]
					ev, n, err := dec.Decode(r.p, r.id, r.version, r.ptrSize, r.payload)
					if err != nil {
						errs++
					}
					sinkInt += n
					sinkEvent = ev
				}
				return errs
			})
		})
		b.Run("mix="+m.name+"/impl=interp", func(b *testing.B) {
			recs := traceRecords(b, m.trace, m.repo)
			id := interpDecoder(b)
			var provs []*interp.Provider
			for _, pi := range clrevents.Providers() {
				ip, ok := id.ProviderByName(pi.Name)
				if !ok {
					b.Fatalf("the reference decoder has no provider %s", pi.Name)
				}
				provs = append(provs, ip)
			}
			runMix(b, recs, func(recs []record) (errs int) {
				for i := range recs {
					r := &recs[i]
					v, n, err := provs[r.p].Decode(r.id, r.version, r.ptrSize, r.payload)
					if err != nil {
						errs++
					}
					sinkInt += n
					sinkAny = v
				}
				return errs
			})
		})
	}
}

// runMix times pass, which decodes every record of a corpus, after one
// warm-up pass (the Decoder makes one value per event type on first
// sight).
func runMix(b *testing.B, recs []record, pass func([]record) int) {
	if errs := pass(recs); errs != 0 {
		b.Fatalf("%d events did not decode", errs)
	}
	b.SetBytes(mixBytes(recs))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		pass(recs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/event")
	b.ReportMetric(float64(len(recs)), "events/op")
}

// BenchmarkAppendJSON appends one decoded event as JSON into a reused
// buffer; MB/s is over the JSON written.
func BenchmarkAppendJSON(b *testing.B) {
	for i := range benchEvents {
		be := &benchEvents[i]
		b.Run("event="+be.name, func(b *testing.B) {
			p, ps := be.payload(b)
			ev := be.newType()
			if _, err := ev.Decode(p, ps); err != nil {
				b.Fatal(err)
			}
			dst := ev.AppendJSON(nil)
			b.SetBytes(int64(len(dst)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				dst = ev.AppendJSON(dst[:0])
			}
			sinkBytes = dst
		})
	}
	for _, m := range mixes {
		b.Run("mix="+m.name, func(b *testing.B) {
			recs := traceRecords(b, m.trace, m.repo)
			evs := make([]clrevents.Event, len(recs))
			var out int64
			var dst []byte
			for i := range recs {
				r := &recs[i]
				info, _ := clrevents.Lookup(r.p, r.id, r.version)
				evs[i] = info.New().(clrevents.Event)
				if _, err := evs[i].Decode(r.payload, r.ptrSize); err != nil {
					b.Fatalf("event %d: %v", i, err)
				}
				dst = evs[i].AppendJSON(dst[:0])
				out += int64(len(dst))
			}
			b.SetBytes(out)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, ev := range evs {
					dst = ev.AppendJSON(dst[:0])
				}
			}
			sinkBytes = dst
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
		})
	}
}

// readerTraces are the largest real traces, read from memory (unzipped
// beforehand, so neither disk nor zip is measured).
var readerTraces = []struct {
	name  string
	trace string
	repo  bool
}{
	{"netperf2.0-62MB", trace20, false},
	{"netperf2.1-10MB", trace21, false},
	{"nettrace3.0-4.8MB", trace30, false},
	{"nettrace5.0-0.5MB", trace50, true},
	{"etl4.5.2-x86-4.4MB", traceETL, false},
}

// BenchmarkReader reads whole traces: mode=headers calls the format
// reader's Next only (event headers, no payload decoding); mode=decode also
// decodes every CLR event with a Decoder (provider resolved by name, or by
// GUID for ETW). mode=front and mode=front-decode do the same through the
// front door (package trace, file order for EventPipe as the format reader
// gives it), so the pairs show what the common event shape costs. MB/s is
// over the decompressed trace. The Decoder lives across ops, as in a
// long-running consumer; the reader is new each op, so allocs/op counts its
// metadata and buffers; allocs/event is the per-event figure.
func BenchmarkReader(b *testing.B) {
	for _, t := range readerTraces {
		for _, mode := range []string{"headers", "decode", "front", "front-decode"} {
			decode := strings.HasSuffix(mode, "decode")
			b.Run("trace="+t.name+"/mode="+mode, func(b *testing.B) {
				data := benchTrace(b, t.trace, t.repo)
				isETL := strings.Contains(t.trace, ".etl")
				dec := clrevents.NewDecoder()
				pass := func() (events, clr, errs int) {
					if strings.HasPrefix(mode, "front") {
						return readFront(b, data, decode)
					}
					if isETL {
						return readETL(b, data, dec, decode)
					}
					return readNettrace(b, data, dec, decode)
				}
				events, clr, errs := pass() // warm the Decoder
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b.ResetTimer()
				for range b.N {
					pass()
				}
				b.StopTimer()
				runtime.ReadMemStats(&after)
				total := float64(b.N) * float64(events)
				b.ReportMetric(total/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/event")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/event")
				if decode {
					b.ReportMetric(float64(clr), "clrevents/op")
					if errs > 0 {
						b.Logf("%d CLR events did not decode", errs)
					}
				}
			})
		}
	}
}

func readNettrace(b *testing.B, data []byte, dec *clrevents.Decoder, decode bool) (events, clr, errs int) {
	r, err := nettrace.NewReader(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	var pc providerCache
	for {
		e, err := r.Next()
		if err != nil {
			if err != io.EOF {
				b.Fatal(err)
			}
			return
		}
		events++
		if !decode {
			continue
		}
		if p, ok := pc.byMeta(e.Metadata, e.Provider); ok {
			clr++
			if _, _, err := dec.Decode(p, e.ID, e.Version, e.PointerSize, e.Payload); err != nil {
				errs++
			}
		}
	}
}

// readFront reads through the front door; its Reader (and so its values)
// is new each pass, like the format readers'.
func readFront(b *testing.B, data []byte, decode bool) (events, clr, errs int) {
	r, err := trace.NewReader(bytes.NewReader(data), trace.WithOrder(trace.FileOrder))
	if err != nil {
		b.Fatal(err)
	}
	for {
		e, err := r.Next()
		if err != nil {
			if err != io.EOF {
				b.Fatal(err)
			}
			return
		}
		events++
		if !decode {
			continue
		}
		if _, ok := e.Type(); ok {
			clr++
			if _, err := e.Decode(); err != nil {
				errs++
			}
		}
	}
}

func readETL(b *testing.B, data []byte, dec *clrevents.Decoder, decode bool) (events, clr, errs int) {
	r, err := etl.NewReader(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	var pc providerCache
	for {
		e, err := r.Next()
		if err != nil {
			if err != io.EOF {
				b.Fatal(err)
			}
			return
		}
		events++
		if !decode {
			continue
		}
		if p, ok := pc.byGUID(e.ProviderGUID); ok {
			clr++
			if _, _, err := dec.Decode(p, e.ID, e.Version, e.PointerSize, e.Payload); err != nil {
				var u *clrevents.UnknownEventError
				if !errors.As(err, &u) {
					errs++
				}
			}
		}
	}
}
