package conformance

import (
	"testing"

	"github.com/clrgo/clrevents/clrevents"
)

// TestReferenceAgreesOnFixtures decodes every payload fixture with the
// generated decoder and the reference decoder, at the fixture's pointer
// size and at the other one, whole and cut short at every length: both
// must agree on error or not (and where), on bytes used and on JSON.
func TestReferenceAgreesOnFixtures(t *testing.T) {
	ref := reference(t)
	dec := clrevents.NewDecoder()
	fixtures := loadFixtures(t)
	checked := 0
	for _, fx := range fixtures {
		for _, ptr := range []int{fx.Ptr, 12 - fx.Ptr} {
			for cut := len(fx.Payload); cut >= 0; cut-- {
				if d := agreement(dec, ref, fx.Key.Provider, fx.Key.ID, fx.Key.Version, ptr, fx.Payload[:cut]); d != "" {
					t.Errorf("%s:%d %s ptr %d cut to %d bytes: %s", fx.Trace, fx.Line, fx.Key, ptr, cut, d)
				}
				checked++
				if cut < len(fx.Payload)-64 && cut > 64 {
					cut = 64 // the middle of long payloads adds little
				}
			}
		}
	}
	t.Logf("%d fixtures, %d payload variants agree", len(fixtures), checked)
}

// TestReferenceAgreesOnZeroPayloads runs every event type of the schema
// over payloads of zeros and of 0xff bytes of growing length, so that types
// no trace holds are compared too.
func TestReferenceAgreesOnZeroPayloads(t *testing.T) {
	ref := reference(t)
	dec := clrevents.NewDecoder()
	buf := make([]byte, 0, 600)
	for _, ei := range clrevents.Events() {
		for _, fill := range []byte{0, 0xff, 0x01} {
			for n := 0; n <= 520; n += 1 + n/16 {
				buf = buf[:n]
				for i := range buf {
					buf[i] = fill
				}
				for _, ptr := range []int{4, 8, 0} {
					if d := agreement(dec, ref, ei.Provider, ei.ID, ei.Version, ptr, buf); d != "" {
						t.Fatalf("%s fill %#x len %d ptr %d: %s", ei.Name, fill, n, ptr, d)
					}
				}
			}
		}
	}
}

// FuzzAgainstGenerated fuzzes the event choice, the pointer size and the
// payload. The generated decoder and the reference decoder must agree on
// error or not (and on the error's field and offset), on the bytes used and
// on the JSON.
func FuzzAgainstGenerated(f *testing.F) {
	events := clrevents.Events()
	index := map[typeKey]uint16{}
	for i, ei := range events {
		index[typeKey{ei.Provider, ei.ID, ei.Version}] = uint16(i)
	}
	for _, fx := range loadFixtures(f) {
		f.Add(index[fx.Key], uint8(fx.Ptr), uint16(0), fx.Payload)
	}
	f.Add(uint16(0), uint8(3), uint16(0), []byte{})
	f.Add(uint16(0), uint8(8), uint16(0xffff), []byte{1, 2, 3})
	ref := reference(f)
	f.Fuzz(func(t *testing.T, sel uint16, ptr uint8, raw uint16, payload []byte) {
		dec := clrevents.NewDecoder()
		// Mostly an event of the schema; with raw set, any (provider, id, version).
		ei := events[int(sel)%len(events)]
		p, id, ver := ei.Provider, ei.ID, ei.Version
		if raw != 0 {
			p, id, ver = clrevents.Provider(raw>>14), raw&0x3ff, uint8(raw>>10&0xf)
			if !p.Valid() {
				return
			}
		}
		ps := int(ptr)
		switch ptr % 4 {
		case 0:
			ps = 4
		case 1:
			ps = 8
		}
		if d := agreement(dec, ref, p, id, ver, ps, payload); d != "" {
			t.Fatalf("%s/%d/v%d ptr %d payload %x: %s", p, id, ver, ps, payload, d)
		}
	})
}
