package monitor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	gprofile "github.com/google/pprof/profile"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/diagnostics"
	"github.com/clrgo/clrevents/profile"
	"github.com/clrgo/clrevents/symbols"
	"github.com/clrgo/clrevents/trace"
)

// ErrBusy is returned when a process already has a window running.
var ErrBusy = errors.New("a profile or trace window is already running for this process")

// ErrNotMonitored is returned for a process the monitor has no session on.
var ErrNotMonitored = errors.New("no such process monitored")

// windowConfig is the session of a profile window of kind k: its stacks,
// without a rundown (the process's code map names the frames).
func windowConfig(k profile.Kind) diagnostics.SessionConfig {
	c := diagnostics.SessionConfig{NoRundown: true, BufferMB: 64}
	switch k {
	case profile.CPU:
		c.Providers = []diagnostics.Provider{{Name: diagnostics.SampleProfilerName, Level: diagnostics.LevelVerbose}}
	case profile.Alloc:
		c.Providers = []diagnostics.Provider{{Name: diagnostics.RuntimeProvider, Keywords: diagnostics.KeywordGC, Level: diagnostics.LevelVerbose}}
	case profile.Contention:
		c.Providers = []diagnostics.Provider{{Name: diagnostics.RuntimeProvider, Keywords: diagnostics.KeywordContention, Level: diagnostics.LevelInformational}}
	}
	return c
}

// acquire takes process pid's window slot: release it when done.
func (m *Monitor) acquire(pid int) (*proc, error) {
	p := m.attached(pid)
	if p == nil {
		return nil, fmt.Errorf("process %d: %w", pid, ErrNotMonitored)
	}
	if !p.window.CompareAndSwap(false, true) {
		return nil, fmt.Errorf("process %d: %w", pid, ErrBusy)
	}
	return p, nil
}

// Profile records process pid for d and writes the profile of kind k
// (CPU, Alloc or Contention) to w as gzipped pprof. The window is a
// session of its own, without a rundown: its stacks resolve through the
// process's code map, primed at attach and kept current by the monitoring
// session. It returns ErrNotMonitored, ErrBusy (a window is running), or
// the session's error; ctx ends the window early.
func (m *Monitor) Profile(ctx context.Context, pid int, k profile.Kind, d time.Duration, w io.Writer) error {
	if k != profile.CPU && k != profile.Alloc && k != profile.Contention {
		return fmt.Errorf("monitor: no %v profile", k)
	}
	p, err := m.acquire(pid)
	if err != nil {
		return err
	}
	defer p.window.Store(false)
	b := newBuilder(k, int64(pid))
	start := time.Now()
	err = m.readSession(ctx, p, windowConfig(k), d, b.add)
	if err != nil {
		m.errs[stageWindow].Add(1)
		return fmt.Errorf("process %d: %w", pid, err)
	}
	p.symMu.Lock()
	prof := b.pprof(p.sym, start, time.Since(start))
	p.symMu.Unlock()
	return prof.Write(w)
}

// Trace records process pid for d with the session that clrtrace collect
// starts for profileName and providers (diagnostics.CollectConfig: the
// named profile, else cpu-sampling) and writes its .nettrace stream to w as
// it comes, rundown included. It returns ErrNotMonitored, ErrBusy, a
// configuration error, or the copy's.
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
		return fmt.Errorf("process %d: %w", pid, err)
	}
	defer s.Close()
	cancelStop := m.stopAfter(ctx, s, d)
	res := s.Copy(w)
	cancelStop()
	switch {
	case res.WriteErr != nil:
		return fmt.Errorf("process %d: writing the trace after %d bytes: %w", pid, res.N, res.WriteErr)
	case res.Err != nil:
		m.errs[stageWindow].Add(1)
		return fmt.Errorf("process %d: after %d bytes: %w", pid, res.N, res.Err)
	}
	return nil
}

// builder aggregates a window's samples by stack.
type builder struct {
	kind    profile.Kind
	pid     int64
	samples map[string]*agg // by the stack's addresses
	last    map[int64]int64 // CPU: each thread's previous sample (Unix ns)
	waits   map[int64]*agg  // contention: the stack of each thread's wait
	key     []byte
}

type agg struct {
	ips    []uint64
	ts     int64 // the raw time of the first sample, to resolve at
	count  int64
	value  int64
	thread int64
}

func newBuilder(k profile.Kind, pid int64) *builder {
	return &builder{kind: k, pid: pid, samples: map[string]*agg{}, last: map[int64]int64{}, waits: map[int64]*agg{}}
}

// sampleInterval is the SampleProfiler's period, what a thread's first
// sample counts.
const sampleInterval = int64(time.Millisecond)

