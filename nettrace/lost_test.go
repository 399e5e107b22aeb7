package nettrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// patch is 4 bytes written over a trace at an offset.
type patch struct {
	at int
	b  [4]byte
}

func patched(data []byte, ps ...patch) []byte {
	bad := bytes.Clone(data)
	for _, p := range ps {
		copy(bad[p.at:], p.b[:])
	}
	return bad
}

// lostRead reads data to its end in order o and returns the events that
// came out, the events the damage records count as lost, the runtime's
// drops, and whether any damage was found.
func lostRead(t *testing.T, data []byte, o Order) (n int, lost int64, dropped uint64, damaged bool) {
	t.Helper()
	r, n, _ := readToEnd(data, o)
	for _, d := range r.Damage() {
		if d.Events < 0 {
			t.Fatalf("%v: damage %v counts no events, in a V4 trace", o, d)
		}
		lost += d.Events
	}
	return n, lost, r.Dropped(), len(r.Damage()) > 0
}

// checkLost reads the trace with the patches in both orders: the events
// counted as lost are no more than the events that did not come out, but
// for a margin (and, when near, no fewer than nine tenths of them); the
// runtime's drops are no more than those of the patches that the reader,
// reading each alone, does not find as damage (a header garbled so that
// it still parses, whose numbers the reader takes for the runtime's). It
// reports whether the reader found damage.
func checkLost(t *testing.T, what string, data []byte, whole int, ps []patch, margin int64, near bool) bool {
	t.Helper()
	bad := patched(data, ps...)
	var unseen uint64
	for _, o := range []Order{FileOrder, TimeOrder} {
		n, lost, dropped, damaged := lostRead(t, bad, o)
		if !damaged {
			return false
		}
		missing := int64(whole - n)
		if lost > missing+margin || near && lost*10 < missing*9 {
			t.Errorf("%s, %v: %d events read, %d missing, %d counted lost", what, o, n, missing, lost)
		}
		if dropped == 0 {
			continue
		}
		if o == FileOrder {
			for _, p := range ps {
				if _, _, d, found := lostRead(t, patched(data, p), FileOrder); !found {
					unseen += d
				}
			}
		}
		if dropped > unseen {
			t.Errorf("%s, %v: %d events dropped; the patches not found as damage, each alone, %d", what, o, dropped, unseen)
		}
	}
	return true
}

