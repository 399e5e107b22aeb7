package nettrace

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDamageSweep writes 64 random bytes over each trace at many offsets
// (ten spread evenly, and next to block boundaries, where the headers are)
// and reads it in file order and in time order: every event of the intact
// trace outside the damaged blocks comes out unchanged (same offset and
// payload), but for events whose metadata the damage destroyed, which the
// damage records count; nothing else comes out but events inside the
// damage; the trace ends with a *DamageError naming an offset in the
// damage when anything was skipped. It logs the events recovered of the
// intact trace's at the ten even offsets.
func TestDamageSweep(t *testing.T) {
	for ti, tr := range sweepTraces(t) {
		t.Run(tr.name, func(t *testing.T) {
			full, bounds, _ := readSweep(t, tr.data)
			blocks := blockRanges(full)
			rng := rand.New(rand.NewPCG(uint64(ti), 0xda3a6e))
			var offsets []int
			for i := range 10 {
				offsets = append(offsets, len(tr.data)*(2*i+1)/20)
			}
			even := len(offsets)
			orders := []Order{FileOrder, TimeOrder}
			if len(tr.data) > 16<<20 && !*sweepFull {
				// The 62 MB .NET Core 2.0 trace: the ten offsets in file
				// order (-sweep.full does the rest).
				orders = orders[:1]
			} else {
				step := max(1, len(bounds)/30)
				for i := 0; i < len(bounds); i += step {
					offsets = append(offsets, int(bounds[i])+rng.IntN(24)-8)
				}
			}
			var report []string
			for k, at := range offsets {
				if len(bounds) == 0 || at < int(bounds[0]) || at >= len(tr.data) {
					continue // the stream and trace headers: nothing is readable without them
				}
				bad := bytes.Clone(tr.data)
				end := min(at+64, len(bad))
				for i := at; i < end; i++ {
					bad[i] = byte(rng.Uint32())
				}
				for _, order := range orders {
					got := checkDamage(t, bad, at, end, full, blocks, order, v6Redefines(tr.data, at, end))
					if k < even && order == FileOrder {
						report = append(report, fmt.Sprintf("%d@%d", got, at))
					}
				}
			}
			t.Logf("%d events intact; recovered at ten offsets: %s", len(full), strings.Join(report, " "))
		})
	}
}

// blockRange is a block of the intact trace: where its header starts and
// where it ends (V1/V2: an event record).
type blockRange struct{ start, end int64 }

func blockRanges(full []sweepEvent) map[int64]blockRange {
	m := map[int64]blockRange{}
	for _, e := range full {
		m[e.off] = blockRange{e.blockStart, e.blockEnd}
	}
	return m
}

// checkDamage reads a trace damaged in [at, end) and checks what comes
// out against the intact trace's events; it returns how many came out.
//
// In a V6 trace, metadata IDs may be defined again after a sequence point
// that flushes them: when the damage destroys both, the events after it
// come out under the older definition, which nothing in the trace can
// tell (stale): then only their payloads are compared.
func checkDamage(t *testing.T, data []byte, at, end int, full []sweepEvent, blocks map[int64]blockRange, order Order, stale bool) int {
	t.Helper()
	what := fmt.Sprintf("damage at %d (%v)", at, order)
	r, got, last := readKeyed(t, what, data, order, func(off int64) int64 { return off })
	if r == nil {
		return 0
	}
	// Metadata the damage destroyed: its events are lost, and counted.
	lostMeta := map[string]bool{}
	for _, d := range r.Damage() {
		if strings.Contains(d.Err.Msg, "which is not defined") {
			lostMeta[d.Err.Msg] = true
		}
	}
	hit := func(b blockRange) bool {
		return b.start < int64(end) && int64(at) <= b.end // the end includes a FastSerialization EndObject tag
	}
	missing := 0
	for _, e := range full {
		if hit(blocks[e.off]) {
			continue
		}
		g, ok := got[e.off]
		if !ok {
			missing++
			continue
		}
		if !g.same(e) && !(stale && g.size == e.size && g.sum == e.sum) {
			t.Errorf("%s: event at %d is %v, want %v", what, e.off, g, e)
		}
	}
	var counted int64
	for _, d := range r.Damage() {
		if strings.Contains(d.Err.Msg, "which is not defined") {
			counted += d.Events
		}
	}
	if int64(missing) > counted {
		t.Errorf("%s: %d events outside the damaged blocks are missing, %d counted as lost with their metadata; damage %v", what, missing, counted, r.Damage())
	}
	for off, g := range got {
		if b, ok := blocks[off]; ok && !hit(b) {
			continue
		}
		if off+int64(g.size) < int64(at)-int64(1<<20) {
			t.Errorf("%s: event %v, not in the intact trace and not near the damage", what, g)
		}
	}
	if last == io.EOF {
		if len(r.Damage()) > 0 {
			t.Errorf("%s: io.EOF after damage %v", what, r.Damage())
		}
		return len(got)
	}
	var de *DamageError
	if !errors.As(last, &de) {
		t.Errorf("%s: final error %v (%T), want a *DamageError", what, last, last)
		return len(got)
	}
	d := de.Damage[0]
	if d.Offset > int64(end)+1<<20 || slices.ContainsFunc(de.Damage, func(d Damage) bool { return d.Length < 0 }) {
		t.Errorf("%s: damage %v", what, de.Damage)
	}
	for _, d := range de.Damage {
		if d.Events > d.Length/minRecord {
			t.Errorf("%s: %d events lost in %d bytes: %v", what, d.Events, d.Length, d)
		}
	}
	return len(got)
}

