package nettrace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fullEvent is what the size-damage tests compare of an event: where it
// is, what it is, its payload and its stack.
type fullEvent struct {
	off      int64
	provider string
	id       uint16
	payload  uint64
	stack    uint64 // FNV-1a of the IPs; 0 for none
	frames   int
}

// eventKey names an event of a V4+ trace: its capture thread's sequence
// number and its time.
type eventKey struct {
	ts  int64
	ct  uint64
	seq uint32
}

// readFull reads data in order to its end and returns its events by key,
// how many came out, the damage and the error that ended it.
func readFull(t *testing.T, data []byte, order Order) (map[eventKey]fullEvent, int, []Damage, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	r.SetOrder(order)
	m := map[eventKey]fullEvent{}
	n := 0
	for {
		ev, err := r.Next()
		if err != nil {
			return m, n, r.Damage(), err
		}
		n++
		h := fnv.New64a()
		h.Write(ev.Payload)
		e := fullEvent{off: ev.Offset, provider: ev.Provider, id: ev.ID, payload: h.Sum64(), frames: len(ev.Stack)}
		if len(ev.Stack) > 0 {
			h.Reset()
			for _, ip := range ev.Stack {
				fmt.Fprintf(h, "%x,", ip)
			}
			e.stack = h.Sum64()
		}
		m[eventKey{ev.Timestamp, ev.CaptureThreadID, ev.SequenceNumber}] = e
	}
}

// fsBlock is a V4/V5 block object of a trace: where its header starts, its
// name, where its size field is and the stream offset just past its
// EndObject tag.
type fsBlock struct {
	hdr, sizeAt, end int
	name             string
}

// content returns where the block's content starts: after its size and
// the padding to a 4-byte offset (the stream's, which is the file's).
func (b fsBlock) content() int { return b.sizeAt + 4 + (4-(b.sizeAt+4)&3)&3 }

// record is a record of a V4/V5 event or metadata block of compressed
// headers: where its header and its payload start.
type record struct{ hdr, payload int }

// compressedRecords returns the records of block b of data, an event or
// metadata block of compressed headers, each header read as the reader
// reads it.
func compressedRecords(data []byte, b fsBlock) []record {
	p := b.content()
	c := cursor{b: data[:b.end-1], i: p + int(binary.LittleEndian.Uint16(data[p:]))}
	var h evHeader
	var out []record
	for c.left() > 0 && !c.bad {
		at := c.i
		h.readCompressed(&c, false)
		out = append(out, record{at, c.i})
		c.bytes(int(h.payloadSize))
	}
	return out
}

// lostBlock returns the pyroscope single-thread trace (V5), its block k
// (which must be a name), and a copy in which that block is lost: its
// object header's first tag and the first letter of its type name
// flipped (with the tags alone damaged, the block is read:
// TestBlockTagsDamaged).
func lostBlock(t *testing.T, k int, name string) (data []byte, blk fsBlock, bad []byte) {
	t.Helper()
	data = loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	blk = fsBlocks(data)[k]
	if blk.name != name {
		t.Fatalf("block %d is a %s, not a %s", k, blk.name, name)
	}
	bad = bytes.Clone(data)
	bad[blk.hdr] ^= 0xff
	bad[blk.hdr+15] ^= 0xff
	return data, blk, bad
}

// fsBlocks lists the block objects of an intact V4/V5 trace.
func fsBlocks(data []byte) []fsBlock {
	var out []fsBlock
	for _, i := range blockHeaders(data) {
		n := int(le32(data[i+11:]))
		at := i + 15 + n + 1
		size := int(le32(data[at:]))
		pad := (4 - (at+4)&3) & 3
		out = append(out, fsBlock{hdr: i, sizeAt: at, end: at + 4 + pad + size + 1, name: string(data[i+15 : i+15+n])})
	}
	return out
}

