package nettrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
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
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Errorf("%s: NewReader: %v", what, err)
		return 0
	}
	r.SetOrder(order)
	got := map[int64]sweepEvent{}
	var last error
	for n := 0; ; n++ {
		ev, err := r.Next()
		if err != nil {
			last = err
			break
		}
		if n > len(data) {
			t.Fatalf("%s: more events than bytes", what)
		}
		got[ev.Offset] = eventOf(r, ev)
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
	return len(got)
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
