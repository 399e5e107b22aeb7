package nettrace

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var updateUniversal = flag.Bool("update-universal", false, "rewrite testdata/traces/universal-synthetic.nettrace")

// universalFixture is where the synthetic universal trace is kept, for the
// layers above (symbols, profile, clrdump) to read.
const universalFixture = "../testdata/traces/universal-synthetic.nettrace"

// universalTrace is a small NetTrace V6 trace as a machine-wide Linux
// collection writes it (PerfView's UniversalProviders.md): two processes,
// the images and jitted code of one (a mapping of libcoreclr.so with an
// ELF build ID, also mapped in the other process, and a doublemapper
// mapping whose code ProcessSymbol names), CPU samples with stacks in both
// and a context switch, and two samples of the runtime's SampleProfiler.
func universalTrace() []byte {
	const (
		coreclr  = 0x7f0000000000
		jitted   = 0x7e0000000000
		mdELF    = `{"type": "ELF","build_id": "4b60568bc25641b07e93f84f98c77093f3b279f7"}`
		mainName = "void [App] App.Program::Main(string[])[OptimizedTier1]"
		hashName = "instance int32 [System.Private.CoreLib] System.String::GetHashCode()[Tier0]"
	)
	w := newV6Writer(8, 0)
	w.threads(wThread{index: 1, pid: 1234, tid: 1234}, wThread{index: 2, pid: 1234, tid: 1240}, wThread{index: 3, pid: 99, tid: 99})
	metas := []wMeta{
		{id: 1, provider: universalSystem, eventID: 0, name: "ExistingProcess"},
		{id: 2, provider: universalSystem, eventID: 1, name: "ProcessCreate"},
		{id: 3, provider: universalSystem, eventID: 3, name: "ProcessMapping"},
		{id: 4, provider: universalSystem, eventID: 4, name: "ProcessSymbol"},
		{id: 5, provider: universalSystem, eventID: 5, name: "ProcessMappingMetadata"},
		{id: 6, provider: universalEvents, eventID: 1, name: "cpu", fields: universalSampleFields},
		{id: 7, provider: universalEvents, eventID: 2, name: "cswitch", fields: universalSampleFields},
		{id: 8, provider: universalSystem, eventID: 2, name: "ProcessExit"},
		// The runtime's own sampler, which the collector's samples
		// replace in a profile.
		{id: 9, provider: "Microsoft-DotNETCore-SampleProfiler", eventID: 0, name: "ThreadSample", fields: []Field{{Name: "Type", Type: TypeUInt32}}},
	}
	w.metadata(metas...)
	w.stacks(1,
		[]uint64{jitted + 0x210, jitted + 0x150, coreclr + 0x1100}, // GetHashCode, Main, coreclr_execute_assembly
		[]uint64{coreclr + 0x5000, jitted + 0x150},                 // libcoreclr (no symbol), Main
		[]uint64{0x12345, coreclr + 0x1100},                        // nothing maps it; coreclr_execute_assembly in process 99
	)
	// libcoreclr.so's text, mapped from its file's offset 0x1000.
	mapping := func(id, start, end uint64, file string, md uint64) []byte {
		off := uint64(0)
		if md != 0 {
			off = 0x1000
		}
		return appendVar(ustr(appendVar(appendVar(appendVar(appendVar(nil, id), start), end), off), file), md)
	}
	symbol := func(id, mapping, start, end uint64, name string) []byte {
		return ustr(appendVar(appendVar(appendVar(appendVar(nil, id), mapping), start), end), name)
	}
	var evs []wEvent
	seqs := map[uint64]uint32{} // each thread's sequence numbers, from 1: no drops
	ev := func(meta uint32, thread uint64, stack uint32, payload []byte) {
		seqs[thread]++
		evs = append(evs, wEvent{meta: meta, seq: seqs[thread], thread: thread, capThread: thread, stack: stack,
			ts: int64(2_000_000 + 1000*len(evs)), payload: payload})
	}
	ev(1, 3, 0, ustr(ustr(appendVar(nil, 99), "other"), ""))
	ev(2, 1, 0, ustr(ustr(appendVar(nil, 1234), "testhost"), "pod-a"))
	ev(5, 1, 0, ustr(ustr(appendVar(nil, 1), mdELF), "{}"))
	ev(3, 1, 0, mapping(1, coreclr, coreclr+0x100000, "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/libcoreclr.so", 1))
	ev(3, 1, 0, mapping(2, jitted, jitted+0x10000, "/memfd:doublemapper (deleted)", 0))
	// The same mapping (and so its symbols) in the other process too.
	ev(3, 3, 0, mapping(1, coreclr, coreclr+0x100000, "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.0/libcoreclr.so", 1))
	ev(9, 1, 1, u32(1)) // External
	for range 3 {
		ev(6, 1, 1, appendVar(nil, 1))
	}
	ev(9, 2, 2, u32(2)) // Managed
	ev(6, 2, 2, appendVar(nil, 2))
	ev(6, 3, 3, appendVar(nil, 1))
	ev(7, 2, 2, appendVar(nil, 40_000))
	// Jitted code is named at the end, as perf maps are read.
	ev(4, 1, 0, symbol(1, 2, jitted+0x100, jitted+0x1ff, mainName))
	ev(4, 1, 0, symbol(2, 2, jitted+0x200, jitted+0x2ff, hashName))
	ev(4, 1, 0, symbol(3, 1, coreclr+0x1000, coreclr+0x1fff, "coreclr_execute_assembly"))
	ev(8, 3, 0, nil)
	w.events(true, evs...)
	return w.end()
}

// TestUniversalFixture keeps testdata's synthetic universal trace what
// universalTrace writes (go test ./nettrace -run UniversalFixture
// -update-universal rewrites it), and checks that it reads.
func TestUniversalFixture(t *testing.T) {
	want := universalTrace()
	if *updateUniversal {
		if err := os.WriteFile(universalFixture, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(universalFixture)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: go test ./nettrace -run UniversalFixture -update-universal", universalFixture)
	}
	r, err := NewReader(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	n, withFields := 0, 0
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		n++
		if len(e.Metadata.Fields) > 0 {
			withFields++
		}
	}
	if n != 18 || withFields != 17 || r.Dropped() != 0 {
		t.Errorf("%d events, %d with fields, %d dropped; want 18 and 17 (all but ProcessExit), none", n, withFields, r.Dropped())
	}
}