// TestBlockSizeDamage flips bits of a block's size field so that the size
// grows: the block swallows the blocks after it (a StackBlock its
// MetadataBlock and EventBlocks; a MetadataBlock its event blocks; an
// EventBlock the StackBlock after it, or 32 KiB of blocks, to an
// EndObject and a NullReference byte that were taken for the stream's
// end, which lost the 674 events after it), or runs past the input's end. The
// next block's header is in the bytes read as the damaged block: the
// reader finds it there, ends the block at it and reads every block after
// it. Nothing is lost, nothing changes (stacks included), nothing is
// invented; the damage is one record of the size field, in the damaged
// block, that lost no event; strict mode stops there.
func TestBlockSizeDamage(t *testing.T) {
	pyro := loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	arr := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	blockAt := func(data []byte, hdr int) int {
		for i, b := range fsBlocks(data) {
			if b.hdr == hdr {
				return i
			}
		}
		t.Fatalf("no block at %d", hdr)
		return -1
	}
	for _, c := range []struct {
		what  string
		data  []byte
		block int // index among the trace's blocks
		byte  int // of the size field
		mask  byte
	}{
		{"pyroscope StackBlock swallows the rest", pyro, 1, 1, 0xff},
		// The damaged size ends the block on an EndObject byte followed
		// by a NullReference byte, 32 KiB on, in an event's bytes: not
		// the stream's end, which is its last byte.
		{"pyroscope EventBlock ends on an EndObject and a NullReference", pyro, blockAt(pyro, 304036), 1, 0x80},
		{"pyroscope MetadataBlock swallows event blocks", pyro, 0, 1, 0xff},
		{"pyroscope MetadataBlock 128 bytes longer", pyro, 0, 0, 0x80},
		{"pyroscope EventBlock swallows a StackBlock", pyro, 2, 1, 0xff},
		{"arraytypes StackBlock swallows the rest", arr, 1, 1, 0xff},
		{"arraytypes EventBlock runs past the input", arr, 5, 3, 0x01},
	} {
		t.Run(c.what, func(t *testing.T) {
			blk := fsBlocks(c.data)[c.block]
			bad := bytes.Clone(c.data)
			at := blk.sizeAt + c.byte
			bad[at] ^= c.mask
			if le32(bad[blk.sizeAt:]) <= le32(c.data[blk.sizeAt:]) {
				t.Fatalf("the size did not grow")
			}
			for _, order := range []Order{FileOrder, TimeOrder} {
				want, _, _, err := readFull(t, c.data, order)
				if err != io.EOF {
					t.Fatalf("intact trace: %v", err)
				}
				got, n, damage, err := readFull(t, bad, order)
				if !errors.Is(err, ErrDamaged) {
					t.Errorf("%v: ended with %v, want a *DamageError", order, err)
				}
				lost, changed := diffEvents(want, got)
				if lost > 0 || changed > 0 || n != len(want) {
					t.Errorf("%v: %d of %d events out, %d lost, %d changed", order, n, len(want), lost, changed)
				}
				for _, d := range damage {
					if d.Offset < int64(blk.hdr) || d.Offset >= int64(blk.end) || d.Events != 0 {
						t.Errorf("%v: damage %v, want one in the block [%d, %d) that lost nothing", order, d, blk.hdr, blk.end)
					}
				}
				if len(damage) != 1 {
					t.Errorf("%v: %d damage records, want 1", order, len(damage))
				}
			}
			err := strictEnd(t, bad)
			var e *Error
			if !errors.As(err, &e) || errors.Is(err, ErrDamaged) || e.BlockOffset != int64(blk.hdr) {
				t.Errorf("strict: %v, want the *Error of the block at %d", err, blk.hdr)
			}
		})
	}
}

