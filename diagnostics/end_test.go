package diagnostics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/internal/simruntime"
)

// TestSteps: the first interrupt ends Stop, the second Quit; after
// Finishing the first ends Quit; Release ends both.
func TestSteps(t *testing.T) {
	wait := func(c context.Context, what string) {
		t.Helper()
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s not done", what)
		}
	}
	ch := make(chan os.Signal, 1)
	s := NewSteps(ch)
	if s.Stop.Err() != nil || s.Quit.Err() != nil {
		t.Fatal("done before any interrupt")
	}
	ch <- os.Interrupt
	wait(s.Stop, "Stop")
	time.Sleep(10 * time.Millisecond)
	if s.Quit.Err() != nil {
		t.Fatal("the first interrupt quit")
	}
	ch <- os.Interrupt
	wait(s.Quit, "Quit")
	s.Release()

	s = NewSteps(ch)
	s.Finishing()
	ch <- os.Interrupt
	wait(s.Quit, "Quit after Finishing")
	if s.Stop.Err() != nil {
		t.Error("an interrupt after Finishing asked to stop, not to quit")
	}
	s.Release()

	s = NewSteps(nil)
	s.Release()
	if s.Stop.Err() == nil || s.Quit.Err() == nil {
		t.Error("Release left the steps running")
	}
}