// TestLostAcrossDamages writes 4 bytes over the .NET Core 3.0 trace in
// more than one place. A header that damage garbles but that still parses
// (its metadata ID defined) can carry a capture thread ID no thread has
// and a sequence number inherited from the header before it: such a
// thread, first seen after earlier damage, counted its whole number as
// events lost to that damage (44,086 events here, for the patch at
// 3,484,759 read after the one at 3,237,253, where each alone is counted
// within 8 events), up to the most the damaged range could hold, and one
// read in a block where damage was then found was counted all the same.
// The events counted as lost were 19,102 for 5,309 missing with those
// two patches, and 102,225 for 17,367 with the 40 patches below.
func TestLostAcrossDamages(t *testing.T) {
	data := loadTrace(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	_, whole, err := readToEnd(data, FileOrder)
	if err != io.EOF || whole != 105540 {
		t.Fatalf("the intact trace: %d events, %v", whole, err)
	}
	a := patch{3237253, [4]byte{0xb1, 0x0b, 0xec, 0xb5}}
	b := patch{3484759, [4]byte{0xb7, 0xc2, 0x76, 0x4d}}
	for _, c := range []struct {
		what string
		ps   []patch
	}{
		{"the patch at 3237253", []patch{a}},
		{"the patch at 3484759", []patch{b}},
		{"both", []patch{a, b}},
	} {
		if !checkLost(t, c.what, data, whole, c.ps, 16, true) {
			t.Errorf("%s: no damage found", c.what)
		}
	}
	forty := []patch{
		{2956, [4]byte{0x4d, 0x33, 0xba, 0x0d}}, {35339, [4]byte{0x4a, 0xd6, 0xbd, 0xa3}},
		{102192, [4]byte{0xf8, 0x5d, 0x86, 0x90}}, {315536, [4]byte{0x2c, 0xde, 0xd6, 0x23}},
		{391763, [4]byte{0x44, 0x94, 0xd6, 0x49}}, {523172, [4]byte{0x61, 0x22, 0x6a, 0xe1}},
		{546259, [4]byte{0x1f, 0x9e, 0xe4, 0x91}}, {590849, [4]byte{0x6a, 0xc0, 0x4c, 0x81}},
		{615053, [4]byte{0x3c, 0xd6, 0x54, 0xaf}}, {697126, [4]byte{0x5a, 0x4d, 0x76, 0x77}},
		{721452, [4]byte{0x49, 0x34, 0xaf, 0x87}}, {1053699, [4]byte{0x1b, 0xe9, 0xc8, 0xcb}},
		{1230791, [4]byte{0x0d, 0x98, 0x2e, 0x85}}, {1275938, [4]byte{0xfa, 0xd7, 0x14, 0x27}},
		{1362497, [4]byte{0x38, 0xae, 0x1a, 0x34}}, {1410691, [4]byte{0x3b, 0xfc, 0x1e, 0x6f}},
		{1873664, [4]byte{0x1f, 0xcb, 0x19, 0x71}}, {2019827, [4]byte{0x2e, 0xd9, 0x1e, 0x3f}},
		{2084953, [4]byte{0x5c, 0x7c, 0x29, 0x99}}, {2412153, [4]byte{0x42, 0x7e, 0xcb, 0xc8}},
		{2636257, [4]byte{0xee, 0xe8, 0xb9, 0x99}}, {2717506, [4]byte{0x4d, 0xca, 0x18, 0x25}},
		{2915114, [4]byte{0xba, 0xf2, 0x3e, 0x3b}}, {3237253, [4]byte{0xb1, 0x0b, 0xec, 0xb5}},
		{3347877, [4]byte{0xc9, 0x35, 0xf6, 0xcd}}, {3362184, [4]byte{0x74, 0x66, 0xfc, 0xb6}},
		{3484759, [4]byte{0xb7, 0xc2, 0x76, 0x4d}}, {3827927, [4]byte{0x23, 0x2f, 0x8a, 0xf2}},
		{4015971, [4]byte{0x52, 0x0b, 0x69, 0xb9}}, {4095211, [4]byte{0xee, 0xf5, 0xf7, 0x9f}},
		{4166000, [4]byte{0x29, 0x55, 0xe5, 0xcd}}, {4349628, [4]byte{0xbb, 0x55, 0xb6, 0x72}},
		{4406667, [4]byte{0xfd, 0xaf, 0xe5, 0x93}}, {4468708, [4]byte{0xa8, 0x72, 0x63, 0x7a}},
		{4496304, [4]byte{0x30, 0xbb, 0x1d, 0x6d}}, {4536601, [4]byte{0x3c, 0x9d, 0x5c, 0x34}},
		{4610036, [4]byte{0x8e, 0x46, 0xdc, 0x8e}}, {4682478, [4]byte{0xa0, 0xae, 0xb3, 0xfe}},
		{4735264, [4]byte{0x1e, 0x69, 0xfe, 0xda}}, {4792609, [4]byte{0x60, 0xbe, 0x31, 0x20}},
	}
	if !checkLost(t, "40 patches", data, whole, forty, 16, true) {
		t.Error("40 patches: no damage found")
	}
}

// TestLostSweep writes 4 random bytes over the .NET Core 3.0 trace at 10
// random places, 8 times: the events counted as lost stay within a
// margin of the events missing (they were 48,823 for 9,962 missing, and
// 3,768 for 2,640), and damage the reader finds never counts as the
// runtime's drops.
func TestLostSweep(t *testing.T) {
	data := loadTrace(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	_, whole, _ := readToEnd(data, FileOrder)
	rng := rand.New(rand.NewPCG(5, 7))
	for range 8 {
		var ps []patch
		for range 10 {
			p := patch{at: 200 + rng.IntN(len(data)-204)}
			v := rng.Uint32()
			p.b = [4]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
			ps = append(ps, p)
		}
		checkLost(t, fmt.Sprint(ps), data, whole, ps, 32, false)
	}
}

// TestHugeSequenceNumber writes 4 bytes over the number a sequence point
// of the .NET Core 3.0 trace (at 4,674,636) records for thread 12248,
// 5,820, making it 2,627,283,069. The reader cannot tell that from the
// runtime's, and no damage is found; but a number of 2^31 or more is no
// thread's, and the gap from it to the thread's next, 5,821, is not
// counted: it was, as 1,667,690,047 events dropped (the difference
// modulo 2^32), on a trace with none.
func TestHugeSequenceNumber(t *testing.T) {
	data := loadTrace(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	if th, seq := binary.LittleEndian.Uint64(data[4674780:]), binary.LittleEndian.Uint32(data[4674788:]); th != 12248 || seq != 5820 {
		t.Fatalf("the sequence point's entry at 4674780: thread %d, number %d; want 12248 and 5820", th, seq)
	}
	bad := patched(data, patch{4674788, [4]byte{0x7d, 0x28, 0x99, 0x9c}})
	for _, o := range []Order{FileOrder, TimeOrder} {
		if dropped, _ := readDropped(t, bad, o); dropped != 0 {
			t.Errorf("%v: %d events dropped, want 0", o, dropped)
		}
	}
}
