package profile

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	pprof "github.com/google/pprof/profile"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// decoded is e's value, nil when it does not decode.
func decoded(e *trace.Event) clrimpl.Event {
	ev, err := e.Decode()
	if err != nil {
		return nil
	}
	return ev
}

// kernel builds synthetic kernel events (64-bit pointers).
type kpl []byte

func (b kpl) u16(v uint16) kpl { return binary.LittleEndian.AppendUint16(b, v) }
func (b kpl) u32(v uint32) kpl { return binary.LittleEndian.AppendUint32(b, v) }
func (b kpl) u64(v uint64) kpl { return binary.LittleEndian.AppendUint64(b, v) }
func (b kpl) ptrs(v ...uint64) kpl {
	for _, x := range v {
		b = b.u64(x)
	}
	return b
}

// Kernel hook groups and opcodes of the synthetic events (the kernel's
// MOF classes: PerfInfo, StackWalk, Process, Thread, Image).
const (
	gProcess, gThread, gPerfInfo, gImage, gStackWalk = 0x03, 0x05, 0x0F, 0x14, 0x18

	opStart, opDCStart                              = 1, 3
	opSampledProfile, opCollectionStart             = 46, 73
	opSetInterval                                   = 72
	opStack, opKeyCreate, opKeyDelete, opKeyRundown = 32, 34, 35, 36
	opStackKeyKernel, opStackKeyUser                = 37, 38
)

// kev is a kernel event of version 2 (as the kernel logs these classes).
func kev(ts int64, group, op uint8, p kpl) []byte {
	return etltest.System(group, op, 2, 0, 0, ts, p)
}

func imageEvent(pid uint32, base, size uint64, name string) []byte {
	return imageEventAt(0, pid, base, size, name)
}

// imageEventAt is imageEvent at timestamp ts.
func imageEventAt(ts int64, pid uint32, base, size uint64, name string) []byte {
	p := kkpl().ptrs(base, size).u32(pid).u32(0).u32(0).u32(0).ptrs(base).u32(0).u32(0).u32(0).u32(0)
	for _, r := range name {
		p = p.u16(uint16(r))
	}
	return kev(ts, gImage, opDCStart, p.u16(0))
}

// feed reads a log of the events through the front door into b.
func feed(t *testing.T, b *Builder, events ...[]byte) {
	t.Helper()
	real := tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip")
	log, err := etltest.Log(real, events...)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Offset() >= int64(binary.LittleEndian.Uint32(real)) { // past the log header buffer
			n++
		}
		if err := b.Add(e); err != nil {
			t.Fatalf("%s at %d: %v", e.Name(), e.Offset(), err)
		}
	}
	if n != len(events) {
		t.Fatalf("%d kernel events read, %d written", n, len(events))
	}
}

func kkpl() kpl { return kpl{} }

const (
	kbase  = 0xfffff80000000000 // ntoskrnl
	app    = 0x400000
	ntdll  = 0x77000000
	stackA = 0xfffffa8000001000 // kernel key
	stackU = 0xfffffa8000002000 // user key
	stackC = 0xfffffa8000003000 // created key
)

// TestKernelCPUSynthetic: kernel samples with each form of stack (cached
// kernel and user parts defined later, a direct stack, a key created
// before, none), a thread the trace never named, and a sampling interval
// of 0.5 ms; every process, one, the idle process alone, and two.
func TestKernelCPUSynthetic(t *testing.T) {
	for _, pids := range [][]int64{nil, {10}, {0}, {0, 10}} {
		t.Run(fmt.Sprint(pids), func(t *testing.T) { kernelCPUSynthetic(t, pids) })
	}
}

