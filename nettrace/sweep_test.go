package nettrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

// Truncation and corruption sweeps over real traces, and the memory bound
// on crafted hostile headers.
//
// By default the sweeps are sized for CI (a few seconds in all); -sweep.full
// cuts every trace at 2000 offsets and at every block boundary, and flips
// bytes 5000 times per trace.

var sweepFull = flag.Bool("sweep.full", false, "run the long truncation and corruption sweeps")

// sweepTrace is a trace for the sweeps.
type sweepTrace struct {
	name string
	data []byte
}

// sweepTraces returns the repository's traces, two synthetic V6 traces, and
// the shared fixtures when they are there.
func sweepTraces(t *testing.T) []sweepTrace {
	var out []sweepTrace
	for _, name := range []string{
		"eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip",
		"eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip",
	} {
		out = append(out, sweepTrace{name, loadTrace(t, filepath.Join(repoTraces, name))})
	}
	out = append(out, sweepTrace{"v6-compressed", buildV6(true)}, sweepTrace{"v6-plain", buildV6(false)})
	shared := []string{
		"perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip",
		"perfview/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip",
		"perfview/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip",
		"perfview/only_managed_samples.nettrace.zip",
		"pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
	}
	// Added last, so that the traces before it keep their places (the
	// sweeps seed their randomness with a trace's index).
	cut := "eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip"
	if _, err := os.Stat(sharedTraces); err != nil {
		t.Logf("shared fixtures not available (%v): sweeping only the repository's traces", err)
		return append(out, sweepTrace{cut, loadTrace(t, filepath.Join(repoTraces, cut))})
	}
	for _, name := range shared {
		out = append(out, sweepTrace{filepath.Base(name), loadTrace(t, filepath.Join(sharedTraces, name))})
	}
	return append(out, sweepTrace{cut, loadTrace(t, filepath.Join(repoTraces, cut))})
}

// sweepEvent is what the sweeps compare of one event.
type sweepEvent struct {
	off        int64
	provider   string
	id         uint16
	version    uint8
	size       int
	sum        uint64 // FNV-1a of the payload
	blockEnd   int64  // stream offset just past the block (or V1/V2 event object) it came from
	recEnd     int64  // stream offset just past the event's record
	blockStart int64  // stream offset of its block's header (V1/V2: its record)
}

// same reports whether two events are the same event of the trace: same
// offset, provider, ID, version and payload bytes.
func (e sweepEvent) same(o sweepEvent) bool {
	return e.off == o.off && e.provider == o.provider && e.id == o.id && e.version == o.version && e.size == o.size && e.sum == o.sum
}

func payloadSum(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

func (e sweepEvent) String() string {
	return fmt.Sprintf("%s/%d/v%d at %d (%d bytes, sum %x)", e.provider, e.id, e.version, e.off, e.size, e.sum)
}

func eventOf(r *Reader, ev *Event) sweepEvent {
	return sweepEvent{ev.Offset, ev.Provider, ev.ID, ev.Version, len(ev.Payload), payloadSum(ev.Payload), r.blkOff + int64(len(r.blk)), r.blkOff + int64(r.pos), r.blkHdrOff}
}

// readSweep reads a whole trace, recording its events and the offsets of
// its blocks' headers and ends. For a V1/V2 trace (.NET Core 2.0) it also
// returns where the trailer starts, else -1.
func readSweep(t *testing.T, data []byte) (events []sweepEvent, bounds []int64, trailer int64) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	add := func(off int64) {
		if !seen[off] {
			seen[off] = true
			bounds = append(bounds, off)
		}
	}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d events: %v", len(events), err)
		}
		e := eventOf(r, ev)
		events = append(events, e)
		add(r.blkHdrOff)
		add(r.blkOff)
		add(e.blockEnd)
		add(e.off)
	}
	slices.Sort(bounds)
	trailer = -1
	if r.ver <= 2 {
		trailer = r.blkHdrOff
		add(trailer)
	}
	return events, bounds, trailer
}

