package diagnostics

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReplies feeds arbitrary bytes to everything that reads what a
// runtime sends: message framing, ProcessInfo 1–3 payloads and
// advertisements. Nothing may panic, and a payload is never larger than
// the header says.
func FuzzReplies(f *testing.F) {
	f.Add([]byte("DOTNET_IPC_V1\x00\x1c\x00\xff\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08"))
	f.Add([]byte("DOTNET_IPC_V1\x00\x18\x00\xff\xff\x00\x00\x85\x13\x13\x80"))
	f.Add([]byte("ADVR_V1\x00\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff\x39\x30\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add(append(make([]byte, 28), 2, 0, 0, 0, 'a', 0, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		if h, p, err := ReadMessage(bytes.NewReader(b)); err == nil && len(p) != int(h.Size)-HeaderSize {
			t.Fatalf("payload of %d bytes for size %d", len(p), h.Size)
		}
		for _, c := range []Command{CmdProcessInfo, CmdProcessInfo2, CmdProcessInfo3} {
			ParseProcessInfo(c, b)
		}
		ParseAdvertisement(b)
	})
}

// FuzzParseProviders: any provider list parses or fails without a panic,
// and what parses reads back from its String form unchanged.
func FuzzParseProviders(f *testing.F) {
	for _, s := range []string{"Microsoft-Windows-DotNETRuntime:0x1:4", `P:1:4:FilterAndPayloadSpecs="A/B\r\nC/D"`, `P:*:5:a=\x41\u00e9\101\cJ`, "A,B:0x2,A::0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		ps, err := ParseProviders(spec)
		if err != nil {
			return
		}
		for _, p := range ps {
			if strings.ContainsAny(p.Name, ",") || strings.Contains(p.Args, ",") && !strings.Contains(p.Args, `"`) {
				return // a comma the list form cannot carry back unquoted
			}
			again, err := ParseProviders(p.String())
			if err != nil || len(again) != 1 || again[0].Name != p.Name || again[0].Keywords != p.Keywords || again[0].Level != p.Level {
				t.Fatalf("%q: %+v reads back from %q as %+v, %v", spec, p, p.String(), again, err)
			}
		}
	})
}