func (b *builder) stack(e *trace.Event) *agg {
	ips := e.Stack()
	b.key = b.key[:0]
	b.key = binary.LittleEndian.AppendUint64(b.key, uint64(e.ThreadID()))
	for _, ip := range ips {
		b.key = binary.LittleEndian.AppendUint64(b.key, ip)
	}
	a := b.samples[string(b.key)]
	if a == nil {
		a = &agg{ips: append([]uint64(nil), ips...), ts: e.Timestamp(), thread: e.ThreadID()}
		b.samples[string(b.key)] = a
	}
	return a
}

func (b *builder) add(e *trace.Event) {
	if e.ProcessID() >= 0 && e.ProcessID() != b.pid {
		return
	}
	switch b.kind {
	case profile.CPU:
		if e.Provider() != diagnostics.SampleProfilerName || e.Name() != "ThreadSample" || len(e.Stack()) == 0 {
			return
		}
		now := e.Time().UnixNano()
		tid := e.ThreadID()
		v := sampleInterval
		if prev, ok := b.last[tid]; ok && now > prev {
			v = min(now-prev, 10*sampleInterval) // a thread not sampled for long was not running
		}
		b.last[tid] = now
		a := b.stack(e)
		a.count++
		a.value += v
	case profile.Alloc:
		if e.Provider() != diagnostics.RuntimeProvider || e.ID() != 10 {
			return
		}
		ev, err := e.Decode()
		if err != nil {
			return
		}
		t, ok := ev.(clrevents.GCAllocationTickEvent)
		if !ok {
			return
		}
		f := t.GCAllocationTickFields()
		n := int64(f.AllocationAmount)
		if f.HasAllocationAmount64 {
			n = int64(f.AllocationAmount64)
		}
		a := b.stack(e)
		a.count++
		a.value += n
	case profile.Contention:
		if e.Provider() != diagnostics.RuntimeProvider {
			return
		}
		ev, err := e.Decode()
		if err != nil {
			return
		}
		c, ok := ev.(clrevents.ContentionEvent)
		if !ok {
			return
		}
		f := c.ContentionFields()
		tid := e.ThreadID()
		switch f.Kind {
		case clrevents.KindContentionStart:
			if len(e.Stack()) == 0 {
				return
			}
			a := b.stack(e)
			a.count++
			b.waits[tid] = a
			b.last[tid] = e.Time().UnixNano()
		case clrevents.KindContentionStop:
			a := b.waits[tid]
			if a == nil {
				return
			}
			delete(b.waits, tid)
			if f.HasDurationNs {
				a.value += int64(f.DurationNs)
			} else if d := e.Time().UnixNano() - b.last[tid]; d > 0 {
				a.value += d
			}
		}
	}
}

// pprof resolves the stacks through sym and builds the profile.
func (b *builder) pprof(sym *symbols.Map, start time.Time, d time.Duration) *gprofile.Profile {
	types := b.kind.SampleTypes()
	p := &gprofile.Profile{TimeNanos: start.UnixNano(), DurationNanos: d.Nanoseconds()}
	for _, t := range types {
		p.SampleType = append(p.SampleType, &gprofile.ValueType{Type: t.Type, Unit: t.Unit})
	}
	p.DefaultSampleType = types[len(types)-1].Type
	if b.kind == profile.CPU {
		p.PeriodType = &gprofile.ValueType{Type: "cpu", Unit: "nanoseconds"}
		p.Period = sampleInterval
	}
	locs := map[symbols.FrameID]*gprofile.Location{}
	funcs := map[string]*gprofile.Function{}
	var frames []symbols.FrameID
	for _, a := range b.samples {
		frames = sym.ResolveStack(b.pid, a.ts, a.ips, frames[:0])
		s := &gprofile.Sample{Value: []int64{a.count, a.value}, NumLabel: map[string][]int64{"thread": {a.thread}}, NumUnit: map[string][]string{"thread": {"thread"}}}
		// Leaf first, as pprof lists a sample's locations.
		for i := len(frames) - 1; i >= 0; i-- {
			id := frames[i]
			loc := locs[id]
			if loc == nil {
				f := sym.Frame(id)
				name := f.String()
				fn := funcs[name]
				if fn == nil {
					fn = &gprofile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name}
					funcs[name] = fn
					p.Function = append(p.Function, fn)
				}
				loc = &gprofile.Location{ID: uint64(len(locs) + 1), Address: f.Address, Line: []gprofile.Line{{Function: fn}}}
				locs[id] = loc
				p.Location = append(p.Location, loc)
			}
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}