// cutOffsets returns n offsets spread evenly over [0, limit), every
// boundary below limit (or an even sample of maxBounds of them) with its
// neighbours, and the last few bytes of the trace.
func cutOffsets(size, limit, n int, bounds []int64, maxBounds int) []int {
	set := map[int]bool{}
	for i := range n {
		set[int(int64(limit)*int64(i)/int64(n))] = true
	}
	var in []int64
	for _, b := range bounds {
		if b < int64(limit) {
			in = append(in, b)
		}
	}
	step := 1
	if maxBounds > 0 && len(in) > maxBounds {
		step = (len(in) + maxBounds - 1) / maxBounds
	}
	for i := 0; i < len(in); i += step {
		for d := -1; d <= 1; d++ {
			set[int(in[i])+d] = true
		}
	}
	for _, d := range []int{1, 2, 5, 20} {
		set[size-d] = true
	}
	var out []int
	for c := range set {
		if c >= 0 && c < size {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// isTruncation reports whether err says the input ended early.
func isTruncation(err error) bool {
	var e *Error
	return errors.As(err, &e) && errors.Is(err, io.ErrUnexpectedEOF) && strings.Contains(err.Error(), "truncated")
}

// TestTruncationSweep cuts each trace at many offsets (spread evenly, and
// at and next to every block boundary) and checks that the reader gives
// exactly the uncut trace's events (same offset, provider, ID, version and
// payload bytes) up to the cut: every event whose record ends before it,
// the whole events of an event block the cut falls in included, then an
// error that says "truncated" (io.ErrUnexpectedEOF), never io.EOF. In
// strict mode, the events stop at the last complete block.
func TestTruncationSweep(t *testing.T) {
	start := time.Now()
	total := 0
	for _, tr := range sweepTraces(t) {
		t.Run(tr.name, func(t *testing.T) {
			full, bounds, trailer := readSweep(t, tr.data)
			// In CI, big traces are cut in their first 2 MB (and at their
			// last bytes); -sweep.full cuts them everywhere.
			limit, n, maxBounds := min(len(tr.data), 2<<20), 200, 150
			if testing.Short() {
				limit, n, maxBounds = min(len(tr.data), 512<<10), 60, 40
			}
			if *sweepFull {
				limit, n, maxBounds = len(tr.data), 2000, 0
			}
			cuts := cutOffsets(len(tr.data), limit, n, bounds, maxBounds)
			for _, cut := range cuts {
				checkCut(t, tr.data, cut, full, trailer, false)
				checkCut(t, tr.data, cut, full, trailer, true)
			}
			total += len(cuts)
			t.Logf("%d bytes, %d events, %d block boundaries: %d cuts", len(tr.data), len(full), len(bounds), len(cuts))
		})
	}
	t.Logf("%d cuts in %v", total, time.Since(start).Round(time.Millisecond))
}

func checkCut(t *testing.T, data []byte, cut int, full []sweepEvent, trailer int64, strict bool) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data[:cut:cut]))
	if err != nil {
		if !isTruncation(err) {
			t.Errorf("cut at %d: NewReader: %v, want a truncation error", cut, err)
		}
		return
	}
	r.SetStrict(strict)
	n := 0
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				// Every byte of the V1/V2 trailer is checked, so no cut
				// ends cleanly.
				t.Errorf("cut at %d (strict %v): io.EOF after %d events, want a truncation error", cut, strict, n)
			} else if !isTruncation(err) {
				t.Errorf("cut at %d (strict %v): after %d events: %v, want a truncation error", cut, strict, n, err)
			}
			if !strict {
				var de *DamageError
				if !errors.As(err, &de) || len(r.Damage()) != 1 || r.Damage()[0].Offset+r.Damage()[0].Length != int64(cut) {
					t.Errorf("cut at %d: error %v, damage %v: want one record that runs to the cut", cut, err, r.Damage())
				}
			}
			break
		}
		if n >= len(full) {
			t.Fatalf("cut at %d: event %d %v, the whole trace has %d", cut, n, eventOf(r, ev), len(full))
		}
		if got := eventOf(r, ev); !got.same(full[n]) {
			t.Fatalf("cut at %d (strict %v): event %d is %v, want %v", cut, strict, n, got, full[n])
		}
		n++
	}
	// Strict: every event of a block that ends before the cut came out
	// (allowing the 1-byte EndObject tag after a FastSerialization
	// block), and none from beyond it. Else: every event whose record
	// ends before the cut (where its block's header is whole).
	want := 0
	if strict {
		for want < len(full) && full[want].blockEnd+1 <= int64(cut) {
			want++
		}
	} else {
		for want < len(full) && full[want].recEnd <= int64(cut) {
			want++
		}
	}
	if n < want {
		t.Errorf("cut at %d (strict %v): %d events, but %d lie before the cut (next missing: %v)", cut, strict, n, want, full[n])
	}
	if strict && n > 0 && full[n-1].blockEnd > int64(cut) {
		t.Errorf("cut at %d: delivered %v from a block that ends at %d", cut, full[n-1], full[n-1].blockEnd)
	}
	if n > 0 && full[n-1].recEnd > int64(cut) {
		t.Errorf("cut at %d: delivered %v, whose record ends at %d", cut, full[n-1], full[n-1].recEnd)
	}
}

