package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/clrgo/clrevents/diagnostics"
	"github.com/clrgo/clrevents/profile"
	"github.com/clrgo/clrevents/symbols"
	"github.com/clrgo/clrevents/trace"
)

// ErrBusy is returned when a process already has a window running.
var ErrBusy = errors.New("a profile or trace window is already running for this process")

// ErrNotMonitored is returned for a process the monitor does not list.
var ErrNotMonitored = errors.New("no such process monitored")

// ErrNotAttached is returned for a process the monitor lists without a
// monitoring session running: still attaching, failed to attach (the
// error says why; it is tried again after a back-off), or detached. The
// error names the state.
var ErrNotAttached = errors.New("a window needs the process attached")

// windowConfig is the session of a profile window of kind k: its stacks,
// without a rundown (the process's code map names the frames), and the
// runtime's JIT and loader events at Verbose, which name the methods
// compiled during the window. Those reach the code map through the
// monitoring session or the session that names compiled methods too, but
// the runtime writes each session's events on its own schedule (about
// every 100 ms, and a session's all at its stop): a method compiled near
// the window's end would be ?!? if the window waited for another
// session's events.
func windowConfig(k profile.Kind) diagnostics.SessionConfig {
	c := diagnostics.SessionConfig{NoRundown: true, BufferMB: 64}
	const code = diagnostics.KeywordJit | diagnostics.KeywordLoader
	switch k {
	case profile.CPU:
		c.Providers = []diagnostics.Provider{
			{Name: diagnostics.SampleProfilerName, Level: diagnostics.LevelVerbose},
			{Name: diagnostics.RuntimeProvider, Keywords: code, Level: diagnostics.LevelVerbose},
		}
	case profile.Alloc:
		c.Providers = []diagnostics.Provider{{Name: diagnostics.RuntimeProvider, Keywords: diagnostics.KeywordGC | code, Level: diagnostics.LevelVerbose}}
	case profile.Contention:
		// At Verbose for the names: the contention keyword adds nothing
		// there that a contention profile reads.
		c.Providers = []diagnostics.Provider{{Name: diagnostics.RuntimeProvider, Keywords: diagnostics.KeywordContention | code, Level: diagnostics.LevelVerbose}}
	}
	return c
}

// acquire takes process pid's window slot: release it when done.
func (m *Monitor) acquire(pid int) (*proc, error) {
	p, err := m.attached(pid)
	if err != nil {
		return nil, err
	}
	if !p.window.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("process %d: %w", pid, ErrBusy)
	}
	return p, nil
}

// Profile records process pid for d and writes the profile of kind k
// (CPU, Alloc or Contention) to w as gzipped pprof. The window is a
// session of its own, without a rundown: its stacks resolve through the
// process's code map, primed at attach, kept current by the monitoring
// session and fed the window's own method loads. It returns
// ErrNotMonitored, ErrNotAttached (the process is listed in another state
// than attached), ErrBusy (a window is running), or the session's error;
// ctx ends the window early. A window whose stream
// is cut short by the process's exit is the profile of what was recorded,
// its duration the time recorded, and no error; one cut short while the
// process still answers is an error.
func (m *Monitor) Profile(ctx context.Context, pid int, k profile.Kind, d time.Duration, w io.Writer) error {
	if k != profile.CPU && k != profile.Alloc && k != profile.Contention {
		return fmt.Errorf("monitor: no %v profile", k)
	}
	p, err := m.acquire(pid)
	if err != nil {
		return err
	}
	defer p.window.Store(false)
	// Every event of the session is the process's: no filter by PID,
	// which the events give as the runtime sees it (a process in a
	// container knows itself by its namespace's PID, 1 for the
	// container's own program, not pid, its host's).
	o := profile.Options{Kind: k, Map: p.sym}
	var b *profile.Builder
	start := time.Now()
	err = m.readSession(ctx, p, windowConfig(k), d, nil, func(r *trace.Reader, e *trace.Event) {
		if b == nil {
			info := r.Info()
			b = profile.NewBuilder(o, info.SyncTimestamp, info.ClockFrequency)
		}
		// The window's own method loads (windowConfig) go to the
		// process's code map, which the Builder resolves through.
		p.addCode(r, e)
		b.Add(e) // an event that does not decode is left out
	})
	if err != nil {
		if b == nil || !errors.Is(err, io.ErrUnexpectedEOF) || !m.exited(p) {
			// Nothing recorded, a failure that is no cut, or a stream
			// cut short while the process still answers: a failure.
			m.errs[stageWindow].Add(1)
			return procErr(pid, err)
		}
		// The stream was cut short by the process's exit: what was
		// recorded is the profile, its duration the time recorded. A
		// process that exits is no failure of the monitor's.
		m.logf("process %d: the %v window ended after %v, its stream cut short by the process's exit: %v", pid, k, time.Since(start).Round(time.Millisecond), err)
	}
	// The code map is the monitoring session's too: resolve and write
	// under its lock, to memory, and send after.
	var buf bytes.Buffer
	p.symMu.Lock()
	err = writeWindow(&buf, b, o, start)
	p.symMu.Unlock()
	if err != nil {
		return procErr(pid, err)
	}
	_, err = buf.WriteTo(w)
	return err
}