// readKeyed reads a damaged trace in order and returns its events by
// key(offset), the offset they had in the intact trace, with the error
// that ended it; a nil Reader where NewReader failed (an error of the
// test's).
func readKeyed(t *testing.T, what string, data []byte, order Order, key func(off int64) int64) (*Reader, map[int64]sweepEvent, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Errorf("%s: NewReader: %v", what, err)
		return nil, nil, err
	}
	r.SetOrder(order)
	got := map[int64]sweepEvent{}
	for n := 0; ; n++ {
		ev, err := r.Next()
		if err != nil {
			return r, got, err
		}
		if n > len(data) {
			t.Fatalf("%s: more events than bytes", what)
		}
		g := eventOf(r, ev)
		g.off = key(g.off)
		got[g.off] = g
	}
}

// v6Redefines reports whether data is a V6 trace whose damage in
// [at, end) touches a sequence point or a metadata block (see
// checkDamage).
func v6Redefines(data []byte, at, end int) bool {
	if len(data) < 20 || string(data[:8]) != "Nettrace" || le32(data[8:]) != 0 {
		return false
	}
	for off := 20; off+4 <= len(data); {
		x := le32(data[off:])
		size, kind := int(x&0xFFFFFF), int(x>>24)
		next := off + 4 + size
		if (kind == kindSequencePt || kind == kindMetadata) && off < end && at < next {
			return true
		}
		if x == 0 {
			break
		}
		off = next
	}
	return false
}

