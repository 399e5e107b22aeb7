package simruntime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/nettrace"
)

// TestLiveDamageDoesNotStall reads a live counters stream (V6, a pipe
// that stays open after its last block) with damage in its first event
// block, and wants the events after the damage as they come:
//
//   - the block's header states a greatest timestamp one tick later than
//     its last event's: nettrace reports the block as read as it stands
//     (checkBlockRange) and needs no proof that the next block is one;
//   - the first event refers to metadata that is not defined: that record
//     is skipped;
//   - the first event's size runs past its block: the rest of the block is
//     skipped, and the reader proves the next block credible (suspect)
//     before it reads it, and checks the damaged block's framing;
//   - that, and the next block's kind damaged: the proof fails and the
//     reader searches for the next block (resync).
//
// Each proof and the search look at the blocks they judge and the header
// after them, not a search window (60 KiB) ahead, which on a live stream
// would wait for bytes the runtime may send minutes later: here, for
// ever.
func TestLiveDamageDoesNotStall(t *testing.T) {
	intervals := [][]Counter{{{Name: "a", Value: 1}, {Name: "b", Value: 2}}, {{Name: "c", Value: 3}}, {{Name: "d", Value: 4}}, {{Name: "e", Value: 5}}, {{Name: "f", Value: 6}}}
	for _, c := range []struct {
		name   string
		damage func(*testing.T, []byte)
		events int    // what the stream holds after the damage
		msg    string // in the first damage record
	}{
		{"none", nil, 6, ""},
		{"block range", rangeOneTickLate, 6, "timestamps span"},
		{"undefined metadata", firstMetaUndefined, 5, "which is not defined"},
		{"event size", firstSizeTooLarge, 4, "out of range"},
		{"event size, then the next block's kind", sizeThenKind, 3, "out of range"},
	} {
		tr, _ := CountersTrace(1234, intervals)
		tr = bytes.Clone(tr)
		if c.damage != nil {
			c.damage(t, tr)
		}
		pr, pw := io.Pipe()
		go pw.Write(tr[:len(tr)-4]) // all but the EndOfStream block
		got := make(chan int, 16)
		errc := make(chan error, 1)
		go func() {
			r, err := nettrace.NewReader(pr)
			if err != nil {
				errc <- err
				return
			}
			r.SetOrder(nettrace.TimeOrder)
			r.SetLowLatency(true)
			for n := 1; ; n++ {
				if _, err := r.Next(); err != nil {
					errc <- err
					return
				}
				got <- n
			}
		}()
		n := 0
		deadline := time.After(5 * time.Second)
	wait:
		for n < c.events {
			select {
			case n = <-got:
			case err := <-errc:
				t.Fatalf("%s: %v after %d events", c.name, err, n)
			case <-deadline:
				break wait
			}
		}
		// The last event waits for a later IsSorted event, as in any
		// live stream (SetLowLatency).
		if n < c.events-1 {
			t.Errorf("%s: %d events within 5 s of a stream that holds %d, want at least %d", c.name, n, c.events, c.events-1)
		}
		pw.Close()
		err := <-errc
		var de *nettrace.DamageError
		switch {
		case c.damage == nil && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Errorf("%s, cut: %v", c.name, err)
		case c.damage != nil && (!errors.As(err, &de) || !strings.Contains(de.Damage[0].Err.Error(), c.msg)):
			t.Errorf("%s, cut: %v, want %q in the first damage", c.name, err, c.msg)
		}
	}
}

// firstEventBlock returns the content of the first event block of the V6
// trace tr.
func firstEventBlock(t *testing.T, tr []byte) []byte {
	t.Helper()
	// "Nettrace", a reserved uint32, the major and minor versions: then
	// blocks, each a uint32 of its size and, in the top byte, its kind.
	for i := 8 + 4 + 4 + 4; i+4 <= len(tr); {
		h := binary.LittleEndian.Uint32(tr[i:])
		size, kind := int(h&0xFFFFFF), h>>24
		if kind == 2 { // EventBlock
			return tr[i+4 : i+4+size]
		}
		i += 4 + size
	}
	t.Fatal("no event block")
	return nil
}

// rangeOneTickLate moves the greatest timestamp the first event block of
// the V6 trace tr states one tick later.
func rangeOneTickLate(t *testing.T, tr []byte) {
	// Header size, flags, least, greatest.
	b := firstEventBlock(t, tr)
	binary.LittleEndian.PutUint64(b[12:], binary.LittleEndian.Uint64(b[12:])+1)
}

// firstMetaUndefined makes the first event of the V6 trace tr refer to
// metadata ID 85, which it does not define.
func firstMetaUndefined(t *testing.T, tr []byte) {
	// The simulated runtime writes uncompressed headers: the event's
	// size, then its metadata ID.
	b := firstEventBlock(t, tr)
	hs := binary.LittleEndian.Uint16(b)
	if flags := binary.LittleEndian.Uint16(b[2:]); flags&1 != 0 {
		t.Fatal("compressed headers")
	}
	binary.LittleEndian.PutUint32(b[hs+4:], 85)
}

// firstSizeTooLarge makes the first event of the V6 trace tr state a size
// that runs past its block.
func firstSizeTooLarge(t *testing.T, tr []byte) {
	b := firstEventBlock(t, tr)
	hs := binary.LittleEndian.Uint16(b)
	binary.LittleEndian.PutUint32(b[hs:], 0xFFFF)
}

// sizeThenKind damages the first event's size in the V6 trace tr
// (firstSizeTooLarge), and the kind of the block after the first event
// block: after the first damage the reader believes a block only when it
// checks, and that one does not, so it searches for the next block
// (resync), which looked 60 KiB ahead at once.
func sizeThenKind(t *testing.T, tr []byte) {
	firstSizeTooLarge(t, tr)
	events := 0
	for i := 8 + 4 + 4 + 4; i+4 <= len(tr); {
		h := binary.LittleEndian.Uint32(tr[i:])
		if events == 1 {
			tr[i+3] = 0xEE
			return
		}
		if h>>24 == 2 { // EventBlock
			events++
		}
		i += 4 + int(h&0xFFFFFF)
	}
	t.Fatal("no block after the first event block")
}
