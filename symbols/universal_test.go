package symbols

import (
	"io"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/trace"
)

// The names and splits are TraceEvent's (UniversalSymbolParsingTest).
func TestJittedName(t *testing.T) {
	for _, c := range []struct{ in, mod, method string }{
		{"void [System.Private.CoreLib] System.Threading.ThreadPoolWorkQueue::Dispatch()[OptimizedTier1]",
			"System.Private.CoreLib", "System.Threading.ThreadPoolWorkQueue::Dispatch()"},
		{"bool [System.Private.CoreLib] System.Threading.PortableThreadPool+WorkerThread::WorkerThreadStart()[OptimizedTier1]",
			"System.Private.CoreLib", "System.Threading.PortableThreadPool+WorkerThread::WorkerThreadStart()"},
		{"void [SomeAssembly] SomeNamespace.SomeClass::SomeMethod(string, int32)[Tier0]",
			"SomeAssembly", "SomeNamespace.SomeClass::SomeMethod(string, int32)"},
		{"int32 [My.Custom.Assembly] My.Namespace.MyClass::ComplexMethod(class System.Collections.Generic.List`1<string>, int32)[OptimizedTier1]",
			"My.Custom.Assembly", "My.Namespace.MyClass::ComplexMethod(class System.Collections.Generic.List`1<string>, int32)"},
		{"instance void [System.Net.Sockets] System.Net.Sockets.SocketAsyncEngine::EventLoop()[QuickJitted]",
			"System.Net.Sockets", "System.Net.Sockets.SocketAsyncEngine::EventLoop()"},
		{"instance bool [System.Private.CoreLib] System.Threading.LowLevelLifoSemaphore::Wait(int32,bool)[OptimizedTier1]",
			"System.Private.CoreLib", "System.Threading.LowLevelLifoSemaphore::Wait(int32,bool)"},
		{"valuetype Interop/Error [System.Net.Sockets] Interop+Sys::Shutdown(class [System.Runtime]System.Runtime.InteropServices.SafeHandle,valuetype System.Net.Sockets.SocketShutdown)[QuickJitted]",
			"System.Net.Sockets", "Interop+Sys::Shutdown(class [System.Runtime]System.Runtime.InteropServices.SafeHandle,valuetype System.Net.Sockets.SocketShutdown)"},
		{"valuetype [System.Net.Primitives]System.Net.Sockets.SocketError [System.Net.Sockets] System.Net.Sockets.SocketPal::Shutdown(class System.Net.Sockets.SafeSocketHandle,bool,bool,valuetype System.Net.Sockets.SocketShutdown)[QuickJitted]",
			"System.Net.Sockets", "System.Net.Sockets.SocketPal::Shutdown(class System.Net.Sockets.SafeSocketHandle,bool,bool,valuetype System.Net.Sockets.SocketShutdown)"},
		{"void [App] App.Program::Main(string[])[OptimizedTier1]", "App", "App.Program::Main(string[])"},
	} {
		mod, method, ok := jittedName(c.in)
		if !ok || mod != c.mod || method != c.method {
			t.Errorf("jittedName(%q) = %q, %q, %v; want %q, %q", c.in, mod, method, ok, c.mod, c.method)
		}
	}
	// Not jitted names (TraceEvent's too, and a few more).
	for _, in := range []string{
		"regular_symbol_name", "void System.Threading.ThreadPoolWorkQueue::Dispatch()", "",
		"void [System.Private.CoreLib] System.Threading.ThreadPoolWorkQueue::Dispatch()",
		"void System.Private.CoreLib System.Threading.ThreadPoolWorkQueue::Dispatch()[OptimizedTier1]",
		"[App] App.Main()[Tier0]", "void [App] [Tier0]", "void [App] M()[]", "void [] M()[Tier0]", "]", "[]",
	} {
		if mod, method, ok := jittedName(in); ok {
			t.Errorf("jittedName(%q) = %q, %q, true; want false", in, mod, method)
		}
	}
}

func TestMappingBuildID(t *testing.T) {
	for md, want := range map[string]string{
		`{"type": "ELF","debug_link": "60568bc2.debug","build_id": "4b60568bc25641b07e93f84f98c77093f3b279f7"}`: "4b60568bc25641b07e93f84f98c77093f3b279f7",
		// The RSDS record's bytes as in the file: the GUID
		// {be8aeb04-cadf-a0bd-1f0f-1387df07a0ba}, as symbol servers
		// (and TraceEvent's ImageID/DbgID_RSDS events) give it.
		`{"type": "PE","name": "System.Memory.pdb","age": 1,"signature": "04eb8abedfcabda01f0f1387df07a0ba"}`: "BE8AEB04CADFA0BD1F0F1387DF07A0BA1",
		`{"type": "PE","age": 26,"signature": "04eb8abedfcabda01f0f1387df07a0ba"}`:                            "BE8AEB04CADFA0BD1F0F1387DF07A0BA1A",
		// NB10: a 4-byte time stamp, then zeros.
		`{"type": "PE","age": 3,"signature": "1a2b3c4d000000000000000000000000"}`: "4D3C2B1A3",
		`{"type": "PE","age": 1,"signature": "04eb8abe"}`:                         "",
		`{"type": "PE","age": 1,"signature": "00000000000000000000000000000000"}`: "",
		`{"type": "PE","age": 1,"signature": "zzeb8abedfcabda01f0f1387df07a0ba"}`: "",
		`{"type": "PE"}`:  "",
		`{"type": "ELF"}`: "",
		`{}`:              "",
		`not json`:        "",
	} {
		if got := mappingBuildID(md); got != want {
			t.Errorf("mappingBuildID(%s) = %q, want %q", md, got, want)
		}
	}
}

