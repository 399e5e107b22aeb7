package nettrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"
)

// TestCompressedFast: the compressed header decoder that reads without
// checks (readEventHeader, with maxCompressedHeader bytes or more left in
// the block) ends in the same state as the careful one, with the same
// payload, end and error, for random headers of every shape: each flag
// set or not, varints of every length (overlong encodings, values past 32
// and 64 bits, no terminator within 10 bytes), V4 and V6, and payload
// sizes that do and do not fit the block.
func TestCompressedFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	varint := func(b []byte) []byte {
		switch rng.IntN(8) {
		case 0: // past 32 bits
			return binary.AppendUvarint(b, 1<<32+rng.Uint64N(1<<40))
		case 1: // overlong: 10 bytes, the last one 0 or overflowing
			for range 9 {
				b = append(b, 0x80|byte(rng.IntN(128)))
			}
			return append(b, byte(rng.IntN(3)))
		case 2: // no end within 10 bytes
			for range 11 {
				b = append(b, 0x80|byte(rng.IntN(128)))
			}
			return b
		case 3: // a full 64-bit value
			return binary.AppendUvarint(b, rng.Uint64())
		case 4: // overlong but in range: a 0x80 byte before the end
			b = binary.AppendUvarint(b, rng.Uint64N(1<<20))
			b[len(b)-1] |= 0x80
			return append(b, 0)
		}
		return binary.AppendUvarint(b, rng.Uint64N(1<<uint(rng.IntN(33))))
	}
	fields := func(v6 bool, flags byte) []byte {
		b := []byte{flags}
		if flags&1 != 0 {
			b = varint(b)
		}
		if flags&2 != 0 {
			b = varint(varint(varint(b)))
		}
		if flags&4 != 0 {
			b = varint(b)
		}
		if flags&8 != 0 {
			b = varint(b)
		}
		b = varint(b)
		if v6 {
			if flags&16 != 0 {
				b = varint(b)
			}
		} else {
			for _, f := range []byte{16, 32} {
				if flags&f != 0 {
					for range 16 {
						b = append(b, byte(rng.IntN(256)))
					}
				}
			}
		}
		if flags&128 != 0 {
			b = varint(b)
		}
		return b
	}
	for i := range 200000 {
		v6 := i%2 == 1
		b := fields(v6, byte(rng.IntN(256)))
		if rng.IntN(4) == 0 {
			b = b[:rng.IntN(len(b)+1)] // cut: the careful path's errors
		}
		tail := rng.IntN(300)
		for range tail {
			b = append(b, byte(rng.IntN(256)))
		}
		h0 := evHeader{
			metaID: rng.Uint32N(100), seq: rng.Uint32(), threadID: rng.Uint64(), captureThreadID: rng.Uint64(),
			proc: rng.Uint32(), stackID: rng.Uint32(), ts: rng.Int64(), labelID: rng.Uint32(),
			payloadSize: rng.Uint32N(400), sorted: rng.IntN(2) == 0,
		}
		h0.activity[rng.IntN(16)] = 1
		ver := 4
		if v6 {
			ver = 6
		}
		start := rng.IntN(8)
		blk := append(make([]byte, start), b...)
		fast := &Reader{ver: ver, blk: blk, pos: start, compress: true, hdr: h0}
		careful := &Reader{ver: ver, blk: blk, pos: start, compress: true, hdr: h0}
		p1, e1, _, err1 := fast.readEventHeader()
		p2, e2, err2 := careful.compressedHeader(start)
		if p1 != p2 || e1 != e2 || fmt.Sprint(err1) != fmt.Sprint(err2) || fast.hdr != careful.hdr {
			t.Fatalf("case %d (V%d, %d bytes from %d): fast %d %d %v %+v\ncareful %d %d %v %+v\n% x",
				i, ver, len(blk)-start, start, p1, e1, err1, fast.hdr, p2, e2, err2, careful.hdr, b)
		}
	}
}

// TestEventTime: Time, computed when asked for, is the sync time plus the
// timestamp's distance from it in both orders, stays right in a copy of
// the Event after the Reader has moved on, and is the zero Time for an
// Event no Reader made.
func TestEventTime(t *testing.T) {
	data := loadTrace(t, "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip")
	for _, o := range []Order{FileOrder, TimeOrder} {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.SetOrder(o)
		info := r.Info()
		var prev Event
		n := 0
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			want := info.SyncTime.Add(time.Duration(float64(e.Timestamp-info.SyncTimeQPC) * 1e9 / float64(info.QPCFrequency)))
			if d := e.Time().Sub(want); d < -time.Microsecond || d > time.Microsecond || e.Time().Location() != time.UTC {
				t.Fatalf("%v: event at %d: Time %v, want %v", o, e.Offset, e.Time(), want)
			}
			if n > 0 && !prev.Time().Equal(info.TicksToTime(prev.Timestamp)) {
				t.Fatalf("%v: a copy of the event at %d: Time %v after the next Next, want %v", o, prev.Offset, prev.Time(), info.TicksToTime(prev.Timestamp))
			}
			prev = *e
			n++
		}
		if n != 105540 {
			t.Fatalf("%v: %d events, want 105540", o, n)
		}
	}
	if tm := (&Event{Timestamp: 5}).Time(); !tm.IsZero() {
		t.Errorf("Time of an Event no Reader made: %v, want the zero Time", tm)
	}
}

// TestHeldRecSize: a held event (time order) fills one cache line.
func TestHeldRecSize(t *testing.T) {
	if n := unsafe.Sizeof(heldRec{}); n != 64 {
		t.Errorf("heldRec is %d bytes, want 64", n)
	}
}
