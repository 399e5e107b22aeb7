package symbols

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

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
// A Map keeps the mappings as native images of their process (the
// doublemapper mappings the runtime puts jitted code in excepted, as
// TraceEvent does) and the symbols as methods that cover their range for
// the whole trace (TraceEvent names the addresses no method event
// resolved, after the last event), so that an address resolves to
// Module!Namespace.Class::Method(args), and to module!? in a mapped file
// no symbol covers. The payloads are read with TraceEvent's layouts
// (UniversalSystemTraceEventParser): unsigned LEB128 varints, and strings
// of UTF-8 after a 16-bit count.

const (
	universalSystem = "Universal.System"
	// jitMapping starts the name of the runtime's mappings of jitted code.
	jitMapping = "/memfd:doublemapper"
	// universalMethodID marks the method IDs of symbols (a ProcessSymbol's
	// Id), apart from the runtime's.
	universalMethodID = 1 << 63
)

// universal is what a Map keeps of the universal events.
type universal struct {
	mappings map[uint64]*uMapping // by Id
	buildIDs map[uint64]string    // ProcessMappingMetadata's, by Id
	modules  map[string]uint64    // the IDs given symbols' modules, by path
	names    map[int64]string     // process names (ProcessCreate, ExistingProcess)
}

// uMapping is a ProcessMapping: the processes it is in and its file.
type uMapping struct {
	pids []int64
	path string
}

// addUniversal keeps a Universal.System event.
func (m *Map) addUniversal(e *trace.Event) error {
	u := m.univ
	if u == nil {
		u = &universal{mappings: map[uint64]*uMapping{}, buildIDs: map[uint64]string{},
			modules: map[string]uint64{}, names: map[int64]string{}}
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
		id, start, end := p.uvarint(), p.uvarint(), p.uvarint()
		p.uvarint() // FileOffset
		file, mdID := p.str(), p.uvarint()
		if p.err != nil {
			break
		}
		mp := u.mappings[id]
		if mp == nil {
			mp = &uMapping{path: file}
			u.mappings[id] = mp
		}
		if !containsPID(mp.pids, pid) {
			mp.pids = append(mp.pids, pid)
		}
		if end > start && !strings.HasPrefix(file, jitMapping) {
			m.addMapping(pid, ts, start, end, file, u.buildIDs[mdID])
		}
	case "ProcessSymbol":
		id, mapping, start, last, name := p.uvarint(), p.uvarint(), p.uvarint(), p.uvarint(), p.str()
		if p.err != nil {
			break
		}
		// The end is inclusive. A range that is empty, wraps, or does
		// not fit a method's size (a zeroed kallsyms gives [0, 2^64)) is
		// left out, as TraceEvent leaves it out.
		mp := u.mappings[mapping]
		if last < start || last-start >= math.MaxUint32 || mp == nil {
			break
		}
		// A jitted method's module is an assembly's name; another
		// symbol's, the file mapped.
		modName, sym, ok := jittedName(name)
		modPath := ""
		if !ok {
			sym = name
			if !strings.HasPrefix(mp.path, jitMapping) {
				modPath = mp.path
				modName = moduleName(modPath)
			}
		}
		key := modName + "\x00" + modPath
		modID, known := u.modules[key]
		if !known {
			modID = universalMethodID | uint64(len(u.modules))
			u.modules[key] = modID
		}
		nm := m.arenaName([]byte(sym))
		for _, pid := range mp.pids {
			pr := m.proc(pid)
			if modName != "" {
				pr.modules[modID] = module{name: modName, path: modPath}
			}
			pr.add(method{start: start, size: uint32(last - start + 1), load: never, unload: always,
				methodID: universalMethodID | id, moduleID: modID, name: nm})
			m.methods++
		}
	}
	if p.err != nil {
		return fmt.Errorf("symbols: %s/%s at offset %d: %w", e.Provider(), e.Name(), e.Offset(), p.err)
	}
	return nil
}

func containsPID(pids []int64, pid int64) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}

// addMapping keeps a mapped file as a native image of process pid from
// time ts.
func (m *Map) addMapping(pid, ts int64, start, end uint64, path, buildID string) {
	ims := m.imgs[pid]
	if ims == nil {
		if m.imgs == nil {
			m.imgs = map[int64]*images{}
		}
		ims = &images{open: map[uint64]int{}}
		m.imgs[pid] = ims
	}
	ims.add(image{base: start, end: end, load: ts, unload: always, buildID: buildID}, path)
}

// UniversalProcessNames are the names of processes a universal trace's
// ProcessCreate and ExistingProcess events give, by process ID; nil when
// it had none.
func (m *Map) UniversalProcessNames() map[int64]string {
	if m.univ == nil || len(m.univ.names) == 0 {
		return nil
	}
	return m.univ.names
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
		if len(v.Signature) == 32 && strings.Trim(v.Signature, "0123456789abcdefABCDEF") == "" {
			return strings.ToUpper(v.Signature) + strings.ToUpper(strconv.FormatUint(uint64(v.Age), 16))
		}
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
