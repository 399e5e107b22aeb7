package etl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

// Truncation and corruption sweeps over the real ETL traces, and the memory
// bound on crafted hostile buffer headers. Sized for CI by default;
// -etlsweep.full cuts at 2000 offsets and flips bytes 3000 times per trace.

var etlSweepFull = flag.Bool("etlsweep.full", false, "run the long ETL truncation and corruption sweeps")

type etlTrace struct {
	name string
	data []byte
}

// etlSweepTraces returns gcevents (in the repository) and, when the shared
// fixtures are there, net.4.5.2.x86 (32-bit, compressed buffers).
func etlSweepTraces(t *testing.T) []etlTrace {
	out := []etlTrace{{"gcevents", gcETL(t)}}
	if net, err := readZipETL(netZip); err == nil {
		out = append(out, etlTrace{"net.4.5.2.x86", net})
	} else {
		t.Logf("net.4.5.2.x86.etl.zip not available (%v): sweeping gcevents only", err)
	}
	return out
}

// etlBuffer is one buffer's place in the file.
type etlBuffer struct {
	off, end   int64
	compressed bool
}

// etlBuffers walks the buffer headers of an intact log.
func etlBuffers(t testing.TB, data []byte) []etlBuffer {
	var out []etlBuffer
	for off := 0; off < len(data); {
		if len(data)-off < bufferHeaderSize {
			t.Fatalf("%d bytes left at %d", len(data)-off, off)
		}
		size := int(le.Uint32(data[off:]))
		if size < bufferHeaderSize || off+size > len(data) {
			t.Fatalf("buffer at %d: size %d", off, size)
		}
		flags := le.Uint16(data[off+52:])
		out = append(out, etlBuffer{int64(off), int64(off + size), flags&BufferFlagCompressed != 0})
		off += size
	}
	return out
}

func etlEventsEqual(a, b ev) bool {
	return a.Offset == b.Offset && a.Buffer == b.Buffer && a.Kind == b.Kind && a.GUID == b.GUID && a.ID == b.ID &&
		a.Version == b.Version && a.HookID == b.HookID && a.TS == b.TS && a.Ptr == b.Ptr && bytes.Equal(a.Payload, b.Payload)
}

func (e ev) String() string {
	return fmt.Sprintf("event at %d (buffer %d, %v %v id %d v%d, %d bytes)", e.Offset, e.Buffer, e.Kind, e.GUID, e.ID, e.Version, e.DataLen)
}

