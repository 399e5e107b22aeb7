package trace

import (
	"strings"
	"unicode/utf16"
	"unsafe"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/kernelevents"
)

// drives turns the kernel's paths into the ones users know, as
// TraceEvent's KernelToUserDriveMapping does, from what an ETW log says
// of the machine that wrote it: the SysConfig events that the merge of a
// kernel log adds at its start, VolumeMapping (a device's path, such as
// \Device\HarddiskVolume2\, and its drive, C:\) and SystemPaths (the
// Windows directory, which names the system drive).
type drives struct {
	prefixes []drivePrefix // in the log's order, as TraceEvent tries them
	system   string        // the system drive, "C:"; "" until SystemPaths
}

type drivePrefix struct{ kernel, user string }

// noteDrive keeps what a SysConfig VolumeMapping or SystemPaths event
// says.
func (r *Reader) noteDrive(e *Event) {
	var p drivePrefix
	system := false
	switch v := e.kernelValue().(type) {
	case *kernelevents.VolumeMappingV0:
		p = drivePrefix{v.NtPath.String(), v.DosPath.String()}
	case *kernelevents.SystemPathsV0:
		p, system = drivePrefix{`\Windows\`, v.SystemWindowsDirectory.String()}, true
	default:
		return
	}
	if !system && p.kernel == "" {
		return
	}
	if r.drives == nil {
		r.drives = &drives{}
	}
	if system {
		r.drives.system = p.user[:min(2, len(p.user))]
	}
	if p.kernel != "" {
		r.drives.prefixes = append(r.drives.prefixes, p)
	}
}

// UserPath is kernel path p (\Device\HarddiskVolume2\Windows\…, as the
// kernel's file, disk, image and process events give paths) as TraceEvent
// shows it, with a drive letter (C:\Windows\…): turned by the log's
// SysConfig VolumeMapping events read so far, which a merged kernel log
// holds at its start, in their order, the first whose device path
// begins p (in any case) giving its drive; and by its SystemPaths event,
// whose Windows directory replaces \Windows\, and which also names the
// system drive that a container's paths of the host's Windows directory
// (…\OS\Windows\… or …\Files\Windows\…) are given on. A path no mapping
// turns, and every path of a log without those events (an unmerged one,
// or an EventPipe trace), is returned as it is: TraceEvent would then ask
// the machine it runs on for its drives, which says nothing of the
// machine that wrote the log.
func (r *Reader) UserPath(p string) string {
	if r.drives == nil {
		return p
	}
	drop, user, ok := r.drives.turn(p)
	if !ok {
		return p
	}
	return user + p[drop:]
}

// turn says how kernel path p turns into a user path (UserPath): the
// bytes to drop from its start and what replaces them; ok is false when
// nothing turns it.
func (d *drives) turn(p string) (drop int, user string, ok bool) {
	for _, host := range [...]string{`\OS\Windows\`, `\Files\Windows\`} {
		// The host's Windows directory, as a container's events name it:
		// the part from \Windows\ on, on the system drive.
		if i := indexFold(p, host); i >= 0 {
			return i + len(host) - len(`\Windows\`), d.system, true
		}
	}
	for _, m := range d.prefixes {
		if len(p) >= len(m.kernel) && strings.EqualFold(p[:len(m.kernel)], m.kernel) {
			return len(m.kernel), m.user, true
		}
	}
	return 0, "", false
}

// pathField is the payload field of ev that TraceEvent shows as a user
// path (UserPath), as its properties of these events do: the FileName of
// the Image events and of FileIO's naming events (Name, FileCreate,
// FileDelete, FileRundown), Create, DirEnum and DirNotify; nil for other
// events.
func pathField(ev clrimpl.Event) *clrimpl.UTF16 {
	switch v := ev.(type) {
	case *kernelevents.ImageLoadV2:
		return &v.FileName
	case *kernelevents.ImageUnloadV2:
		return &v.FileName
	case *kernelevents.ImageDCStartV2:
		return &v.FileName
	case *kernelevents.ImageDCStopV2:
		return &v.FileName
	case *kernelevents.FileIONameV2:
		return &v.FileName
	case *kernelevents.FileIOFileCreateV2:
		return &v.FileName
	case *kernelevents.FileIOFileDeleteV2:
		return &v.FileName
	case *kernelevents.FileIOFileRundownV2:
		return &v.FileName
	case *kernelevents.FileIOCreateV2:
		return &v.FileName
	case *kernelevents.FileIOCreateV3:
		return &v.FileName
	case *kernelevents.FileIODirEnumV2:
		return &v.FileName
	case *kernelevents.FileIODirEnumV3:
		return &v.FileName
	case *kernelevents.FileIODirNotifyV2:
		return &v.FileName
	case *kernelevents.FileIODirNotifyV3:
		return &v.FileName
	}
	return nil
}

// userPaths turns the path field of ev, just decoded (pathField), into a
// user path, in place. The new UTF-16 is in the Reader's buffer, valid as
// long as the payload is. The part of the path after what turns is the
// payload's own code units, so nothing but the prefix changes (not even
// an unpaired surrogate, which UTF-8 could not carry).
func (r *Reader) userPaths(ev clrimpl.Event) {
	if r.drives == nil {
		return
	}
	f := pathField(ev)
	if f == nil || f.IsEmpty() {
		return
	}
	r.pathUTF8 = f.AppendUTF8(r.pathUTF8[:0])
	// A view of the buffer, not a copy: turn keeps nothing of it.
	p := unsafe.String(unsafe.SliceData(r.pathUTF8), len(r.pathUTF8))
	drop, user, ok := r.drives.turn(p)
	if !ok {
		return
	}
	// The code units the dropped bytes came from: one a rune, two for
	// one past U+FFFF (an unpaired surrogate came out as one U+FFFD).
	units := 0
	for _, c := range p[:drop] {
		units += utf16.RuneLen(c)
	}
	out := r.pathUTF16[:0]
	for _, c := range user {
		var pair [2]uint16
		for _, u := range utf16.AppendRune(pair[:0], c) {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	out = append(out, f.Bytes()[2*units:]...)
	r.pathUTF16 = out
	*f = clrimpl.MakeUTF16(out)
}

// indexFold is the index of ASCII pattern pat in s, in any case; -1 when
// s does not hold it.
func indexFold(s, pat string) int {
	for i := 0; i+len(pat) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(pat)], pat) {
			return i
		}
	}
	return -1
}
