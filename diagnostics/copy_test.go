package diagnostics

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/nettrace"
)

// copySession starts a session on a simulated runtime and copies its
// stream into a buffer; stop, when set, stops the session once the live
// part has come.
func copySession(t *testing.T, cfg simruntime.Config, stop bool, w io.Writer) CopyResult {
	t.Helper()
	_, cl := startSim(t, cfg)
	s, err := cl.StartSession(ctx(t), SessionConfig{Providers: []Provider{{Name: RuntimeProvider, Keywords: 1, Level: LevelInformational}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan CopyResult, 1)
	go func() { done <- s.Copy(w) }()
	if stop {
		for deadline := time.Now().Add(20 * time.Second); s.BytesRead() < int64(cfg.Live); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d bytes read, not the %d live", s.BytesRead(), cfg.Live)
			}
		}
		if err := s.Stop(ctx(t), 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case res := <-done:
		return res
	case <-time.After(20 * time.Second):
		t.Fatal("the copy did not end")
	}
	return CopyResult{}
}

// TestCopy: a whole trace is copied byte for byte and checked good; one
// the process cut short, random bytes, a damaged stream and a newer
// version each end as the check says, with what came copied.
func TestCopy(t *testing.T) {
	data, live := realStream(t)
	noise := make([]byte, 50000)
	rand.NewChaCha8([32]byte{5, 6}).Read(noise)
	noise[0] = 0x3f
	damaged := bytes.Clone(data)
	damaged[live] = 0x3f // the tag that begins the rundown's first block
	newer := append([]byte("Nettrace\x00\x00\x00\x00\x07\x00\x00\x00\x01\x00\x00\x00"), bytes.Repeat([]byte{0xAB}, 1000)...)
	cut := live + 5000
	for _, c := range []struct {
		name          string
		cfg           simruntime.Config
		stop          bool
		copied        []byte // a beginning of what was sent, at least to the fault when partial
		partial       bool
		trace         bool // the *StreamError's Trace; copied whole and good when there is none
		stopped       bool
		unwraps       error
		unchecked     bool
		noStreamError bool
	}{
		{name: "whole", cfg: simruntime.Config{Trace: data, Live: live}, stop: true, copied: data, noStreamError: true},
		{name: "cut", cfg: simruntime.Config{Trace: data[:cut], Live: -1, ExitAfterLive: true}, copied: data[:cut], trace: true, unwraps: io.ErrUnexpectedEOF},
		{name: "random", cfg: simruntime.Config{Trace: noise, Live: -1}, copied: noise, partial: true, stopped: true, unwraps: nettrace.ErrFormat},
		{name: "damaged", cfg: simruntime.Config{Trace: damaged, Live: -1}, copied: damaged, partial: true, trace: true, stopped: true, unwraps: nettrace.ErrFormat},
		{name: "newer", cfg: simruntime.Config{Trace: newer, Live: -1, ExitAfterLive: true}, copied: newer, unchecked: true, noStreamError: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got bytes.Buffer
			res := copySession(t, c.cfg, c.stop, &got)
			if res.N != int64(got.Len()) || res.WriteErr != nil || (res.Unchecked != nil) != c.unchecked {
				t.Fatalf("%+v, %d bytes written", res, got.Len())
			}
			if c.partial && (!bytes.HasPrefix(c.copied, got.Bytes()) || got.Len() == 0) || !c.partial && !bytes.Equal(got.Bytes(), c.copied) {
				t.Fatalf("copied %d bytes, not what was sent (%d)", got.Len(), len(c.copied))
			}
			if c.noStreamError {
				if res.Err != nil {
					t.Fatalf("error %v", res.Err)
				}
				return
			}
			var se *StreamError
			var ce *nettrace.CheckError
			if !errors.As(res.Err, &se) || se.Trace != c.trace || se.Stopped != c.stopped || !errors.Is(se, c.unwraps) || !errors.As(se, &ce) || ce.Offset != se.Offset {
				t.Fatalf("error %#v (%v), want a StreamError with Trace %v, Stopped %v, wrapping %v", res.Err, res.Err, c.trace, c.stopped, c.unwraps)
			}
			if c.name == "damaged" && se.Offset != int64(live) {
				t.Errorf("fault at %d, want %d", se.Offset, live)
			}
			t.Log(se)
		})
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

// TestCopyWriteError: a failed write ends the copy with WriteErr.
func TestCopyWriteError(t *testing.T) {
	data, live := realStream(t)
	res := copySession(t, simruntime.Config{Trace: data, Live: live}, false, failingWriter{})
	if res.WriteErr == nil || res.WriteErr.Error() != "disk full" || res.N != 0 || res.Err != nil {
		t.Fatalf("%+v", res)
	}
}