// TestSwappedBlocksPhase swaps two adjacent EventBlocks of the 5.0
// arraytypes trace, of 435 and 279 bytes, and each pair of adjacent
// EventBlocks of the pyroscope trace whose swap moves them to another
// 4-byte phase: each lands on another phase than the one its padding was
// written for, while everything after them is where it was. The first
// is read with the padding that fits it (its content's start, its end,
// its records), and the alignment it brings is not carried into the
// intact blocks after the second: nothing is lost (the swapped blocks'
// events once were, most of them counted as the runtime's drops),
// changed or invented; the damage is one
// record of the first block's padding that lost no event, the runtime's
// drops are the intact trace's, and time order is in time order.
func TestSwappedBlocksPhase(t *testing.T) {
	arr := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	pyro := loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	swaps := 0
	for _, data := range [][]byte{arr, pyro} {
		blocks := fsBlocks(data)
		ri, _, _ := readToEnd(data, FileOrder)
		for i := 0; i+2 < len(blocks); i++ {
			if blocks[i].name != "EventBlock" || blocks[i+1].name != "EventBlock" || (blocks[i+1].hdr-blocks[i].hdr)%4 == 0 {
				continue
			}
			swaps++
			a, b, c := blocks[i].hdr, blocks[i+1].hdr, blocks[i+2].hdr
			bad := slices.Concat(data[:a], data[b:c], data[a:b], data[c:])
			padAt := a + (blocks[i+1].sizeAt - b) + 4 // the moved block's padding
			for _, order := range []Order{FileOrder, TimeOrder} {
				want, _, _, err := readFull(t, data, order)
				if err != io.EOF {
					t.Fatalf("intact trace: %v", err)
				}
				got, _, damage, err := readFull(t, bad, order)
				lost, changed := 0, 0
				for k, w := range want {
					g, ok := got[k]
					if !ok {
						lost++
						continue
					}
					if w.off >= int64(a) && w.off < int64(c) {
						g.off = w.off // moved with its block
					}
					if g != w {
						changed++
					}
				}
				invented := len(got) - (len(want) - lost)
				r, _, _ := readToEnd(bad, order)
				if lost > 0 || changed > 0 || invented > 0 || r.Dropped() != ri.Dropped() || !errors.Is(err, ErrDamaged) ||
					len(damage) != 1 || damage[0].Offset != int64(padAt) || damage[0].Events != 0 {
					t.Errorf("blocks %d and %d swapped, %v: %d lost, %d changed, %d invented, %d dropped (intact: %d); %v, damage %v",
						i, i+1, order, lost, changed, invented, r.Dropped(), ri.Dropped(), err, damage)
				}
			}
			r, _ := NewReader(bytes.NewReader(bad))
			r.SetOrder(TimeOrder)
			var last int64
			for {
				ev, err := r.Next()
				if err != nil {
					break
				}
				if ev.Timestamp < last {
					t.Errorf("blocks %d and %d swapped, TimeOrder: %d after %d", i, i+1, ev.Timestamp, last)
					break
				}
				last = ev.Timestamp
			}
		}
	}
	if swaps < 20 {
		t.Errorf("%d swaps", swaps)
	}
}

// TestLostStackBlock loses a StackBlock of the pyroscope trace (its
// object header damaged, lostBlock): the events after it that refer to
// its stacks are not handed out stackless, but skipped and counted, in
// one Damage of their kind, as events whose metadata is lost are. Every
// event that comes out is the intact trace's, its stack included, and
// the damage counts each event missing.
func TestLostStackBlock(t *testing.T) {
	data, _, bad := lostBlock(t, 3, "StackBlock")
	for _, order := range []Order{FileOrder, TimeOrder} {
		want, _, _, _ := readFull(t, data, order)
		got, n, damage, err := readFull(t, bad, order)
		if !errors.Is(err, ErrDamaged) {
			t.Errorf("%v: ended with %v, want a *DamageError", order, err)
		}
		lost, changed := diffEvents(want, got)
		var counted int64
		stackRecords := 0
		for _, d := range damage {
			if d.Events > 0 {
				counted += d.Events
			}
			if strings.Contains(d.Err.Msg, "stack id") {
				stackRecords++
			}
		}
		if changed > 0 || n+lost != len(want) || lost == 0 || counted != int64(lost) || stackRecords != 1 {
			t.Errorf("%v: %d events out, %d lost, %d changed; %d counted lost, %d records of undefined stacks (want 1): %v", order, n, lost, changed, counted, stackRecords, damage)
		}
	}
}

