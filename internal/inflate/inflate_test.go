package inflate

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
)

const traceZip = "../../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"

// member returns the deflated data of the 3.0 trace's archive member (as
// .NET's zip writer made it) and what it inflates to.
func member(t testing.TB) (raw, plain []byte) {
	t.Helper()
	a, err := os.ReadFile(traceZip)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
	if err != nil {
		t.Fatal(err)
	}
	f := zr.File[0]
	rr, err := f.OpenRaw()
	if err != nil {
		t.Fatal(err)
	}
	raw, err = io.ReadAll(rr)
	if err != nil {
		t.Fatal(err)
	}
	return raw, tracetest.Bytes(t, traceZip)
}

func deflate(t testing.TB, data []byte, level int, flushEvery int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(data); {
		n := len(data) - i
		if flushEvery > 0 {
			n = min(n, flushEvery)
		}
		w.Write(data[i : i+n])
		i += n
		if flushEvery > 0 {
			w.Flush() // an empty stored block after each piece
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(raw []byte, skip int64) ([]byte, *Reader, error) {
	r := NewReader(bytes.NewReader(raw), 0, int64(len(raw)), skip)
	out, err := io.ReadAll(r)
	if err == nil {
		err = io.EOF // ReadAll's nil is the Reader's io.EOF
	}
	return out, r, err
}

// TestSound: streams compress/flate writes at every level (stored blocks,
// Huffman only, fixed and dynamic codes, flushes) inflate to their data,
// skip leaves out the first bytes, and nothing is reported damaged.
func TestSound(t *testing.T) {
	_, trace := member(t)
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 100_000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	text := bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog; "), 5000)
	for _, d := range []struct {
		name string
		data []byte
	}{{"trace", trace[:1<<20]}, {"random", random}, {"text", text}, {"empty", nil}, {"one byte", []byte{7}}} {
		for _, level := range []int{flate.HuffmanOnly, flate.NoCompression, flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
			for _, flush := range []int{0, 1000} {
				raw := deflate(t, d.data, level, flush)
				for _, skip := range []int64{0, 1, int64(len(d.data)) / 2} {
					skip = min(skip, int64(len(d.data)))
					out, r, err := readAll(raw, skip)
					if err != io.EOF || !bytes.Equal(out, d.data[skip:]) || len(r.Damage()) > 0 {
						t.Errorf("%s, level %d, flush %d, skip %d: %d bytes, %v, damage %v; want the %d bytes", d.name, level, flush, skip, len(out), err, r.Damage(), len(d.data)-int(skip))
					}
				}
			}
		}
	}
	// The member .NET's zip writer made.
	raw, plain := member(t)
	if out, r, err := readAll(raw, 0); err != io.EOF || !bytes.Equal(out, plain) || len(r.Damage()) > 0 {
		t.Errorf("the 3.0 trace's member: %d bytes, %v, damage %v; want %d", len(out), err, r.Damage(), len(plain))
	}
}

// blockStarts decodes a sound stream and returns the bit position of each
// block's header and the output offset of its first byte.
func blockStarts(t *testing.T, raw []byte) (starts, outs []int64) {
	t.Helper()
	r := NewReader(bytes.NewReader(raw), 0, int64(len(raw)), 0)
	for !r.final {
		starts = append(starts, r.in.pos)
		outs = append(outs, r.produced())
		h, err := r.in.readHeader(&r.c, false)
		if err == nil {
			err = r.block(h)
		}
		if err != nil {
			t.Fatalf("block at bit %d: %v", r.in.pos, err)
		}
		r.final = h.final
		r.rd = len(r.out)
		r.compact()
	}
	return starts, outs
}

// TestSearchFindsTheNextBlock: from every bit after a block's start, the
// search finds the next block's start and nothing before it, in the 3.0
// trace's member (dynamic blocks) and in streams of stored and fixed
// ones: no false block inside real data.
func TestSearchFindsTheNextBlock(t *testing.T) {
	raw, plain := member(t)
	for _, s := range []struct {
		name string
		raw  []byte
	}{
		{"3.0 member", raw},
		{"stored and flushes", deflate(t, plain[:300_000], flate.NoCompression, 20_000)},
		{"best speed, flushes", deflate(t, plain[:300_000], flate.BestSpeed, 7_000)},
	} {
		starts, _ := blockStarts(t, s.raw)
		if len(starts) < 3 {
			t.Fatalf("%s: %d blocks", s.name, len(starts))
		}
		r := NewReader(bytes.NewReader(s.raw), 0, int64(len(s.raw)), 0)
		kind := func(p int64) uint32 { // the block type of the header at bit p
			r.in.pos = p + 1
			v, _ := r.in.take(2)
			return v
		}
		// A stored block's data is byte-aligned: read from a nearby bit,
		// a header of type 0 whose data begins at the same byte is the
		// same block.
		same := func(at, s int64) bool {
			return at == s || kind(s) == 0 && kind(at) == 0 && (at+3+7)>>3 == (s+3+7)>>3
		}
		searched := 0
		for i := 0; i+1 < len(starts); i++ {
			from := starts[i] + 1
			if kind(starts[i]) == 0 {
				// Past its header (from inside it, the search finds
				// itself again), into its bytes as they are.
				from = (starts[i]+3+7)&^7 + 32
			}
			searched++
			at, ok := r.search(from)
			if !ok || !same(at, starts[i+1]) {
				t.Errorf("%s: the search from bit %d found %d (%v), want %d", s.name, from, at, ok, starts[i+1])
				break
			}
		}
		if searched < 2 {
			t.Errorf("%s: searched from %d blocks", s.name, searched)
		}
		t.Logf("%s: %d blocks", s.name, len(starts))
	}
}

// TestReadsPastDamage damages the 3.0 trace's member where damage stops
// compress/flate (four bytes set to 0xff, at places across it): Reader
// hands out the output of the blocks before the damage, then that of the
// blocks after the one that failed, ending in io.EOF with one Damage whose
// offsets are in order. The output after it is the trace's again, a shift
// apart (the failed block's output is not there), but for the copies from
// the lost window and what copies them on: at least half of it here.
func TestReadsPastDamage(t *testing.T) {
	raw, plain := member(t)
	starts, outs := blockStarts(t, raw)
	stops := 0
	var worst float64 = 1
	for i := range 60 {
		at := 1000 + (len(raw)-2000)*i/60
		bad := bytes.Clone(raw)
		copy(bad[at:], []byte{0xff, 0xff, 0xff, 0xff})
		ref, ferr := io.ReadAll(flate.NewReader(bytes.NewReader(bad)))
		var ce flate.CorruptInputError
		if !errors.As(ferr, &ce) {
			continue // flate decoded on: nothing for Reader to do
		}
		stops++
		out, r, err := readAll(bad, 0)
		ds := r.Damage()
		if err != io.EOF || len(ds) != 1 {
			t.Errorf("damage at %d: %d bytes, %v, damage %v; want io.EOF after one damage", at, len(out), err, ds)
			continue
		}
		d := ds[0]
		// The block the damage begins in, and the output before it.
		k := 0
		for k+1 < len(starts) && starts[k+1] <= int64(at)*8 {
			k++
		}
		if !(d.BlockIn <= int64(at)+4 && d.BlockIn <= d.FaultIn && d.FaultIn < d.ResumeIn) || d.Out < outs[k] || !bytes.Equal(out[:outs[k]], plain[:outs[k]]) {
			t.Errorf("damage at %d (in the block at byte %d): %v (out %d)", at, starts[k]/8, d, d.Out)
			continue
		}
		if len(out) <= len(ref) {
			t.Errorf("damage at %d: %d bytes out, compress/flate's %d", at, len(out), len(ref))
		}
		lost := len(plain) - len(out)
		same := 0
		for j := int(d.Out); j < len(out); j++ {
			if q := j + lost; q >= 0 && q < len(plain) && out[j] == plain[q] {
				same++
			}
		}
		frac := float64(same) / float64(len(out)-int(d.Out))
		worst = min(worst, frac)
		if frac < 0.5 {
			t.Errorf("damage at %d: %.1f%% of the %d bytes after it are the trace's", at, 100*frac, len(out)-int(d.Out))
		}
	}
	if stops < 3 {
		t.Fatalf("damage stopped compress/flate %d times, want at least 3 to test", stops)
	}
	t.Logf("damage stopped compress/flate at %d of 60 places; after it, at worst %.1f%% of the bytes are the trace's", stops, 100*worst)
}

// TestNothingDecodesAfter: damage in the final block leaves nothing to
// take up again; Read ends with the *Damage after the blocks before it.
func TestNothingDecodesAfter(t *testing.T) {
	raw, plain := member(t)
	starts, _ := blockStarts(t, raw)
	last := starts[len(starts)-1]
	bad := bytes.Clone(raw)
	for i := last/8 + 1; i < int64(len(bad)); i++ {
		bad[i] = 0xff
	}
	out, _, err := readAll(bad, 0)
	var d *Damage
	if !errors.As(err, &d) || d.ResumeIn != -1 || !errors.Is(err, errCorrupt) || !bytes.Equal(out, plain[:len(out)]) || int64(len(out)) != d.Out {
		t.Errorf("%d bytes, then %v; want the bytes before the last block, then a *Damage with nothing after", len(out), err)
	}
}

// FuzzReader: any input ends (Read returns an error, io.EOF included)
// without panicking, and a stream compress/flate inflates whole inflates
// the same here.
func FuzzReader(f *testing.F) {
	raw, plain := member(f)
	f.Add(raw[:2000])
	f.Add(deflate(f, plain[:5000], flate.BestSpeed, 700))
	f.Add(deflate(f, plain[:5000], flate.NoCompression, 0))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		const most = 256 << 10
		r := NewReader(bytes.NewReader(in), 0, int64(len(in)), 0)
		out, err := io.ReadAll(io.LimitReader(r, most))
		if err != nil && len(r.Damage()) == 0 && err != io.ErrUnexpectedEOF && !errors.Is(err, errCorrupt) {
			t.Fatalf("ReadAll: %v", err)
		}
		ref, ferr := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(in)), most))
		if ferr == nil && len(ref) < most && len(r.Damage()) == 0 && !bytes.Equal(out, ref) {
			t.Fatalf("%d bytes, compress/flate %d", len(out), len(ref))
		}
	})
}