// etlCuts returns n offsets spread evenly over [0, limit), every buffer
// boundary below limit (or maxBufs of them) with its neighbours and points
// inside its header, and the last bytes of the file.
func etlCuts(size, limit, n int, bufs []etlBuffer, maxBufs int) []int {
	set := map[int]bool{}
	for i := range n {
		set[int(int64(limit)*int64(i)/int64(n))] = true
	}
	var in []etlBuffer
	for _, b := range bufs {
		if b.off < int64(limit) {
			in = append(in, b)
		}
	}
	step := 1
	if maxBufs > 0 && len(in) > maxBufs {
		step = (len(in) + maxBufs - 1) / maxBufs
	}
	for i := 0; i < len(in); i += step {
		o := int(in[i].off)
		for _, d := range []int{-1, 0, 1, 4, 40, bufferHeaderSize - 1, bufferHeaderSize, bufferHeaderSize + 1, bufferHeaderSize + 16} {
			set[o+d] = true
		}
	}
	for _, d := range []int{1, 2, 8} {
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

// TestETLTruncationSweep cuts each log at many offsets. In FileOrder the
// reader must give exactly the uncut log's first events (same offset,
// buffer, header, IDs, timestamp and payload bytes), including every event
// of every buffer that ends before the cut; in TimeOrder, the uncut log's
// time-ordered events minus some, keeping those same complete buffers.
// Then a *DamageError wrapping ErrTruncated, with one range that ends at
// the cut, on this and every later call.
func TestETLTruncationSweep(t *testing.T) {
	start := time.Now()
	total := 0
	for _, tr := range etlSweepTraces(t) {
		t.Run(tr.name, func(t *testing.T) {
			bufs := etlBuffers(t, tr.data)
			fullFile := readAll(t, mustFileOrder(t, tr.data))
			fullTime := readAll(t, mustReader(t, tr.data))
			// Each cut rereads the log up to the cut: in CI, cut a big log
			// in its first 512 KB (and at its last bytes).
			limit, n, maxBufs := min(len(tr.data), 1<<20), 200, 60
			if testing.Short() {
				limit, n, maxBufs = min(len(tr.data), 256<<10), 60, 20
			}
			if len(tr.data) > 1<<20 {
				// net.4.5.2.x86: 4.4 MB of compressed buffers.
				limit, n, maxBufs = 512<<10, n/2, maxBufs/3
			}
			if *etlSweepFull {
				limit, n, maxBufs = len(tr.data), 2000, 0
			}
			cuts := etlCuts(len(tr.data), limit, n, bufs, maxBufs)
			boundary := map[int]bool{}
			for _, b := range bufs {
				boundary[int(b.off)] = true
			}
			// Where the log header event (the first event of the first
			// buffer) ends.
			headerEnd := int(bufs[0].off) + systemHeaderSize + fullFile[0].DataLen
			for _, cut := range cuts {
				// Events of buffers wholly before the cut.
				complete := map[int]bool{}
				for i, b := range bufs {
					if b.end <= int64(cut) {
						complete[i] = true
					}
				}
				cc := etlCut{at: cut, boundary: boundary[cut], inHeader: cut < headerEnd}
				checkETLCut(t, tr.data, cc, FileOrder, fullFile, complete)
				checkETLCut(t, tr.data, cc, TimeOrder, fullTime, complete)
			}
			total += len(cuts)
			t.Logf("%d bytes, %d buffers, %d events: %d cuts, each in both orders", len(tr.data), len(bufs), len(fullFile), len(cuts))
		})
	}
	t.Logf("%d cuts in %v", total, time.Since(start).Round(time.Millisecond))
}

// etlCut is a cut offset and what it cuts.
type etlCut struct {
	at       int
	boundary bool // exactly between two buffers
	inHeader bool // inside the first buffer's log header event
}

func checkETLCut(t *testing.T, data []byte, c etlCut, order Order, full []ev, complete map[int]bool) {
	t.Helper()
	cut := c.at
	var r *Reader
	var err error
	if order == FileOrder {
		r, err = NewFileOrderReader(io.MultiReader(bytes.NewReader(data[:cut:cut])))
	} else {
		r, err = NewReader(bytes.NewReader(data[:cut:cut]))
	}
	if err != nil {
		if !errors.Is(err, ErrTruncated) {
			t.Errorf("cut at %d, %v: NewReader: %v, want ErrTruncated", cut, order, err)
		}
		return
	}
	got, err := readUntilErr(r, len(full)+10)
	var de *DamageError
	switch {
	case errors.As(err, &de) && errors.Is(err, ErrTruncated) && strings.Contains(err.Error(), "truncated"):
		// One range, from the first byte not delivered to the end.
		if d := de.Damage; len(d) != 1 || d[0].Offset+d[0].Length != int64(cut) || d[0].Length < 0 {
			t.Errorf("cut at %d, %v: damage %+v", cut, order, d)
		}
	default:
		t.Errorf("cut at %d, %v: after %d events: %v, want a *DamageError wrapping ErrTruncated", cut, order, len(got), err)
	}
	if _, again := r.Next(); again != err {
		t.Errorf("cut at %d, %v: after the final error: %v, want it again", cut, order, again)
	}
	// got must be full with some events left out: in FileOrder only a
	// tail, in TimeOrder any (each processor's stream loses its tail).
	j := 0
	delivered := map[int64]bool{}
	for i, g := range got {
		for j < len(full) && !etlEventsEqual(full[j], g) {
			if order == FileOrder {
				t.Fatalf("cut at %d, %v: event %d is %v, want %v", cut, order, i, g, full[j])
			}
			j++
		}
		if j == len(full) {
			t.Fatalf("cut at %d, %v: event %d %v is not in the uncut log (in order)", cut, order, i, g)
		}
		delivered[g.Offset] = true
		j++
	}
	for _, e := range full {
		if complete[e.Buffer] && !delivered[e.Offset] {
			t.Fatalf("cut at %d, %v: %v from a complete buffer is missing (%d events delivered)", cut, order, e, len(got))
		}
	}
}

// TestETLCorruptionSweep flips bytes of each log (a seeded PRNG, so
// failures reproduce), at random offsets and inside buffer and event
// headers, and reads it in both orders to its final error: no panic, no
// hang, a bounded number of calls, and io.EOF or a *DamageError that
// lists the reader's Damage.
func TestETLCorruptionSweep(t *testing.T) {
	start := time.Now()
	total := 0
	for ti, tr := range etlSweepTraces(t) {
		t.Run(tr.name, func(t *testing.T) {
			data := tr.data
			flips := 200
			if testing.Short() {
				flips = 50
			}
			if *etlSweepFull {
				flips = 3000
			} else {
				// The first 1 MB: a cut is a corruption too.
				data = data[:min(len(data), 1<<20)]
			}
			var hot []int // buffer headers and the first events
			for off := 0; off+bufferHeaderSize <= len(data); {
				hot = append(hot, off, off+bufferHeaderSize)
				size := int(le.Uint32(data[off:]))
				if size < bufferHeaderSize {
					break
				}
				off += size
			}
			rng := rand.New(rand.NewPCG(uint64(ti), 0xe71))
			for i := range flips {
				bad := bytes.Clone(data)
				var at []int
				for range 1 + rng.IntN(4) {
					p := rng.IntN(len(bad))
					if rng.IntN(2) == 0 {
						p = hot[rng.IntN(len(hot))] + rng.IntN(bufferHeaderSize+48)
					}
					if p >= len(bad) {
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
				for _, order := range []Order{FileOrder, TimeOrder} {
					readCorruptETL(t, fmt.Sprintf("flip %d at %v, %v", i, at, order), bad, order)
				}
			}
			total += flips
		})
	}
	t.Logf("%d corrupted logs read in both orders in %v", total, time.Since(start).Round(time.Millisecond))
}

func readCorruptETL(t *testing.T, what string, data []byte, order Order) {
	t.Helper()
	type result struct {
		calls int
		err   error // what is wrong
		panic string
	}
	done := make(chan result, 1)
	limit := etlNextBound(len(data))
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res.panic = fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
			done <- res
		}()
		var r *Reader
		var err error
		if order == FileOrder {
			r, err = NewFileOrderReader(io.MultiReader(bytes.NewReader(data)))
		} else {
			r, err = NewReader(bytes.NewReader(data))
		}
		if err != nil {
			return
		}
		for ; res.calls <= limit; res.calls++ {
			e, err := r.Next()
			if err != nil {
				res.err = checkFinal(r, err)
				return
			}
			if e.PointerSize != 4 && e.PointerSize != 8 {
				res.err = fmt.Errorf("pointer size %d", e.PointerSize)
				return
			}
			_ = e.Time.Unix()
		}
	}()
	select {
	case res := <-done:
		if res.panic != "" {
			t.Fatalf("%s: panic: %s", what, res.panic)
		}
		if res.calls > limit {
			t.Fatalf("%s: no final error after %d calls to Next", what, limit)
		}
		if res.err != nil {
			t.Fatalf("%s: %v", what, res.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: reader did not finish within 20s", what)
	}
}

// etlNextBound is the most calls to Next a log of n bytes may take to
// reach its final error: an event takes at least 8 bytes of its buffer,
// a compressed buffer (at least a header's bytes) expands to at most
// maxExpandFloor + maxExpandRatio times its compressed bytes.
func etlNextBound(n int) int {
	return 2 + (n+(n/bufferHeaderSize+1)*maxExpandFloor+maxExpandRatio*n)/8
}

// checkFinal checks the error that ended a non-strict reading: io.EOF
// with no damage, or a *DamageError that lists Damage (each range with a
// *FormatError naming its buffer), and the same error from the next call.
func checkFinal(r *Reader, err error) error {
	if _, again := r.Next(); again != err {
		return fmt.Errorf("final error %v, then %v", err, again)
	}
	dm := r.Damage()
	if err == io.EOF {
		if len(dm) != 0 {
			return fmt.Errorf("io.EOF with damage %+v", dm)
		}
		return nil
	}
	var de *DamageError
	if !errors.As(err, &de) || !errors.Is(err, ErrDamaged) || len(dm) == 0 || !slices.Equal(de.Damage, dm) {
		return fmt.Errorf("final error %T %v, damage %+v", err, err, dm)
	}
	for i, d := range dm {
		// Events 0 only on a record that skipped nothing (more buffers
		// than the log header counts).
		note := d.Length == 0 && d.Events == 0 && d.Missing == 0
		if d.Err == nil || d.Err.Buffer != d.Buffer || d.Length < 0 || d.Events == 0 && !note || d.Events < -1 || i > 0 && dm[i-1].Offset+dm[i-1].Length > d.Offset {
			return fmt.Errorf("damage %d of %d: %+v", i, len(dm), d)
		}
	}
	return nil
}

// etlHostileBound is the most the reader may allocate (TotalAlloc growth,
// and sampled peak heap growth) for a crafted log of a few KB whose buffer
// headers claim gigabytes.
const etlHostileBound = 16 << 20

// TestETLHostileMemoryBound: buffer sizes of 4 GB and 64 MB, a used size of
// 4 GB, a compressed buffer claiming to expand 1000-fold, and many tiny
// compressed buffers on distinct processors each claiming the most it may.
func TestETLHostileMemoryBound(t *testing.T) {
	gc := gcETL(t)
	first := int(le.Uint32(gc))
	head := gc[:first] // the log header buffer
	second := gc[first : first+int(le.Uint32(gc[first:]))]
	cases := map[string][]byte{}
	withBuf := func(mod func(b []byte)) []byte {
		b := bytes.Clone(second[:min(len(second), 4096)])
		mod(b)
		return append(bytes.Clone(head), b...)
	}
	cases["buffer size 4 GB"] = withBuf(func(b []byte) { binary.LittleEndian.PutUint32(b, 0xFFFFFFFF) })
	cases["buffer size 64 MB"] = withBuf(func(b []byte) { binary.LittleEndian.PutUint32(b, maxBufferSize) })
	cases["used size 4 GB"] = withBuf(func(b []byte) { binary.LittleEndian.PutUint32(b[4:], 0xFFFFFFFF) })
	cases["compressed, expands to 64 MB"] = withBuf(func(b []byte) {
		binary.LittleEndian.PutUint32(b, uint32(len(b)))
		binary.LittleEndian.PutUint32(b[4:], maxBufferSize)
		binary.LittleEndian.PutUint16(b[52:], le.Uint16(b[52:])|BufferFlagCompressed)
	})
	// The same two with a log header whose BufferSize allows them.
	bigHead := bytes.Clone(head)
	binary.LittleEndian.PutUint32(bigHead[bufferHeaderSize+systemHeaderSize:], maxBufferSize) // TRACE_LOGFILE_HEADER.BufferSize
	withBigBuf := func(mod func(b []byte)) []byte {
		b := bytes.Clone(second[:min(len(second), 4096)])
		mod(b)
		return append(bytes.Clone(bigHead), b...)
	}
	cases["BufferSize 64 MB, buffer size 64 MB"] = withBigBuf(func(b []byte) { binary.LittleEndian.PutUint32(b, maxBufferSize) })
	// A header that fails the search's checks sends the reader to look
	// for the next header where its size leads (chained): in FileOrder,
	// through the look-ahead, which must grow only as the input backs it.
	cases["BufferSize 64 MB, buffer size 64 MB, unknown flag"] = withBigBuf(func(b []byte) {
		binary.LittleEndian.PutUint32(b, maxBufferSize)
		binary.LittleEndian.PutUint16(b[52:], le.Uint16(b[52:])|0x100)
	})
	cases["BufferSize 64 MB, compressed, expands to 64 MB"] = withBigBuf(func(b []byte) {
		binary.LittleEndian.PutUint32(b, uint32(len(b)))
		binary.LittleEndian.PutUint32(b[4:], maxBufferSize)
		binary.LittleEndian.PutUint16(b[52:], le.Uint16(b[52:])|BufferFlagCompressed)
	})
	// 512 buffers of 88 bytes (16 compressed bytes each), each on its own
	// processor and claiming to expand to the most the log's BufferSize
	// allows (64 KB; the ratio would allow 64 KB + 256 × 16), all held at
	// once in TimeOrder.
	spray := bytes.Clone(head)
	// A machine with 1024 processors: buffers of a processor the log
	// does not have are skipped unread.
	binary.LittleEndian.PutUint32(spray[bufferHeaderSize+systemHeaderSize+12:], 1024) // TRACE_LOGFILE_HEADER.NumberOfProcessors
	for p := range 512 {
		b := make([]byte, bufferHeaderSize+16)
		binary.LittleEndian.PutUint32(b, uint32(len(b)))
		binary.LittleEndian.PutUint32(b[4:], min(maxExpandFloor+maxExpandRatio*16, le.Uint32(head[bufferHeaderSize+systemHeaderSize:])))
		binary.LittleEndian.PutUint16(b[40:], uint16(p+1))
		binary.LittleEndian.PutUint16(b[52:], BufferFlagCompressed|BufferFlagProcessorIndex)
		spray = append(spray, b...)
	}
	cases["512 tiny compressed buffers on 512 processors"] = spray

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
		for _, order := range []Order{FileOrder, TimeOrder} {
			var firstErr error
			grew, peak := etlMeasureAlloc(func() {
				var r *Reader
				var err error
				if order == FileOrder {
					r, err = NewFileOrderReader(io.MultiReader(bytes.NewReader(data)))
				} else {
					r, err = NewReader(bytes.NewReader(data))
				}
				if err != nil {
					firstErr = err
					return
				}
				for i := 0; i < 1_000_000; i++ {
					if _, err := r.Next(); err != nil {
						if err != io.EOF {
							firstErr = err
						}
						break
					}
				}
			})
			t.Logf("%s, %v: %d-byte input, allocated %d bytes, peak heap +%d: %v", name, order, len(data), grew, peak, firstErr)
			if firstErr == nil {
				t.Errorf("%s, %v: no error", name, order)
			}
			if grew > etlHostileBound || peak > etlHostileBound {
				t.Errorf("%s, %v: allocated %d bytes (peak heap +%d), bound %d", name, order, grew, peak, etlHostileBound)
			}
			if grew > worst {
				worst, worstName = grew, fmt.Sprintf("%s, %v", name, order)
			}
		}
	}
	t.Logf("bound %d bytes; worst case %q allocated %d bytes", etlHostileBound, worstName, worst)
}

// etlMeasureAlloc runs fn and returns the bytes it allocated (TotalAlloc
// growth) and the peak growth of HeapAlloc sampled every millisecond.
func etlMeasureAlloc(fn func()) (total, peak uint64) {
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
