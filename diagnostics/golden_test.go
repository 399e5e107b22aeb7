package diagnostics

import (
	"bytes"
	"encoding/hex"
	"runtime"
	"strings"
	"testing"
)

// unhex reads hex bytes written by hand, ignoring spaces, newlines and
// "|" separators.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "\n", "", "\t", "", "|", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad test hex: %v", err)
	}
	return b
}

// magic is "DOTNET_IPC_V1\0".
const magic = "44 4F 54 4E 45 54 5F 49 50 43 5F 56 31 00"

// The expected bytes below are written out by hand from
// ipc-protocol.md and the .NET client's serializers
// (EventPipeSessionConfiguration.SerializeV2…V6, IpcHeader.Serialize,
// BinaryWriterExtensions.WriteString), never produced by our encoder.

// provider P: keywords 0x1122334455667788, level 4, name "P", args "".
// Empty args are written as the .NET client writes "" (count 1 and a NUL;
// the protocol document's example shows a 0 count, which the runtime also
// accepts).
const providerP = "88 77 66 55 44 33 22 11 | 04 00 00 00 | 02 00 00 00 50 00 00 00 | 01 00 00 00 00 00"

func TestGoldenRequests(t *testing.T) {
	p := Provider{Name: "P", Keywords: 0x1122334455667788, Level: 4}
	cases := []struct {
		name string
		got  func() ([]byte, error)
		want string
	}{
		{"ProcessInfo", msg(CmdProcessInfo, nil), magic + "| 14 00 | 04 00 | 00 00"},
		{"ProcessInfo2", msg(CmdProcessInfo2, nil), magic + "| 14 00 | 04 04 | 00 00"},
		{"ProcessInfo3", msg(CmdProcessInfo3, nil), magic + "| 14 00 | 04 08 | 00 00"},
		{"ResumeRuntime", msg(CmdResumeRuntime, nil), magic + "| 14 00 | 04 01 | 00 00"},
		{"DisablePerfMap", msg(CmdDisablePerfMap, nil), magic + "| 14 00 | 04 06 | 00 00"},
		{"EnablePerfMap", msg(CmdEnablePerfMap, []byte{3, 0, 0, 0}), magic + "| 18 00 | 04 05 | 00 00 | 03 00 00 00"},
		{"SetEnvironmentVariable", msg(CmdSetEnvironmentVariable, AppendString(AppendString(nil, "A"), "bc")),
			magic + "| 26 00 | 04 03 | 00 00 | 02 00 00 00 41 00 00 00 | 03 00 00 00 62 00 63 00 00 00"},
		{"StopTracing", msg(CmdStopTracing, []byte{8, 7, 6, 5, 4, 3, 2, 1}),
			magic + "| 1C 00 | 02 01 | 00 00 | 08 07 06 05 04 03 02 01"},
		// The protocol document's CollectTracing example: 250 MB,
		// NetTrace, keywords 100, level 2, "MyEventSource" (14 units with
		// the NUL); 82 bytes with the client's empty-args encoding.
		{"CollectTracing spec example", collect(1, SessionConfig{BufferMB: 250, Providers: []Provider{{Name: "MyEventSource", Keywords: 100, Level: 2}}}),
			magic + "| 52 00 | 02 02 | 00 00 | FA 00 00 00 | 01 00 00 00 | 01 00 00 00 | 64 00 00 00 00 00 00 00 | 02 00 00 00 | 0E 00 00 00" +
				"4D 00 79 00 45 00 76 00 65 00 6E 00 74 00 53 00 6F 00 75 00 72 00 63 00 65 00 00 00 | 01 00 00 00 00 00"},
		// CollectTracing2: buffer, format, bool requestRundown, providers.
		{"CollectTracing2", collect(2, SessionConfig{BufferMB: 16, NoRundown: true, Providers: []Provider{p}}),
			magic + "| 3B 00 | 02 03 | 00 00 | 10 00 00 00 | 01 00 00 00 | 00 | 01 00 00 00 |" + providerP},
		// CollectTracing3: … requestRundown, requestStackwalk, providers
		// (command 0x0204; the document's example header says 0x0203).
		{"CollectTracing3", collect(3, SessionConfig{BufferMB: 16, NoStacks: true, Providers: []Provider{p}}),
			magic + "| 3C 00 | 02 04 | 00 00 | 10 00 00 00 | 01 00 00 00 | 01 | 00 | 01 00 00 00 |" + providerP},
		// CollectTracing4: buffer, format, ulong rundownKeyword, bool
		// requestStackwalk, providers (the document's struct leaves out
		// requestStackwalk; the client writes it).
		{"CollectTracing4", collect(4, SessionConfig{BufferMB: 16, RundownKeyword: 0x8, Providers: []Provider{p}}),
			magic + "| 43 00 | 02 05 | 00 00 | 10 00 00 00 | 01 00 00 00 | 08 00 00 00 00 00 00 00 | 01 | 01 00 00 00 |" + providerP},
		// CollectTracing5: uint session type 0 first; each provider ends
		// with its event filter: bool enable, array<uint> ids.
		{"CollectTracing5", collect(5, SessionConfig{BufferMB: 16, Providers: []Provider{
			{Name: "P", Keywords: 0x1122334455667788, Level: 4, Filter: &EventFilter{Enable: true, IDs: []uint32{7, 9}}}}}),
			magic + "| 54 00 | 02 06 | 00 00 | 00 00 00 00 | 10 00 00 00 | 01 00 00 00 | 39 01 02 80 00 00 00 00 | 01 | 01 00 00 00 |" +
				providerP + "| 01 | 02 00 00 00 | 07 00 00 00 | 09 00 00 00"},
		// CollectTracing6: CollectTracing5 plus a trailing uint buffering
		// mode (1: block); a provider without a filter writes false, 0.
		{"CollectTracing6", collect(6, SessionConfig{BufferMB: 16, Blocking: true, Providers: []Provider{p}}),
			magic + "| 50 00 | 02 07 | 00 00 | 00 00 00 00 | 10 00 00 00 | 01 00 00 00 | 39 01 02 80 00 00 00 00 | 01 | 01 00 00 00 |" +
				providerP + "| 00 | 00 00 00 00 | 01 00 00 00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.got()
			if err != nil {
				t.Fatal(err)
			}
			want := unhex(t, c.want)
			if !bytes.Equal(got, want) {
				t.Fatalf("bytes differ\n got %X\nwant %X", got, want)
			}
			if int(got[14])|int(got[15])<<8 != len(got) {
				t.Fatalf("header size %d, message %d bytes", int(got[14])|int(got[15])<<8, len(got))
			}
		})
	}
}

