package trace

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unicode/utf16"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/kernelevents"
)

// TestPathFieldCoversFamilies: every kernelevents type of the families
// whose FileName TraceEvent shows as a user path (Image, FileIO's naming
// events, Create, DirEnum and DirNotify) has its field found by
// pathField, so that a version a newer schema adds is not left with the
// kernel's paths.
func TestPathFieldCoversFamilies(t *testing.T) {
	tab := kernelevents.Table()
	n := 0
	for i := range tab.Len() {
		ev := tab.Type(i).New()
		switch ev.(type) {
		case kernelevents.ImageEvent, kernelevents.FileIONameEvent, kernelevents.FileIOCreateEvent, kernelevents.FileIODirEnumEvent:
			n++
			if pathField(ev) == nil {
				t.Errorf("%s: pathField does not know the type", ev.Descriptor().Name)
			}
		default:
			if pathField(ev) != nil {
				t.Errorf("%s: pathField finds a field in a type of no family it turns", ev.Descriptor().Name)
			}
		}
	}
	if n < 14 {
		t.Errorf("%d types of the families, want at least 14", n)
	}
}

// utf16Bytes is the UTF-16LE bytes of code units given as they are (an
// unpaired surrogate too).
func utf16Bytes(units ...uint16) []byte {
	b := make([]byte, 0, 2*len(units))
	for _, u := range units {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return b
}

// TestUserPathsInPlace: userPaths turns the prefix of a path field and
// keeps the rest of its code units as the payload has them: an astral
// character, an unpaired surrogate, characters past ASCII before the
// part that turns; a user prefix past ASCII is encoded as UTF-16. What
// turns nothing, and a Reader without drives, leave the field alone. It
// allocates nothing once its buffers have grown.
func TestUserPathsInPlace(t *testing.T) {
	r := &Reader{}
	r.drives = &drives{system: "C:", prefixes: []drivePrefix{
		{`\Device\HarddiskVolume2\`, `C:\`}, {`\Device\HarddiskVolume5\`, `E:\Données\`}, {`\Device\Mup\`, `\\`},
	}}
	u := func(s string) []uint16 { return utf16.Encode([]rune(s)) }
	cat := func(parts ...[]uint16) []byte {
		var all []uint16
		for _, p := range parts {
			all = append(all, p...)
		}
		return utf16Bytes(all...)
	}
	tail := append(u(`a\😀\`), 0xD800, 'x') // an astral character and an unpaired surrogate
	for _, c := range []struct {
		name    string
		in, out []byte
	}{
		{"volume", cat(u(`\Device\HarddiskVolume2\`), tail), cat(u(`C:\`), tail)},
		{"any case", cat(u(`\DEVICE\harddiskvolume2\`), tail), cat(u(`C:\`), tail)},
		{"user prefix past ASCII", cat(u(`\Device\HarddiskVolume5\`), tail), cat(u(`E:\Données\`), tail)},
		{"container, past ASCII before", cat(u(`\Device\Vhd{é😀}\OS\Windows\`), tail), cat(u(`C:\Windows\`), tail)},
		{"network", cat(u(`\Device\Mup\server\share\`), tail), cat(u(`\\server\share\`), tail)},
		{"unmapped", cat(u(`\Device\HarddiskVolume9\`), tail), cat(u(`\Device\HarddiskVolume9\`), tail)},
		{"empty", nil, nil},
	} {
		v := &kernelevents.FileIOCreateV3{FileName: clrimpl.MakeUTF16(c.in)}
		r.userPaths(v)
		if got := v.FileName.Bytes(); !bytes.Equal(got, c.out) {
			t.Errorf("%s: %q, want %q", c.name, v.FileName.String(), clrimpl.MakeUTF16(c.out).String())
		}
	}

	in := cat(u(`\Device\HarddiskVolume2\Windows\x.dll`))
	v := &kernelevents.ImageLoadV2{FileName: clrimpl.MakeUTF16(in)}
	(&Reader{}).userPaths(v)
	if !bytes.Equal(v.FileName.Bytes(), in) {
		t.Errorf("no drives: %q", v.FileName.String())
	}
	if n := testing.AllocsPerRun(100, func() {
		v.FileName = clrimpl.MakeUTF16(in)
		r.userPaths(v)
	}); n != 0 {
		t.Errorf("userPaths allocates %v times", n)
	}
	if got := v.FileName.String(); got != `C:\Windows\x.dll` {
		t.Errorf("image: %q", got)
	}
}