// TestFirstObjectTags damages each tag of the stream's first object's
// header (Trace; EventPipeFile in a .netperf V2 trace), whose type name
// and the rest are right: the trace is read whole, the tags recorded as
// one Damage of their 3 bytes that lost no event; strict mode stops.
func TestFirstObjectTags(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"pyroscope", loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")},
		{"2.0 first1300", loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip"))},
	} {
		at := bytes.Index(c.data, []byte("!FastSerialization.1")) + 20
		_, want, err := readToEnd(c.data, FileOrder)
		if err != io.EOF || c.data[at] != tagBeginPrivateObject && c.data[at] != tagBeginObject {
			t.Fatalf("%s: intact trace: %v, byte %d at %d", c.name, err, c.data[at], at)
		}
		for i := range 3 {
			bad := bytes.Clone(c.data)
			bad[at+i] ^= 0xff
			for _, order := range []Order{FileOrder, TimeOrder} {
				r, n, err := readToEnd(bad, order)
				if r == nil {
					t.Errorf("%s, tag %d: NewReader: %v", c.name, i, err)
					continue
				}
				d := r.Damage()
				if n != want || !errors.Is(err, ErrDamaged) || len(d) != 1 || d[0].Offset != int64(at) || d[0].Length != 3 || d[0].Events != 0 {
					t.Errorf("%s, tag %d, %v: %d of %d events, %v, damage %v", c.name, i, order, n, want, err, d)
				}
			}
			r, err := NewReader(bytes.NewReader(bad))
			if err != nil {
				t.Fatal(err)
			}
			r.SetStrict(true)
			if _, err := r.Next(); err == nil || errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "bad tags") {
				t.Errorf("%s, tag %d, strict: %v", c.name, i, err)
			}
		}
	}
}

// TestResyncCounted damages the first tag of an EventBlock's object header
// in the pyroscope trace (V5): the reader searches on to the next block
// header, and the whole block's events are lost. The threads' sequence
// numbers tell how many: the Damage counts them (it said -1, unknown, for
// every range the search passed over).
func TestResyncCounted(t *testing.T) {
	data, blk, bad := lostBlock(t, 4, "EventBlock")
	for _, order := range []Order{FileOrder, TimeOrder} {
		want, _, _, _ := readFull(t, data, order)
		got, _, damage, err := readFull(t, bad, order)
		lost := len(want) - len(got)
		if !errors.Is(err, ErrDamaged) || len(damage) != 1 || damage[0].Offset != int64(blk.hdr) || damage[0].Events != int64(lost) || lost == 0 {
			t.Errorf("%v: %d events lost; %v, damage %v", order, lost, err, damage)
		}
	}
}

// TestUndefinedOneRecordPerKind loses the pyroscope trace's first
// MetadataBlock (its object header damaged, lostBlock): the events that
// refer to any of its metadata IDs are skipped and counted in one Damage,
// as the doc says ("in one Damage per kind"), not one per ID; the count is
// the events lost.
func TestUndefinedOneRecordPerKind(t *testing.T) {
	data, _, bad := lostBlock(t, 0, "MetadataBlock")
	for _, order := range []Order{FileOrder, TimeOrder} {
		want, _, _, _ := readFull(t, data, order)
		got, _, damage, _ := readFull(t, bad, order)
		lost := int64(len(want) - len(got))
		var counted int64
		metaRecords := 0
		for _, d := range damage {
			counted += max(d.Events, 0)
			if strings.Contains(d.Err.Msg, "metadata id") {
				metaRecords++
			}
		}
		if metaRecords != 1 || counted != lost {
			t.Errorf("%v: %d records of undefined metadata, want 1; %d events lost, %d counted: %v", order, metaRecords, lost, counted, damage)
		}
	}
}

