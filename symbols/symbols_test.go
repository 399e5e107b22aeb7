package symbols

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/trace"
)

func load(id, mod, start uint64, size uint32, ns, name, sig string) *clrevents.MethodLoadVerboseV1 {
	return &clrevents.MethodLoadVerboseV1{MethodID: id, ModuleID: mod, MethodStartAddress: start, MethodSize: size,
		MethodNamespace: clrevents.UTF16Of(ns), MethodName: clrevents.UTF16Of(name), MethodSignature: clrevents.UTF16Of(sig)}
}

func unload(id, mod, start uint64, size uint32) *clrevents.MethodUnloadVerboseV1 {
	return &clrevents.MethodUnloadVerboseV1{MethodID: id, ModuleID: mod, MethodStartAddress: start, MethodSize: size}
}

func TestResolveOverTime(t *testing.T) {
	m := NewMap()
	const pid = 7
	m.Observe(pid, 0, &clrevents.ModuleLoadV2{ModuleID: 1, ModuleILPath: clrevents.UTF16Of(`C:\app\bin\App.dll`)})
	m.Observe(pid, 10, load(100, 1, 0x1000, 0x100, "App.Program", "Main", "void  (class System.String[])"))
	m.Observe(pid, 20, unload(100, 1, 0x1000, 0x100))
	// The range is reused by another method later.
	m.Observe(pid, 30, load(200, 1, 0x1000, 0x80, "App.Program", "Other", "int32  (int32)"))
	// A rundown lists a precompiled method.
	m.Observe(pid, 90, &clrevents.MethodDCEndVerboseV1{MethodID: 300, ModuleID: 2, MethodStartAddress: 0x5000, MethodSize: 0x10,
		MethodNamespace: clrevents.UTF16Of("Lib.C"), MethodName: clrevents.UTF16Of("M"), MethodSignature: clrevents.UTF16Of("void  ()")})
	m.Observe(pid, 91, &clrevents.ModuleDCEndV2{ModuleID: 2, ModuleILPath: clrevents.UTF16Of("/usr/share/dotnet/Lib.dll")})

	for _, c := range []struct {
		pid    int64
		addr   uint64
		ts     int64
		want   string
		reason Reason
	}{
		{pid, 0x1010, 15, "App!App.Program.Main(class System.String[])", Resolved},
		{pid, 0x10ff, 15, "App!App.Program.Main(class System.String[])", Resolved},
		{pid, 0x1100, 15, Unresolved, NoMethod},
		{pid, 0x1010, 5, Unresolved, NotLive},
		{pid, 0x1010, 25, Unresolved, NotLive},
		{pid, 0x1010, 35, "App!App.Program.Other(int32)", Resolved},
		{pid, 0x1090, 35, Unresolved, NotLive},
		{pid, 0x5004, 1, "Lib!Lib.C.M()", Resolved},
		{pid, 0x0fff, 15, Unresolved, NoMethod},
		{8, 0x1010, 15, Unresolved, NoProcess},
	} {
		f, r := m.Resolve(c.pid, c.addr, c.ts)
		if got := m.Frame(f).String(); got != c.want || r != c.reason {
			t.Errorf("Resolve(%d, %#x, %d) = %q, %v; want %q, %v", c.pid, c.addr, c.ts, got, r, c.want, c.reason)
		}
		if r != Resolved && m.Frame(f).Address != c.addr {
			t.Errorf("unresolved frame keeps %#x, want %#x", m.Frame(f).Address, c.addr)
		}
	}
	cnt := m.Counts()
	if cnt[Resolved] != 4 || cnt[NotLive] != 3 || cnt[NoMethod] != 2 || cnt[NoProcess] != 1 {
		t.Errorf("counts %v", cnt)
	}
}

func TestResolveStackSpan(t *testing.T) {
	m := NewMap()
	m.Observe(1, 10, load(100, 1, 0x1000, 0x100, "A", "M", "()"))
	m.Observe(1, 20, unload(100, 1, 0x1000, 0x100))
	m.Observe(1, 30, load(200, 1, 0x1000, 0x80, "A", "N", "()"))
	m.Observe(1, 0, &clrevents.MethodDCEndVerboseV1{MethodID: 3, ModuleID: 1, MethodStartAddress: 0x5000, MethodSize: 0x10})
	for _, c := range []struct{ ts, from, to int64 }{{15, 10, 20}, {25, 20, 30}, {5, never, 10}, {35, 30, always}} {
		fr, from, to, counts := m.ResolveStackSpan(1, c.ts, []uint64{0x1010, 0x5001, 0x9}, nil)
		if len(fr) != 3 || from != c.from || to != c.to || counts[NoMethod] != 1 {
			t.Errorf("ts %d: span [%d, %d), counts %v; want [%d, %d)", c.ts, from, to, counts, c.from, c.to)
		}
	}
}

