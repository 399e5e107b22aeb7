package simruntime

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/clrgo/clrevents/nettrace"
)

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	dir, err := os.MkdirTemp("", "sim")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s, err := Start(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// send writes raw bytes and returns the reply's command and payload.
func send(t *testing.T, s *Server, msg []byte) (set, id uint8, payload []byte) {
	t.Helper()
	c, err := net.Dial("unix", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(msg)
	var h [20]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, int(binary.LittleEndian.Uint16(h[14:]))-20)
	io.ReadFull(c, p)
	return h[16], h[17], p
}

func hr(p []byte) uint32 { return binary.LittleEndian.Uint32(p) }

// TestValidation: the simulated runtime answers malformed requests as the
// runtime does.
func TestValidation(t *testing.T) {
	s := start(t, Config{PID: 1, MaxCollect: 2})
	if set, id, p := send(t, s, []byte("DOTNET_IPC_V2\x00\x14\x00\x04\x00\x00\x00")); set != 0xFF || id != 0xFF || hr(p) != EUnknownMagic {
		t.Errorf("bad magic: %x %x %x", set, id, p)
	}
	if _, _, p := send(t, s, []byte("DOTNET_IPC_V1\x00\x14\x00\x04\x00\x01\x00")); hr(p) != EBadEncoding {
		t.Errorf("reserved != 0: %x", p)
	}
	if _, _, p := send(t, s, []byte("DOTNET_IPC_V1\x00\x14\x00\x09\x09\x00\x00")); hr(p) != EUnknownCommand {
		t.Errorf("unknown command: %x", p)
	}
	if _, _, p := send(t, s, []byte("DOTNET_IPC_V1\x00\x14\x00\x02\x04\x00\x00")); hr(p) != EUnknownCommand {
		t.Errorf("CollectTracing3 on a CollectTracing2 runtime: %x", p)
	}
	// CollectTracing with a string that lacks its NUL.
	bad := []byte("DOTNET_IPC_V1\x00\x32\x00\x02\x02\x00\x00") // 50 bytes
	bad = append(bad, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0)
	bad = append(bad, 0, 0, 0, 0, 0, 0, 0, 0) // keywords
	bad = append(bad, 4, 0, 0, 0, 1, 0, 0, 0)
	bad = append(bad, 'P', 0) // count 1, but the unit is 'P', not NUL
	if len(bad) != 50 {
		t.Fatalf("test message of %d bytes", len(bad))
	}
	if _, _, p := send(t, s, bad); hr(p) != EBadEncoding {
		t.Errorf("unterminated string: %x", p)
	}
	if set, id, p := send(t, s, []byte("DOTNET_IPC_V1\x00\x14\x00\x04\x00\x00\x00")); set != 0xFF || id != 0 || len(p) < 24 {
		t.Errorf("ProcessInfo: %x %x %x", set, id, p)
	}
}

// TestCountersTrace: the synthesized EventCounters stream reads back with
// its field descriptions.
func TestCountersTrace(t *testing.T) {
	tr, live := CountersTrace(7, [][]Counter{{{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: 1.5}}})
	if live <= 0 || live >= len(tr) {
		t.Fatalf("live part %d of %d", live, len(tr))
	}
	r, err := nettrace.NewReader(bytes.NewReader(tr))
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	js, err := e.Metadata.AppendJSON(nil, e.Payload)
	if err != nil || !bytes.Contains(js, []byte(`"Name":"cpu-usage"`)) || !bytes.Contains(js, []byte(`"Mean":1.5`)) {
		t.Fatalf("payload %s, %v", js, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the only event: %v", err)
	}
}

// collect starts a CollectTracing1 session and returns its stream, after
// the reply.
func collect(t *testing.T, s *Server) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p := binary.LittleEndian.AppendUint32(nil, 1) // circularBufferMB
	p = binary.LittleEndian.AppendUint32(p, 1)    // NetTrace
	p = binary.LittleEndian.AppendUint32(p, 1)    // one provider
	p = binary.LittleEndian.AppendUint64(p, 1)
	p = binary.LittleEndian.AppendUint32(p, 4)
	p = appendStr(p, "P")
	p = appendStr(p, "")
	c.Write(append(header(2, 2, len(p)), p...))
	var h [28]byte
	if _, err := io.ReadFull(c, h[:]); err != nil || h[16] != 0xFF || h[17] != 0 {
		t.Fatalf("reply %x, %v", h, err)
	}
	return c
}

// TestExitAfterLive: the stream is the live part, then it closes with no
// StopTracing; without the flag it waits for one.
func TestExitAfterLive(t *testing.T) {
	tr := []byte("0123456789abcdefghij")
	s := start(t, Config{PID: 1, Trace: tr, Live: 12, Chunk: 5, ExitAfterLive: true})
	c := collect(t, s)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "0123456789ab" {
		t.Fatalf("read %q, %v; want the live part and the end of the stream", got, err)
	}

	s = start(t, Config{PID: 1, Trace: tr, Live: 12})
	c = collect(t, s)
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	got, err = io.ReadAll(c)
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() || string(got) != "0123456789ab" {
		t.Fatalf("read %q, %v; want the live part, then nothing until a stop", got, err)
	}
}

// TestLevelRefused: the runtime takes provider levels 0 to 5 and refuses
// a request with another as badly encoded; so does the simulation.
func TestLevelRefused(t *testing.T) {
	for _, c := range []struct {
		level uint32
		ok    bool
	}{{5, true}, {6, false}, {0xFF, false}} {
		b := binary.LittleEndian.AppendUint32(nil, 256) // buffer MB
		b = binary.LittleEndian.AppendUint32(b, 1)      // nettrace
		b = append(b, 1)                                // rundown
		b = binary.LittleEndian.AppendUint32(b, 1)      // one provider
		b = binary.LittleEndian.AppendUint64(b, 0)
		b = binary.LittleEndian.AppendUint32(b, c.level)
		b = binary.LittleEndian.AppendUint32(b, 2) // "P" and its NUL, UTF-16
		b = append(b, 'P', 0, 0, 0)
		b = binary.LittleEndian.AppendUint32(b, 0) // no arguments
		col, err := parseCollect(2, b)
		if ok := err == nil && col != nil && col.Providers[0].Level == c.level; ok != c.ok {
			t.Errorf("level %d: %+v, %v; want taken %v", c.level, col, err, c.ok)
		}
	}
}