// TestStackBlockFirstID damages the first stack ID of StackBlocks of the
// pyroscope trace: the first after the trace's start, the second of a
// sequence point's stretch. The runtime numbers stacks from 1 after each
// sequence point and on from block to block, so the ID the block must
// have is known: it is read with that one, every event keeps its stack,
// and the field is one Damage of its 4 bytes that lost no event. (Read as
// it stood, the block gave every event of the stretch another block's
// stack, or none.)
func TestStackBlockFirstID(t *testing.T) {
	data := loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	var stacks []fsBlock
	for _, b := range fsBlocks(data) {
		if b.name == "StackBlock" {
			stacks = append(stacks, b)
		}
	}
	for _, c := range []struct {
		block, byte int
		mask        byte
	}{{0, 0, 0xff}, {0, 0, 0x01}, {0, 3, 0x80}, {1, 0, 0x01}, {1, 1, 0x10}} {
		blk := stacks[c.block]
		at := blk.content() // the first ID, the count
		bad := bytes.Clone(data)
		bad[at+c.byte] ^= c.mask
		for _, order := range []Order{FileOrder, TimeOrder} {
			want, _, _, _ := readFull(t, data, order)
			got, n, damage, err := readFull(t, bad, order)
			changed := changedEvents(want, got)
			if changed > 0 || n != len(want) || !errors.Is(err, ErrDamaged) || len(damage) != 1 || damage[0].Offset != int64(at) || damage[0].Length != 4 || damage[0].Events != 0 {
				t.Errorf("StackBlock %d, byte %d ^%#x, %v: %d of %d events out, %d lost or changed; %v, damage %v", c.block, c.byte, c.mask, order, n, len(want), changed, err, damage)
			}
		}
	}
}

// TestZeroedStackBlock zeroes a StackBlock's contents in the pyroscope
// trace: a count of 0 with bytes after it is damage, recorded at the
// block, and the events that referred to its stacks are skipped and
// counted (the block passed for an empty one, and nothing said where the
// stacks went).
func TestZeroedStackBlock(t *testing.T) {
	data := loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	blk := fsBlocks(data)[1]
	content := blk.content()
	bad := bytes.Clone(data)
	clear(bad[content : blk.end-1])
	for _, order := range []Order{FileOrder, TimeOrder} {
		want, _, _, _ := readFull(t, data, order)
		got, _, damage, _ := readFull(t, bad, order)
		lost := int64(len(want) - len(got))
		var counted int64
		for _, d := range damage {
			counted += max(d.Events, 0)
		}
		if len(damage) == 0 || damage[0].Offset != int64(content) || counted != lost || lost == 0 {
			t.Errorf("%v: %d lost, %d counted, damage %v", order, lost, counted, damage)
		}
	}
}