func TestUnloadWithoutLoad(t *testing.T) {
	m := NewMap()
	m.Observe(1, 50, unload(1, 9, 0x2000, 0x10))
	if _, r := m.Resolve(1, 0x2001, 10); r != Resolved {
		t.Errorf("before its unload: %v", r)
	}
	f, r := m.Resolve(1, 0x2001, 60)
	if r != NotLive {
		t.Errorf("after its unload: %v", r)
	}
	_ = f
	// A module never seen: "?!" plus the method address.
	f, _ = m.Resolve(1, 0x2001, 10)
	if got := m.Frame(f).String(); got != "?!0x2000" {
		t.Errorf("got %q", got)
	}
}

func TestStacks(t *testing.T) {
	s := NewStacks()
	a := s.Intern([]FrameID{1, 2, 3})
	b := s.Intern([]FrameID{1, 2})
	c := s.Intern([]FrameID{1, 2, 3})
	if a != c || a == b || a == 0 || s.Intern(nil) != 0 {
		t.Fatalf("ids %d %d %d", a, b, c)
	}
	if got := s.Frames(b); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("Frames(b) = %v", got)
	}
	if s.Len() != 3 || s.Frames(99) != nil {
		t.Errorf("Len %d", s.Len())
	}
}

func steadyMap() (*Map, []uint64) {
	m := NewMap()
	var ips []uint64
	for i := uint64(0); i < 2000; i++ {
		m.Observe(1, 0, load(i, 1, 0x10000+i*0x100, 0x80, "N.S", "M", "void  ()"))
	}
	for i := uint64(0); i < 32; i++ {
		ips = append(ips, 0x10000+(i*61%2000)*0x100+0x10)
	}
	ips = append(ips, 0x1) // native
	return m, ips
}

func TestZeroAllocSteadyState(t *testing.T) {
	m, ips := steadyMap()
	s := NewStacks()
	buf := make([]FrameID, 0, 64)
	step := func() { s.Intern(m.ResolveStack(1, 5, ips, buf[:0])) }
	step()
	if n := testing.AllocsPerRun(100, step); n != 0 {
		t.Errorf("resolve+intern allocates %v times per stack", n)
	}
}

func BenchmarkResolveIntern(b *testing.B) {
	m, ips := steadyMap()
	benchResolve(b, m, ips)
}

// benchResolve resolves and interns the stack ips in m, over and over.
func benchResolve(b *testing.B, m *Map, ips []uint64) {
	s := NewStacks()
	buf := make([]FrameID, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		s.Intern(m.ResolveStack(1, 5, ips, buf[:0]))
	}
	b.ReportMetric(float64(len(ips)), "frames/op")
}

// sharedShares are the shares of stack frames resolved per shared trace,
// as measured; a drop fails the test.
var sharedShares = map[string]float64{
	"eventpipe-dotnetcore2.0-linux-objver2.netperf.zip":       0.9871,
	"eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip":   0.8571,
	"eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip":    0.0663, // mostly native runtime frames
	"eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip": 1,
	"net.4.5.2.x86.etl.zip":                                   0.0619, // kernel and native frames: no image map yet
	"only_managed_samples.nettrace.zip":                       1,
	"dotnet-5.0-SampleProfiler-single-thread.golden.nettrace": 1,
}

// TestSharedTraces resolves every stack of every shared trace that has
// stacks, after the whole trace was read, and logs the share resolved.
func TestSharedTraces(t *testing.T) {
	dirs := []string{"../../shared/fixtures/traces/perfview", "../../shared/fixtures/traces/pyroscope-dotnetdiag", "testdata"}
	var files []string
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			n := e.Name()
			if filepath.Ext(n) == ".txt" || filepath.Ext(n) == ".md" || e.IsDir() {
				continue
			}
			files = append(files, filepath.Join(d, n))
		}
	}
	if len(files) == 0 {
		t.Skip("no shared traces beside the checkout")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			share, frames := resolveShare(t, f)
			if frames == 0 {
				t.Logf("%s: no stacks", filepath.Base(f))
				return
			}
			t.Logf("%s: %d frames, %.2f%% resolved", filepath.Base(f), frames, 100*share)
			if want, ok := sharedShares[filepath.Base(f)]; ok && share < want-1e-9 {
				t.Errorf("share resolved %.4f dropped below %.4f", share, want)
			}
		})
	}
}

type held struct {
	pid int64
	ts  int64
	ips []uint64
}

