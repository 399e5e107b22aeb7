package profile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/trace"
)

const coreclr30 = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"

// TestBuildTruncated: the first 2 MB of the .NET Core 3.0 trace give a CPU
// profile of the samples in them, with an error that says the trace was
// cut short; the whole trace's profile has more.
func TestBuildTruncated(t *testing.T) {
	data := tracetest.Bytes(t, coreclr30)
	whole := buildBytes(t, data, CPU)
	cut := data[:2<<20]
	r, err := trace.NewReader(bytes.NewReader(cut), trace.WithName("cut.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(r, Options{Kind: CPU})
	if p == nil || len(p.Samples) == 0 {
		t.Fatalf("no profile from the first 2 MB: %v", err)
	}
	if !errors.Is(err, trace.ErrDamaged) || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), "cut.nettrace: ") {
		t.Errorf("error %v: want the cut named", err)
	}
	if p.Events >= whole.Events || p.Events < whole.Events/4 {
		t.Errorf("%d samples from the first 2 MB, %d from the whole trace", p.Events, whole.Events)
	}
}

// TestBuildUndecoded: a method event whose last string lost its
// terminator does not decode; the profile is built without it, and the
// error names the event and its offset.
func TestBuildUndecoded(t *testing.T) {
	data := tracetest.Bytes(t, coreclr30)
	r, err := trace.NewReader(bytes.NewReader(data), trace.WithOrder(trace.FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	var at int64 = -1
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal("no MethodLoadVerbose event")
		}
		if strings.HasPrefix(e.Name(), "MethodLoadVerbose") {
			// The payload ends with MethodSignature's terminator, then
			// ClrInstanceID (V1): overwrite the terminator.
			p := e.Payload()
			i := bytes.Index(data[e.Offset():], p)
			if i < 0 {
				t.Fatal("payload not found")
			}
			end := int(e.Offset()) + i + len(p) - 2 // ClrInstanceID
			data[end-2], data[end-1] = 'x', 0
			at = e.Offset()
			break
		}
	}
	r, _ = trace.NewReader(bytes.NewReader(data), trace.WithName("bad.nettrace"))
	p, err := Build(r, Options{Kind: CPU})
	if p == nil || len(p.Samples) == 0 {
		t.Fatalf("no profile: %v", err)
	}
	if !errors.Is(err, trace.ErrUndecoded) || !strings.Contains(err.Error(), "bad.nettrace: event at offset "+strconv.FormatInt(at, 10)) ||
		!strings.Contains(err.Error(), "MethodLoadVerbose") {
		t.Errorf("error %v: want the event at %d named", err, at)
	}
}