// TestFirstObjectFields damages one field of the stream's first object's
// header (its version, type name length, type name or end tag) in a
// .nettrace (V5), a .netperf V3 and a .netperf V2 trace: the rest of the
// header is the one that version's writers write, and so are the blocks
// (or records) after it, so the trace is read whole, as that version,
// and the field recorded as one Damage of its bytes that lost no event;
// strict mode stops there. A header whose minimum reader version is
// above the version's, or whose first block is not that version's,
// still fails with ErrUnsupported: a newer format, not damage.
func TestFirstObjectFields(t *testing.T) {
	pyro := loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	v3 := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf.zip"))
	v2 := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore2.0-linux-objver2.first1300.netperf.zip"))
	for _, c := range []struct {
		what     string
		data     []byte
		at       int // in the header, from its first tag
		mask     byte
		field, n int // the field: its first byte in the header, its length
	}{
		{"V5 version ^0xff", pyro, 3, 0xff, 3, 4},
		{"V5 version 4 to 5", pyro, 3, 0x01, 3, 4},
		{"V5 version's third byte", pyro, 5, 0x10, 3, 4},
		{"V5 version negative", pyro, 6, 0x80, 3, 4},
		{"V5 name length", pyro, 11, 0xff, 11, 4},
		{"V5 name length 5 to 4", pyro, 11, 0x01, 11, 4},
		{"V5 name", pyro, 16, 0x20, 15, 5},
		{"V5 end tag", pyro, 20, 0xff, 20, 1},
		{"V3 version", v3, 3, 0xff, 3, 4},
		{"V3 name", v3, 15, 0x01, 15, 5},
		{"V2 version", v2, 3, 0x40, 3, 4},
		{"V2 name length", v2, 12, 0x01, 11, 4},
	} {
		t.Run(c.what, func(t *testing.T) {
			hdr := bytes.Index(c.data, []byte("!FastSerialization.1")) + 20
			bad := bytes.Clone(c.data)
			bad[hdr+c.at] ^= c.mask
			want, _, _, err := readFull(t, c.data, FileOrder)
			if err != io.EOF {
				t.Fatalf("intact trace: %v", err)
			}
			ri, _ := NewReader(bytes.NewReader(c.data))
			for _, order := range []Order{FileOrder, TimeOrder} {
				r, err := NewReader(bytes.NewReader(bad))
				if err != nil {
					t.Fatalf("NewReader: %v", err)
				}
				if r.Info().Version != ri.Info().Version || r.Info().ObjectVersion != ri.Info().ObjectVersion {
					t.Errorf("version %d, object version %d; want %d, %d", r.Info().Version, r.Info().ObjectVersion, ri.Info().Version, ri.Info().ObjectVersion)
				}
				got, n, damage, err := readFull(t, bad, order)
				changed := changedEvents(want, got)
				if n != len(want) || changed > 0 || !errors.Is(err, ErrDamaged) || len(damage) != 1 ||
					damage[0].Offset != int64(hdr+c.field) || damage[0].Length != int64(c.n) || damage[0].Events != 0 {
					t.Errorf("%v: %d of %d events, %d lost or changed; %v, damage %v", order, n, len(want), changed, err, damage)
				}
			}
			r, err := NewReader(bytes.NewReader(bad))
			if err != nil {
				t.Fatal(err)
			}
			r.SetStrict(true)
			_, err = r.Next()
			var e *Error
			if !errors.As(err, &e) || errors.Is(err, ErrDamaged) || e.Offset != int64(hdr+c.field) || !strings.Contains(err.Error(), "damaged") {
				t.Errorf("strict: %v", err)
			}
		})
	}
	// Not damage: a newer format, or two fields damaged.
	hdr := bytes.Index(pyro, []byte("!FastSerialization.1")) + 20
	blk := fsBlocks(pyro)[0].hdr
	for _, c := range []struct {
		what        string
		patch       map[int]byte
		unsupported bool
	}{
		{"version 5, minimum reader version 5", map[int]byte{hdr + 3: 5, hdr + 7: 5}, true},
		{"version 5, first block version 3", map[int]byte{hdr + 3: 5, blk + 3: 3}, true},
		{"version 5, first block minimum reader version 0", map[int]byte{hdr + 3: 5, blk + 7: 0}, true},
		{"version and name", map[int]byte{hdr + 3: 0xfb, hdr + 16: 'R'}, false},
		{"name length and name", map[int]byte{hdr + 11: 4, hdr + 16: 'R'}, false},
	} {
		bad := bytes.Clone(pyro)
		for i, b := range c.patch {
			bad[i] = b
		}
		_, err := NewReader(bytes.NewReader(bad))
		if err == nil || c.unsupported != errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: NewReader: %v", c.what, err)
		}
	}
}

// TestBlockSizeShrunk flips bits of a block's size field so that the
// size shrinks: the block's stated end falls inside it, and its
// EndObject tag and the next block's header follow its real end. The
// bytes up to there read as whole records of the block's kind, so the
// reader reads the block to there (it lost every event after the stated
// end, and the events whose metadata or stacks were in them): nothing is
// lost, changed or invented, and the damage is one record of the size
// field that lost no event; strict mode stops there.
func TestBlockSizeShrunk(t *testing.T) {
	pyro := loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	arr := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	v3 := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf.zip"))
	first := func(data []byte, name string, k int) fsBlock {
		for _, b := range fsBlocks(data) {
			if b.name == name {
				if k == 0 {
					return b
				}
				k--
			}
		}
		t.Fatalf("no %s", name)
		return fsBlock{}
	}
	for _, c := range []struct {
		what string
		data []byte
		blk  fsBlock
		byte int
		mask byte
	}{
		{"pyroscope MetadataBlock 512 bytes short", pyro, first(pyro, "MetadataBlock", 0), 1, 0x02},
		{"pyroscope StackBlock 16 bytes short", pyro, first(pyro, "StackBlock", 1), 0, 0x10},
		{"pyroscope EventBlock 2,048 bytes short", pyro, first(pyro, "EventBlock", 3), 1, 0x08},
		{"pyroscope EventBlock 1 byte short", pyro, first(pyro, "EventBlock", 2), 0, 0x01},
		{"pyroscope SPBlock 4 bytes short", pyro, first(pyro, "SPBlock", 0), 0, 0x04},
		{"arraytypes EventBlock 32,768 bytes short", arr, first(arr, "EventBlock", 3), 1, 0x80},
		{"V3 EventBlock 512 bytes short", v3, first(v3, "EventBlock", 0), 1, 0x02},
	} {
		t.Run(c.what, func(t *testing.T) {
			at := c.blk.sizeAt + c.byte
			if c.data[at]&c.mask != c.mask {
				t.Fatalf("bits %#x not set in %#x", c.mask, c.data[at])
			}
			bad := bytes.Clone(c.data)
			bad[at] ^= c.mask
			for _, order := range []Order{FileOrder, TimeOrder} {
				want, _, _, _ := readFull(t, c.data, order)
				got, n, damage, err := readFull(t, bad, order)
				changed := changedEvents(want, got)
				if n != len(want) || changed > 0 || !errors.Is(err, ErrDamaged) || len(damage) != 1 ||
					damage[0].Offset != int64(c.blk.sizeAt) || damage[0].Length != 4 || damage[0].Events != 0 {
					t.Errorf("%v: %d of %d events out, %d lost or changed; %v, damage %v", order, n, len(want), changed, err, damage)
				}
			}
			err := strictEnd(t, bad)
			var e *Error
			if !errors.As(err, &e) || errors.Is(err, ErrDamaged) || e.BlockOffset != int64(c.blk.hdr) || e.Offset != int64(c.blk.sizeAt) {
				t.Errorf("strict: %v, want the *Error of the size field at %d", err, c.blk.sizeAt)
			}
		})
	}
}