// TestEndOn: stop sends StopTracing (after stopping), and the stream goes
// on to its end with the rundown; quit during the drain closes the session
// at once; a stream that ends on its own is neither stopped nor quit.
func TestEndOn(t *testing.T) {
	data, live := realStream(t)
	start := func(cfg simruntime.Config) (*simruntime.Server, *Session) {
		sim, cl := startSim(t, cfg)
		s, err := cl.StartSession(ctx(t), SessionConfig{Providers: []Provider{{Name: RuntimeProvider}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return sim, s
	}
	stopTracing := func(sim *simruntime.Server) bool {
		for _, r := range sim.Requests() {
			if r.Set == 2 && r.ID == 1 {
				return true
			}
		}
		return false
	}

	t.Run("stop", func(t *testing.T) {
		sim, s := start(simruntime.Config{Trace: data, Live: live})
		stop, cancel := context.WithCancel(context.Background())
		stopping := false
		e := s.EndOn(stop, context.Background(), 10*time.Second, func() { stopping = true })
		cancel()
		var got bytes.Buffer
		res := s.Copy(&got)
		e.Release()
		if res.Err != nil || !bytes.Equal(got.Bytes(), data) || !e.Stopped || e.StopErr != nil || e.Quit || !stopping || !stopTracing(sim) {
			t.Fatalf("%+v, %d bytes of %d; ending %+v, stopping called %v", res, got.Len(), len(data), e, stopping)
		}
	})
	t.Run("a rundown longer than sending the stop may take", func(t *testing.T) {
		// The runtime answers StopTracing after the rundown: the answer
		// is bounded by the drain, not by the command's timeout.
		defer func(d time.Duration) { stopCommandTimeout = d }(stopCommandTimeout)
		stopCommandTimeout = 100 * time.Millisecond
		_, s := start(simruntime.Config{Stream: func(_ *simruntime.Collect, w io.Writer, stop, closed <-chan struct{}) {
			w.Write(data[:live])
			select {
			case <-stop:
			case <-closed:
				return
			}
			time.Sleep(400 * time.Millisecond) // the rundown
			w.Write(data[live:])
		}})
		stop, cancel := context.WithCancel(context.Background())
		e := s.EndOn(stop, context.Background(), 10*time.Second, nil)
		cancel()
		var got bytes.Buffer
		res := s.Copy(&got)
		e.Release()
		if res.Err != nil || !bytes.Equal(got.Bytes(), data) || !e.Stopped || e.StopErr != nil {
			t.Fatalf("%+v, %d bytes of %d; ending %+v", res, got.Len(), len(data), e)
		}
	})
	t.Run("quit during the drain", func(t *testing.T) {
		_, s := start(simruntime.Config{Trace: data, Live: live, StallAfterStop: true})
		stop, cancelStop := context.WithCancel(context.Background())
		quit, cancelQuit := context.WithCancel(context.Background())
		e := s.EndOn(stop, quit, time.Minute, func() { time.AfterFunc(50*time.Millisecond, cancelQuit) })
		cancelStop()
		begin := time.Now()
		var got bytes.Buffer
		res := s.Copy(&got)
		e.Release()
		if !e.Stopped || !e.Quit || res.Err == nil || errors.Is(res.Err, ErrDrainTimeout) || time.Since(begin) > 10*time.Second {
			t.Fatalf("%+v; ending %+v after %v", res, e, time.Since(begin))
		}
	})
	t.Run("the stream ends", func(t *testing.T) {
		sim, s := start(simruntime.Config{Trace: data[:live], Live: -1, ExitAfterLive: true})
		e := s.EndOn(context.Background(), context.Background(), time.Minute, nil)
		res := s.Copy(&bytes.Buffer{})
		e.Release()
		if e.Stopped || e.Quit || e.StopErr != nil || stopTracing(sim) || res.N != int64(live) {
			t.Fatalf("%+v; ending %+v", res, e)
		}
	})
}

// TestConfigs: the watch and collect sessions, and what a Session says
// of itself.
func TestConfigs(t *testing.T) {
	w := WatchConfig("My-Source", "microsoft-windows-dotnetruntime")
	if len(w.Providers) != 2 || w.Providers[0].Name != RuntimeProvider || w.Providers[0].Keywords != cpuSamplingRuntimeKeywords ||
		w.Providers[0].Level != LevelInformational || w.Providers[1] != (Provider{Name: "My-Source", Keywords: ^uint64(0), Level: LevelVerbose}) ||
		!w.NoStacks || w.BufferMB != 64 {
		t.Errorf("WatchConfig: %+v", w)
	}
	// dotnet-counters' session: keywords 0 at Informational, so that an
	// EventSource's other events stay off.
	if c := CountersConfig(2, "System.Runtime", "My.Source"); len(c.Providers) != 2 ||
		c.Providers[1] != (Provider{Name: "My.Source", Keywords: 0, Level: LevelInformational, Args: "EventCounterIntervalSec=2"}) ||
		!c.NoRundown || !c.NoStacks {
		t.Errorf("CountersConfig: %+v", c)
	}
	cpu, _ := Profile("cpu-sampling")
	gc, _ := Profile("gc")
	mine, _ := ParseProviders("My-Source:0x1:4")
	// A provider of the profile's in the list too: the list's settings,
	// in the profile's place (the runtime takes a name's first entry).
	verbose, _ := ParseProviders("microsoft-windows-dotnetruntime:0x1:5")
	gcVerbose := slices.Clone(gc.Providers)
	gcVerbose[slices.IndexFunc(gcVerbose, func(p Provider) bool { return p.Name == RuntimeProvider })] = verbose[0]
	for _, c := range []struct {
		profile, providers string
		want               []Provider
		noStacks           bool
	}{
		{"", "", cpu.Providers, false},
		{"gc", "", gc.Providers, true},
		{"", "My-Source:0x1:4", mine, false},
		{"gc", "My-Source:0x1:4", append(gc.Providers, mine...), true},
		{"gc", "microsoft-windows-dotnetruntime:0x1:5,My-Source:0x1:4", append(gcVerbose, mine...), true},
	} {
		got, err := CollectConfig(c.profile, c.providers)
		if err != nil || len(got.Providers) != len(c.want) || got.NoStacks != c.noStacks {
			t.Errorf("CollectConfig(%q, %q) = %+v, %v", c.profile, c.providers, got, err)
			continue
		}
		for i := range c.want {
			if got.Providers[i].String() != c.want[i].String() {
				t.Errorf("CollectConfig(%q, %q): provider %d is %v, want %v", c.profile, c.providers, i, got.Providers[i], c.want[i])
			}
		}
	}
	if _, err := CollectConfig("gcc", ""); err == nil || !strings.Contains(err.Error(), `unknown profile "gcc"`) {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := CollectConfig("", "::"); err == nil {
		t.Error("a bad provider list is no error")
	}
	s := &Session{ID: 1, Version: 2, Refused: []string{"CollectTracing3"}, Approximations: []string{"stacks are collected"}}
	if got, want := s.String(), "session 0x1 started with CollectTracing2 (the runtime does not know CollectTracing3: stacks are collected)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got, want := (&Session{ID: 0x2a, Version: 1}).String(), "session 0x2a started with CollectTracing"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