func kernelCPUSynthetic(t *testing.T, pids []int64) {
	b := NewBuilder(Options{PIDs: pids}, 0, 10_000_000) // Kind CPU: the zero value
	sample := func(ts int64, tid uint32, ip uint64, count uint16) []byte {
		return kev(ts, gPerfInfo, opSampledProfile, kkpl().ptrs(ip).u32(tid).u16(count).u16(0))
	}
	ref := func(ts int64, op uint8, tid uint32, rest kpl) []byte {
		return kev(ts+1, gStackWalk, op, append(kkpl().u64(uint64(ts)).u32(10).u32(tid), rest...))
	}
	proc := etltest.System(gProcess, opDCStart, 4, 0, 0, 0, append(kkpl().ptrs(0).u32(10).u32(4).u32(1).u32(0).ptrs(0).u32(0).u32(0), "app.exe\x00"...).u16(0).u16(0).u16(0))
	idle := etltest.System(gProcess, opDCStart, 4, 0, 0, 0, append(kkpl().ptrs(0).u32(0).u32(0).u32(1).u32(0).ptrs(0).u32(0).u32(0), "Idle\x00"...).u16(0).u16(0).u16(0))
	events := [][]byte{
		proc,
		idle,
		kev(0, gThread, opDCStart, kkpl().u32(10).u32(77).ptrs(0, 0, 0, 0, 0, 0, 0).u32(0)),
		kev(0, gThread, opDCStart, kkpl().u32(0).u32(0).ptrs(0, 0, 0, 0, 0, 0, 0).u32(0)),
		imageEvent(10, app, 0x10000, `\Device\HarddiskVolume2\app\app.exe`),
		imageEvent(10, ntdll, 0x100000, `\Device\HarddiskVolume2\Windows\System32\ntdll.dll`),
		imageEvent(0, kbase, 0x100000, `\SystemRoot\system32\ntoskrnl.exe`),
		kev(1, gPerfInfo, opCollectionStart, kkpl().u32(0).u32(5000).u32(10000)),
		// A: in the kernel; both parts cached, defined later.
		sample(100, 77, kbase+0x10, 1),
		ref(100, opStackKeyKernel, 77, kkpl().ptrs(stackA)),
		ref(100, opStackKeyUser, 77, kkpl().ptrs(stackU)),
		// B: in user code, a direct stack; a Count of 2 (a field the
		// kernel does not use) still counts once, as TraceEvent counts it.
		sample(200, 77, app+0x50, 2),
		ref(200, opStack, 77, kkpl().ptrs(app+0x50, ntdll+0x20)),
		// C: no stack ever comes.
		sample(300, 77, app+0x60, 1),
		// D: a thread no Thread event named.
		sample(400, 999, 0x1234, 1),
		// E: a key created before it is used.
		kev(450, gStackWalk, opKeyCreate, kkpl().ptrs(stackC, kbase+0x30)),
		sample(500, 77, kbase+0x30, 1),
		ref(500, opStackKeyKernel, 77, kkpl().ptrs(stackC)),
		// The definitions of A's keys.
		kev(600, gStackWalk, opKeyDelete, kkpl().ptrs(stackA, kbase+0x10, kbase+0x20)),
		kev(700, gStackWalk, opKeyRundown, kkpl().ptrs(stackU, ntdll+0x10, app+0x10, ntdll+0x20)),
		// F: a thread whose Thread event comes after its sample.
		sample(800, 55, app+0x60, 1),
		kev(900, gThread, opStart, kkpl().u32(10).u32(55).ptrs(0, 0, 0, 0, 0, 0, 0).u32(0)),
		// G: runs of addresses no image covers, one broken by ntdll.
		sample(1000, 77, 0x7000, 1),
		ref(1000, opStack, 77, kkpl().ptrs(0x7000, ntdll+0x10, 0x6000, 0x5000, app+0x10)),
		// H: an idle processor (thread 0 of process 0), no stack walk.
		sample(1100, 0, kbase+0x40, 1),
	}
	feed(t, b, events...)
	p, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	const ms = 500_000 // the interval, in nanoseconds
	// Every process: each stack starts with its process.
	all := map[string]int64{
		"app.exe (10);ntdll!?;app!?;ntdll!?;ntoskrnl!?": ms,     // A: kernel frames (one run), then user
		"app.exe (10);ntdll!?;app!?":                    ms,     // B
		"app.exe (10);app!?":                            2 * ms, // C (the sampled address alone) and F
		"process unknown;?!?":                           ms,     // D: no process, no image
		"app.exe (10);ntoskrnl!?":                       ms,     // E
		"app.exe (10);app!?;?!?;ntdll!?;?!?":            ms,     // G: each run of unresolved frames is one
		"Idle (0);ntoskrnl!?":                           ms,     // H
	}
	want, wantN, exe := all, int64(8), ""
	switch fmt.Sprint(pids) {
	case "[10]":
		// Process 10 alone: no process frame; pprof's main binary is
		// its executable.
		want, wantN, exe = map[string]int64{
			"ntdll!?;app!?;ntdll!?;ntoskrnl!?": ms,
			"ntdll!?;app!?":                    ms,
			"app!?":                            2 * ms,
			"ntoskrnl!?":                       ms,
			"app!?;?!?;ntdll!?;?!?":            ms,
		}, 6, `\Device\HarddiskVolume2\app\app.exe`
	case "[0]":
		// The idle process alone: no process frame; the kernel names its
		// executable Idle, and no image of that name holds samples.
		want, wantN, exe = map[string]int64{"ntoskrnl!?": ms}, 1, "Idle"
	case "[0 10]":
		// Two processes: their frames, and no main binary.
		want, wantN = maps.Clone(all), 7
		delete(want, "process unknown;?!?")
	}
	if diff := cmp.Diff(want, p.Folded()); diff != "" {
		t.Errorf("folded (-want +got):\n%s", diff)
	}
	var samples int64
	for _, s := range p.Samples {
		samples += s.Values[0]
		if s.TID == 999 && s.PID != -1 {
			t.Errorf("unknown thread in process %d", s.PID)
		}
	}
	if samples != wantN {
		t.Errorf("%d samples, want %d (B counts 1)", samples, wantN)
	}
	// pprof and speedscope hold the same stacks, process frames included.
	pp := writersAgree(t, p)
	if pp.Mapping[0].File != exe {
		t.Errorf("pprof's main binary %q, want %q", pp.Mapping[0].File, exe)
	}
	if pids != nil {
		return
	}
	// pprof: native frames have their image's mapping and a module!?
	// function; speedscope names them the same way.
	fn := map[string]string{}
	for _, l := range pp.Location {
		if len(l.Line) > 0 && l.Mapping != nil {
			fn[l.Line[0].Function.Name] = l.Mapping.File
		}
	}
	for _, s := range pp.Sample {
		if pid := s.NumLabel["pid"][0]; (pid == 10) != (len(s.Label["process"]) == 1 && s.Label["process"][0] == "app.exe") {
			t.Errorf("pprof sample of process %d labelled %v", pid, s.Label)
		}
	}
	if fn["ntdll!?"] != `\Device\HarddiskVolume2\Windows\System32\ntdll.dll` || fn["ntoskrnl!?"] != `\SystemRoot\system32\ntoskrnl.exe` {
		t.Errorf("pprof functions and mappings: %v", fn)
	}
	var ss strings.Builder
	if err := p.WriteSpeedscope(&ss); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ss.String(), `"name":"app!?"`) || !strings.Contains(ss.String(), `"name":"cpu: app.exe (10), thread 77"`) {
		t.Errorf("speedscope: %s", ss.String())
	}
}