// TestBlockVersionDamage: a FastSerialization stream's blocks keep the
// version they start with, so a block of a version this reader does not
// read is a newer format only when it is the stream's first; after blocks
// it read, or negative anywhere, the version field is damaged: the block
// is read as the others were and the field recorded as damage that lost
// nothing (a fuzzed trace once ended with ErrUnsupported, its damage
// dropped, at a header the damage had left with version 58114).
func TestBlockVersionDamage(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip"))
	full, _, _ := readSweep(t, data)
	blocks := blockRanges(full)
	headers := blockHeaders(data)
	if len(headers) < 4 {
		t.Fatalf("%d block headers in the trace, want at least 4", len(headers))
	}
	setVersion := func(b []byte, hdr int, v uint32) {
		binary.LittleEndian.PutUint32(b[hdr+3:], v)
	}

	t.Run("first block", func(t *testing.T) {
		bad := bytes.Clone(data)
		setVersion(bad, headers[0], 3)
		r, err := NewReader(bytes.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Next()
		var e *Error
		if !errors.Is(err, ErrUnsupported) || !errors.As(err, &e) || e.Block == "" || len(r.Damage()) != 0 {
			t.Fatalf("Next = %v with damage %v, want ErrUnsupported naming the block and no damage", err, r.Damage())
		}
		if !strings.Contains(err.Error(), "version 3") {
			t.Errorf("%q does not give the version", err)
		}
	})

	t.Run("first block, negative", func(t *testing.T) {
		// Not a version at all: damage, whichever block it is.
		bad := bytes.Clone(data)
		setVersion(bad, headers[0], 0xfffffffe)
		checkDamage(t, bad, headers[0], headers[0]+4, full, blocks, FileOrder, false)
		r, _, err := readToEnd(bad, FileOrder)
		checkVersionNoted(t, err, r.Damage(), headers[0], -2)
	})

	t.Run("found by the search", func(t *testing.T) {
		// The block before it lost its end tag: the reader searches for
		// the next header, and takes this one, its version aside.
		k := len(headers) / 2
		bad := bytes.Clone(data)
		if bad[headers[k]-1] != tagEndObject {
			t.Fatalf("no end tag before the header at %d", headers[k])
		}
		bad[headers[k]-1] = 0x77
		setVersion(bad, headers[k], 58114)
		for _, order := range []Order{FileOrder, TimeOrder} {
			r, n, err := readToEnd(bad, order)
			dmg := r.Damage()
			if n != len(full) || len(dmg) != 2 {
				t.Fatalf("%v: %d events of %d, damage %v: want all, and the end tag and the version", order, n, len(full), dmg)
			}
			checkVersionNoted(t, err, dmg[1:], headers[k], 58114)
		}
	})

	for _, tc := range []struct {
		name    string
		garbled bool // bytes of the block before it damaged too
	}{{"later block", false}, {"after damage", true}} {
		t.Run(tc.name, func(t *testing.T) {
			// The block after the largest, whose body has room for the
			// damage.
			k := 1
			for i := 2; i < len(headers); i++ {
				if headers[i]-headers[i-1] > headers[k]-headers[k-1] {
					k = i
				}
			}
			bad := bytes.Clone(data)
			setVersion(bad, headers[k], 58114)
			at, end := headers[k], headers[k]+4
			if tc.garbled {
				at = headers[k-1] + (headers[k]-headers[k-1])/2
				for i := at; i < at+16; i++ {
					bad[i] ^= 0xa5
				}
			}
			for _, order := range []Order{FileOrder, TimeOrder} {
				checkDamage(t, bad, at, end, full, blocks, order, false)
			}
			r, _, err := readToEnd(bad, FileOrder)
			dmg := r.Damage()
			if tc.garbled {
				// The garbled bytes' records, then the version's.
				if len(dmg) < 2 {
					t.Fatalf("damage %v: the garbled bytes are not in it", dmg)
				}
				dmg = dmg[len(dmg)-1:]
			}
			checkVersionNoted(t, err, dmg, headers[k], 58114)
			var de *DamageError
			r, _ = NewReader(bytes.NewReader(bad))
			r.SetStrict(true)
			for err = nil; err == nil; {
				_, err = r.Next()
			}
			if !errors.Is(err, ErrFormat) || errors.As(err, &de) {
				t.Errorf("strict: %v, want the first damage's ErrFormat", err)
			}
		})
	}
}

// TestBlockVersionSweep gives blocks spread over every V3–V5 trace a
// version this reader does not read (or a negative one), one at a time:
// each is read as the others, every event comes out unchanged in both
// orders, and the version field is the one damage, named at its header.
// So for a version it reads but other than the blocks' (V3 writes 1, V4
// and V5 2), and for another minimum reader version (V3 writes 0, V4 and
// V5 2), which were read with no damage reported (the third audit's m3).
// The first block too, with a version no writer takes the next step to
// (above 16, or negative); with 3 it is a newer writer's format, which
// this reader does not read (ErrUnsupported).
func TestBlockVersionSweep(t *testing.T) {
	for ti, tr := range sweepTraces(t) {
		headers := blockHeaders(tr.data)
		if len(headers) < 2 {
			continue // V1/V2 and V6: no FastSerialization blocks
		}
		t.Run(tr.name, func(t *testing.T) {
			full, _, _ := readSweep(t, tr.data)
			blocks := blockRanges(full)
			rng := rand.New(rand.NewPCG(uint64(ti), 0x7e2510))
			hr, err := NewReader(bytes.NewReader(tr.data))
			if err != nil {
				t.Fatal(err)
			}
			tver := hr.ver
			const n = 12
			// The first block too: its writer's values are known from
			// the trace's version, not from the blocks after it.
			picks := []int{headers[0]}
			for j := range min(n, len(headers)-1) {
				picks = append(picks, headers[1+j*(len(headers)-1)/min(n, len(headers)-1)])
			}
			for pi, hdr := range picks {
				version, minVersion := int32(le32(tr.data[hdr+3:])), int32(le32(tr.data[hdr+7:]))
				other := func(old int32, any bool) int32 { // 0–2 (or any) but old
					for {
						v := int32(rng.Uint32N(3))
						if any && rng.IntN(2) == 0 {
							v = int32(rng.Uint32())
						}
						if v != old {
							return v
						}
					}
				}
				v := int32(3 + rng.Uint32N(1<<32-1-3)) // negative ones too
				ov, om := other(version, false), other(minVersion, true)
				cases := []struct {
					at   int
					v    int32
					want string
				}{
					{3, v, fmt.Sprintf("object version %d,", v)},
					{3, ov, fmt.Sprintf("object version %d, where a version %d trace's blocks state %d", ov, tver, version)},
					{7, om, fmt.Sprintf("minimum reader version %d, where a version %d trace's blocks state %d", om, tver, minVersion)},
				}
				if pi == 0 {
					// A version above 2 in the first block is a newer
					// writer's format: below.
					cases = cases[1:]
				}
				for _, f := range cases {
					bad := bytes.Clone(tr.data)
					binary.LittleEndian.PutUint32(bad[hdr+f.at:], uint32(f.v))
					for _, order := range []Order{FileOrder, TimeOrder} {
						checkDamage(t, bad, hdr, hdr+f.at+4, full, blocks, order, false)
					}
					r, events, err := readToEnd(bad, FileOrder)
					checkFieldNoted(t, err, r.Damage(), hdr, f.at, f.want)
					if events != len(full) {
						t.Errorf("%s at %d: %d events, want all %d", f.want, hdr, events, len(full))
					}
				}
			}
			first := headers[0]
			for _, v := range []int32{17, 1 << 24, -7} {
				bad := bytes.Clone(tr.data)
				binary.LittleEndian.PutUint32(bad[first+3:], uint32(v))
				r, events, err := readToEnd(bad, FileOrder)
				checkVersionNoted(t, err, r.Damage(), first, v)
				if events != len(full) {
					t.Errorf("version %d in the first block: %d events, want all %d", v, events, len(full))
				}
			}
			bad := bytes.Clone(tr.data)
			binary.LittleEndian.PutUint32(bad[first+3:], 3)
			if _, _, err := readToEnd(bad, FileOrder); !errors.Is(err, ErrUnsupported) {
				t.Errorf("version 3 in the first block: %v, want ErrUnsupported", err)
			}
		})
	}
}

// checkVersionNoted checks that err ends a trace whose damage is the
// version field of the block header at hdr, holding v, and nothing lost.
func checkVersionNoted(t *testing.T, err error, damage []Damage, hdr int, v int32) {
	t.Helper()
	checkFieldNoted(t, err, damage, hdr, 3, fmt.Sprintf("object version %d,", v))
}

// checkFieldNoted checks that err ends a trace whose damage is the 4-byte
// field at hdr+at of the block header at hdr, whose message says want,
// and nothing lost.
func checkFieldNoted(t *testing.T, err error, damage []Damage, hdr, at int, want string) {
	t.Helper()
	var de *DamageError
	if !errors.As(err, &de) || errors.Is(err, ErrUnsupported) {
		t.Errorf("%s at %d: final error %v, want a *DamageError", want, hdr, err)
		return
	}
	if len(damage) != 1 || damage[0].Offset != int64(hdr+at) || damage[0].Length != 4 || damage[0].Events != 0 ||
		damage[0].Err.Offset != int64(hdr) || !strings.Contains(damage[0].Err.Msg, want) || !errors.Is(damage[0].Err, ErrFormat) {
		t.Errorf("%s at %d: damage %v, want only the field's 4 bytes at %d, nothing lost", want, hdr, damage, hdr+at)
	}
}

// blockHeaders returns the offsets of the FastSerialization block headers
// in an intact trace.
func blockHeaders(data []byte) []int {
	var headers []int
	for i := range data {
		if blockHeader(data[i:], false) {
			headers = append(headers, i)
		}
	}
	return headers
}

// readToEnd reads a trace in the given order to its end and returns the
// Reader, how many events came out and the error that ended it.
func readToEnd(data []byte, order Order) (r *Reader, n int, err error) {
	r, err = NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, 0, err
	}
	r.SetOrder(order)
	for {
		if _, err = r.Next(); err != nil {
			return r, n, err
		}
		n++
	}
}

