package symbols

import (
	"cmp"
	"encoding/binary"
	enchex "encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/trace"
)

// Universal traces. A machine-wide collection on Linux (the universal
// providers of PerfView's UniversalProviders.md, written as NetTrace V6)
// describes each process's memory with Universal.System events instead of
// the runtime's method events: ProcessMapping maps a file (or anonymous
// code) at a range of a process, ProcessMappingMetadata says how to find
// the file's symbols (an ELF build ID, a PE file's PDB), and ProcessSymbol
// names a range of a mapping: the collector reads the runtime's perf maps
// for jitted code, whose names read
//
//	returnType [Module] Namespace.Class::Method(args)[OptimizationTier]
//
// A Map keeps the mappings as native images of their process, and the
// symbols with their mapping: an address no method event covers resolves
// to the symbol of the image mapped there that covers it, as
// Module!Namespace.Class::Method(args) (TraceEvent too names only the
// addresses no method event resolved), else to module!? in a mapped file,
// and stays unresolved in the runtime's doublemapper mappings of jitted
// code, which no file names. A mapping shared by many processes (the
// kernel's, in every process) keeps its symbols once. The payloads are read
// with TraceEvent's layouts
// (UniversalSystemTraceEventParser): unsigned LEB128 varints, and strings
// of UTF-8 after a 16-bit count.

const (
	universalSystem = "Universal.System"
	// jitMapping starts the name of the runtime's mappings of jitted code.
	jitMapping = "/memfd:doublemapper"
)

// universal is what a Map keeps of the universal events.
type universal struct {
	mappings map[uint64]*uMapping  // by Id
	buildIDs map[uint64]string     // ProcessMappingMetadata's, by Id
	names    map[int64]string      // process names (ProcessCreate, ExistingProcess)
	frames   map[uFrameKey]FrameID // the frames made of symbols
}

// uMapping is a ProcessMapping: the processes it is in, its file, and the
// symbols in it.
type uMapping struct {
	pids []int64
	path string
	syms *uSymbols
}

// mapping returns mapping id, made when first named (a symbol may come
// before its mapping).
func (u *universal) mapping(id uint64) *uMapping {
	mp := u.mappings[id]
	if mp == nil {
		mp = &uMapping{syms: &uSymbols{}}
		u.mappings[id] = mp
	}
	return mp
}

// uSymbols are a mapping's symbols, sorted by start when looked up.
type uSymbols struct {
	list   []uSymbol
	sorted bool
}

// uSymbol is a ProcessSymbol: code [start, end) and its name.
type uSymbol struct {
	start, end       uint64
	method           nameRef // Namespace.Class::Method(args), or the symbol as given
	modName, modPath string  // a jitted method's assembly, or the mapped file
}

// uFrameKey names a frame made of a symbol: a process's, of the symbol of
// one mapping that starts at start and ends at end (its index moves as
// symbols are added).
type uFrameKey struct {
	pid        int64
	syms       *uSymbols
	start, end uint64
}

// find returns the index of the symbol that covers addr, -1 when none: of
// those that cover it, the one that starts nearest below it.
func (s *uSymbols) find(addr uint64) int {
	if !s.sorted {
		slices.SortStableFunc(s.list, func(a, b uSymbol) int { return cmp.Compare(a.start, b.start) })
		s.sorted = true
	}
	i := firstPast(s.list, addr, func(x *uSymbol) uint64 { return x.start })
	for j := i - 1; j >= 0 && j >= i-maxReuse; j-- {
		if addr < s.list[j].end {
			return j
		}
	}
	return -1
}