func resolveShare(t *testing.T, name string) (float64, int) {
	r, err := trace.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := NewMap()
	var hs []held
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Add(e); err != nil {
			t.Logf("%v", err)
		}
		if st := e.Stack(); len(st) > 0 {
			hs = append(hs, held{e.ProcessID(), e.Timestamp(), append([]uint64(nil), st...)})
		}
	}
	var buf []FrameID
	n := 0
	for _, h := range hs {
		buf = m.ResolveStack(h.pid, h.ts, h.ips, buf[:0])
		n += len(buf)
	}
	t.Logf("counts by reason: %v", m.Counts())
	return m.Share(), n
}

func dcStart(id, mod, start uint64, size uint32, name string) *clrevents.MethodDCStartVerboseV1 {
	return &clrevents.MethodDCStartVerboseV1{MethodID: id, ModuleID: mod, MethodStartAddress: start, MethodSize: size,
		MethodNamespace: clrevents.UTF16Of("N"), MethodName: clrevents.UTF16Of(name), MethodSignature: clrevents.UTF16Of("void  ()")}
}

func dcEnd(id, mod, start uint64, size uint32, name string) *clrevents.MethodDCEndVerboseV1 {
	return &clrevents.MethodDCEndVerboseV1{MethodID: id, ModuleID: mod, MethodStartAddress: start, MethodSize: size,
		MethodNamespace: clrevents.UTF16Of("N"), MethodName: clrevents.UTF16Of(name), MethodSignature: clrevents.UTF16Of("void  ()")}
}

// TestRundowns: the methods a rundown lists are found by the events of
// other kinds after it, as an ETW log has them: a DCStart rundown, loads
// and unloads, then a DCEnd rundown listing the live methods again. A
// method listed by both rundowns, or loaded and then listed, is one entry;
// an unload after a rundown ends the rundown's entry.
func TestRundowns(t *testing.T) {
	m := NewMap()
	const pid = 4
	m.Observe(pid, 1, dcStart(1, 9, 0x1000, 0x10, "A"))
	m.Observe(pid, 2, dcStart(2, 9, 0x2000, 0x10, "B"))
	m.Observe(pid, 3, dcStart(3, 9, 0x3000, 0x10, "C"))
	m.Observe(pid, 10, unload(2, 9, 0x2000, 0x10))                     // B goes
	m.Observe(pid, 20, load(4, 9, 0x4000, 0x10, "N", "D", "void  ()")) // D comes
	m.Observe(pid, 90, dcEnd(1, 9, 0x1000, 0x10, "A"))
	m.Observe(pid, 91, dcEnd(3, 9, 0x3000, 0x10, "C"))
	m.Observe(pid, 92, dcEnd(4, 9, 0x4000, 0x10, "D"))
	m.Observe(pid, 93, dcEnd(5, 9, 0x5000, 0x10, "E")) // compiled and listed at the end only
	if got, want := m.Methods(), 5; got != want {
		t.Errorf("%d method entries, want %d (one a method)", got, want)
	}
	for _, c := range []struct {
		addr   uint64
		ts     int64
		want   string
		reason Reason
	}{
		{0x1001, 50, "?!N.A()", Resolved},
		{0x2001, 5, "?!N.B()", Resolved},
		{0x2001, 15, Unresolved, NotLive},
		{0x4001, 15, Unresolved, NotLive}, // D loaded at 20: the DCEnd does not move that
		{0x4001, 25, "?!N.D()", Resolved},
		{0x5001, 5, "?!N.E()", Resolved},
	} {
		f, r := m.Resolve(pid, c.addr, c.ts)
		if got := m.Frame(f).String(); got != c.want || r != c.reason {
			t.Errorf("Resolve(%#x, %d) = %q, %v; want %q, %v", c.addr, c.ts, got, r, c.want, c.reason)
		}
	}
	// After a resolution (which sorts the map) a rundown's method is
	// still found by a later event.
	m.Observe(pid, 95, unload(5, 9, 0x5000, 0x10))
	if _, r := m.Resolve(pid, 0x5001, 96); r != NotLive || m.Methods() != 5 {
		t.Errorf("E after its unload: %v, %d entries", r, m.Methods())
	}
}

// TestLongNames: a name too long for the arena's blocks has one of its
// own, and the names before and after it keep theirs.
func TestLongNames(t *testing.T) {
	m := NewMap()
	long := strings.Repeat("L", arenaBlock/2)
	names := []string{"a", long, "b", long + "2", "c"}
	for i, n := range names {
		m.Observe(1, 0, load(uint64(i+1), 1, uint64(0x1000*(i+1)), 0x10, "N", n, "()"))
	}
	for i, n := range names {
		f, r := m.Resolve(1, uint64(0x1000*(i+1)), 1)
		if got, want := m.Frame(f).Method, "N."+n+"()"; r != Resolved || got != want {
			t.Errorf("method %d: %.20q… (%d bytes), %v; want %.20q… (%d bytes)", i, got, len(got), r, want, len(want))
		}
	}
}

