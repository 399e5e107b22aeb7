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

// TestLiveRangeDamageDoesNotStall reads a live counters stream (V6, a
// pipe that stays open after its last block) whose first event block's
// header states a greatest timestamp one tick later than its last
// event's: nettrace reports the block as read as it stands
// (checkBlockRange) and goes on to the blocks after it as they come. Damage
// recorded otherwise makes the reader prove the next block credible by
// looking a search window (60 KiB) ahead, which on a live stream waits
// for bytes the runtime may send minutes later: here, for ever.
func TestLiveRangeDamageDoesNotStall(t *testing.T) {
	intervals := [][]Counter{{{Name: "a", Value: 1}, {Name: "b", Value: 2}}, {{Name: "c", Value: 3}}, {{Name: "d", Value: 4}}}
	for _, damaged := range []bool{false, true} {
		tr, _ := CountersTrace(1234, intervals)
		tr = bytes.Clone(tr)
		if damaged {
			rangeOneTickLate(t, tr)
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
		for n < 4 {
			select {
			case n = <-got:
			case err := <-errc:
				t.Fatalf("damaged %v: %v after %d events", damaged, err, n)
			case <-deadline:
				break wait
			}
		}
		// Four events; the last waits for a later IsSorted event, as in
		// any live stream (SetLowLatency).
		if n < 3 {
			t.Errorf("damaged %v: %d events within 5 s of a stream that holds 4, want at least 3", damaged, n)
		}
		pw.Close()
		err := <-errc
		var de *nettrace.DamageError
		switch {
		case !damaged && !errors.Is(err, io.ErrUnexpectedEOF):
			t.Errorf("undamaged, cut: %v", err)
		case damaged && (!errors.As(err, &de) || !strings.Contains(de.Damage[0].Err.Error(), "timestamps span")):
			t.Errorf("damaged, cut: %v, want the block range damage first", err)
		}
	}
}

// rangeOneTickLate moves the greatest timestamp the first event block of
// the V6 trace tr states one tick later.
func rangeOneTickLate(t *testing.T, tr []byte) {
	t.Helper()
	// "Nettrace", a reserved uint32, the major and minor versions: then
	// blocks, each a uint32 of its size and, in the top byte, its kind.
	for i := 8 + 4 + 4 + 4; i+4 <= len(tr); {
		h := binary.LittleEndian.Uint32(tr[i:])
		size, kind := int(h&0xFFFFFF), h>>24
		if kind == 2 { // EventBlock: header size, flags, least, greatest
			b := tr[i+4:]
			binary.LittleEndian.PutUint64(b[12:], binary.LittleEndian.Uint64(b[12:])+1)
			return
		}
		i += 4 + size
	}
	t.Fatal("no event block")
}