// TestLostEventsCounted damages metadata blocks of every NetTrace V4+
// trace, one at a time, leaving every event record whole: the events that
// refer to the lost metadata are skipped and counted, each once, so the
// events that come out and the events the damage records count add up to
// the intact trace's, and the runtime's drops stay what they were (each
// skipped event was once counted a second time, from the gap it left in
// its thread's sequence numbers).
func TestLostEventsCounted(t *testing.T) {
	for _, tr := range sweepTraces(t) {
		var metas []int
		for _, i := range blockHeaders(tr.data) {
			if bytes.HasPrefix(tr.data[i+15:], []byte("MetadataBlock")) {
				metas = append(metas, i)
			}
		}
		r, err := NewReader(bytes.NewReader(tr.data))
		if err != nil {
			t.Fatal(err)
		}
		if r.ver < 4 || r.ver == 6 || len(metas) == 0 {
			continue // no sequence numbers (V3), or no FastSerialization blocks (V6)
		}
		t.Run(tr.name, func(t *testing.T) {
			for _, order := range []Order{FileOrder, TimeOrder} {
				read := func(data []byte) (n int, lost int64, dropped uint64, damage []Damage) {
					r, n, _ := readToEnd(data, order)
					for _, d := range r.Damage() {
						if d.Events < 0 {
							t.Fatalf("%v: damage %v counts no events, in a V4+ trace", order, d)
						}
						lost += d.Events
					}
					return n, lost, r.Dropped(), r.Damage()
				}
				full, _, fullDropped, _ := read(tr.data)
				for j := range min(4, len(metas)) {
					hdr := metas[j*len(metas)/min(4, len(metas))]
					// The block's content starts after its header (15
					// bytes, the name, the end tag), its size and padding.
					at := hdr + 15 + len("MetadataBlock") + 1 + 4 + 24
					bad := bytes.Clone(tr.data)
					for i := at; i < at+16 && i < len(bad); i++ {
						bad[i] ^= 0x5a
					}
					n, lost, dropped, damage := read(bad)
					if len(damage) == 0 {
						t.Errorf("%v: metadata damaged at %d: no damage found", order, at)
						continue
					}
					if int64(n)+lost != int64(full) || dropped != fullDropped {
						t.Errorf("%v: metadata damaged at %d: %d events and %d counted lost, want %d in all; dropped %d, want %d; damage %v",
							order, at, n, lost, full, dropped, fullDropped, damage)
					}
				}
			}
		})
	}
}