// TestSearchBudget: a Reader's searches decode at most searchSymbols
// symbols in all (the candidates' blocks and the blocks after them), so
// that a stream of many false headers that each decode a long way, or of
// blocks that fail one after another, cannot make them quadratic. With a
// budget smaller than a real block, the search from inside the 3.0
// member's first block finds nothing; with the default, the next block.
func TestSearchBudget(t *testing.T) {
	raw, _ := member(t)
	starts, _ := blockStarts(t, raw)
	defer func(n int) { searchSymbols = n }(searchSymbols)
	for _, c := range []struct {
		budget int
		found  bool
	}{{1000, false}, {64 << 20, true}} {
		searchSymbols = c.budget
		r := NewReader(bytes.NewReader(raw), 0, int64(len(raw)), 0)
		at, ok := r.search(starts[0] + 1)
		if ok != c.found || ok && at != starts[1] {
			t.Errorf("budget %d: the search found bit %d (%v), want %d (%v)", c.budget, at, ok, starts[1], c.found)
		}
	}
}

// TestQuickKeepsHeaders: quick, the search's first look at a bit, never
// rules out a position whose stored or dynamic header reads (its length
// and complement agree; its counts are in range and its code-length code
// is complete), at every bit of the 3.0 member and of random bytes, and
// it rules out most of the random ones.
func TestQuickKeepsHeaders(t *testing.T) {
	raw, _ := member(t)
	rnd := make([]byte, 256<<10)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range rnd {
		rnd[i] = byte(rng.Uint32())
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"member", raw[:min(len(raw), 256<<10)]}, {"random", rnd}} {
		r := NewReader(bytes.NewReader(c.data), 0, int64(len(c.data)), 0)
		kraftOnce.Do(buildKraft)
		passed, headers := 0, 0
		for p := int64(0); p < int64(len(c.data))*8-64; p++ {
			q := quick(r.in.load(p>>3), uint(p&7))
			if q {
				passed++
			}
			r.in.pos = p
			h, err := r.in.readHeader(&r.sc, true)
			if err != nil || h.kind == 1 {
				continue
			}
			headers++
			if !q {
				t.Fatalf("%s: bit %d: a %d header reads, but quick rules it out", c.name, p, h.kind)
			}
		}
		t.Logf("%s: %d bits, quick passed %d, headers that read %d", c.name, len(c.data)*8, passed, headers)
		if c.name == "random" && passed > len(c.data)*8/50 {
			t.Errorf("random: quick passed %d of %d bits", passed, len(c.data)*8)
		}
	}
}

// BenchmarkSearch reads 1 MiB of random bytes: the first block fails at
// once and the search for a next one tries every bit to the end, finding
// none. That is a search's whole cost where damage leaves nothing to find.
func BenchmarkSearch(b *testing.B) {
	in := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range in {
		in[i] = byte(rng.Uint32())
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(in), 0, int64(len(in)), 0)
		if n, _ := io.Copy(io.Discard, r); n != 0 || len(r.Damage()) != 1 {
			b.Fatalf("%d bytes out of random input, damage %v", n, r.Damage())
		}
	}
}
