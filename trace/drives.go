package trace

import (
	"strings"

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
	d := r.drives
	if d == nil {
		return p
	}
	for _, host := range [...]string{`\OS\Windows\`, `\Files\Windows\`} {
		// The host's Windows directory, as a container's events name it:
		// the part from \Windows\ on, on the system drive.
		if i := indexFold(p, host); i >= 0 {
			return d.system + p[i+len(host)-len(`\Windows\`):]
		}
	}
	for _, m := range d.prefixes {
		if len(p) >= len(m.kernel) && strings.EqualFold(p[:len(m.kernel)], m.kernel) {
			return m.user + p[len(m.kernel):]
		}
	}
	return p
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
