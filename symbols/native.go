package symbols

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/kernelevents"
)

// Native images. An ETW trace from a kernel session lists the native
// modules (images) mapped into each process (Image Load, Unload, DCStart
// and DCEnd events of the kernel logger; process 0 holds the kernel's own
// modules). The Map keeps them per process over time, and an address no
// managed method covers but an image does resolves to that image with the
// reason Native: the module is known, the function is not (a trace holds
// no native symbols).

// image is one native module mapping.
type image struct {
	base, end    uint64
	load, unload int64 // never / always when not known
	name, path   string
	buildID      string
	offset       uint64 // the file offset base maps (universal traces)
	// A universal trace's mapping (universal.go): the symbols that name
	// its code, shared by every process it is mapped in, and whether it
	// is the runtime's jitted code, which no module names.
	syms *uSymbols
	jit  bool
}

// pdbKey is where an ImageID/DbgID_RSDS event says an image is mapped.
type pdbKey struct {
	pid  int64
	base uint64
}

type images struct {
	list   []image
	sorted bool
	open   map[uint64]int // base -> index of the mapping still loaded
}

// kernelSpace is where kernel addresses start in a 64-bit process; a
// 32-bit kernel's start at 0x80000000.
const (
	kernelSpace64 = 0xFFFF800000000000
	kernelSpace32 = 0x80000000
)

// addKernel keeps a kernel Image event (Load, Unload, DCStart, DCStop) or
// the ImageID/DbgID_RSDS event that names an image's PDB, decoded as ev,
// of time ts and pointer size ptrSize.
func (m *Map) addKernel(ts int64, ptrSize int, ev clrimpl.Event) {
	switch v := ev.(type) {
	case kernelevents.DbgIDRSDSEvent:
		// The image's PDB, logged just before the image's own event.
		f := v.DbgIDRSDSFields()
		if f.Kind != kernelevents.KindImageIDDbgIDRSDS {
			return // an IL image's PDB
		}
		if m.pdbs == nil {
			m.pdbs = map[pdbKey]string{}
		}
		m.pdbs[pdbKey{int64(f.ProcessID), f.ImageBase}] = BuildID(f.GuidSig, f.Age)
	case kernelevents.ImageEvent:
		m.addImage(ts, ptrSize, v.ImageFields())
	}
}

// addImage records an Image event of time ts.
func (m *Map) addImage(ts int64, ptrSize int, im kernelevents.ImageFields) {
	if im.ImageSize == 0 {
		return
	}
	pid := int64(im.ProcessID)
	if pid == 0 {
		m.kernel32 = ptrSize == 4
	}
	ims := m.images(pid)
	base := im.ImageBase
	bid := m.pdbs[pdbKey{pid, base}]
	switch im.Kind {
	case kernelevents.KindImageUnload:
		if i, ok := ims.open[base]; ok {
			ims.list[i].unload = ts
			delete(ims.open, base)
			return
		}
		// Loaded before the trace began.
		ims.add(image{base: base, end: base + im.ImageSize, load: never, unload: ts, buildID: bid}, im.FileName.String())
	case kernelevents.KindImageDCStart, kernelevents.KindImageDCStop, kernelevents.KindImageLoad:
		if _, ok := ims.open[base]; ok {
			return // listed again (the rundown at the end)
		}
		load := ts
		if im.Kind != kernelevents.KindImageLoad {
			load = never
		}
		ims.open[base] = len(ims.list)
		ims.add(image{base: base, end: base + im.ImageSize, load: load, unload: always, buildID: bid}, im.FileName.String())
	}
}

// images returns process pid's images, made when first asked for.
func (m *Map) images(pid int64) *images {
	ims := m.imgs[pid]
	if ims == nil {
		if m.imgs == nil {
			m.imgs = map[int64]*images{}
		}
		ims = &images{open: map[uint64]int{}}
		m.imgs[pid] = ims
	}
	return ims
}

func (ims *images) add(im image, path string) {
	im.path, im.name = path, moduleName(path)
	if ims.sorted && len(ims.list) > 0 && ims.list[len(ims.list)-1].base > im.base {
		ims.sorted = false
	}
	if len(ims.list) == 0 {
		ims.sorted = true
	}
	ims.list = append(ims.list, im)
}

// findImage returns the image mapped at addr in process pid (process 0
// for a kernel address) at time ts, nil when none, and the span of time
// [from, to) around ts over which that answer holds.
func (m *Map) findImage(pid int64, addr uint64, ts int64) (found *image, from, to int64) {
	if pid != 0 && (addr >= kernelSpace64 || (m.kernel32 && addr >= kernelSpace32 && addr>>32 == 0)) {
		// A kernel address: ETW lists the kernel's images in process 0;
		// a universal trace may map the kernel into the process itself.
		found, from, to = m.imgs[0].find(addr, ts)
		if found != nil {
			return found, from, to
		}
		f, lo, hi := m.imgs[pid].find(addr, ts)
		return f, max(from, lo), min(to, hi)
	}
	return m.imgs[pid].find(addr, ts)
}

// find is findImage in one process's images (none when ims is nil).
func (ims *images) find(addr uint64, ts int64) (found *image, from, to int64) {
	from, to = never, always
	if ims == nil {
		return nil, from, to
	}
	if !ims.sorted {
		// Sorting moves entries: rebuild the index of open mappings.
		slices.SortStableFunc(ims.list, func(a, b image) int { return cmp.Compare(a.base, b.base) })
		clear(ims.open)
		for i := range ims.list {
			if ims.list[i].unload == always {
				ims.open[ims.list[i].base] = i
			}
		}
		ims.sorted = true
	}
	// Images starting at or below addr, nearest first: images do not
	// overlap at one time, but a range may be mapped again later.
	i := firstPast(ims.list, addr, func(im *image) uint64 { return im.base })
	for j := i - 1; j >= 0 && j >= i-maxReuse; j-- {
		im := &ims.list[j]
		if addr >= im.end {
			continue
		}
		from, to = narrow(from, to, ts, im.load, im.unload)
		if found == nil && im.load <= ts && ts < im.unload {
			found = im
		}
	}
	return found, from, to
}

// firstPast returns the index of the first entry of list, sorted by
// start, that starts past addr: len(list) when none does.
func firstPast[T any](list []T, addr uint64, start func(*T) uint64) int {
	lo, hi := 0, len(list)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if start(&list[mid]) <= addr {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// maxReuse is how many mappings below an address findImage looks at.
const maxReuse = 16

// BuildID is a PDB's identity as Windows symbol servers key it: the GUID's
// 32 hexadecimal digits, upper case, without dashes, in the GUID's text
// order, followed by the age in hexadecimal.
func BuildID(g clrimpl.GUID, age uint32) string {
	t := strings.ToUpper(strings.ReplaceAll(g.String(), "-", ""))
	return t + strings.ToUpper(strconv.FormatUint(uint64(age), 16))
}

// Images returns how many native image mappings the map holds.
func (m *Map) Images() int {
	n := 0
	for _, ims := range m.imgs {
		n += len(ims.list)
	}
	return n
}