// TestCorruptionSweep flips bytes of each trace at random offsets (a
// seeded PRNG, so failures reproduce) and reads the result to the end
// under a deadline: no panic, no hang, no more events than the input can
// hold, and every error an *Error with a sentinel.
func TestCorruptionSweep(t *testing.T) {
	start := time.Now()
	total := 0
	for ti, tr := range sweepTraces(t) {
		t.Run(tr.name, func(t *testing.T) {
			data := tr.data
			flips := 300
			if testing.Short() {
				flips = 60
			}
			// Big traces are corrupted in their first 1 MB (the rest is
			// dropped: a cut is a corruption too); -sweep.full uses them
			// whole.
			if !*sweepFull {
				data = data[:min(len(data), 1<<20)]
			} else {
				flips = 5000
			}
			_, bounds := readSweepPrefix(data)
			rng := rand.New(rand.NewPCG(uint64(ti), 0x5eed))
			for i := range flips {
				bad := bytes.Clone(data)
				var at []int
				for range 1 + rng.IntN(4) {
					var p int
					if len(bounds) > 0 && rng.IntN(2) == 0 {
						// Near a block boundary, where the headers are.
						p = int(bounds[rng.IntN(len(bounds))]) + rng.IntN(48) - 8
					} else {
						p = rng.IntN(len(bad))
					}
					if p < 0 || p >= len(bad) {
						continue
					}
					switch rng.IntN(3) {
					case 0:
						bad[p] ^= 1 << rng.IntN(8)
					case 1:
						bad[p] = 0xff
					default:
						bad[p] = byte(rng.Uint32())
					}
					at = append(at, p)
				}
				readCorrupt(t, fmt.Sprintf("flip %d at %v", i, at), bad)
			}
			total += flips
		})
	}
	t.Logf("%d corrupted traces read in %v", total, time.Since(start).Round(time.Millisecond))
}

// readSweepPrefix reads a (possibly cut) trace and returns its block
// boundaries, ignoring the error at the end.
func readSweepPrefix(data []byte) ([]sweepEvent, []int64) {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil
	}
	var events []sweepEvent
	var bounds []int64
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		events = append(events, eventOf(r, ev))
		if len(bounds) == 0 || bounds[len(bounds)-1] != r.blkHdrOff {
			bounds = append(bounds, r.blkHdrOff)
		}
	}
	return events, bounds
}

// readCorrupt reads data to the end in a goroutine and fails the test if it
// panics, runs past a deadline, or yields more events than the input could
// hold (every event record takes at least one byte).
func readCorrupt(t *testing.T, what string, data []byte) {
	t.Helper()
	type result struct {
		events int
		err    error
		panic  string
	}
	done := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res.panic = fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
			done <- res
		}()
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			res.err = err
			return
		}
		var buf []byte
		for res.events <= len(data) {
			ev, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				res.err = err
				return
			}
			buf, _ = ev.Metadata.AppendJSON(buf[:0], ev.Payload)
			res.events++
		}
	}()
	select {
	case res := <-done:
		if res.panic != "" {
			t.Fatalf("%s: panic: %s", what, res.panic)
		}
		if res.events > len(data) {
			t.Fatalf("%s: more than %d events from %d bytes", what, len(data), len(data))
		}
		if res.err != nil {
			var e *Error
			if !errors.As(res.err, &e) || !errors.Is(res.err, ErrFormat) && !errors.Is(res.err, io.ErrUnexpectedEOF) && !errors.Is(res.err, ErrUnsupported) {
				t.Fatalf("%s: error %v (%T) is not an *Error with a sentinel", what, res.err, res.err)
			}
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: reader did not finish within 20s", what)
	}
}

