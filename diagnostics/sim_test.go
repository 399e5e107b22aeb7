package diagnostics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/nettrace"
)

const realTrace = "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"

func realStream(t *testing.T) ([]byte, int) {
	t.Helper()
	data, live, err := simruntime.RealTrace(realTrace)
	if err != nil {
		t.Fatal(err)
	}
	return data, live
}

func startSim(t *testing.T, cfg simruntime.Config) (*simruntime.Server, *Client) {
	t.Helper()
	if cfg.PID == 0 {
		cfg.PID = 4321
	}
	s, err := simruntime.Start(shortTempDir(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, NewClientAddress(cfg.PID, s.Addr())
}

// shortTempDir is a temporary directory with a path short enough for a
// Unix socket (108 bytes).
func shortTempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "clrd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestSessionStreamsAndDrains: the stream carries the trace up to the
// rundown, and after StopTracing on a second connection, the rest; the
// bytes are the trace's, exactly.
func TestSessionStreamsAndDrains(t *testing.T) {
	data, live := realStream(t)
	sim, cl := startSim(t, simruntime.Config{Trace: data, Live: live, Chunk: 8192})
	cfg, _ := Profile("cpu-sampling")
	s, err := cl.StartSession(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Version != 1 || len(s.Refused) != 0 || len(s.Approximations) != 0 {
		t.Fatalf("session %+v", s)
	}
	var got bytes.Buffer
	if _, err := io.CopyN(&got, s, int64(live)); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx(t), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(&got, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("streamed %d bytes, not the trace's %d", got.Len(), len(data))
	}
	reqs := sim.Requests()
	if len(reqs) != 2 || reqs[0].Collect == nil || reqs[1].ID != 1 {
		t.Fatalf("requests %+v", reqs)
	}
	c := reqs[0].Collect
	if c.Version != 1 || c.BufferMB != 256 || c.Format != 1 || len(c.Providers) != 2 ||
		c.Providers[0].Name != SampleProfilerName || c.Providers[1].Keywords != cpuSamplingRuntimeKeywords {
		t.Fatalf("runtime parsed %+v", c)
	}
	if id := reqs[1].Payload; len(id) != 8 || s.ID != 0x7f1e0001 {
		t.Fatalf("StopTracing payload %X for session %#x", id, s.ID)
	}
}

// TestCollectFallback: a runtime that knows only CollectTracing2 refuses
// 3 (unknown command) and the client goes down, saying what is lost.
func TestCollectFallback(t *testing.T) {
	sim, cl := startSim(t, simruntime.Config{MaxCollect: 2, Trace: []byte("Nettrace")})
	cfg, _ := Profile("gc")
	s, err := cl.StartSession(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Version != 2 || strings.Join(s.Refused, ",") != "CollectTracing3" ||
		len(s.Approximations) != 1 || !strings.Contains(s.Approximations[0], "stacks") {
		t.Fatalf("session version %d, refused %v, approximations %v", s.Version, s.Refused, s.Approximations)
	}
	reqs := sim.Requests()
	if len(reqs) != 2 || reqs[0].Answer != simruntime.EUnknownCommand || reqs[1].Collect == nil || reqs[1].Collect.RequestRundown {
		t.Fatalf("requests %+v", reqs)
	}
	// A CollectTracing1-only runtime: down to 1, which can't turn the
	// rundown off either.
	_, cl1 := startSim(t, simruntime.Config{MaxCollect: 1, Trace: []byte("Nettrace")})
	s1, err := cl1.StartSession(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s1.Close()
	if s1.Version != 1 || len(s1.Refused) != 2 || len(s1.Approximations) != 2 {
		t.Fatalf("session %+v", s1)
	}
}

// TestGCCollectFallback: gc-collect asks for a rundown of GC keywords
// alone (CollectTracing4, .NET 9 on); a runtime that does not know
// CollectTracing4 gets no rundown rather than the default one, which
// lists every loaded method (dotnet-trace's gc-collect retries so); a
// session that asked for the rundown keywords without RundownKeywordOnly
// still gets the default one.
func TestGCCollectFallback(t *testing.T) {
	gc, _ := Profile("gc-collect")
	plain := gc
	plain.RundownKeywordOnly = false
	for _, c := range []struct {
		name    string
		cfg     SessionConfig
		rundown bool
		approx  string
	}{
		{"gc-collect", gc, false, "no rundown is written instead of one of keywords 0x1"},
		{"without RundownKeywordOnly", plain, true, "the default rundown keywords 0x80020139 are used instead of 0x1"},
	} {
		sim, cl := startSim(t, simruntime.Config{MaxCollect: 3, Trace: []byte("Nettrace")})
		s, err := cl.StartSession(ctx(t), c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		reqs := sim.Requests()
		last := reqs[len(reqs)-1]
		if s.Version != 3 || last.Collect == nil || last.Collect.RequestRundown != c.rundown || strings.Join(s.Approximations, "; ") != c.approx {
			t.Errorf("%s: session version %d, approximations %q, rundown requested %v; want 3, %q, %v", c.name, s.Version, s.Approximations, last.Collect != nil && last.Collect.RequestRundown, c.approx, c.rundown)
		}
	}
}

func TestRuntimeErrors(t *testing.T) {
	_, cl := startSim(t, simruntime.Config{CollectError: simruntime.EFail})
	_, err := cl.StartSession(ctx(t), SessionConfig{Providers: []Provider{{Name: "P"}}})
	var e *Error
	if !errors.As(err, &e) || e.HRESULT != EFail || e.PID != 4321 {
		t.Fatalf("error %v", err)
	}
	if want := "process 4321: CollectTracing: the runtime answered error 0x80004005 (failure)"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// A refused stop.
	_, cl2 := startSim(t, simruntime.Config{StopError: simruntime.EFail})
	if err := cl2.StopTracing(ctx(t), 99); !errors.As(err, &e) || e.HRESULT != EFail {
		t.Errorf("StopTracing(99): %v", err)
	}
	// A socket nobody listens on.
	dead := filepath.Join(shortTempDir(t), "dotnet-diagnostic-5-1-socket")
	ln, err := net.Listen("unix", dead)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	_, err = NewClientAddress(5, dead).ProcessInfo(ctx(t))
	if err == nil || !strings.HasPrefix(err.Error(), "process 5: ProcessInfo3: ") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("refusing socket: %v", err)
	}
}

// TestBadReplies: a server that answers garbage gets an error naming what
// was wrong.
func TestBadReplies(t *testing.T) {
	for name, reply := range map[string][]byte{
		"magic":     []byte("DOTNET_IPC_V2\x00\x14\x00\xFF\x00\x00\x00"),
		"short":     []byte("DOTNET_IPC_V1\x00\x14"),
		"errorsize": []byte("DOTNET_IPC_V1\x00\x14\x00\xFF\xFF\x00\x00"),
		"command":   []byte("DOTNET_IPC_V1\x00\x14\x00\x02\x02\x00\x00"),
	} {
		t.Run(name, func(t *testing.T) {
			addr := filepath.Join(shortTempDir(t), "s")
			ln, err := net.Listen("unix", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				io.ReadFull(c, make([]byte, 20))
				c.Write(reply)
				c.Close()
			}()
			err = NewClientAddress(9, addr).ResumeRuntime(ctx(t))
			if err == nil || !strings.HasPrefix(err.Error(), "process 9: ResumeRuntime: ") || !errors.Is(err, ErrProtocol) {
				t.Fatalf("error %v", err)
			}
		})
	}
}

func TestProcessCommands(t *testing.T) {
	cookie := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	base := simruntime.Config{Cookie: cookie, CommandLine: "/usr/bin/dotnet app.dll --flag", OS: "Linux", Arch: "x64",
		Entrypoint: "app", ClrVersion: "8.0.11+abc", RID: "linux-x64"}
	for maxInfo, want := range map[int]Command{3: CmdProcessInfo3, 2: CmdProcessInfo2, 1: CmdProcessInfo} {
		cfg := base
		cfg.MaxInfo = maxInfo
		_, cl := startSim(t, cfg)
		pi, err := cl.ProcessInfo(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if pi.Command != want || pi.ProcessID != 4321 || pi.RuntimeCookie != cookie || pi.CommandLine != base.CommandLine || pi.OS != "Linux" || pi.Arch != "x64" {
			t.Fatalf("ProcessInfo via %v: %+v", want, pi)
		}
		if (maxInfo >= 2) != (pi.ClrProductVersion == "8.0.11+abc") || (maxInfo == 3) != (pi.RuntimeIdentifier == "linux-x64") {
			t.Fatalf("ProcessInfo via %v: %+v", want, pi)
		}
	}
	sim, cl := startSim(t, base)
	c := ctx(t)
	if err := cl.ResumeRuntime(c); err != nil || !sim.Resumed() {
		t.Fatalf("ResumeRuntime: %v", err)
	}
	if err := cl.SetEnvironmentVariable(c, "DOTNET_gcServer", "1"); err != nil || sim.Env()["DOTNET_gcServer"] != "1" {
		t.Fatalf("SetEnvironmentVariable: %v %v", err, sim.Env())
	}
	if err := cl.EnablePerfMap(c, PerfMapJitDump); err != nil || sim.PerfMap() != 2 {
		t.Fatalf("EnablePerfMap: %v", err)
	}
	if err := cl.DisablePerfMap(c); err != nil || sim.PerfMap() != 0 {
		t.Fatalf("DisablePerfMap: %v", err)
	}
}

// TestLiveReader: events arrive through the front door before the session
// is stopped, then the rundown after it; all of them, none dropped.
func TestLiveReader(t *testing.T) {
	data, live := realStream(t)
	_, cl := startSim(t, simruntime.Config{Trace: data, Live: live, Chunk: 4096, ChunkDelay: time.Millisecond})
	cfg, _ := Profile("cpu-sampling")
	s, err := cl.StartSession(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before, rundown := 0, 0
	for before < 100 {
		if _, err := r.Next(); err != nil {
			t.Fatalf("event %d before the stop: %v", before, err)
		}
		before++
	}
	if err := s.Stop(ctx(t), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	total := before
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		total++
		if e.Provider() == "Microsoft-Windows-DotNETRuntimeRundown" {
			rundown++
		}
	}
	want := countEvents(t, data)
	if total != want || rundown == 0 || r.Dropped() != 0 {
		t.Fatalf("%d events (%d rundown, %d dropped), want %d", total, rundown, r.Dropped(), want)
	}
	if err := s.WaitStop(); err != nil {
		t.Fatalf("StopTracing's answer: %v", err)
	}
}

// TestReaderContextBeforeStream: a runtime that starts the session but
// sends nothing (one suspended at startup) holds the reader until its
// context ends, which closes the session; a stream that has begun is
// read as Reader reads it.
func TestReaderContextBeforeStream(t *testing.T) {
	data, _ := realStream(t)
	_, cl := startSim(t, simruntime.Config{Trace: data, Live: 0, StallAfterStop: true})
	s, err := cl.StartSession(ctx(t), SessionConfig{Providers: []Provider{{Name: "P"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		r, err := s.ReaderContext(c)
		if r != nil {
			r.Close()
		}
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // the reader waits for the stream
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ReaderContext: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReaderContext still waiting 10 s after its context ended")
	}
	if _, err := s.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("after the cancel, the session reads %v, want it closed", err)
	}

	_, cl = startSim(t, simruntime.Config{Trace: data, Live: -1})
	s, err = cl.StartSession(ctx(t), SessionConfig{Providers: []Provider{{Name: "P"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.ReaderContext(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); err != nil {
		t.Fatalf("first event: %v", err)
	}
}

// TestStopRefused: a refusal of StopTracing, which a runtime would send
// after the stream would have ended, is WaitStop's error, not Stop's.
// (Today's runtimes answer OK whatever the session: TestStopOtherSession.)
func TestStopRefused(t *testing.T) {
	data, live := realStream(t)
	_, cl := startSim(t, simruntime.Config{Trace: data, Live: live, StopError: simruntime.EFail})
	s, err := cl.StartSession(ctx(t), SessionConfig{Providers: []Provider{{Name: "P"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := s.ID
	s.ID = 99 // a session the runtime does not have
	if err := s.Stop(ctx(t), 200*time.Millisecond); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	var e *Error
	if err := s.WaitStop(); !errors.As(err, &e) || e.HRESULT != EFail || e.Command != CmdStopTracing {
		t.Fatalf("WaitStop: %v, want StopTracing's E_FAIL", err)
	}
	// The session goes on: the stream is cut at the drain deadline.
	if _, err := io.Copy(io.Discard, s); !errors.Is(err, ErrDrainTimeout) {
		t.Fatalf("stream of session %#x after a refused stop: %v", id, err)
	}
}

// TestStopOtherSession: the runtime answers a StopTracing of a session
// it does not have with OK, as it disables an unknown session as a no-op:
// WaitStop says nothing, and the session, still running, is cut at the
// drain deadline, which says so.
func TestStopOtherSession(t *testing.T) {
	data, live := realStream(t)
	_, cl := startSim(t, simruntime.Config{Trace: data, Live: live})
	s, err := cl.StartSession(ctx(t), SessionConfig{Providers: []Provider{{Name: "P"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.ID = 99 // a session the runtime does not have
	if err := s.Stop(ctx(t), 200*time.Millisecond); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := io.Copy(io.Discard, s); !errors.Is(err, ErrDrainTimeout) {
		t.Fatalf("stream after a stop of another session: %v, want the drain deadline's error", err)
	}
	if err := s.WaitStop(); err != nil {
		t.Fatalf("WaitStop: %v, want the runtime's OK", err)
	}
	if err := cl.StopTracing(ctx(t), 12345); err != nil {
		t.Errorf("StopTracing(12345): %v, want OK", err)
	}
}

// TestLevelOutOfRange: a provider level above 5 (Verbose), which the
// runtime refuses as a badly encoded request, is an error that names the
// provider before anything is sent (the simulated runtime refuses it as
// the runtime does: simruntime's TestLevelRefused).
func TestLevelOutOfRange(t *testing.T) {
	sim, cl := startSim(t, simruntime.Config{Trace: []byte("Nettrace")})
	_, err := cl.StartSession(ctx(t), SessionConfig{Providers: []Provider{{Name: "P", Level: 0xFF}}})
	if err == nil || !strings.Contains(err.Error(), "provider P: level 255") || len(sim.Requests()) != 0 {
		t.Errorf("level 255: %v, %d requests sent; want an error naming it and none sent", err, len(sim.Requests()))
	}
}

func countEvents(t *testing.T, data []byte) int {
	r, err := nettrace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			return n
		}
		n++
	}
}

// TestDrainDeadline: a runtime that never ends the stream after the stop
// gets cut off at the deadline, with an error that says so.
func TestDrainDeadline(t *testing.T) {
	data, live := realStream(t)
	_, cl := startSim(t, simruntime.Config{Trace: data, Live: live, StallAfterStop: true})
	s, err := cl.StartSession(ctx(t), SessionConfig{Providers: []Provider{{Name: "P"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := io.CopyN(io.Discard, s, int64(live)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.Stop(ctx(t), 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, s)
	if !errors.Is(err, ErrDrainTimeout) || !strings.Contains(err.Error(), "process 4321: session") {
		t.Fatalf("drain error %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("drain took %v", d)
	}
}

// TestReverse: a runtime started with DOTNET_DiagnosticPorts connects,
// advertises ADVR_V1 and takes one command per connection.
func TestReverse(t *testing.T) {
	addr := filepath.Join(shortTempDir(t), "port.sock")
	l, err := Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cookie := [16]byte{0xAA, 15: 0xBB}
	sim := simNoListen(t, simruntime.Config{PID: 777, Cookie: cookie, OS: "Linux"})
	sim.Advertise(addr)
	cl, err := l.Accept(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if cl.PID() != 777 {
		t.Fatalf("advertised pid %d", cl.PID())
	}
	if err := cl.ResumeRuntime(ctx(t)); err != nil || !sim.Resumed() {
		t.Fatalf("ResumeRuntime: %v", err)
	}
	pi, err := cl.ProcessInfo(ctx(t))
	if err != nil || pi.ProcessID != 777 || pi.RuntimeCookie != cookie {
		t.Fatalf("ProcessInfo over the reverse port: %+v %v", pi, err)
	}
}

// TestReverseManyWaiting: runtimes that connect while nobody accepts
// (more than any queue's worth, 20) are each accepted later, none dropped:
// a runtime started suspended waits at startup until a client resumes it.
func TestReverseManyWaiting(t *testing.T) {
	addr := filepath.Join(shortTempDir(t), "port.sock")
	l, err := Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const n = 20
	for i := range n {
		sim := simNoListen(t, simruntime.Config{PID: 1000 + i, Cookie: [16]byte{byte(i + 1)}, OS: "Linux"})
		sim.Advertise(addr)
	}
	seen := map[int]bool{}
	for range n {
		cl, err := l.Accept(ctx(t))
		if err != nil {
			t.Fatalf("after %d runtimes: %v", len(seen), err)
		}
		seen[cl.PID()] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct runtimes accepted of %d", len(seen), n)
	}
}

// TestReverseExited: a runtime that exits (its idle connection closes)
// is forgotten by the Listener, connection and all, and its Client's
// commands fail at once with ErrNoProcess instead of waiting for a
// connection that will not come. Another runtime is unaffected.
func TestReverseExited(t *testing.T) {
	addr := filepath.Join(shortTempDir(t), "port.sock")
	l, err := Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	stay := simNoListen(t, simruntime.Config{PID: 10, Cookie: [16]byte{10}, OS: "Linux"})
	stay.Advertise(addr)
	leave, err := simruntime.Start(shortTempDir(t), simruntime.Config{PID: 11, Cookie: [16]byte{11}, OS: "Linux"})
	if err != nil {
		t.Fatal(err)
	}
	leave.Advertise(addr)
	clients := map[int]*Client{}
	for range 2 {
		cl, err := l.Accept(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		clients[cl.PID()] = cl
		if _, err := cl.ProcessInfo(ctx(t)); err != nil {
			t.Fatalf("process %d: %v", cl.PID(), err)
		}
	}
	// The runtime reconnects after each command: once its idle
	// connection is back, the process exits and that connection closes.
	waitIdle := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		rt := l.runtimes[[16]byte{11}]
		idle := rt != nil && len(rt.idle) > 0
		l.mu.Unlock()
		if idle {
			break
		}
		if time.Now().After(waitIdle) {
			t.Fatal("the runtime did not connect again after its command")
		}
		time.Sleep(5 * time.Millisecond)
	}
	leave.Close() // the process exits: its idle connection closes
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		n := len(l.runtimes)
		l.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runtimes known 10 s after one exited, want 1", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err = clients[11].ProcessInfo(c)
	if !errors.Is(err, ErrNoProcess) || time.Since(start) > 5*time.Second {
		t.Fatalf("command to the exited runtime after %v: %v, want ErrNoProcess at once", time.Since(start), err)
	}
	if pi, err := clients[10].ProcessInfo(ctx(t)); err != nil || pi.ProcessID != 10 {
		t.Fatalf("the runtime still running: %+v %v", pi, err)
	}
}

func simNoListen(t *testing.T, cfg simruntime.Config) *simruntime.Server {
	s, err := simruntime.Start(shortTempDir(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAdvertisement(t *testing.T) {
	b := unhex(t, "41 44 56 52 5F 56 31 00 | 00112233445566778899AABBCCDDEEFF | 39 30 00 00 00 00 00 00 | 00 00")
	a, err := ParseAdvertisement(b)
	if err != nil || a.ProcessID != 12345 || a.RuntimeCookie[1] != 0x11 {
		t.Fatalf("%+v %v", a, err)
	}
	if got := AppendAdvertisement(nil, a); !bytes.Equal(got, b) {
		t.Fatalf("AppendAdvertisement = %X", got)
	}
	b[0] = 'X'
	if _, err := ParseAdvertisement(b); err == nil {
		t.Error("bad magic accepted")
	}
	if _, err := ParseAdvertisement(b[:10]); err == nil {
		t.Error("short advertisement accepted")
	}
}