// symbolFrame resolves addr in process pid through the symbols of image
// im (a universal mapping), reporting false when none covers it.
func (m *Map) symbolFrame(pid int64, im *image, addr uint64) (FrameID, bool) {
	i := im.syms.find(addr)
	if i < 0 {
		return 0, false
	}
	u := m.univ
	s := &im.syms.list[i]
	k := uFrameKey{pid, im.syms, s.start, s.end}
	if f, ok := u.frames[k]; ok {
		return f, true
	}
	f := FrameID(len(m.frames))
	fr := Frame{Module: s.modName, ModulePath: s.modPath, Method: m.nameString(s.method),
		Address: s.start, Size: uint32(s.end - s.start), PID: pid, Reason: Resolved}
	if s.modPath != "" {
		// A symbol of the mapped file: the frame is in its image.
		fr.BuildID, fr.ImageBase, fr.ImageEnd, fr.ImageOffset = im.buildID, im.base, im.end, im.offset
	}
	m.frames = append(m.frames, fr)
	u.frames[k] = f
	return f, true
}

// addUniversal keeps a Universal.System event.
func (m *Map) addUniversal(e *trace.Event) error {
	u := m.univ
	if u == nil {
		u = &universal{mappings: map[uint64]*uMapping{}, buildIDs: map[uint64]string{},
			names: map[int64]string{}, frames: map[uFrameKey]FrameID{}}
		m.univ = u
	}
	p := uPayload{b: e.Payload()}
	pid, ts := e.ProcessID(), e.Timestamp()
	switch e.Name() {
	case "ExistingProcess", "ProcessCreate":
		p.uvarint() // NamespaceId
		if name := p.str(); p.err == nil && name != "" {
			u.names[pid] = name
		}
	case "ProcessMappingMetadata":
		id, md := p.uvarint(), p.str()
		if p.err == nil {
			if bid := mappingBuildID(md); bid != "" {
				u.buildIDs[id] = bid
			}
		}
	case "ProcessMapping":
		id, start, end, off := p.uvarint(), p.uvarint(), p.uvarint(), p.uvarint()
		file, mdID := p.str(), p.uvarint()
		if p.err != nil {
			break
		}
		mp := u.mapping(id)
		if mp.path == "" {
			mp.path = file
		}
		if !slices.Contains(mp.pids, pid) {
			mp.pids = append(mp.pids, pid)
		}
		if end > start {
			m.addMapping(pid, ts, start, end, off, file, u.buildIDs[mdID], mp.syms)
		}
	case "ProcessSymbol":
		p.uvarint() // Id
		mapping, start, last, name := p.uvarint(), p.uvarint(), p.uvarint(), p.str()
		// The end is inclusive. A range that is empty, wraps, or does
		// not fit a method's size (a zeroed kallsyms gives [0, 2^64)) is
		// left out, as TraceEvent leaves it out.
		if p.err != nil || last < start || last-start >= math.MaxUint32 {
			break
		}
		mp := u.mapping(mapping)
		// A jitted method's module is an assembly's name; another
		// symbol's, the file mapped.
		sym := uSymbol{start: start, end: last + 1}
		mod, method, ok := jittedName(name)
		if ok {
			sym.modName = mod
		} else {
			method = name
			if mp.path != "" && !strings.HasPrefix(mp.path, jitMapping) {
				sym.modPath, sym.modName = mp.path, moduleName(mp.path)
			}
		}
		sym.method = m.arenaName([]byte(method))
		mp.syms.list = append(mp.syms.list, sym)
		mp.syms.sorted = false
	}
	if p.err != nil {
		return fmt.Errorf("symbols: %s/%s at offset %d: %w", e.Provider(), e.Name(), e.Offset(), p.err)
	}
	return nil
}

// addMapping keeps a mapping as a native image of process pid from time
// ts, with the symbols in it.
func (m *Map) addMapping(pid, ts int64, start, end, offset uint64, path, buildID string, syms *uSymbols) {
	ims := m.images(pid)
	jit := strings.HasPrefix(path, jitMapping)
	if jit {
		path = "" // no module: the runtime's anonymous memory
	}
	ims.add(image{base: start, end: end, offset: offset, load: ts, unload: always, buildID: buildID, syms: syms, jit: jit}, path)
}

// UniversalProcessNames returns the names of processes a universal
// trace's ProcessCreate and ExistingProcess events give, by process ID (a
// copy); nil when it had none.
func (m *Map) UniversalProcessNames() map[int64]string {
	if m.univ == nil || len(m.univ.names) == 0 {
		return nil
	}
	return maps.Clone(m.univ.names)
}