func msg(c Command, payload []byte) func() ([]byte, error) {
	return func() ([]byte, error) { return EncodeMessage(c, payload) }
}

func collect(v int, cfg SessionConfig) func() ([]byte, error) {
	return func() ([]byte, error) {
		p, err := EncodeCollectTracing(v, &cfg)
		if err != nil {
			return nil, err
		}
		return EncodeMessage(CollectTracingCommand(v), p)
	}
}

func TestMinVersion(t *testing.T) {
	p := []Provider{{Name: "P"}}
	cases := []struct {
		cfg  SessionConfig
		want int
	}{
		{SessionConfig{Providers: p}, 1},
		{SessionConfig{Providers: p, NoRundown: true}, 2},
		{SessionConfig{Providers: p, NoStacks: true}, 3},
		{SessionConfig{Providers: p, NoStacks: true, NoRundown: true}, 3},
		{SessionConfig{Providers: p, RundownKeyword: DefaultRundownKeyword}, 1},
		{SessionConfig{Providers: p, RundownKeyword: 0x8}, 4},
		{SessionConfig{Providers: p, RundownKeyword: 0x8, NoRundown: true}, 2},
		{SessionConfig{Providers: []Provider{{Name: "P", Filter: &EventFilter{}}}}, 5},
		{SessionConfig{Providers: p, Blocking: true}, 6},
	}
	for i, c := range cases {
		if got := c.cfg.MinVersion(); got != c.want {
			t.Errorf("case %d: MinVersion = %d, want %d", i, got, c.want)
		}
		if a := c.cfg.Approximations(c.want); a != nil {
			t.Errorf("case %d: version %d approximates %v", i, c.want, a)
		}
		if c.want > 1 && len(c.cfg.Approximations(c.want-1)) == 0 {
			t.Errorf("case %d: version %d expresses the request, but %d is the minimum", i, c.want-1, c.want)
		}
	}
}