// strictEnd reads data with SetStrict to the error that ends it.
func strictEnd(t *testing.T, data []byte) error {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	r.SetStrict(true)
	for err == nil {
		_, err = r.Next()
	}
	return err
}

// diffEvents counts the events of want that got lacks (lost) and those it
// holds otherwise (changed).
func diffEvents(want, got map[eventKey]fullEvent) (lost, changed int) {
	return lostChanged(want, got, math.MaxInt, 0)
}

// changedEvents counts the events of want that got lacks or holds
// otherwise.
func changedEvents(want, got map[eventKey]fullEvent) int {
	lost, changed := diffEvents(want, got)
	return lost + changed
}

// TestLostThreadCounted: the arraytypes trace's first event block, lost
// to damage (its header's tag and type name), holds the only event of a thread (33504, number 1), which
// only the sequence point after names. A session numbers each thread's
// events from 1, so that thread's events up to the sequence point's
// number were in the damage: the damage counts all 4 events lost, not 3.
func TestLostThreadCounted(t *testing.T) {
	arr := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	var blk fsBlock
	for _, b := range fsBlocks(arr) {
		if b.name == "EventBlock" {
			blk = b
			break
		}
	}
	if blk.hdr != 1085 {
		t.Fatalf("the first event block is at %d, want 1085", blk.hdr)
	}
	bad := bytes.Clone(arr)
	bad[blk.hdr] ^= 0xff    // the object's tag
	bad[blk.hdr+15] ^= 0xff // and its type name (the tags alone: TestBlockTagsDamaged)
	for _, order := range []Order{FileOrder, TimeOrder} {
		want, _, _, _ := readFull(t, arr, order)
		got, _, damage, err := readFull(t, bad, order)
		if !errors.Is(err, ErrDamaged) {
			t.Fatalf("%v: ended with %v, want a *DamageError", order, err)
		}
		lost, changed := diffEvents(want, got)
		var counted int64
		for _, d := range damage {
			counted += d.Events
		}
		if lost != 4 || changed != 0 || counted != int64(lost) {
			t.Errorf("%v: %d events lost, %d changed, %d counted in %v; want 4, 0, 4", order, lost, changed, counted, damage)
		}
	}
}

