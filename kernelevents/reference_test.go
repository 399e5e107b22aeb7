package kernelevents_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/schema/interp"
)

// reference is the schema interpreter over the kernel schema: the second
// decoder every generated decoder must agree with.
func reference(t testing.TB) *interp.Decoder {
	t.Helper()
	m, err := gen.Load("../schema/kernel.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	d, err := interp.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// refAgreement decodes a payload with the generated package and the
// interpreter: both must agree on error or not (and on its field and
// offset), on the bytes used and on the JSON.
func refAgreement(dec *kernelevents.Decoder, ref *interp.Decoder, p kernelevents.Provider, id uint16, ver uint8, ptr int, payload []byte) string {
	gev, gn, gerr := dec.Decode(p, id, ver, ptr, payload)
	v, rn, rerr := ref.DecodeGUID(p.GUID(), id, ver, ptr, payload)
	if (gerr == nil) != (rerr == nil) {
		return fmt.Sprintf("generated error %v, reference error %v", gerr, rerr)
	}
	if gerr != nil {
		var ge *kernelevents.DecodeError
		var re *interp.DecodeError
		if errors.As(gerr, &ge) != errors.As(rerr, &re) {
			return fmt.Sprintf("error kinds differ: generated %v, reference %v", gerr, rerr)
		}
		if ge != nil && (ge.Event != re.Event || ge.Field != re.Field || ge.Offset != re.Offset || ge.Err.Error() != re.Err.Error()) {
			return fmt.Sprintf("errors differ: generated %v, reference %v", gerr, rerr)
		}
		return ""
	}
	if gn != rn {
		return fmt.Sprintf("bytes used: generated %d, reference %d", gn, rn)
	}
	if gj, rj := gev.AppendJSON(nil), v.AppendJSON(nil); string(gj) != string(rj) {
		return fmt.Sprintf("JSON differs:\ngenerated %s\nreference %s", gj, rj)
	}
	return ""
}

// TestReferenceAgreesOnPayloads runs every event type over payloads of
// zeros, of 0xff and of 0x01 bytes of growing length, at both pointer
// sizes and a bad one.
func TestReferenceAgreesOnPayloads(t *testing.T) {
	ref := reference(t)
	dec := kernelevents.NewDecoder()
	buf := make([]byte, 0, 1000)
	for _, ei := range kernelevents.Events() {
		for _, fill := range []byte{0, 0xff, 0x01} {
			for n := 0; n <= 900; n += 1 + n/16 {
				buf = buf[:n]
				for i := range buf {
					buf[i] = fill
				}
				for _, ptr := range []int{4, 8, 0} {
					if d := refAgreement(dec, ref, ei.Provider, ei.ID, ei.Version, ptr, buf); d != "" {
						t.Fatalf("%s fill %#x len %d ptr %d: %s", ei.Name, fill, n, ptr, d)
					}
				}
			}
		}
	}
}

// TestReferenceAgreesOnTraces decodes every kernel event of the ETW logs at
// hand with both, whole and cut short.
func TestReferenceAgreesOnTraces(t *testing.T) {
	ref := reference(t)
	dec := kernelevents.NewDecoder()
	for _, tr := range agreementTraces {
		t.Run(tr.path[strings.LastIndexByte(tr.path, '/')+1:], func(t *testing.T) {
			if _, err := os.Stat(tr.path); err != nil && tr.shared {
				t.Skipf("%s: not here (../shared sits beside a checkout of the workspace, not a fresh clone)", tr.path)
			}
			r, err := etl.Open(tr.path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			seen := map[string]int{}
			checked := 0
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				p, ok := kernelevents.ProviderByGUID(e.ProviderGUID)
				if !ok || !isClassic(e) {
					continue
				}
				info, ok := kernelevents.Lookup(p, uint16(e.Opcode), e.Version)
				if !ok {
					continue
				}
				// Every event whole; the first few of each type cut at
				// every length too.
				cuts := 0
				if seen[info.Name] < 3 {
					cuts = len(e.Payload)
				}
				seen[info.Name]++
				for cut := len(e.Payload); cut >= len(e.Payload)-cuts; cut-- {
					if d := refAgreement(dec, ref, p, uint16(e.Opcode), e.Version, ptrSize(e), e.Payload[:cut]); d != "" {
						t.Fatalf("event at offset %d, %s cut to %d of %d bytes: %s", e.Offset, info.Name, cut, len(e.Payload), d)
					}
					checked++
				}
			}
			if checked == 0 {
				t.Fatal("no kernel event checked")
			}
			t.Logf("%d payloads of %d event types agree", checked, len(seen))
		})
	}
}

// FuzzAgainstReference fuzzes the event type, the pointer size and the
// payload: the generated decoder and the interpreter must agree on error
// or not (and the error's field and offset), on the bytes used and on the
// JSON.
func FuzzAgainstReference(f *testing.F) {
	events := kernelevents.Events()
	for i, ev := range events {
		f.Add(uint16(i), uint8(1), make([]byte, 64))
		_ = ev
	}
	f.Add(uint16(0), uint8(3), []byte{})
	ref := reference(f)
	f.Fuzz(func(t *testing.T, sel uint16, ptr uint8, payload []byte) {
		ei := events[int(sel)%len(events)]
		ps := int(ptr)
		switch ptr % 4 {
		case 0:
			ps = 4
		case 1:
			ps = 8
		}
		if d := refAgreement(kernelevents.NewDecoder(), ref, ei.Provider, ei.ID, ei.Version, ps, payload); d != "" {
			t.Fatalf("%s ptr %d payload %x: %s", ei.Name, ps, payload, d)
		}
	})
}
