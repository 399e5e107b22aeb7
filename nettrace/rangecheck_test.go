package nettrace

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rangeEvent is what TestFlagsFlipSweep compares of an event.
type rangeEvent struct {
	off, ts int64
	id      uint16
	sum     uint64
	act     [16]byte
}

func readRangeEvents(data []byte, o Order, strict bool) ([]rangeEvent, error) {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	r.SetOrder(o)
	r.SetStrict(strict)
	var out []rangeEvent
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rangeEvent{ev.Offset, ev.Timestamp, ev.ID, payloadSum(ev.Payload), ev.ActivityID})
	}
}

// TestFlagsFlipSweep flips each bit of the flags byte of every third
// event header of the 5.0 trace (a V4 .nettrace with compressed headers)
// and reads the result in file order: each flip is reported as damage or
// changes no event, but for the payload-size flag's (below). A flag that
// makes a header read a field it does not have, or leave out one it has,
// can leave the block's records parsing, every check of a record passing,
// with timestamps off from some record on (an activity-ID flag can make a
// record take the whole next one as its activity ID): the block's
// timestamp range, which the runtime states exactly, tells
// (checkBlockRange; without it, flips of the metadata-ID and thread flags
// here went unreported).
// The same damage is reported in time order, and ends the trace in
// strict mode.
func TestFlagsFlipSweep(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	orig, err := readRangeEvents(data, FileOrder, false)
	if err != nil {
		t.Fatal(err)
	}
	var reported, unchanged, byRange, payloadSize int
	var caught []byte // a trace whose damage only the range check reports
	for i := 0; i < len(orig); i += 3 {
		for bit := range 8 {
			bad := bytes.Clone(data)
			bad[orig[i].off] ^= 1 << bit
			got, err := readRangeEvents(bad, FileOrder, false)
			switch {
			case err != nil:
				reported++
				if strings.Contains(err.Error(), "timestamps span") {
					byRange++
					caught = bad
				}
			case slices.Equal(got, orig):
				unchanged++
			case bit == 7:
				// The payload-size flag: a size read from the payload's
				// bytes, or the previous event's taken, can leave the
				// records aligned and one payload changed, which no check
				// of the format's can tell (the payload's layout might).
				payloadSize++
			default:
				t.Errorf("event %d at offset %d, flags bit %d flipped: %d events, some changed, and no damage reported", i, orig[i].off, bit, len(got))
			}
		}
	}
	t.Logf("%d flips reported (%d by the block's range alone), %d changed nothing, %d of the payload-size flag changed a payload unreported", reported, byRange, unchanged, payloadSize)
	if caught == nil {
		t.Fatal("no flip was caught by the block range check alone: the sweep no longer tests it")
	}
	// The last one caught, in time order and strictly.
	_, err = readRangeEvents(caught, TimeOrder, false)
	var de *DamageError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "timestamps span") || !strings.Contains(err.Error(), "read as it stands") {
		t.Errorf("time order: %v, want the block range damage", err)
	} else if d := de.Damage[len(de.Damage)-1]; d.Length != 0 || d.Events != -1 || d.Block != "EventBlock" {
		t.Errorf("time order: damage %+v, want an EventBlock with nothing skipped and its lost events unknown", d)
	}
	_, err = readRangeEvents(caught, FileOrder, true)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || !strings.Contains(e.Msg, "timestamps span") {
		t.Errorf("strict: %v, want the block range *Error", err)
	}
}

// TestHeaderFlipTimestamps flips three bits of each header byte after the
// flags byte of every fifth event of the 5.0 trace and reads the result in
// file order: no flip may change an event's timestamp unreported. A
// timestamp delta is a varint with no check of its own, and every later
// header of the block adds to it, so one flipped bit moves the rest of the
// block's events, within the block's stated range as often as not; the
// range's ends, which the runtime states exactly, tell (checkBlockRange).
// On the 3.0 trace the same sweep (every 11th of the first 3,000 events)
// left 590 of 3,999 flips changing timestamps unreported without that
// check, none with it; flips that change a metadata ID, thread, stack ID
// or sequence number into another valid one stay unreported (1,479 there):
// those fields have no redundancy in the format.
func TestHeaderFlipTimestamps(t *testing.T) {
	data := loadTrace(t, filepath.Join(repoTraces, "eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip"))
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ start, end int64 } // a record's header, after its flags byte
	var hdrs []span
	var orig []rangeEvent
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		hdrs = append(hdrs, span{ev.Offset + 1, r.blkOff + int64(r.pos) - int64(len(ev.Payload))})
		orig = append(orig, rangeEvent{ev.Offset, ev.Timestamp, ev.ID, payloadSum(ev.Payload), ev.ActivityID})
	}
	var flips, reported, moved int
	for i := 0; i < len(hdrs); i += 5 {
		for p := hdrs[i].start; p < hdrs[i].end; p++ {
			for _, bit := range []int{0, 3, 6} {
				bad := bytes.Clone(data)
				bad[p] ^= 1 << bit
				flips++
				got, err := readRangeEvents(bad, FileOrder, false)
				if err != nil {
					reported++
					continue
				}
				k := 0
				for k < len(got) && k < len(orig) && got[k] == orig[k] {
					k++
				}
				if k < len(got) && k < len(orig) && got[k].off == orig[k].off && got[k].ts != orig[k].ts {
					moved++
					t.Errorf("bit %d of byte %d (event %d's header) flipped: event %d's timestamp %d, was %d, and no damage reported", bit, p, i, k, got[k].ts, orig[k].ts)
				}
			}
		}
	}
	t.Logf("%d flips: %d reported, %d moved a timestamp unreported", flips, reported, moved)
	if reported == 0 {
		t.Fatal("no flip was reported: the sweep tests nothing")
	}
}