// TestUniversalMap reads testdata's universal trace (nettrace's
// universalTrace writes it) and resolves its samples' addresses.
func TestUniversalMap(t *testing.T) {
	r, err := trace.Open("../testdata/traces/universal-synthetic.nettrace")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := NewMap()
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	const coreclr, jitted = 0x7f0000000000, 0x7e0000000000
	for _, c := range []struct {
		pid  int64
		addr uint64
		want string
		r    Reason
		bid  string
	}{
		{1234, jitted + 0x150, "App!App.Program::Main(string[])", Resolved, ""},
		{1234, jitted + 0x1ff, "App!App.Program::Main(string[])", Resolved, ""}, // the end is inclusive
		{1234, jitted + 0x200, "System.Private.CoreLib!System.String::GetHashCode()", Resolved, ""},
		{1234, coreclr + 0x1100, "libcoreclr!coreclr_execute_assembly", Resolved, "4b60568bc25641b07e93f84f98c77093f3b279f7"},
		{1234, coreclr + 0x5000, "libcoreclr!?", Native, "4b60568bc25641b07e93f84f98c77093f3b279f7"},
		{1234, jitted + 0x5000, Unresolved, NoProcess, ""}, // in the doublemapper, no symbol (and no method event)
		{99, 0x12345, Unresolved, NoProcess, ""},
		{99, coreclr + 0x1100, "libcoreclr!coreclr_execute_assembly", Resolved, "4b60568bc25641b07e93f84f98c77093f3b279f7"}, // the mapping's symbols, shared
		{99, jitted + 0x150, Unresolved, NoProcess, ""},                                                                     // not mapped in 99
	} {
		f, r := m.Resolve(c.pid, c.addr, 5_000_000)
		fr := m.Frame(f)
		if got := fr.String(); got != c.want || r != c.r || fr.BuildID != c.bid {
			t.Errorf("%d %#x: %s (%v, build ID %q), want %s (%v, %q)", c.pid, c.addr, got, r, fr.BuildID, c.want, c.r, c.bid)
		}
	}
	// The two processes' images of mapping 1 share its symbols.
	if a, b := m.imgs[1234], m.imgs[99]; a == nil || b == nil || len(b.list) != 1 || a.list[0].syms != b.list[0].syms && a.list[1].syms != b.list[0].syms {
		t.Errorf("the images of mapping 1 do not share their symbols")
	}
	names := m.UniversalProcessNames()
	if names[1234] != "testhost" || names[99] != "other" || len(names) != 2 {
		t.Errorf("process names %v", names)
	}
}

// TestUniversalDamage: a Universal.System payload cut short is an error
// that names the event and where it is, and adds nothing.
func TestUniversalDamage(t *testing.T) {
	p := uPayload{b: []byte{0x80}}
	if p.uvarint(); p.err == nil || !strings.Contains(p.err.Error(), "cut short") {
		t.Errorf("a varint cut short: %v", p.err)
	}
	p = uPayload{b: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}}
	if p.uvarint(); p.err == nil || !strings.Contains(p.err.Error(), "64 bits") {
		t.Errorf("a varint of 11 bytes: %v", p.err)
	}
	p = uPayload{b: []byte{5, 0, 'a', 'b'}}
	if s := p.str(); p.err == nil || s != "" || !strings.Contains(p.err.Error(), "string of 5 bytes at byte 0 of 4") {
		t.Errorf("a string cut short: %q, %v", s, p.err)
	}
	p = uPayload{b: []byte{1}}
	if p.str(); p.err == nil {
		t.Error("a string length cut short: no error")
	}
	// After a fault, reads give nothing.
	if v := p.uvarint(); v != 0 {
		t.Errorf("a read after a fault gave %d", v)
	}
	p = uPayload{b: append([]byte{2, 0}, "ok"...)}
	if s := p.str(); p.err != nil || s != "ok" {
		t.Errorf("a whole string: %q, %v", s, p.err)
	}
}

// TestKernelMappedInProcess: a kernel address resolves to the kernel's
// image in process 0 (ETW lists it there), else to the one mapped into
// the process itself (a universal trace may map it so), and the span
// its answer holds over is narrowed by both.
func TestKernelMappedInProcess(t *testing.T) {
	const k = 0xffffffff81000000
	m := NewMap()
	m.addMapping(1234, 100, k, k+0x1000000, 0, "/boot/vmlinux", "", nil)
	f, r := m.Resolve(1234, k+0x10, 200)
	if got := m.Frame(f).String(); got != "vmlinux!?" || r != Native {
		t.Errorf("a kernel address mapped in the process: %s (%v)", got, r)
	}
	// Process 0's image, live from time 300, wins from then on; before,
	// the process's answer holds only until 300.
	m.addMapping(0, 300, k, k+0x1000000, 0, "/boot/ntoskrnl.exe", "", nil)
	_, _, from, to := m.resolve(1234, k+0x10, 200)
	if from != 100 || to != 300 {
		t.Errorf("the answer at 200 holds over [%d, %d), want [100, 300)", from, to)
	}
	f, _ = m.Resolve(1234, k+0x10, 400)
	if got := m.Frame(f).String(); got != "ntoskrnl!?" {
		t.Errorf("at 400: %s, want process 0's image", got)
	}
}