// TestKernelCPUNet452: the kernel's CPU samples of the 4.5.2 trace
// (a 64-bit kernel, an x86 .NET process): every sample counted at the
// trace's 1 ms interval, each stack starting where the processor was,
// managed frames resolved in the .NET process.
func TestKernelCPUNet452(t *testing.T) {
	const name = "../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip"
	if _, err := os.Stat(name); err != nil {
		t.Skip("shared traces absent (../shared beside the checkout)")
	}
	r, err := trace.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := NewBuilder(Options{Kind: CPU}, 0, r.Info().ClockFrequency)
	var events, busy int64
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := decoded(e).(*kernelevents.PerfInfoSampleV2); ok {
			events++
			if s.ThreadID != 0 {
				busy++ // the kernel walks no stack for the idle threads (thread 0)
			}
		}
		if err := b.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	// Before Finish: each composed stack starts at the sampled address.
	k := &b.k
	var withStack, leafIsIP int
	for i := range k.samples.n {
		s := k.samples.at(i)
		if s == nil {
			continue
		}
		ips, _, _ := k.stacks.Stack(s.ref, nil)
		if len(ips) == 0 {
			continue
		}
		withStack++
		if ips[0] == s.ip {
			leafIsIP++
		}
	}
	if events != 88809 || withStack < int(busy)*9/10 || leafIsIP < withStack*99/100 {
		t.Errorf("%d samples, %d not idle, %d with stacks, %d of those starting at the sampled address", events, busy, withStack, leafIsIP)
	}
	p, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var n, ns int64
	managed := false
	for _, s := range p.Samples {
		n += s.Values[0]
		ns += s.Values[1]
	}
	for stack := range p.Folded() {
		managed = managed || strings.Contains(stack, "mscorlib!System.")
	}
	if n != events || ns != events*1_000_000 || !managed {
		t.Errorf("samples %d (want %d), %d ns (want %d), managed frames %v", n, events, ns, events*1_000_000, managed)
	}
	// Native mappings carry their image's range and PDB identity: the
	// baseline's DbgID_RSDS line for System32\ntdll.dll at 0x7f9d02f0000
	// shows GuidSig 6048fdb6-2dcd-41c1-8… and Age 2.
	found := false
	for _, m := range p.Pprof().Mapping {
		if strings.HasSuffix(m.File, `System32\ntdll.dll`) && m.Start == 0x7f9d02f0000 {
			found = true
			if !strings.HasPrefix(m.BuildID, "6048FDB62DCD41C18") || !strings.HasSuffix(m.BuildID, "2") || len(m.BuildID) != 33 || m.Limit != m.Start+1826816 {
				t.Errorf("ntdll mapping %+v", m)
			}
		}
	}
	if !found {
		t.Error("no mapping of System32\\ntdll.dll at 0x7f9d02f0000")
	}
	// Every writer starts each stack with its process: the idle time is
	// under Idle (0), and pprof names no main binary.
	pp := writersAgree(t, p)
	if pp.Mapping[0].File != "" {
		t.Errorf("main mapping %+v", pp.Mapping[0])
	}
	roots := map[string]int64{}
	for _, s := range pp.Sample {
		roots[s.Location[len(s.Location)-1].Line[0].Function.Name] += s.Value[1]
		if len(s.NumLabel["pid"]) != 1 || len(s.NumLabel["thread"]) != 1 {
			t.Fatalf("sample labels %v", s.NumLabel) // pid 0 and thread 0 too
		}
	}
	if roots["Idle (0)"] != 82_128e6 || roots["Test.x86.exe (3644)"] != 4_900e6 || roots["ntoskrnl!?"] != 0 {
		t.Errorf("pprof roots: %v", roots)
	}
	t.Logf("%d samples, %d not idle, %d with stacks, %d starting at the sampled address; frames resolved %.1f%%, counts %v",
		events, busy, withStack, leafIsIP, 100*p.Map.Share(), p.Map.Counts())
}