// TestDamageDrops writes 64 random bytes over every NetTrace V4+ trace at
// 40 places: when the reader finds the damage, the runtime's drops it
// reports are at most the intact trace's, and never go back as it reads.
// Bytes that still parse as events can carry any sequence number, and the
// gaps they made were once counted as drops (598,497,864 on the 3.0
// trace, which has none).
func TestDamageDrops(t *testing.T) {
	for ti, tr := range sweepTraces(t) {
		r, err := NewReader(bytes.NewReader(tr.data))
		if err != nil {
			t.Fatal(err)
		}
		if r.ver < 4 {
			continue // no sequence numbers
		}
		t.Run(tr.name, func(t *testing.T) {
			_, bounds, _ := readSweep(t, tr.data)
			rng := rand.New(rand.NewPCG(uint64(ti), 0xd209))
			for _, order := range []Order{FileOrder, TimeOrder} {
				read := func(data []byte) (uint64, []Damage) { return readDropped(t, data, order) }
				intact, _ := read(tr.data)
				for range 40 {
					at := int(bounds[0]) + rng.IntN(len(tr.data)-int(bounds[0]))
					bad := bytes.Clone(tr.data)
					for i := at; i < min(at+64, len(bad)); i++ {
						bad[i] = byte(rng.Uint32())
					}
					if dropped, damage := read(bad); len(damage) > 0 && dropped > intact {
						t.Errorf("%v: damage at %d: %d events dropped, the intact trace %d; damage %v", order, at, dropped, intact, damage)
					}
				}
			}
		})
	}
}