func TestEncodeLimits(t *testing.T) {
	if _, err := EncodeCollectTracing(7, &SessionConfig{Providers: []Provider{{Name: "P"}}}); err == nil {
		t.Error("version 7 encoded")
	}
	if _, err := EncodeCollectTracing(1, &SessionConfig{}); err == nil {
		t.Error("no providers encoded")
	}
	big := SessionConfig{Providers: []Provider{{Name: "P", Args: strings.Repeat("x", 40000)}}}
	if _, err := EncodeCollectTracing(1, &big); err == nil || !strings.Contains(err.Error(), "more than a message holds") {
		t.Errorf("oversized request: %v", err)
	}
}

func TestParseHeaderErrors(t *testing.T) {
	good := unhex(t, magic+"| 1C 00 | FF 00 | 00 00")
	if h, err := ParseHeader(good); err != nil || h.Size != 28 || h.Command != ReplyOK {
		t.Fatalf("ParseHeader = %+v, %v", h, err)
	}
	bad := bytes.Clone(good)
	bad[0] = 'X'
	if _, err := ParseHeader(bad); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("bad magic: %v", err)
	}
	small := bytes.Clone(good)
	small[14] = 10
	if _, err := ParseHeader(small); err == nil || !strings.Contains(err.Error(), "byte 14") {
		t.Errorf("size 10: %v", err)
	}
	if _, _, err := ReadMessage(bytes.NewReader(good[:5])); err == nil {
		t.Error("short header read")
	}
	if _, _, err := ReadMessage(bytes.NewReader(good)); err == nil || !strings.Contains(err.Error(), "payload") {
		t.Errorf("missing payload: %v", err)
	}
}

func TestParseProcessInfoHostile(t *testing.T) {
	// A string count claiming 2^31 units in a tiny payload: an error, no
	// allocation of that size.
	p := make([]byte, 24)
	p = append(p, 0xFF, 0xFF, 0xFF, 0x7F, 'a', 0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := ParseProcessInfo(CmdProcessInfo, p); err == nil {
			t.Fatal("hostile count accepted")
		}
	})
	runtime.ReadMemStats(&after)
	if allocs > 16 {
		t.Errorf("%v allocations for a rejected payload", allocs)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("%d bytes allocated for 21 rejected payloads", d)
	}
	// Every cut of a valid ProcessInfo3 reply fails with an offset.
	full := unhex(t, "01 00 00 00 | 2A 00 00 00 00 00 00 00 | 00112233445566778899AABBCCDDEEFF |"+
		"02 00 00 00 61 00 00 00 | 02 00 00 00 62 00 00 00 | 02 00 00 00 63 00 00 00 |"+
		"02 00 00 00 64 00 00 00 | 02 00 00 00 65 00 00 00 | 02 00 00 00 66 00 00 00")
	pi, err := ParseProcessInfo(CmdProcessInfo3, full)
	if err != nil || pi.ProcessID != 42 || pi.CommandLine != "a" || pi.OS != "b" || pi.Arch != "c" ||
		pi.EntrypointAssembly != "d" || pi.ClrProductVersion != "e" || pi.RuntimeIdentifier != "f" || pi.RuntimeCookie[0] != 0 || pi.RuntimeCookie[15] != 0xFF {
		t.Fatalf("ParseProcessInfo = %+v, %v", pi, err)
	}
	for i := range len(full) {
		if _, err := ParseProcessInfo(CmdProcessInfo3, full[:i]); err == nil || !strings.Contains(err.Error(), "payload byte") {
			t.Fatalf("cut at %d: %v", i, err)
		}
	}
}