// TestCLRStackWalkETW: in an ETW log the runtime logs an event's stack
// after it, in a CLRStackWalk event on the same thread. A contention's
// stack is its ContentionStart's walk, and an exception's its own; the
// walk of a method event that comes between an event and the next (the
// runtime walks those too) is the method event's, not the sample's.
func TestCLRStackWalkETW(t *testing.T) {
	runtime := clrevents.ProviderRuntime.GUID()
	clr := func(info *clrevents.EventInfo, ts int64, payload []byte) []byte {
		return etltest.Event(runtime, info.ID, info.Version, uint8(info.Opcode), uint16(info.Task), 5, 10, ts, payload)
	}
	walk := func(ts int64, frames ...uint64) []byte {
		p := kkpl().u16(1).u16(0).u32(uint32(len(frames))).ptrs(frames...)
		return clr((*clrevents.CLRStackWalk)(nil).Info(), ts, p)
	}
	const a, b, c = 0x10000000, 0x20000000, 0x30000000
	start := (&clrevents.ContentionStartV1{ClrInstanceID: 1}).Encode(nil, 8)
	stop := (&clrevents.ContentionStop{ClrInstanceID: 1}).Encode(nil, 8)
	jit := clr((*clrevents.MethodJittingStartedV1)(nil).Info(), 0, (&clrevents.MethodJittingStartedV1{MethodID: 1, ClrInstanceID: 1}).Encode(nil, 8))
	at := func(ev []byte, ts int64) []byte { // ev at time ts
		ev = bytes.Clone(ev)
		binary.LittleEndian.PutUint64(ev[16:], uint64(ts))
		return ev
	}
	thrown := (&clrevents.ExceptionThrownV1{ClrInstanceID: 1}).Encode(nil, 8)
	events := [][]byte{
		imageEvent(10, a, 0x10000, `C:\app\a.dll`),
		imageEvent(10, b, 0x10000, `C:\app\b.dll`),
		imageEvent(10, c, 0x10000, `C:\app\c.dll`),
		clr((*clrevents.ContentionStartV1)(nil).Info(), 100, start),
		walk(101, a+0x10, a+0x20),
		at(jit, 102),
		walk(103, b+0x10),
		clr((*clrevents.ContentionStop)(nil).Info(), 200, stop),
		clr((*clrevents.ExceptionThrownV1)(nil).Info(), 300, thrown), // no walk of its own
		at(jit, 302),
		walk(303, b+0x20),
		clr((*clrevents.ExceptionThrownV1)(nil).Info(), 400, thrown),
		walk(401, c+0x10),
	}
	for _, c := range []struct {
		kind Kind
		want map[string]int64
	}{
		{Contention, map[string]int64{"a!?": 10_000}},
		{Exception, map[string]int64{"": 1, "c!?": 1}},
	} {
		bld := NewBuilder(Options{Kind: c.kind}, 0, 10_000_000)
		feed(t, bld, events...)
		p, err := bld.Finish()
		if err != nil {
			t.Fatalf("%v: %v", c.kind, err)
		}
		if diff := cmp.Diff(c.want, p.Folded()); diff != "" {
			t.Errorf("%v (-want +got):\n%s", c.kind, diff)
		}
	}
}

