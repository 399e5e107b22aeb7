package symbols

import (
	"encoding/binary"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/kernelevents"
)

// kevent is a kernel event as the map gets it: the time, the pointer size
// and the decoded value.
type kevent struct {
	ts int64
	ps int
	v  clrimpl.Event
}

// imageEvent decodes an Image event's payload into v (whose type says the
// kind: Load, Unload, DCStart, DCStop).
func imageEvent(v kernelevents.Event, ts int64, pid uint32, base, size uint64, name string, ps int) kevent {
	var p []byte
	ptr := func(v uint64) {
		if ps == 4 {
			p = binary.LittleEndian.AppendUint32(p, uint32(v))
		} else {
			p = binary.LittleEndian.AppendUint64(p, v)
		}
	}
	ptr(base)
	ptr(size)
	p = binary.LittleEndian.AppendUint32(p, pid)
	p = append(p, make([]byte, 12)...)
	ptr(base)
	p = append(p, make([]byte, 16)...)
	for _, r := range name {
		p = binary.LittleEndian.AppendUint16(p, uint16(r))
	}
	p = append(p, 0, 0)
	if _, err := v.Decode(p, ps); err != nil {
		panic(err)
	}
	return kevent{ts, ps, v}
}

func (m *Map) addTest(e kevent) { m.addKernel(e.ts, e.ps, e.v) }

// TestNativeImages: addresses no method covers resolve to the native image
// mapped there at the time (kernel addresses to process 0's), with the
// span over which that holds; an address outside every image, or outside
// an image's lifetime, stays unresolved.
func TestNativeImages(t *testing.T) {
	m := NewMap()
	for _, e := range []kevent{
		imageEvent(new(kernelevents.ImageDCStartV2), 0, 10, 0x77000000, 0x100000, `\Device\HarddiskVolume2\Windows\System32\ntdll.dll`, 8),
		imageEvent(new(kernelevents.ImageLoadV2), 1000, 10, 0x10000000, 0x10000, `C:\app\plugin.dll`, 8),
		imageEvent(new(kernelevents.ImageUnloadV2), 2000, 10, 0x10000000, 0x10000, `C:\app\plugin.dll`, 8),
		imageEvent(new(kernelevents.ImageLoadV2), 3000, 10, 0x10000000, 0x8000, `C:\app\other.dll`, 8),
		imageEvent(new(kernelevents.ImageDCStartV2), 0, 0, 0xfffff80000000000, 0x800000, `\SystemRoot\system32\ntoskrnl.exe`, 8),
		imageEvent(new(kernelevents.ImageDCStopV2), 5000, 10, 0x77000000, 0x100000, `\Device\HarddiskVolume2\Windows\System32\ntdll.dll`, 8), // listed again
	} {
		m.addTest(e)
	}
	if m.Images() != 4 {
		t.Errorf("%d images, want 4 (the rundown's second listing is not another)", m.Images())
	}
	for _, c := range []struct {
		addr     uint64
		ts       int64
		want     string
		reason   Reason
		from, to int64
	}{
		{0x77000010, 100, "ntdll!?", Native, never, always},
		{0xfffff80000001000, 100, "ntoskrnl!?", Native, never, always}, // kernel space: process 0's images
		{0x10000100, 1500, "plugin!?", Native, 1000, 2000},
		{0x10000100, 500, Unresolved, NoProcess, never, 1000},
		{0x10000100, 2500, Unresolved, NoProcess, 2000, 3000},
		{0x10000100, 3500, "other!?", Native, 3000, always},
		{0x10009000, 3500, Unresolved, NoProcess, 2000, always}, // past other.dll's end
		{0x5000, 100, Unresolved, NoProcess, never, always},
	} {
		f, r, from, to := m.resolve(10, c.addr, c.ts)
		if got := m.Frame(f).String(); got != c.want || r != c.reason || from != c.from || to != c.to {
			t.Errorf("%#x at %d: %s (%v) over [%d, %d), want %s (%v) over [%d, %d)", c.addr, c.ts, got, r, from, to, c.want, c.reason, c.from, c.to)
		}
	}
	if f := m.Frame(must(m.resolve(10, 0x77000010, 100))); f.ModulePath != `\Device\HarddiskVolume2\Windows\System32\ntdll.dll` || f.Address != 0x77000010 {
		t.Errorf("frame %+v", f)
	}
	// An ImageID/DbgID_RSDS event before an image gives it its PDB's
	// identity.
	guid := clrimpl.MustParseGUID("ec83d8df-5559-46e0-b630-133ebd979266")
	dbg := binary.LittleEndian.AppendUint64(nil, 0x20000000)
	dbg = binary.LittleEndian.AppendUint32(dbg, 10)
	dbg = binary.LittleEndian.AppendUint32(append(dbg, guid[:]...), 2)
	dbg = append(dbg, "lib.pdb\x00"...)
	rsds := new(kernelevents.DbgIDRSDSV2)
	if _, err := rsds.Decode(dbg, 8); err != nil {
		t.Fatal(err)
	}
	m.addTest(kevent{0, 8, rsds})
	m.addTest(imageEvent(new(kernelevents.ImageDCStartV2), 0, 10, 0x20000000, 0x1000, `C:\app\lib.dll`, 8))
	if f := m.Frame(must(m.resolve(10, 0x20000010, 100))); f.BuildID != "EC83D8DF555946E0B630133EBD9792662" || f.ImageBase != 0x20000000 || f.ImageEnd != 0x20001000 {
		t.Errorf("frame %+v", f)
	}
	if f := m.Frame(must(m.resolve(10, 0x77000010, 100))); f.BuildID != "" {
		t.Errorf("ntdll has no PDB in this trace: %+v", f)
	}
	// A 32-bit kernel: its addresses start at 0x80000000.
	m32 := NewMap()
	m32.addTest(imageEvent(new(kernelevents.ImageDCStartV2), 0, 0, 0x82000000, 0x100000, `\SystemRoot\system32\ntoskrnl.exe`, 4))
	if f, r := m32.Resolve(10, 0x82000010, 0); m32.Frame(f).String() != "ntoskrnl!?" || r != Native {
		t.Errorf("32-bit kernel address: %s %v", m32.Frame(f), r)
	}
}

func must(f FrameID, _ Reason, _, _ int64) FrameID { return f }