// TestDamageErrorText: the summary counts ranges, bytes and events, the
// events exactly when every range's count is known and "at least" when
// one is not, and gives the first range in full.
func TestDamageErrorText(t *testing.T) {
	e := func(off int64) *Error {
		return &Error{Block: "EventBlock", BlockOffset: off, What: "event header", Offset: off + 20, Msg: "varint overflows 32 bits", Err: ErrFormat}
	}
	first := "1200 bytes at offset 120 (963 events lost): nettrace: EventBlock at offset 100: event header at 120: varint overflows 32 bits"
	tests := []struct {
		damage []Damage
		want   string
	}{
		{[]Damage{{Block: "EventBlock", Offset: 120, Length: 1200, Events: 963, Err: e(100)}},
			"nettrace: 1 damaged range skipped (1,200 bytes, 963 events lost); the first: " + first},
		{[]Damage{{Block: "EventBlock", Offset: 120, Length: 1200, Events: 963, Err: e(100)}, {Offset: 5000, Length: 64000, Events: 1, Err: e(4000)}},
			"nettrace: 2 damaged ranges skipped (65,200 bytes, 964 events lost); the first: " + first},
		{[]Damage{{Block: "EventBlock", Offset: 120, Length: 1200, Events: 963, Err: e(100)}, {Offset: 5000, Length: 64000, Events: -1, Err: e(4000)}},
			"nettrace: 2 damaged ranges skipped (65,200 bytes, at least 963 events lost); the first: " + first},
		{[]Damage{{Block: "EventBlock", Offset: 120, Length: 1200, Events: -1, Err: e(100)}},
			"nettrace: 1 damaged range skipped (1,200 bytes); the first: 1200 bytes at offset 120: nettrace: EventBlock at offset 100: event header at 120: varint overflows 32 bits"},
		{[]Damage{{Block: "EventBlock", Offset: 120, Length: 4, Events: 0, Err: e(100)}},
			"nettrace: 1 damaged range skipped (4 bytes); the first: 4 bytes at offset 120: nettrace: EventBlock at offset 100: event header at 120: varint overflows 32 bits"},
	}
	for _, tt := range tests {
		if got := (&DamageError{Damage: tt.damage}).Error(); got != tt.want {
			t.Errorf("%+v:\n got %q\nwant %q", tt.damage, got, tt.want)
		}
	}
	stopped := &DamageError{Damage: tests[0].damage, Stopped: &Error{Block: "EventBlock", BlockOffset: 5000, Msg: "zip: checksum error", Err: zip.ErrChecksum}}
	if got, want := stopped.Error(), tests[0].want+"; then reading stopped: nettrace: EventBlock at offset 5000: zip: checksum error"; got != want || !errors.Is(stopped, zip.ErrChecksum) {
		t.Errorf("stopped:\n got %q\nwant %q (errors.Is the checksum error: %v)", got, want, errors.Is(stopped, zip.ErrChecksum))
	}
}

// failAfter reads r and fails with err once n bytes were read.
type failAfter struct {
	r   io.Reader
	n   int
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	m, err := f.r.Read(p[:min(len(p), f.n)])
	f.n -= m
	return m, err
}

// TestDamageThenStopped: a source that fails after damage (a zipped
// trace's checksum, after damage in its compressed data) ends the trace
// with a *DamageError that keeps the damage and says what stopped the
// reading; one that fails before any damage ends it with that error, as
// before. Both orders.
func TestDamageThenStopped(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	headers := blockHeaders(data)
	if len(headers) < 6 {
		t.Fatalf("%d block headers, want at least 6", len(headers))
	}
	bad := bytes.Clone(data)
	at := headers[2] + 40 // inside the third block
	for i := at; i < at+64; i++ {
		bad[i] ^= 0xA5
	}
	// The framing damaged too: the fourth block's tags, so that the
	// reader searches for the next header, and the source fails during
	// the search.
	framing := bytes.Clone(bad)
	framing[headers[3]] ^= 0xFF
	boom := errors.New("zip: checksum error")
	for _, order := range []Order{FileOrder, TimeOrder} {
		for _, c := range []struct {
			name   string
			data   []byte
			failAt int
			damage bool
		}{
			{"after the damage", bad, headers[len(headers)-2], true},
			{"before any damage", bad, headers[1], false},
			{"during the search after damage", framing, headers[3] + 200, true},
		} {
			r, err := NewReader(&failAfter{r: bytes.NewReader(c.data), n: c.failAt, err: boom})
			if err != nil {
				t.Fatal(err)
			}
			r.SetOrder(order)
			n, end := 0, error(nil)
			for ; end == nil; n++ {
				_, end = r.Next()
			}
			var de *DamageError
			var e *Error
			if !errors.Is(end, boom) || !errors.As(end, &e) {
				t.Errorf("%v, %s: %d events, then %v; want the source's error", order, c.name, n, end)
				continue
			}
			if got := errors.As(end, &de); got != c.damage {
				t.Errorf("%v, %s: a *DamageError: %v, want %v (%v)", order, c.name, got, c.damage, end)
				continue
			}
			if !c.damage {
				continue
			}
			if de.Stopped == nil || !errors.Is(de.Stopped, boom) || len(de.Damage) == 0 || !errors.Is(end, ErrDamaged) ||
				!strings.HasSuffix(end.Error(), "; then reading stopped: "+de.Stopped.Error()) {
				t.Errorf("%v, %s: %v (stopped %v, %d ranges)", order, c.name, end, de.Stopped, len(de.Damage))
			}
			if _, again := r.Next(); again != end {
				t.Errorf("%v, %s: after the end, %v", order, c.name, again)
			}
		}
	}
}