// TestGarbledInterval: a CollectionStart whose sampling interval is longer
// than the kernel takes (a second) is garbled: it is left out with
// ErrNotCredible, and the samples keep the interval before it. Taken, it
// made each sample of a garbled ETL copy hours long.
func TestGarbledInterval(t *testing.T) {
	real := tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip")
	log, err := etltest.Log(real,
		kev(1, gPerfInfo, opCollectionStart, kkpl().u32(0).u32(5000).u32(10000)), // source, new and old interval
		kev(2, gPerfInfo, opCollectionStart, kkpl().u32(0).u32(0x7fffffff).u32(5000)),
		kev(100, gPerfInfo, opSampledProfile, kkpl().ptrs(app+0x50).u32(77).u16(1).u16(0)),
	)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(r, Options{Kind: CPU})
	if !errors.Is(err, ErrNotCredible) || !strings.Contains(fmt.Sprint(err), "sampling interval") {
		t.Errorf("error %v, want the garbled interval's", err)
	}
	if p == nil || len(p.Samples) != 1 || p.Samples[0].Values[1] != 500_000 {
		t.Fatalf("profile %+v, want one sample of the 0.5 ms interval", p)
	}
}

// TestSetInterval: a log without CollectionStart (before Windows 8) says
// its sampling interval only in PerfInfo/SetInterval, logged as the
// session sets it and again as it stops and puts the old one back; the
// samples were taken at the last one's old interval, as TraceLog takes
// it. A CollectionStart wins wherever it is; other profile sources (a
// processor counter's) do not count.
func TestSetInterval(t *testing.T) {
	set := func(ts int64, source, new, old uint32) []byte {
		return kev(ts, gPerfInfo, opSetInterval, kkpl().u32(source).u32(new).u32(old))
	}
	start := kev(1, gPerfInfo, opCollectionStart, kkpl().u32(0).u32(2500).u32(10000))
	sample := kev(100, gPerfInfo, opSampledProfile, kkpl().ptrs(app+0x50).u32(77).u16(1).u16(0))
	for _, c := range []struct {
		name   string
		events [][]byte
		want   int64 // nanoseconds a sample
	}{
		{"set, then reset at the end", [][]byte{set(1, 0, 5000, 10000), sample, set(200, 0, 10000, 5000)}, 500_000},
		{"reset at the end alone", [][]byte{sample, set(200, 0, 10000, 1221)}, 122_100},
		{"another source's", [][]byte{set(1, 1, 5000, 10000), sample, set(200, 1, 10000, 5000)}, 1_000_000},
		{"CollectionStart first", [][]byte{start, set(2, 0, 5000, 10000), sample, set(200, 0, 10000, 5000)}, 250_000},
		{"CollectionStart last", [][]byte{set(1, 0, 5000, 10000), sample, set(200, 0, 10000, 5000), kev(300, gPerfInfo, opCollectionStart, kkpl().u32(0).u32(2500).u32(10000))}, 250_000},
		{"none", [][]byte{sample}, 1_000_000},
	} {
		b := NewBuilder(Options{Kind: CPU}, 0, 10_000_000)
		feed(t, b, c.events...)
		p, err := b.Finish()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(p.Samples) != 1 || p.Samples[0].Values[1] != c.want || p.PeriodNanos != c.want {
			t.Errorf("%s: samples %+v, period %d; want one sample of %d ns", c.name, p.Samples, p.PeriodNanos, c.want)
		}
	}
	log, err := etltest.Log(tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip"), set(1, 0, 10000, 0x7fffffff), sample)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReader(bytes.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(r, Options{Kind: CPU}); !errors.Is(err, ErrNotCredible) || !strings.Contains(fmt.Sprint(err), "SetInterval") {
		t.Errorf("garbled SetInterval: error %v, want ErrNotCredible naming SetInterval", err)
	}
}