// writeWindow finishes a window's profile and writes it as pprof; a window
// without samples (an idle process) is an empty profile, not an error.
func writeWindow(w io.Writer, b *profile.Builder, o profile.Options, start time.Time) error {
	var prof *profile.Profile
	if b != nil {
		var err error
		prof, err = b.Finish()
		if err != nil && !errors.Is(err, profile.ErrNoEvents) {
			return err
		}
	}
	if prof == nil {
		prof = &profile.Profile{Kind: o.Kind, SampleTypes: o.Kind.SampleTypes(), Map: o.Map, Stacks: symbols.NewStacks()}
		if o.Kind == profile.CPU {
			// A window's CPU samples are the SampleProfiler's: thread
			// time, as a window with samples names it.
			prof.SampleTypes = profile.ThreadTimeSampleTypes()
		}
	}
	prof.StartNanos, prof.DurationNanos = start.UnixNano(), time.Since(start).Nanoseconds()
	return prof.WritePprof(w)
}

// Trace records process pid for d with the session that clrtrace collect
// starts for profileName and providers (diagnostics.CollectConfig: the
// named profile, else cpu-sampling) and writes its .nettrace stream to w as
// it comes, rundown included. It returns ErrNotMonitored, ErrNotAttached,
// ErrBusy, a configuration error, or the copy's. A window whose stream is cut short
// by the process's exit, after some of it was written, is what was
// recorded and no error, as for Profile: w then holds the stream up to
// where the process stopped, without the end-of-stream tag (a reader
// gives the events recorded, then reports the trace cut short). A stream
// that ends early while the process still answers is an error.
func (m *Monitor) Trace(ctx context.Context, pid int, profileName, providers string, d time.Duration, w io.Writer) error {
	cfg, err := diagnostics.CollectConfig(profileName, providers)
	if err != nil {
		return err
	}
	p, err := m.acquire(pid)
	if err != nil {
		return err
	}
	defer p.window.Store(false)
	c, cancel := context.WithTimeout(ctx, commandTimeout)
	s, err := p.cl.StartSession(c, cfg)
	cancel()
	if err != nil {
		m.errs[stageWindow].Add(1)
		return procErr(pid, err)
	}
	defer s.Close()
	start := time.Now()
	cancelStop := m.stopAfter(ctx, s, d)
	res := s.Copy(w)
	cancelStop()
	switch {
	case res.WriteErr != nil:
		return fmt.Errorf("process %d: writing the trace after %d bytes: %w", pid, res.N, res.WriteErr)
	case res.Err != nil && res.N > 0 && m.exited(p):
		// The stream was cut short by the process's exit: what was
		// written is the trace, and no failure of the monitor's.
		m.logf("process %d: the trace window ended after %v and %d bytes, its stream cut short by the process's exit: %v", pid, time.Since(start).Round(time.Millisecond), res.N, res.Err)
	case res.Err != nil:
		m.errs[stageWindow].Add(1)
		return fmt.Errorf("process %d: the trace window's stream failed after %d bytes: %w", pid, res.N, res.Err)
	}
	return nil
}

// procErr names process pid in err, unless err begins with it (a
// session's errors name the process and the session).
func procErr(pid int, err error) error {
	if strings.HasPrefix(err.Error(), fmt.Sprintf("process %d ", pid)) || strings.HasPrefix(err.Error(), fmt.Sprintf("process %d:", pid)) {
		return err
	}
	return fmt.Errorf("process %d: %w", pid, err)
}