func buildBytes(t *testing.T, data []byte, k Kind) *Profile {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(r, Options{Kind: k})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNotCredible: events whose values no runtime writes (as a damaged
// trace's garbled payloads hold them) are left out of the profile and
// named in Build's error (with the events that do not decode): an
// allocation tick of more bytes than an address space (2^63+5, which as an
// int64 is negative, and 2^49), one whose AllocationAmount is not
// AllocationAmount64's low 32 bits, one of the small object heap of a
// TiB, and,
// read in file order, a ContentionStop before its thread's
// ContentionStart. The credible events beside them make the profile, and
// no value in it is negative.
func TestNotCredible(t *testing.T) {
	runtime := clrevents.ProviderRuntime.GUID()
	clr := func(info *clrevents.EventInfo, ts int64, payload []byte) []byte {
		return etltest.Event(runtime, info.ID, info.Version, uint8(info.Opcode), uint16(info.Task), 5, 10, ts, payload)
	}
	tickOf := func(ts int64, lo uint32, n uint64, kind clrevents.GCAllocationKind) []byte {
		return clr((*clrevents.GCAllocationTickV3)(nil).Info(), ts, (&clrevents.GCAllocationTickV3{
			AllocationAmount: lo, AllocationAmount64: n, AllocationKind: kind, ClrInstanceID: 1}).Encode(nil, 8))
	}
	tick := func(ts int64, n uint64) []byte { return tickOf(ts, uint32(n), n, clrevents.GCAllocationKindSmall) }
	start := func(ts int64) []byte {
		return clr((*clrevents.ContentionStartV1)(nil).Info(), ts, (&clrevents.ContentionStartV1{ClrInstanceID: 1}).Encode(nil, 8))
	}
	stop := func(ts int64) []byte {
		return clr((*clrevents.ContentionStop)(nil).Info(), ts, (&clrevents.ContentionStop{ClrInstanceID: 1}).Encode(nil, 8))
	}
	real := tracetest.Bytes(t, "../testdata/traces/gcevents.etl.zip")
	for _, c := range []struct {
		kind   Kind
		events [][]byte
		want   []int64 // the profile's values, summed over its samples
	}{
		{Alloc, [][]byte{tick(1000, 1<<63+5), tick(2000, 4096), tick(3000, 1<<49), tick(4000, 100),
			tickOf(4500, 0, 8<<30, clrevents.GCAllocationKindLarge),         // 8 GiB of large objects: credible
			tickOf(5000, 100_000, 200_000, clrevents.GCAllocationKindSmall), // the two amounts disagree
			tick(6000, 1<<40+100_000),                                       // a small object heap tick of a TiB
		}, []int64{3, 4196 + 8<<30}},
		{Contention, [][]byte{start(5000), stop(1000), start(6000), stop(9000)}, []int64{1}},
	} {
		log, err := etltest.Log(real, c.events...)
		if err != nil {
			t.Fatal(err)
		}
		r, err := trace.NewReader(bytes.NewReader(log), trace.WithOrder(trace.FileOrder), trace.WithName("bad.etl"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := Build(r, Options{Kind: c.kind})
		if p == nil {
			t.Fatalf("%v: no profile: %v", c.kind, err)
		}
		if !errors.Is(err, ErrNotCredible) || !errors.Is(err, trace.ErrUndecoded) || !strings.Contains(err.Error(), "bad.etl: event at offset ") {
			t.Errorf("%v: error %v, want ErrNotCredible with the events named", c.kind, err)
		}
		got := make([]int64, len(c.want))
		for _, s := range p.Samples {
			for i := range got {
				if s.Values[i] < 0 {
					t.Errorf("%v: sample value %d", c.kind, s.Values[i])
				}
				got[i] += s.Values[i]
			}
		}
		if c.kind == Contention {
			// The wait from 6000 to 9000: some nanoseconds.
			if got[0] != 1 || len(p.Samples[0].Values) < 2 || p.Samples[0].Values[1] <= 0 {
				t.Errorf("contention: %d waits, %v", got[0], p.Samples)
			}
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: values %v, want %v", c.kind, got, c.want)
		}
	}
}

// TestAddSat: sums held at the int64 range.
func TestAddSat(t *testing.T) {
	for _, c := range []struct{ a, b, want int64 }{
		{1, 2, 3},
		{math.MaxInt64 - 1, 5, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64},
		{math.MinInt64 + 1, -5, math.MinInt64},
		{-3, 5, 2},
		{math.MaxInt64, math.MinInt64, -1},
	} {
		if got := addSat(c.a, c.b); got != c.want {
			t.Errorf("addSat(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// TestSampleBeforeItsThreadsLast: in the .NET Core 2.0 cut (read in file
// order, as a V1/V2 trace always is), one SampleProfiler sample is given
// a time just before the sample of its thread that precedes it, as a
// garbled timestamp does where the reader cannot tell (the V1–V3 reader
// now leaves such an event out itself: buildCut moves the time after
// it). The time from that thread's previous sample would be negative: the
// sample is left out and named (ErrNotCredible), and no value of the
// profile is negative. The intact cut builds without error.
func TestSampleBeforeItsThreadsLast(t *testing.T) {
	data, samples := cutSamples(t)
	// Two samples of one thread, the second well after the first.
	last := map[int64]cutSample{}
	var victim, before cutSample
	for _, s := range samples {
		if p, ok := last[s.tid]; ok && s.ts-p.ts > 1000 {
			victim, before = s, p
			break
		}
		last[s.tid] = s
	}
	if victim.off == 0 {
		t.Fatal("no thread with two samples")
	}
	for _, c := range []struct {
		moved map[int64]int64
		bad   bool
	}{{nil, false}, {map[int64]int64{victim.off: before.ts - 1}, true}} {
		p, err := buildCut(t, data, c.moved)
		if c.bad != errors.Is(err, ErrNotCredible) || c.bad && !strings.Contains(err.Error(), "t.netperf: event at offset "+strconv.FormatInt(victim.off, 10)) {
			t.Errorf("garbled %v: error %v", c.bad, err)
		}
		for _, s := range p.Samples {
			if s.Values[0] < 0 {
				t.Errorf("garbled %v: a sample's value is %d", c.bad, s.Values[0])
			}
		}
	}
}

// TestSampleGarbledForward: in the .NET Core 2.0 cut, one SampleProfiler
// sample in the middle of its thread's run is moved an hour forward, as a
// garbled timestamp does where the reader cannot tell (see
// TestSampleBeforeItsThreadsLast). The thread's next sample is then
// earlier than it and is left out; the one after, in order with that one,
// shows the moved sample to be the odd one out, which is taken back: no
// sample holds an hour, and the thread keeps all its samples but those
// two (a thread's samples after the moved one were all left out before).
func TestSampleGarbledForward(t *testing.T) {
	data, samples := cutSamples(t)
	// The thread with the most samples, and its middle one.
	byThread := map[int64][]cutSample{}
	for _, s := range samples {
		byThread[s.tid] = append(byThread[s.tid], s)
	}
	var run []cutSample
	for _, o := range byThread {
		if len(o) > len(run) {
			run = o
		}
	}
	if len(run) < 10 {
		t.Fatalf("no thread with 10 samples: the most is %d", len(run))
	}
	victim := run[len(run)/2]
	events := func(moved map[int64]int64) int {
		bad := moved != nil
		p, err := buildCut(t, data, moved)
		if bad != errors.Is(err, ErrNotCredible) {
			t.Errorf("garbled %v: error %v", bad, err)
		}
		if bad && strings.Count(err.Error(), "t.netperf: event at offset ") != 2 {
			t.Errorf("error %v, want the two samples named", err)
		}
		for _, s := range p.Samples {
			if s.Values[1] >= int64(time.Hour) {
				t.Errorf("garbled %v: a sample of %v", bad, time.Duration(s.Values[1]))
			}
		}
		return p.Events
	}
	// The clock counts nanoseconds.
	whole, garbled := events(nil), events(map[int64]int64{victim.off: victim.ts + int64(time.Hour)})
	if garbled != whole-2 {
		t.Errorf("%d samples with the moved one, %d without: want 2 fewer", garbled, whole)
	}
}

// cutSample is a SampleProfiler sample of the .NET Core 2.0 cut: its
// thread, offset and raw timestamp.
type cutSample struct{ tid, off, ts int64 }

// cutSamples returns the .NET Core 2.0 cut and its samples in file order
// (the order a V1/V2 trace is always read in).
func cutSamples(t *testing.T) ([]byte, []cutSample) {
	t.Helper()
	data := tracetest.Bytes(t, "../testdata/traces/eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip")
	r, err := trace.NewReader(bytes.NewReader(data), trace.WithOrder(trace.FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	var out []cutSample
	for {
		e, err := r.Next()
		if err == io.EOF {
			return data, out
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Provider() == clrevents.ProviderSampleProfiler.String() && e.ID() == 0 { // ThreadSample
			out = append(out, cutSample{e.ThreadID(), e.Offset(), e.Timestamp()})
		}
	}
}

// buildCut builds the CPU profile of data, a copy of the cut, named
// t.netperf in errors, as Build does, with the times of the samples at
// the offsets in moved replaced: as a reader that could not tell them
// garbled would deliver them. It fails the test without a profile.
func buildCut(t *testing.T, data []byte, moved map[int64]int64) (*Profile, error) {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(data), trace.WithOrder(trace.FileOrder), trace.WithName("t.netperf"))
	if err != nil {
		t.Fatal(err)
	}
	info := r.Info()
	b := NewBuilder(Options{Kind: CPU}, info.SyncTimestamp, info.ClockFrequency)
	var undecoded trace.DecodeErrors
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ts, ok := moved[e.Offset()]; ok {
			// Add's way with a ThreadSample, at the moved time.
			b.span(ts)
			err = b.cpu(e.ProcessID(), e.ThreadID(), ts, clrevents.SampleProfilerSampleType(binary.LittleEndian.Uint32(e.Payload())), e.Stack(), e.StackKey())
		} else {
			err = b.Add(e)
		}
		if err != nil {
			undecoded.AddEvent(e, err)
		}
	}
	p, err := b.Finish()
	if p == nil {
		t.Fatalf("no profile: %v", err)
	}
	return p, undecoded.Err()
}
