package diagnostics

import (
	"bytes"
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
