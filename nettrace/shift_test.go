package nettrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestShiftSweep moves the bytes after a point of each trace by one to
// three bytes (some taken out, or zeros put in), as damage does to a
// zipped trace when deflate decodes on past it, one or more bytes longer
// or shorter. V3–V5 blocks pad their contents to a 4-byte stream offset,
// so a reader that kept the old alignment would misread every block after
// the shift; it must find the new one. Every event of the intact trace
// outside the block the shift is in comes out, its payload unchanged (at
// its offset moved by the shift), but for events whose metadata the
// shift's block held, which the damage records count; the trace ends with
// a *DamageError.
//
// V6 blocks have no padding, but a shift in a block's last event runs
// the block's stated size into the next block's header, or short of it,
// as in V3–V5. In a V6 trace whose damage destroys a metadata record that
// is defined again later, the events after it may come out under the
// older definition (see checkDamage): then only their payloads are
// compared. A V1/V2 record is its own block, and a V1/V2 metadata
// record's ID is its offset, which the shift moves for every record after
// it: no event but the shifted one may be lost (the reader learns the
// shift from the first event that refers to a metadata record read after
// it). The repository's cut of the .NET Core 2.0 trace is swept; the
// whole one (62 MB) only in TestShiftV2Shared, at fewer places.
func TestShiftSweep(t *testing.T) {
	swept := 0
	for _, tr := range sweepTraces(t) {
		if r, err := NewReader(bytes.NewReader(tr.data)); err != nil {
			t.Fatalf("%s: %v", tr.name, err)
		} else if r.ver <= 2 && len(tr.data) > 8<<20 {
			continue
		}
		swept++
		t.Run(tr.name, func(t *testing.T) {
			full, bounds, _ := readSweep(t, tr.data)
			if len(bounds) == 0 {
				t.Fatal("no events")
			}
			blocks := blockRanges(full)
			// Inside events away from the block's ends, and inside the
			// last events of blocks (a shift there runs the block's
			// stated size into the next block's header, or short of it).
			var picks []sweepEvent
			for i := range 6 {
				picks = append(picks, full[len(full)*(2*i+1)/12])
			}
			var lasts []sweepEvent
			for i := 0; i+1 < len(full); i++ {
				if full[i].blockStart != full[i+1].blockStart && full[i].size >= 16 {
					lasts = append(lasts, full[i])
				}
			}
			for i := range min(4, len(lasts)) {
				picks = append(picks, lasts[len(lasts)*(2*i+1)/8])
			}
			var report []string
			for _, e := range picks {
				at := int(e.off) + e.size/2
				for _, delta := range []int{-40, -3, -1, 1, 2, 7} {
					if at-delta > int(e.off)+e.size {
						continue // bytes taken out past the event: its block's end tag with them
					}
					bad := slices.Clone(tr.data[:at])
					if delta < 0 {
						bad = append(bad, tr.data[at-delta:]...)
					} else {
						bad = append(bad, make([]byte, delta)...)
						bad = append(bad, tr.data[at:]...)
					}
					// The shift's block and the next one's header.
					stale := v6Redefines(tr.data, at, int(blocks[e.off].end)+8)
					got := checkShift(t, bad, at, delta, full, blocks, FileOrder, stale)
					checkShift(t, bad, at, delta, full, blocks, TimeOrder, stale)
					report = append(report, fmt.Sprintf("%d@%d%+d", got, at, delta))
				}
			}
			t.Logf("%d events intact; recovered: %s", len(full), strings.Join(report, " "))
		})
	}
	if swept == 0 {
		t.Fatal("no V3–V6 trace to sweep")
	}
}

// checkShift reads a trace whose bytes from at on moved by delta, checks
// what comes out against the intact trace's events and returns how many
// came out.
func checkShift(t *testing.T, data []byte, at, delta int, full []sweepEvent, blocks map[int64]blockRange, order Order, stale bool) int {
	t.Helper()
	what := fmt.Sprintf("shift of %+d at %d (%v)", delta, at, order)
	r, got, last := readKeyed(t, what, data, order, func(off int64) int64 {
		if off >= int64(at) {
			off -= int64(delta) // where it was in the intact trace
		}
		return off
	})
	if r == nil {
		return 0
	}
	var counted int64
	for _, d := range r.Damage() {
		if strings.Contains(d.Err.Msg, "which is not defined") {
			counted += d.Events
		}
	}
	missing := 0
	var first *sweepEvent
	for i, e := range full {
		if b := blocks[e.off]; b.start <= int64(at) && int64(at) <= b.end {
			continue // in the block the shift is in
		}
		g, ok := got[e.off]
		if !ok {
			if missing++; first == nil {
				first = &full[i]
			}
			continue
		}
		if !g.same(e) && !(stale && g.size == e.size && g.sum == e.sum) {
			t.Errorf("%s: event at %d is %v, want %v", what, e.off, g, e)
		}
	}
	if r.ver <= 2 {
		// V1/V2: the reader learns the shift; no metadata is lost.
		if missing > 0 {
			t.Errorf("%s: %d events outside the shifted record are missing (the first %v); damage %v", what, missing, first, r.Damage())
		}
		// The trailer, where its writer put it, still ends the trace.
		if errors.Is(last, io.ErrUnexpectedEOF) {
			t.Errorf("%s: read as cut short: %v", what, last)
		}
	} else if int64(missing) > counted {
		t.Errorf("%s: %d events outside the shift's block are missing (the first %v), %d counted as lost with their metadata; damage %v", what, missing, first, counted, r.Damage())
	}
	var de *DamageError
	if !errors.As(last, &de) {
		t.Errorf("%s: final error %v (%T), want a *DamageError", what, last, last)
	}
	return len(got)
}

// TestShiftV2Shared shifts the whole .NET Core 2.0 trace of the shared
// fixtures (62 MB, 35 metadata records, the last five of them 21–62 MB
// in) at a few places, in both orders: every event but the shifted one
// comes out with its metadata. Without the shift learned, a shift in the
// first fifth of it loses about 48,500 of its 272,332 events.
func TestShiftV2Shared(t *testing.T) {
	p := filepath.Join(sharedTraces, "perfview/eventpipe-dotnetcore2.0-linux-objver2.netperf.zip")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("the shared fixtures are not beside the checkout (%v): the repository's cut of this trace is swept in TestShiftSweep", err)
	}
	data := loadTrace(t, p)
	full, _, _ := readSweep(t, data)
	blocks := blockRanges(full)
	for _, frac := range []int{1, 30, 60} {
		e := full[len(full)*frac/100]
		at := int(e.off) + e.size/2
		for _, delta := range []int{-3, 2} {
			bad := slices.Clone(data[:at])
			if delta < 0 {
				bad = append(bad, data[at-delta:]...)
			} else {
				bad = append(bad, make([]byte, delta)...)
				bad = append(bad, data[at:]...)
			}
			got := checkShift(t, bad, at, delta, full, blocks, FileOrder, false)
			if frac == 1 {
				checkShift(t, bad, at, delta, full, blocks, TimeOrder, false)
			}
			if got < len(full)-1 {
				t.Errorf("shift of %+d at %d: %d of %d events", delta, at, got, len(full))
			}
		}
	}
}