// TestBlockTimeRange writes a V6 trace whose first event block's header
// states a time range, and reads it each way: an event outside the range
// the header states is damage, with the rest of its block (the headers
// after it are deltas from it), while the events before it and the next
// block's come out; a header that states no range (zeros, or the least
// above the greatest) is not checked.
func TestBlockTimeRange(t *testing.T) {
	build := func(compress bool, times *[2]int64) []byte {
		w := newV6Writer(8, 0)
		w.threads(wThread{index: 1, tid: 7})
		w.metadata(wMeta{id: 1, provider: "P", eventID: 1})
		w.times = times
		w.events(compress,
			wEvent{meta: 1, thread: 1, capThread: 1, seq: 1, ts: 1000, payload: []byte{1}},
			wEvent{meta: 1, thread: 1, capThread: 1, seq: 2, ts: 2000, payload: []byte{2}},
			wEvent{meta: 1, thread: 1, capThread: 1, seq: 3, ts: 3000, payload: []byte{3}},
			wEvent{meta: 1, thread: 1, capThread: 1, seq: 4, ts: 3100, payload: []byte{4}})
		w.events(compress,
			wEvent{meta: 1, thread: 1, capThread: 1, seq: 5, ts: 4000, payload: []byte{5}},
			wEvent{meta: 1, thread: 1, capThread: 1, seq: 6, ts: 5000, payload: []byte{6}})
		return w.end()
	}
	cases := []struct {
		name  string
		times *[2]int64
		want  []int64 // timestamps read
		err   string  // in the damage, "" for none
	}{
		{"as written", nil, []int64{1000, 2000, 3000, 3100, 4000, 5000}, ""},
		{"narrower", &[2]int64{1000, 2500}, []int64{1000, 2000, 4000, 5000}, "timestamp 3000 is outside the block's range [1000, 2500]"},
		{"above", &[2]int64{1500, 3100}, []int64{4000, 5000}, "timestamp 1000 is outside the block's range [1500, 3100]"},
		{"none", &[2]int64{0, 0}, []int64{1000, 2000, 3000, 3100, 4000, 5000}, ""},
		{"inverted", &[2]int64{3100, 1000}, []int64{1000, 2000, 3000, 3100, 4000, 5000}, ""},
	}
	for _, c := range cases {
		for _, compress := range []bool{true, false} {
			data := build(compress, c.times)
			for _, order := range []Order{FileOrder, TimeOrder} {
				what := fmt.Sprintf("%s, compressed %v, %v", c.name, compress, order)
				r, err := NewReader(bytes.NewReader(data))
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				r.SetOrder(order)
				var got []int64
				var end error
				for {
					ev, err := r.Next()
					if err != nil {
						end = err
						break
					}
					got = append(got, ev.Timestamp)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("%s: read %v, want %v", what, got, c.want)
				}
				d := r.Damage()
				switch {
				case c.err == "" && (end != io.EOF || len(d) > 0):
					t.Errorf("%s: ended with %v, damage %v", what, end, d)
				case c.err != "" && (len(d) != 1 || d[0].Block != "EventBlock" || !strings.Contains(d[0].Err.Error(), c.err) || !errors.Is(end, ErrDamaged)):
					t.Errorf("%s: ended with %v, damage %+v; want one EventBlock record saying %q", what, end, d, c.err)
				}
			}
		}
	}
}

// TestDamageAfterSequencePoint garbles the last byte of a V6 sequence
// point (its last thread's number, a one-byte varint, raised by 80) and
// the header of the block after it, as damage that begins a byte before
// the block where the reader finds it does: the sequence point parses,
// and without more its garbled number would show 80 events the runtime
// never dropped. The sequence point's gaps wait for the block after it,
// and damage there takes them back: Dropped is the intact trace's, in
// both orders, and never goes back on the way.
func TestDamageAfterSequencePoint(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		data := buildV6(compressed)
		// The last sequence point followed by another block.
		sp := -1
		for off := 20; off+4 <= len(data); {
			x := le32(data[off:])
			size, kind := int(x&0xFFFFFF), int(x>>24)
			if x == 0 {
				break
			}
			if kind == kindSequencePt && off+4+size+4 < len(data) {
				sp = off
			}
			off += 4 + size
		}
		if sp < 0 {
			t.Fatal("no sequence point with a block after it")
		}
		end := sp + 4 + int(le32(data[sp:])&0xFFFFFF)
		if data[end-1] >= 0x30 {
			t.Fatalf("the sequence point's last byte is %#x, not a small varint", data[end-1])
		}
		bad := bytes.Clone(data)
		bad[end-1] += 80
		for i := end; i < end+4; i++ {
			bad[i] = 0xd2
		}
		for _, order := range []Order{FileOrder, TimeOrder} {
			intact, _ := readDropped(t, data, order)
			got, damage := readDropped(t, bad, order)
			if len(damage) == 0 {
				t.Fatalf("compressed %v, %v: no damage found", compressed, order)
			}
			if got != intact {
				t.Errorf("compressed %v, %v: Dropped %d, the intact trace %d; damage %v", compressed, order, got, intact, damage)
			}
		}
	}
}