// TestEndTagDamaged: a block whose EndObject tag alone is damaged, the
// next block's header right after it, loses nothing: the damage is the
// tag's byte. (sizeUndershoot took the block for one whose size had
// shrunk and read the next block, its header included, as its records:
// flipping bit 0 of the pyroscope trace's EventBlock tag at 33055 lost
// the 355 events of the block after it and made up 3.)
func TestEndTagDamaged(t *testing.T) {
	pyro := loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	arr := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	for _, tr := range []struct {
		name string
		data []byte
	}{{"pyroscope", pyro}, {"arraytypes", arr}} {
		want, _, _, _ := readFull(t, tr.data, FileOrder)
		blocks := fsBlocks(tr.data)
		cases := 0
		for i, b := range blocks[:len(blocks)-1] { // the last is followed by the stream's end
			for _, mask := range []byte{0x01, 0xff} {
				bad := bytes.Clone(tr.data)
				tag := b.end - 1
				bad[tag] ^= mask
				got, n, damage, err := readFull(t, bad, FileOrder)
				lost, changed := diffEvents(want, got)
				if !errors.Is(err, ErrDamaged) || lost > 0 || changed > 0 || n != len(want) ||
					len(damage) != 1 || damage[0].Offset != int64(tag) || damage[0].Length != 1 {
					t.Errorf("%s block %d (%s) tag at %d ^%#x: %d of %d events, %d lost, %d changed, damage %v, %v",
						tr.name, i, b.name, tag, mask, n, len(want), lost, changed, damage, err)
				}
				cases++
			}
		}
		if cases < 10 {
			t.Errorf("%s: only %d cases", tr.name, cases)
		}
	}
}

// TestBlockTagsDamaged: a block whose object header is right but for its
// three tags (BeginPrivateObject twice, NullReference) is read, and the
// tags are one Damage of 3 bytes that lost no event. (The block was
// skipped: a metadata block took the events of every block that uses
// its metadata, 1,864 of the arraytypes trace's 1,970 for one flip.)
func TestBlockTagsDamaged(t *testing.T) {
	pyro := loadTrace(t, "../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace")
	arr := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	for _, tr := range []struct {
		name string
		data []byte
	}{{"pyroscope", pyro}, {"arraytypes", arr}} {
		want, _, _, _ := readFull(t, tr.data, FileOrder)
		cases := 0
		for i, b := range fsBlocks(tr.data) {
			if b.name == "Trace" {
				continue // the first object (TestFirstObjectTags)
			}
			for k := range 3 {
				for _, mask := range []byte{0xff, 0x01} {
					bad := bytes.Clone(tr.data)
					bad[b.hdr+k] ^= mask
					for _, order := range []Order{FileOrder, TimeOrder} {
						got, n, damage, err := readFull(t, bad, order)
						lost, changed := diffEvents(want, got)
						if !errors.Is(err, ErrDamaged) || lost > 0 || changed > 0 || n != len(want) ||
							len(damage) != 1 || damage[0].Offset != int64(b.hdr) || damage[0].Length != 3 || damage[0].Events != 0 {
							t.Errorf("%s %v: block %d (%s) byte %d ^%#x: %d of %d events, %d lost, %d changed, damage %v, %v",
								tr.name, order, i, b.name, b.hdr+k, mask, n, len(want), lost, changed, damage, err)
						}
					}
					cases++
				}
			}
		}
		if cases < 60 {
			t.Errorf("%s: only %d cases", tr.name, cases)
		}
	}
}

// lostChanged compares the events read from a damaged copy (got) with the
// intact trace's (want): how many are missing and how many differ. The
// copy's offsets from at on are moved back by shift (bytes the damage
// inserted before them).
func lostChanged(want, got map[eventKey]fullEvent, at int, shift int) (lost, changed int) {
	for k, w := range want {
		g, ok := got[k]
		if ok && g.off >= int64(at) {
			g.off -= int64(shift)
		}
		switch {
		case !ok:
			lost++
		case g != w:
			changed++
		}
	}
	return lost, changed
}

// sampledTrace is a trace a damage test reads, and which of its blocks
// it damages: every every-th.
type sampledTrace struct {
	path  string
	every int
}

// threeTraces are the traces of the damage tests: the pyroscope trace
// (V5), the arraytypes trace (V5) and the 3.0 trace (V4), each with
// the share of its blocks a test damages.
func threeTraces(pyro, arr, v4 int) []sampledTrace {
	return []sampledTrace{
		{"../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", pyro},
		{filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"), arr},
		{filepath.Join(repoTraces, "eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"), v4},
	}
}