// hostileBound is the most the reader may allocate (runtime.MemStats
// TotalAlloc growth) for the crafted inputs of TestHostileMemoryBound, each a
// few hundred bytes claiming gigabytes.
const hostileBound = 16 << 20

// TestHostileMemoryBound crafts small traces whose headers claim huge
// blocks or counts, reads each to its error, and checks that the reader
// allocated under hostileBound, and that the peak heap (sampled while
// reading) stayed under it too.
func TestHostileMemoryBound(t *testing.T) {
	small := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"))
	cases := map[string][]byte{}

	// FastSerialization (V4/V5): the MetadataBlock's size field follows
	// its type name and the EndObject tag of the type header.
	i := bytes.Index(small, []byte("MetadataBlock"))
	if i < 0 {
		t.Fatal("no MetadataBlock in the executioncheckpoints trace")
	}
	for _, size := range []uint32{2 << 30, maxObjectSize - 1, maxObjectSize} {
		b := bytes.Clone(small)
		binary.LittleEndian.PutUint32(b[i+len("MetadataBlock")+1:], size)
		cases[fmt.Sprintf("V5 MetadataBlock claims %d bytes", size)] = b
	}

	// V6: a block header claiming the largest size it can write (16 MB),
	// and a stack, label-list and sequence-point block whose counts claim
	// 2^31 and 2^32-1 entries.
	v6 := newV6Writer(8, 0)
	v6.buf.Write(u32(0xFFFFFF | kindEvent<<24))
	v6.buf.WriteString("short")
	cases["V6 EventBlock claims 16 MB"] = v6.buf.Bytes()
	for _, n := range []uint32{1 << 31, 0xFFFFFFFF} {
		for _, kind := range []int{kindStack, kindLabelList, kindSequencePt} {
			var body []byte
			if kind == kindSequencePt { // int64 timestamp, uint32 flags, uint32 count
				body = append(binary.LittleEndian.AppendUint64(nil, 1), u32(0)...)
			} else { // uint32 first id, uint32 count
				body = u32(1)
			}
			body = append(append(body, u32(n)...), 1, 2, 3, 4)
			w := newV6Writer(8, 0)
			w.block(kind, body)
			cases[fmt.Sprintf("V6 %s count %d", v6BlockNames[kind], n)] = w.end()
		}
	}
	// A V6 metadata row whose field count claims 65535 fields in 4 bytes.
	var row []byte
	row = appendVar(row, 1)   // metadata id
	row = appendStr(row, "P") // provider
	row = appendVar(row, 1)   // event id
	row = appendStr(row, "E") // name
	row = binary.LittleEndian.AppendUint16(row, 0xFFFF)
	row = append(row, 1, 2, 3, 4)
	mb := append(binary.LittleEndian.AppendUint16(nil, 0), binary.LittleEndian.AppendUint16(nil, uint16(len(row)))...)
	mw := newV6Writer(8, 0)
	mw.block(kindMetadata, append(mb, row...))
	cases["V6 metadata with 65535 fields"] = mw.end()

	// V5 (.NET 5): the first StackBlock's count claims 2^31 stacks, and
	// its size 2 GB.
	arr := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	i = bytes.Index(arr, []byte("StackBlock"))
	if i < 0 {
		t.Fatal("no StackBlock in the arraytypes trace")
	}
	// The type name, the EndObject tag, the block size, padding to a
	// multiple of 4, then FirstId and Count.
	sizeAt := i + len("StackBlock") + 1
	content := (sizeAt + 4 + 3) &^ 3
	whole := content + int(binary.LittleEndian.Uint32(arr[sizeAt:])) + 1 // with its EndObject tag
	b := bytes.Clone(arr[:whole])
	binary.LittleEndian.PutUint32(b[content+4:], 1<<31)
	cases["V5 StackBlock count 2^31"] = b
	b = bytes.Clone(arr[:content+64])
	binary.LittleEndian.PutUint32(b[sizeAt:], 2<<30)
	cases["V5 StackBlock claims 2 GB"] = b
	b = bytes.Clone(arr[:content+64])
	binary.LittleEndian.PutUint32(b[sizeAt:], maxObjectSize)
	cases["V5 StackBlock claims 256 MB"] = b

	// netperf (V3, .NET Core 2.1): an EventBlock size of 2 GB and a
	// metadata payload claiming 2^31 fields.
	if _, err := os.Stat(sharedTraces); err == nil {
		np := loadTrace(t, filepath.Join(sharedTraces, "perfview/eventpipe-dotnetcore2.1-linux-x64-objver3.netperf.zip"))
		np = np[:64<<10]
		if i := bytes.Index(np, []byte("EventBlock")); i > 0 {
			b := bytes.Clone(np)
			// "EventBlock", the EndObject tag, the block size.
			binary.LittleEndian.PutUint32(b[i+len("EventBlock")+1:], 2<<30)
			cases["netperf EventBlock claims 2 GB"] = b
			b = bytes.Clone(np)
			binary.LittleEndian.PutUint32(b[i+len("EventBlock")+1:], maxObjectSize)
			cases["netperf EventBlock claims 256 MB"] = b
		}
		np20 := loadTrace(t, filepath.Join(sharedTraces, "perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip"))[:64<<10]
		// The first event record after the Trace object: its size field
		// claims 2^31 bytes. Find it by reading.
		if r, err := NewReader(bytes.NewReader(np20)); err == nil {
			if ev, err := r.Next(); err == nil {
				b := bytes.Clone(np20)
				binary.LittleEndian.PutUint32(b[ev.Offset:], 1<<31)
				cases["netperf 2.0 event claims 2 GB"] = b
				b = bytes.Clone(np20)
				binary.LittleEndian.PutUint32(b[ev.Offset:], maxObjectSize)
				cases["netperf 2.0 event claims 256 MB"] = b
			}
		}
	} else {
		t.Logf("shared fixtures not available (%v): no netperf cases", err)
	}

	names := slices.Sorted(func(yield func(string) bool) {
		for k := range cases {
			if !yield(k) {
				return
			}
		}
	})
	var worst uint64
	var worstName string
	for _, name := range names {
		data := cases[name]
		var err error
		grew, peak := measureAlloc(func() {
			r, e := NewReader(bytes.NewReader(data))
			for i := 0; e == nil && i < 1_000_000; i++ {
				_, e = r.Next()
			}
			err = e
		})
		t.Logf("%s: %d-byte input, allocated %d bytes, peak heap +%d: %v", name, len(data), grew, peak, err)
		if err == nil || err == io.EOF {
			t.Errorf("%s: no error", name)
		}
		if grew > hostileBound || peak > hostileBound {
			t.Errorf("%s: allocated %d bytes (peak heap +%d), bound %d", name, grew, peak, hostileBound)
		}
		if grew > worst {
			worst, worstName = grew, name
		}
	}
	t.Logf("bound %d bytes; worst case %q allocated %d bytes", hostileBound, worstName, worst)
}

// measureAlloc runs fn and returns the bytes it allocated (TotalAlloc
// growth) and the peak growth of HeapAlloc sampled every millisecond.
func measureAlloc(fn func()) (total, peak uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	peakc := make(chan uint64)
	go func() {
		var m runtime.MemStats
		var p uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peakc <- p
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > before.HeapAlloc {
					p = max(p, m.HeapAlloc-before.HeapAlloc)
				}
			}
		}
	}()
	fn()
	runtime.ReadMemStats(&after)
	close(stop)
	peak = <-peakc
	if after.HeapAlloc > before.HeapAlloc {
		peak = max(peak, after.HeapAlloc-before.HeapAlloc)
	}
	return after.TotalAlloc - before.TotalAlloc, peak
}