// jittedName splits a jitted method's name as the runtime's perf maps
// write it, "returnType [Module] Namespace.Class::Method(args)[Tier]",
// into the module and "Namespace.Class::Method(args)", as TraceEvent's
// pattern does: the tier is the bracketed word that ends the name, the
// module the first bracketed word with white space on both sides after a
// return type (which may hold brackets of its own, "valuetype
// [System.Runtime]System.Guid"). ok is false for another name.
func jittedName(s string) (module, method string, ok bool) {
	if !strings.HasSuffix(s, "]") {
		return "", "", false
	}
	body := s[:len(s)-1]
	// The tier's '[': the first after the last ']' before the end.
	k := strings.LastIndexByte(body, ']') + 1
	t := strings.IndexByte(body[k:], '[')
	if t < 0 || k+t == len(body)-1 {
		return "", "", false
	}
	head := body[:k+t]
	for i := 1; i < len(head); i++ {
		if head[i] != '[' || !isSpace(head[i-1]) || i < 2 {
			continue
		}
		j := strings.IndexByte(head[i:], ']')
		if j <= 1 {
			continue
		}
		j += i
		if j+1 >= len(head) || !isSpace(head[j+1]) {
			continue
		}
		method = strings.TrimSpace(head[j+1:])
		if method == "" {
			continue
		}
		return head[i+1 : j], method, true
	}
	return "", "", false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// mappingBuildID is the build ID a ProcessMappingMetadata's symbol
// metadata (JSON) gives: an ELF file's build_id as written, or a PE file's
// PDB signature and age as Windows symbol servers key them (BuildID); ""
// when it gives none.
func mappingBuildID(md string) string {
	var v struct {
		Type      string `json:"type"`
		BuildID   string `json:"build_id"`
		Signature string `json:"signature"`
		Age       uint32 `json:"age"`
	}
	if json.Unmarshal([]byte(md), &v) != nil {
		return ""
	}
	switch v.Type {
	case "ELF":
		return v.BuildID
	case "PE":
		// The signature is the 16 bytes of the image's CodeView record as
		// they lie in the file, each as two hex digits (one-collect's
		// pe_file.rs): an RSDS record's PDB GUID in its binary layout,
		// Data1 to Data3 little-endian, or an NB10 record's 4-byte
		// signature followed by zeros.
		var raw clrimpl.GUID
		if n, err := enchex.Decode(raw[:], []byte(v.Signature)); err != nil || n != len(raw) || raw == (clrimpl.GUID{}) {
			return ""
		}
		if [12]byte(raw[4:]) == [12]byte{} {
			// NB10: the signature (a time stamp) and the age, as
			// symbol servers key such a PDB.
			return fmt.Sprintf("%08X%X", binary.LittleEndian.Uint32(raw[:4]), v.Age)
		}
		return BuildID(raw, v.Age)
	}
	return ""
}

// uPayload reads a universal event's payload; the first fault sticks in
// err, and reads after it give zero values.
type uPayload struct {
	b   []byte
	off int
	err error
}

func (p *uPayload) uvarint() uint64 {
	if p.err != nil {
		return 0
	}
	v, n := binary.Uvarint(p.b[p.off:])
	if n <= 0 {
		p.err = fmt.Errorf("varint at byte %d of %d: %s", p.off, len(p.b), map[bool]string{true: "cut short", false: "longer than 64 bits"}[n == 0])
		return 0
	}
	p.off += n
	return v
}

func (p *uPayload) str() string {
	if p.err != nil {
		return ""
	}
	if len(p.b)-p.off < 2 {
		p.err = fmt.Errorf("string length at byte %d of %d: cut short", p.off, len(p.b))
		return ""
	}
	n := int(binary.LittleEndian.Uint16(p.b[p.off:]))
	if len(p.b)-p.off-2 < n {
		p.err = fmt.Errorf("string of %d bytes at byte %d of %d: cut short", n, p.off, len(p.b))
		return ""
	}
	s := string(p.b[p.off+2 : p.off+2+n])
	p.off += 2 + n
	return s
}