// TestGarbledSampleCount: a kernel sample counts one interval whatever
// its Count, as TraceEvent counts it: the field is documented as not
// used. Weighed by it, a garbled Count made one sample 65,535 of them.
func TestGarbledSampleCount(t *testing.T) {
	b := NewBuilder(Options{Kind: CPU}, 0, 10_000_000)
	feed(t, b,
		kev(100, gPerfInfo, opSampledProfile, kkpl().ptrs(app+0x50).u32(77).u16(0xffff).u16(0)),
		kev(10_100, gPerfInfo, opSampledProfile, kkpl().ptrs(app+0x50).u32(77).u16(1).u16(0)),
		kev(20_100, gPerfInfo, opSampledProfile, kkpl().ptrs(app+0x50).u32(77).u16(0).u16(0)),
	)
	p, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var n, ns int64
	for _, s := range p.Samples {
		n += s.Values[0]
		ns += s.Values[1]
	}
	if n != 3 || ns != 3*defaultInterval {
		t.Errorf("%d samples of %d ns in all, want 3 of %d", n, ns, 3*defaultInterval)
	}
}

// nativeTarget is a function of the test's own executable, which
// TestNativeSymbolized samples as native code.
//
//go:noinline
func nativeTarget() int { return 42 }

// TestNativeSymbolized: a native frame's pprof mapping (an image the
// trace names, no function) is not marked HasFunctions, so that go tool
// pprof symbolizes its address from the image's file: here the test's
// own executable, a real ELF file, sampled inside nativeTarget. Marked
// HasFunctions, pprof took the frame's "test!?" as its function and never
// read the file.
func TestNativeSymbolized(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Skipf("the test's executable is no ELF file: %v", err)
	}
	defer f.Close()
	pc := uint64(reflect.ValueOf(nativeTarget).Pointer())
	var base, end uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off == 0 {
			base = p.Vaddr
		}
		if p.Type == elf.PT_LOAD && p.Vaddr <= pc && pc < p.Vaddr+p.Memsz {
			end = p.Vaddr + p.Memsz
		}
	}
	if f.Type != elf.ET_EXEC || end == 0 || base > pc {
		t.Skipf("the test's executable (%v) is not mapped at its link addresses", f.Type)
	}
	b := NewBuilder(Options{}, 0, 10_000_000)
	sample := func(ts int64, ip uint64) []byte {
		return kev(ts, gPerfInfo, opSampledProfile, kkpl().ptrs(ip).u32(77).u16(1).u16(0))
	}
	feed(t, b,
		kev(0, gThread, opDCStart, kkpl().u32(10).u32(77).ptrs(0, 0, 0, 0, 0, 0, 0).u32(0)),
		imageEvent(10, base, end-base, exe),
		sample(100, pc+1),
		sample(200, pc+1),
	)
	p, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	pp := writersAgree(t, p) // parsed back, and CheckValid
	var native *pprof.Mapping
	for _, m := range pp.Mapping {
		if m.File == exe {
			native = m
		}
	}
	if native == nil || native.HasFunctions || native.Start != base || native.Limit != end {
		t.Errorf("the executable's mapping %+v: want [%#x, %#x) without HasFunctions", native, base, end)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot run go tool pprof")
	}
	file := filepath.Join(t.TempDir(), "native.pb.gz")
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WritePprof(out); err != nil {
		t.Fatal(err)
	}
	out.Close()
	top, err := exec.Command(goBin, "tool", "pprof", "-top", file).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, top)
	}
	if !bytes.Contains(top, []byte("profile.nativeTarget")) {
		t.Errorf("go tool pprof did not symbolize the native frame:\n%s", top)
	}
}