// readDropped reads data to its end in order o and returns what Dropped
// says then and the damage; Dropped may never go back on the way.
func readDropped(t *testing.T, data []byte, o Order) (uint64, []Damage) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	r.SetOrder(o)
	var last uint64
	for {
		_, err := r.Next()
		if d := r.Dropped(); d < last {
			t.Fatalf("%v: Dropped went back from %d to %d", o, last, d)
		} else {
			last = d
		}
		if err != nil {
			return r.Dropped(), r.Damage()
		}
	}
}

// TestCutShortCounts: the error for a trace cut short says how many of the
// bytes the cut item needs the input still held, not the file's size or
// none, and a cut that is the only damage is not called skipped.
func TestCutShortCounts(t *testing.T) {
	data := loadTrace(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	have := regexp.MustCompile(`needs (\d+) bytes, the input ends after (\d+) of them`)
	for _, c := range []struct {
		cut        int
		need, held int // 0: checked by the block case below
	}{
		{10, 4, 2},    // the stream header's version word, after "Nettrace"
		{100, 48, 47}, // the Trace object's fields at 53
		{100000, 0, 0},
	} {
		r, err := NewReader(bytes.NewReader(data[:c.cut]))
		if err == nil {
			for err == nil {
				_, err = r.Next()
			}
		}
		m := have.FindStringSubmatch(err.Error())
		if m == nil {
			t.Errorf("cut at %d: %v", c.cut, err)
			continue
		}
		need, _ := strconv.Atoi(m[1])
		held, _ := strconv.Atoi(m[2])
		if c.need != 0 && (need != c.need || held != c.held) {
			t.Errorf("cut at %d: needs %d, held %d; want %d and %d (%v)", c.cut, need, held, c.need, c.held, err)
		}
		var de *DamageError
		if c.need == 0 {
			// A block cut: what it held is the file past the block's
			// header, less than the cut and within a header's size of
			// what follows the block's offset.
			var e *Error
			if !errors.As(err, &e) || !errors.As(err, &de) {
				t.Fatalf("cut at %d: %T %v", c.cut, err, err)
			}
			past := c.cut - int(e.Offset)
			if held >= need || held > past || held < past-64 {
				t.Errorf("cut at %d: block at %d needs %d, held %d; %d bytes follow its offset", c.cut, e.Offset, need, held, past)
			}
			if !strings.HasPrefix(de.Error(), "nettrace: the trace is cut short: ") {
				t.Errorf("cut at %d: %v", c.cut, de)
			}
		}
	}
}

// TestLostAtThreadStart: damage that takes a thread's first events (16
// bytes of 0xff in the 3.0 trace's block at 2,499,205, whose skipped rest
// holds thread 11936's events 1 to 109, its first) counts them as lost:
// the thread's first event after it is its 110th, and a session numbers
// each thread's events from 1. The events read and the events lost add up
// to the intact trace's, which before came 109 short.
func TestLostAtThreadStart(t *testing.T) {
	data := bytes.Clone(loadTrace(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"))
	_, whole, err := readToEnd(data, FileOrder)
	if err != io.EOF {
		t.Fatal(err)
	}
	copy(data[2500000:], bytes.Repeat([]byte{0xff}, 16))
	for _, o := range []Order{FileOrder, TimeOrder} {
		r, n, err := readToEnd(data, o)
		var de *DamageError
		if !errors.As(err, &de) {
			t.Fatalf("%v: %v", o, err)
		}
		var lost int64
		for _, d := range r.Damage() {
			lost += d.Events
		}
		if int64(n)+lost != int64(whole) || r.Dropped() != 0 {
			t.Errorf("%v: %d events read and %d lost, %d dropped; the intact trace has %d", o, n, lost, r.Dropped(), whole)
		}
	}
}