func TestParseProviders(t *testing.T) {
	ps, err := ParseProviders(`Microsoft-Windows-DotNETRuntime:0x1:4,System.Runtime::verbose:EventCounterIntervalSec=1,My:*:2:"a=1,2";b=3`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Microsoft-Windows-DotNETRuntime:0x1:4", "System.Runtime:0xFFFFFFFFFFFFFFFF:5:EventCounterIntervalSec=1", `My:0xFFFFFFFFFFFFFFFF:2:"a=1,2";b=3`}
	if len(ps) != len(want) {
		t.Fatalf("got %v", ps)
	}
	for i := range want {
		if ps[i].String() != want[i] {
			t.Errorf("provider %d = %s, want %s", i, ps[i], want[i])
		}
	}
	for _, bad := range []string{"", ":1", "P:xyz", "P:1:9", "P:1:loud",
		`P:1:4:a=1,P:2:4:b=2`, // one provider, arguments twice
		`P:1:4:a=\q`, `P:1:4:a=\`, `P:1:4:a=\x4`, `P:1:4:a=\c1`} {
		if _, err := ParseProviders(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestProvidersMerged: a provider named twice is one, as dotnet-trace
// merges it (the runtime would apply only a name's first entry).
func TestProvidersMerged(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"MyES:0x1:4,MyES:0x2:4", "MyES:0x3:4"},
		{"Microsoft-Windows-DotNETRuntime:0x8000:5,microsoft-windows-dotnetruntime:0x1:4", "Microsoft-Windows-DotNETRuntime:0x8001:5"},
		{"P:0x1:2:a=1,P:0x10:0", "P:0x11:0:a=1"}, // LogAlways is the most verbose
		{"P:0x1:0,P:0x10:5:b=2", "P:0x11:0:b=2"},
	} {
		ps, err := ParseProviders(c.spec)
		if err != nil || len(ps) != 1 || ps[0].String() != c.want {
			t.Errorf("%s: %v, %v; want one provider %s", c.spec, ps, err, c.want)
		}
	}
}

// TestProviderArgsUnescaped: arguments are unescaped as dotnet-trace's
// Regex.Unescape does, and String escapes them back.
func TestProviderArgsUnescaped(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`FilterAndPayloadSpecs="A/B\r\nC/D"`, "FilterAndPayloadSpecs=\"A/B\r\nC/D\""},
		{`a=\t\x41\u00e9\101\0\cJ\;\\`, "a=\tA\u00e9A\x00\n;\\"},
		{`plain=C:/x`, "plain=C:/x"},
	} {
		ps, err := ParseProviders("P:1:4:" + c.args)
		if err != nil || ps[0].Args != c.want {
			t.Errorf("%s: %q, %v; want %q", c.args, ps[0].Args, err, c.want)
			continue
		}
		again, err := ParseProviders(ps[0].String())
		if err != nil || again[0] != ps[0] {
			t.Errorf("%s: String %s reads back as %+v, %v", c.args, ps[0], again, err)
		}
	}
}

func TestProfiles(t *testing.T) {
	for _, n := range ProfileNames() {
		c, err := Profile(n)
		if err != nil || len(c.Providers) == 0 || ProfileAbout(n) == "" {
			t.Errorf("profile %s: %+v, %v", n, c, err)
		}
	}
	c, _ := Profile("cpu-sampling")
	if c.Providers[0].Name != SampleProfilerName || c.MinVersion() != 1 {
		t.Errorf("cpu-sampling = %+v (version %d)", c, c.MinVersion())
	}
	// dotnet-trace's profiles of the same names, as it lists them
	// (dotnet-trace list-profiles: dotnet-common is "Equivalent to
	// --providers Microsoft-Windows-DotNETRuntime:0x100003801D:4").
	for name, want := range map[string]string{
		"dotnet-common":              "Microsoft-Windows-DotNETRuntime:0x100003801D:4",
		"dotnet-sampled-thread-time": "Microsoft-DotNETCore-SampleProfiler:0x0:4",
		"gc-verbose":                 "Microsoft-Windows-DotNETRuntime:0x8003:5",
		"gc-collect":                 "Microsoft-Windows-DotNETRuntime:0x1:4,Microsoft-Windows-DotNETRuntimePrivate:0x1:4",
	} {
		c, _ := Profile(name)
		var got []string
		for _, p := range c.Providers {
			got = append(got, p.String())
		}
		if strings.Join(got, ",") != want {
			t.Errorf("profile %s: %s, want dotnet-trace's %s", name, strings.Join(got, ","), want)
		}
	}
	if g, _ := Profile("gc-collect"); g.RundownKeyword != KeywordGC || g.MinVersion() != 4 {
		t.Errorf("gc-collect: rundown keywords %#x (CollectTracing%d), want GC's alone", g.RundownKeyword, g.MinVersion())
	}
	if g, _ := Profile("gc"); g.MinVersion() != 3 {
		t.Errorf("gc needs CollectTracing%d, want 3", g.MinVersion())
	}
	if _, err := Profile("nope"); err == nil || !strings.Contains(err.Error(), "cpu-sampling") {
		t.Errorf("unknown profile: %v", err)
	}
}

// BenchmarkEncodeCollectTracing encodes dotnet-trace's usual request.
func BenchmarkEncodeCollectTracing(b *testing.B) {
	cfg, _ := Profile("cpu-sampling")
	b.ReportAllocs()
	for range b.N {
		p, err := EncodeCollectTracing(cfg.MinVersion(), &cfg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := EncodeMessage(CmdCollectTracing, p); err != nil {
			b.Fatal(err)
		}
	}
}