// TestJITHelperName: the runtime names its JIT helpers with the
// placeholder "NULL" for namespace and signature (and module 0): the
// frame is the helper's name alone, not "NULL.@NewObjectNULL"; and a
// signature without a parameter list adds nothing.
func TestJITHelperName(t *testing.T) {
	const pid = 7
	m := NewMap()
	m.Observe(pid, 10, load(1, 0, 0x1000, 0x40, "NULL", "@NewObject", "NULL"))
	m.Observe(pid, 10, load(2, 0, 0x2000, 0x40, "App.C", "M", "void"))
	for _, c := range []struct {
		addr uint64
		want string
	}{{0x1010, "?!@NewObject"}, {0x2010, "?!App.C.M"}} {
		f, r := m.Resolve(pid, c.addr, 20)
		if got := m.Frame(f).String(); got != c.want || r != Resolved {
			t.Errorf("Resolve(%#x) = %q, %v; want %q", c.addr, got, r, c.want)
		}
	}
}

// TestManagedBuildID: a managed module's frames carry its PDB's identity
// from the module event (ManagedPdbSignature and age), as native images'
// carry theirs; a module event without one gives none.
func TestManagedBuildID(t *testing.T) {
	const pid = 7
	m := NewMap()
	sig := clrevents.GUID{0xF7, 0xC2, 0x87, 0xAB, 0xD7, 0x08, 0x92, 0x4A, 0x89, 0x56, 0x0D, 0x81, 0xD3, 0xA1, 0xDB, 0x05}
	m.Observe(pid, 0, &clrevents.ModuleLoadV2{ModuleID: 1, ModuleILPath: clrevents.UTF16Of(`C:\app\App.dll`), ManagedPdbSignature: sig, ManagedPdbAge: 1})
	m.Observe(pid, 0, &clrevents.ModuleLoadV2{ModuleID: 2, ModuleILPath: clrevents.UTF16Of(`C:\app\Lib.dll`)})
	m.Observe(pid, 10, load(100, 1, 0x1000, 0x100, "App.Program", "Main", "void  ()"))
	m.Observe(pid, 10, load(200, 2, 0x2000, 0x100, "Lib.C", "M", "void  ()"))
	for _, c := range []struct {
		addr uint64
		want string
	}{{0x1010, BuildID(sig, 1)}, {0x2010, ""}} {
		f, _ := m.Resolve(pid, c.addr, 20)
		if got := m.Frame(f).BuildID; got != c.want {
			t.Errorf("frame at %#x: build ID %q, want %q", c.addr, got, c.want)
		}
	}
	if BuildID(sig, 1) != "AB87C2F708D74A9289560D81D3A1DB051" {
		t.Errorf("BuildID %s", BuildID(sig, 1))
	}
}

// TestSmallMapMemory: a process of a few methods (a short trace's) does
// not allocate room for thousands. Each profile build makes a Map, and a
// collector builds one a window; the method list once took a chunk of
// 4,096 entries (256 KiB) for the first method.
func TestSmallMapMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m := NewMap()
	for i := range uint64(10) {
		m.Observe(1, int64(i), load(100+i, 1, 0x1000+0x100*i, 0x100, "App.Program", "M", "void  ()"))
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(m)
	const most = 128 << 10 // the name arena's first block (64 KiB) and a method chunk
	if got := after.TotalAlloc - before.TotalAlloc; got > most {
		t.Errorf("a map of 10 methods allocated %d bytes, want at most %d", got, most)
	}
}

// TestReuseBeforeLostLoad: a method that ran from before the trace and was
// unloaded in it, whose range a method the end's rundown lists took later
// (its load lost: the runtime dropped it, or the session did not ask for
// it), is the one an address of the range resolves to before the unload;
// both entries start at the trace's start.
func TestReuseBeforeLostLoad(t *testing.T) {
	m := NewMap()
	const pid = 4
	m.Observe(pid, 20, &clrevents.MethodUnloadVerboseV1{MethodID: 1, ModuleID: 9, MethodStartAddress: 0x1000, MethodSize: 0x100,
		MethodNamespace: clrevents.UTF16Of("N"), MethodName: clrevents.UTF16Of("Old"), MethodSignature: clrevents.UTF16Of("void  ()")})
	m.Observe(pid, 90, dcEnd(3, 9, 0x1000, 0x100, "New"))
	for _, c := range []struct {
		ts   int64
		want string
	}{{15, "?!N.Old()"}, {35, "?!N.New()"}} {
		f, r := m.Resolve(pid, 0x1050, c.ts)
		if got := m.Frame(f).String(); got != c.want || r != Resolved {
			t.Errorf("Resolve(%#x, %d) = %q, %v; want %q", 0x1050, c.ts, got, r, c.want)
		}
	}
}
