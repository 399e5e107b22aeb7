// Package symbols turns the instruction pointers of a .NET trace's stacks into
// managed method names: per process and over time, it keeps the code map
// that the CLR's method and module events describe (JIT-compiled methods as
// they load and unload, precompiled and earlier-compiled ones as the rundown
// lists them), resolves an address at a time to
// module!Namespace.Method(Signature), counts what it could not resolve and
// why, and interns stacks into stable IDs.
//
// Feed it every event of a trace (Map.Add, or Map.Observe with an event
// already decoded), then resolve: rundown events come at the end of a trace,
// so resolve after the last event for the best result.
//
//	m := symbols.NewMap()
//	for each event e { m.Add(e) }
//	f, reason := m.Resolve(pid, ip, timestamp)
//	fmt.Println(m.Frame(f)) // "System.Private.CoreLib!System.String.Concat(class System.String,class System.String)"
//
// A universal trace (a machine-wide Linux collection written as NetTrace
// V6) names its code with Universal.System events instead: the files
// mapped into each process, and the ranges of jitted code the runtime's
// perf maps name (see universal.go). Add keeps those too.
//
// Method events of every version come through the generated families
// (clrevents.MethodLoadUnloadVerboseEvent, clrevents.MethodLoadUnloadEvent,
// clrevents.ModuleLoadUnloadEvent), in the runtime and rundown providers.
//
// Time is the trace's raw clock (trace.Event.Timestamp). A method loaded at
// t1 and unloaded at t2 covers its range over [t1, t2); methods listed by
// the rundown (DCStart, DCEnd) have no known load time and cover their range
// from the start of the trace. When an address range is reused, the method
// live at the time asked wins.
//
// Resolving and interning allocate nothing once the addresses and stacks
// have been seen.
package symbols

import (
	"bytes"
	"encoding/binary"
	"math"
	"path"
	"slices"
	"strings"
	"unsafe"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// Reason says why an address did or did not resolve.
type Reason uint8

const (
	// Resolved: a method live at the time covers the address.
	Resolved Reason = iota
	// NoProcess: no method event of the process is in the trace (enable
	// the runtime's Loader and JIT keywords, or its rundown provider).
	NoProcess
	// NoMethod: no method event covers the address: native code (the
	// runtime, the OS, stubs) or a method neither loaded during the trace
	// nor listed by a rundown.
	NoMethod
	// NotLive: methods covered the address, but none at that time (it was
	// unloaded before, or loaded after).
	NotLive
	// Native: no method covers the address, but a native image the trace
	// lists does (an ETW trace's kernel Image events): the frame names the
	// module, not the function.
	Native
	// Label: not code, but what a profile puts at a stack's leaf to say
	// what its samples are (Map.Label): the type an allocation made, the
	// exception a throw threw.
	Label
	// NumReasons is the number of reasons.
	NumReasons
)

// reasonNames say what happened to a frame, to follow "N frames: ".
var reasonNames = [NumReasons]string{"resolved", "no method events of their process", "no method covers the address", "no method live at that time", "native code, named by its module only", "a label, not code"}

func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown reason"
}

// FrameID names a frame of a Map. IDs are dense, from 0, in the order frames
// are first resolved.
type FrameID uint32

// Frame is a resolved or unresolved code location.
type Frame struct {
	// Module is the module's file name without its extension, as pyroscope
	// prints it ("System.Private.CoreLib"); "" when unknown.
	Module string
	// ModulePath is the module's IL path (or native path), "" when unknown.
	ModulePath string
	// Method is Namespace.Name(Signature); "" for an unresolved frame.
	Method string
	// Address is the method's start address, or the unresolved address.
	Address uint64
	// Size is the method's code size; 0 for an unresolved frame.
	Size uint32
	// BuildID identifies the frame's image for symbol servers (its PDB's
	// GUID and age, see BuildID) where the trace says it: a native image's
	// from KernelTraceControl's image identity, a managed module's from
	// its module event (ManagedPdbSignature and ManagedPdbAge); "".
	BuildID string
	// ImageBase and ImageEnd are a native frame's image mapping [base,
	// end); 0 otherwise.
	ImageBase, ImageEnd uint64
	// ImageOffset is the offset in the image's file that ImageBase maps
	// (a universal trace's ProcessMapping says it: a shared library's
	// segments are mapped from offsets of their own); 0 otherwise.
	ImageOffset uint64
	// PID is the process the frame is in.
	PID int64
	// Reason is Resolved, or why the address did not resolve.
	Reason Reason
}

// Unresolved is how an unresolved frame prints, pyroscope's convention.
const Unresolved = "?!?"

// String is module!Method, "?!Method" when the module is unknown,
// "module!?" for native code in a known image (PerfView's convention),
// "?!?" for an unresolved frame, and a label's text (Method) alone.
func (f *Frame) String() string {
	switch f.Reason {
	case Native:
		return f.Module + "!?"
	case Label:
		return f.Method
	}
	if f.Reason != Resolved {
		return Unresolved
	}
	mod := f.Module
	if mod == "" {
		mod = "?"
	}
	return mod + "!" + f.Method
}

const (
	never  = math.MinInt64
	always = math.MaxInt64
)

// method is an entry of a process's code map. It holds no pointer, so
// that the garbage collector does not scan the thousands a rundown lists,
// and moving them costs no write barriers.
type method struct {
	start      uint64
	load       int64 // never: from the start of the trace
	unload     int64 // always: to its end
	methodID   uint64
	moduleID   uint64
	size       uint32
	frame      FrameID
	name       nameRef // Namespace.Name(Signature)
	hasFrame   bool
	frameModID bool // the module was known when the frame was made
}

// methodList is a process's method entries, in chunks that stay where
// they are: adding the thousands a rundown lists copies none of those
// before (a slice would copy them at each doubling, and sort copies them
// once more anyway).
type methodList struct {
	chunks []*[methodChunk]method
	n      int
}

// methodChunk is how many entries a chunk holds (32 KiB of them): a
// trace with a few hundred methods allocates that much, not the 256 KiB
// a chunk of 4,096 took for every profile build; the chunks of a rundown
// of 100,000 methods are 196 pointers.
const methodChunk = 1 << 9

// at returns entry i, for 0 ≤ i < n.
func (l *methodList) at(i int) *method { return &l.chunks[i/methodChunk][i%methodChunk] }

func (l *methodList) add(me method) {
	if l.n == len(l.chunks)*methodChunk {
		l.chunks = append(l.chunks, new([methodChunk]method))
	}
	*l.at(l.n) = me
	l.n++
}

// nameRef is a name in the Map's arena: bytes [off, off+n) of block blk;
// n 0 for none. A method event's name is kept as the event has it, in
// UTF-16 (n has rawName set; see rawName), and converted to UTF-8 only
// when a frame is made of its method (methodString): a rundown lists
// every method the runtime has code for, of which a profile's stacks
// name a few hundred, and copying a name costs a fraction of converting
// it.
type nameRef struct{ blk, off, n uint32 }

// rawName marks a nameRef whose bytes are a method event's name as the
// event has it (rawHeader, then the name and the signature from its '('
// on, in UTF-16LE) and its namespace elsewhere in the arena: a rundown
// lists a class's methods one after another, and the name of each refers
// to the namespace the one before it kept.
const rawName = 1 << 31

// rawHeader is the size of a raw name's header: the block, offset and
// length of its namespace's bytes and the length of its name's, uint32
// each, little-endian.
const rawHeader = 16

type module struct {
	name, path string
	buildID    string // its PDB's, from the module event (BuildID)
}

type process struct {
	// methods are the entries in the order they came; they never move,
	// so open's indexes stay valid. order lists them sorted by start, then
	// load, then arrival (valid while sorted), and starts holds their
	// starts in that order, for the binary search of a look-up.
	methods methodList
	order   []int32
	starts  []uint64
	sorted  bool
	// ends is a tree of the sorted methods' ends (start+size): leaf i is
	// ends[len(ends)/2+i], node k is the largest end of its children 2k
	// and 2k+1. The methods that cover an address are found in time
	// logarithmic in their number, whatever their sizes: one method of
	// 4 GiB (a damaged trace's garbled size) would otherwise make every
	// look-up scan back through every method below it. reach[i] is the
	// largest end of methods 0 to i: where it is not past an address, no
	// method below covers it, which ends most look-ups at once.
	ends  []uint64
	reach []uint64
	// open maps (MethodID, start) to the index of the live entry. The
	// entries of the rundown whose events came last are not in it yet but
	// in pending (flush), their kind pendingKind: a rundown lists a method
	// once, so they need no look-up among themselves.
	open        openIndex
	pending     []int32
	pendingKind kind
	modules     map[uint64]module
}

type addrKey struct {
	pid  int64
	addr uint64
}

// Map is the code map of every process of a trace. It is not safe for
// concurrent use.
type Map struct {
	procs  map[int64]*process
	frames []Frame
	// unresolved holds the unresolved frames by process and address;
	// unresPID's map is the last one used (most traces have one process).
	unresolved map[int64]map[uint64]FrameID
	unresPID   int64
	unresLast  map[uint64]FrameID
	labels     map[string]FrameID // Label's frames, by text
	counts     [NumReasons]int64
	methods    int
	rundown    int // method events of a rundown (DCStart, DCEnd)
	buf        []byte
	arena      [][]byte // the blocks of method names, the current one last
	// The namespace the last method name kept refers to (lastNS).
	nsBlk, nsOff, nsLen uint32
	// Schema entries whose events Observe ignores (IL maps, JIT
	// details...), found at their first event: later ones are not decoded.
	ignored map[*clrimpl.Descriptor]bool
	// Native images by process (native.go), and their frames by process
	// and address.
	imgs     map[int64]*images
	pdbs     map[pdbKey]string // build IDs of the images the trace names a PDB for
	kernel32 bool              // the kernel's images are 32-bit
	native   map[nativeKey]FrameID
	// What a universal trace's Universal.System events say (universal.go).
	univ *universal
}

// nativeKey names a native frame: an address of a process in one mapping
// of an image (a range may be mapped again by another image).
type nativeKey struct {
	addrKey
	load int64
	base uint64
}

// NewMap returns an empty Map.
func NewMap() *Map {
	return &Map{procs: map[int64]*process{}, unresolved: map[int64]map[uint64]FrameID{}}
}

// Add feeds an event to the map: method and module events, an ETW
// trace's kernel Image events, and a universal trace's Universal.System
// events (see universal.go's comment), are kept, the rest ignored. It
// returns an error only for one of those whose payload does not decode.
func (m *Map) Add(e *trace.Event) error {
	typ, ok := e.DecodeType()
	if !ok {
		if e.Provider() == universalSystem {
			return m.addUniversal(e)
		}
		return nil
	}
	if _, ok := typ.(*kernelevents.EventInfo); ok {
		switch d := typ.Descriptor(); d.ProviderGUID {
		case imageGUID, imageIDGUID:
			ev, err := e.Decode()
			if err != nil {
				return err
			}
			m.addKernel(e.Timestamp(), e.PointerSize(), ev)
		}
		return nil
	}
	// The runtime's events as clrevents has them, whatever other
	// generated packages the program links (a newer version of a method
	// event in one is the older version here).
	if typ, ok = e.DecodeTypeIn(clrevents.Table()); !ok {
		return nil
	}
	d := typ.Descriptor()
	if m.ignored[d] || !IsCodeEvent(d.Name) {
		return nil
	}
	ev, err := e.DecodeIn(clrevents.Table())
	if err != nil {
		return err
	}
	if !m.Observe(e.ProcessID(), e.Timestamp(), ev) && ev.Descriptor() == d {
		if m.ignored == nil {
			m.ignored = map[*clrimpl.Descriptor]bool{}
		}
		m.ignored[d] = true
	}
	return nil
}

// The classes of the kernel's Image events and KernelTraceControl's image
// identity events.
var (
	imageGUID   = kernelevents.ProviderImage.GUID()
	imageIDGUID = kernelevents.ProviderImageID.GUID()
)

// IsCodeEvent tells whether an event name is one of the method or module
// events a Map keeps.
func IsCodeEvent(name string) bool {
	return strings.HasPrefix(name, "Method") || strings.HasPrefix(name, "Module") ||
		strings.HasPrefix(name, "RuntimeMethod") || strings.HasPrefix(name, "RuntimeModule")
}

type kind uint8

const (
	kLoad kind = iota
	kUnload
	kDCStart // a rundown's, at the trace's start
	kDCEnd   // a rundown's, at its end
)

// The families' kinds, as a Map treats them: loads, unloads, and the
// rundown's DCStart and DCEnd (from either provider).

func verboseKind(k clrevents.MethodLoadUnloadVerboseKind) kind {
	switch k {
	case clrevents.KindMethodUnloadVerbose:
		return kUnload
	case clrevents.KindMethodDCStartVerbose:
		return kDCStart
	case clrevents.KindMethodDCEndVerbose:
		return kDCEnd
	}
	return kLoad
}

func methodKind(k clrevents.MethodLoadUnloadKind) kind {
	switch k {
	case clrevents.KindMethodUnload:
		return kUnload
	case clrevents.KindMethodDCStart:
		return kDCStart
	case clrevents.KindMethodDCEnd:
		return kDCEnd
	}
	return kLoad
}

// Observe feeds an event already decoded (pid and ts as the trace gives
// them). It reports whether the event was a method or module event.
func (m *Map) Observe(pid int64, ts int64, ev clrimpl.Event) bool {
	switch x := ev.(type) {
	case clrevents.MethodLoadUnloadVerboseEvent:
		f := x.MethodLoadUnloadVerboseFields()
		m.method(pid, ts, verboseKind(f.Kind), f.MethodID, f.ModuleID, f.MethodStartAddress, f.MethodSize,
			&[3]clrevents.UTF16{f.MethodNamespace, f.MethodName, f.MethodSignature})
		return true
	case clrevents.MethodLoadUnloadEvent:
		f := x.MethodLoadUnloadFields()
		m.method(pid, ts, methodKind(f.Kind), f.MethodID, f.ModuleID, f.MethodStartAddress, f.MethodSize, nil)
		return true
	case clrevents.ModuleLoadUnloadEvent:
		f := x.ModuleLoadUnloadFields()
		p := m.proc(pid)
		if _, ok := p.modules[f.ModuleID]; ok && f.Kind == clrevents.KindModuleUnload {
			return true // keep the name: samples before the unload still need it
		}
		mp := f.ModuleILPath.String()
		if mp == "" {
			mp = f.ModuleNativePath.String()
		}
		var id string
		if f.HasManagedPdbSignature && !f.ManagedPdbSignature.IsZero() {
			id = BuildID(f.ManagedPdbSignature, f.ManagedPdbAge)
		}
		p.modules[f.ModuleID] = module{name: moduleName(mp), path: mp, buildID: id}
		return true
	}
	return false
}

// methodName keeps a method event's name, Namespace.Name followed by the
// signature from its '(' on, as pyroscope's profiler writes it, in the
// arena as the event has it (rawName), for methodString to convert when
// a frame needs it; none for nil, or when the parts are empty. The part
// of the signature before '(' (the return type) is not kept.
func (m *Map) methodName(n *[3]clrevents.UTF16) nameRef {
	if n == nil {
		return nameRef{}
	}
	ns, name, sig := n[0].Bytes(), n[1].Bytes(), n[2].Bytes()
	switch i := indexParen(sig); {
	case i > 0:
		sig = sig[2*i:]
	case i < 0:
		// No parameter list: nothing to append (a JIT helper's
		// signature is the placeholder "NULL").
		sig = nil
	}
	if bytes.Equal(ns, utf16Null) {
		ns = nil // a JIT helper's namespace placeholder
	}
	if len(ns)+len(name)+len(sig) == 0 {
		return nameRef{}
	}
	if !bytes.Equal(ns, m.lastNS()) {
		m.nsBlk, m.nsOff = m.arenaPut(ns, nil, nil)
		m.nsLen = uint32(len(ns))
	}
	var h [rawHeader]byte
	binary.LittleEndian.PutUint32(h[0:], m.nsBlk)
	binary.LittleEndian.PutUint32(h[4:], m.nsOff)
	binary.LittleEndian.PutUint32(h[8:], m.nsLen)
	binary.LittleEndian.PutUint32(h[12:], uint32(len(name)))
	blk, off := m.arenaPut(h[:], name, sig)
	return nameRef{blk, off, uint32(rawHeader+len(name)+len(sig)) | rawName}
}

// lastNS is the namespace the last method name kept refers to.
func (m *Map) lastNS() []byte {
	if m.nsLen == 0 {
		return nil
	}
	return m.arena[m.nsBlk][m.nsOff : m.nsOff+m.nsLen]
}

// methodString returns the name of method me, converting a raw one to
// UTF-8 once (me keeps the converted name).
func (m *Map) methodString(me *method) string {
	if me.name.n&rawName != 0 {
		me.name = m.convertName(me.name)
	}
	return m.nameString(me.name)
}

// convertName converts the raw name r to UTF-8 in the arena: the
// namespace, a '.' after it when it is not empty, the name, the signature.
func (m *Map) convertName(r nameRef) nameRef {
	raw := m.arena[r.blk][r.off : r.off+r.n&^rawName]
	nsBlk, nsOff, nsLen := binary.LittleEndian.Uint32(raw), binary.LittleEndian.Uint32(raw[4:]), binary.LittleEndian.Uint32(raw[8:])
	nameEnd := rawHeader + int(binary.LittleEndian.Uint32(raw[12:]))
	var ns []byte
	if nsLen > 0 {
		ns = m.arena[nsBlk][nsOff : nsOff+nsLen]
	}
	b := clrevents.MakeUTF16(ns).AppendUTF8(m.buf[:0])
	if len(b) > 0 {
		b = append(b, '.')
	}
	b = clrevents.MakeUTF16(raw[rawHeader:nameEnd]).AppendUTF8(b)
	b = clrevents.MakeUTF16(raw[nameEnd:]).AppendUTF8(b)
	m.buf = b
	return m.arenaName(b)
}

// utf16Null is "NULL" in UTF-16LE: the runtime's namespace and signature
// for its JIT helpers (@NewObject, …), which have neither.
var utf16Null = []byte{'N', 0, 'U', 0, 'L', 0, 'L', 0}

// indexParen is the index in code units of the first '(' of UTF-16LE
// bytes, -1 when none.
func indexParen(b []byte) int {
	for off := 0; ; {
		j := bytes.IndexByte(b[off:], '(')
		if j < 0 {
			return -1
		}
		if j += off; j%2 == 0 && j+1 < len(b) && b[j+1] == 0 {
			return j / 2
		}
		off = j + 1
	}
}

// arenaBlock is the size of the arena's blocks.
const arenaBlock = 64 << 10

// arenaName copies b into the arena. A block is never written again
// where names are: a name's string points into it (nameString).
func (m *Map) arenaName(b []byte) nameRef {
	if len(b) == 0 {
		return nameRef{}
	}
	blk, off := m.arenaPut(b, nil, nil)
	return nameRef{blk, off, uint32(len(b))}
}

// arenaPut appends a, b and c to the arena, one after the other, and
// returns the block and offset they start at. Bytes longer than a
// quarter of a block have a block of their own, full (the next bytes
// start another).
func (m *Map) arenaPut(a, b, c []byte) (blk, off uint32) {
	n := len(a) + len(b) + len(c)
	var i int
	if n <= arenaBlock/4 {
		i = m.arenaRoom(n)
	} else {
		m.arena = append(m.arena, make([]byte, 0, n))
		i = len(m.arena) - 1
	}
	dst := m.arena[i]
	off = uint32(len(dst))
	m.arena[i] = append(append(append(dst, a...), b...), c...)
	return uint32(i), off
}

// arenaRoom returns the index of the arena's current block, started anew
// when it has no room for n more bytes (n at most arenaBlock).
func (m *Map) arenaRoom(n int) int {
	last := len(m.arena) - 1
	if last < 0 || cap(m.arena[last])-len(m.arena[last]) < n {
		m.arena = append(m.arena, make([]byte, 0, arenaBlock))
		last++
	}
	return last
}

// nameString is the UTF-8 name r refers to, "" for none (a method's raw
// name goes through methodString).
func (m *Map) nameString(r nameRef) string {
	if r.n == 0 {
		return ""
	}
	return unsafe.String(&m.arena[r.blk][r.off], r.n)
}

// moduleName is a module path's file name without its extension, for
// Windows and Unix paths alike.
func moduleName(p string) string {
	if i := strings.LastIndexAny(p, `\/`); i >= 0 {
		p = p[i+1:]
	}
	return strings.TrimSuffix(p, path.Ext(p))
}

func (m *Map) proc(pid int64) *process {
	p := m.procs[pid]
	if p == nil {
		p = &process{modules: map[uint64]module{}}
		m.procs[pid] = p
	}
	return p
}

func (m *Map) method(pid, ts int64, k kind, id, modID, start uint64, size uint32, names *[3]clrevents.UTF16) {
	p := m.proc(pid)
	if len(p.pending) > 0 && k != p.pendingKind {
		p.flush()
	}
	key := [2]uint64{id, start}
	i, live := p.open.get(key)
	switch k {
	case kUnload:
		if live {
			me := p.methods.at(i)
			me.unload = ts
			if me.name.n == 0 {
				me.name = m.methodName(names)
			}
			p.open.del(key)
			return
		}
		// Loaded before the trace began and not listed by a rundown.
		p.add(method{start: start, size: size, load: never, unload: ts, methodID: id, moduleID: modID, name: m.methodName(names)})
		m.methods++
		return
	default:
		rundown := k == kDCStart || k == kDCEnd
		if rundown {
			m.rundown++
		}
		if live {
			if me := p.methods.at(i); me.name.n == 0 {
				me.name = m.methodName(names)
			}
			return
		}
		load := ts
		if rundown {
			// A rundown lists each method once: its entries wait to be
			// indexed until an event of another kind may refer to them
			// (flush), which after the rundown at a trace's end none
			// does. An index of the thousands it lists would cost more
			// than the rest of taking them.
			load = never
			p.pending = append(p.pending, int32(p.methods.n))
			p.pendingKind = k
		} else {
			p.open.put(key, p.methods.n)
		}
		p.add(method{start: start, size: size, load: load, unload: always, methodID: id, moduleID: modID, name: m.methodName(names)})
		m.methods++
	}
}

// flush indexes the live entries of the rundown whose events came last.
func (p *process) flush() {
	for _, i := range p.pending {
		if me := p.methods.at(int(i)); me.unload == always {
			p.open.put([2]uint64{me.methodID, me.start}, int(i))
		}
	}
	p.pending = p.pending[:0]
}

func (p *process) add(me method) {
	p.methods.add(me)
	p.sorted = false
}

func (p *process) sort() {
	// By start, then load, then arrival: the order of a stable sort by
	// start and load. The entries stay where they are: order says where
	// each goes.
	keys := make([]methodKey, p.methods.n)
	sorted := true
	for i := range p.methods.n {
		me := p.methods.at(i)
		keys[i] = methodKey{me.start, me.load, uint32(i), me.size}
		if i > 0 && (keys[i-1].start > me.start || keys[i-1].start == me.start && keys[i-1].load > me.load) {
			sorted = false
		}
	}
	if !sorted {
		keys = sortKeys(keys)
	}
	p.order = slices.Grow(p.order[:0], len(keys))[:len(keys)]
	p.starts = slices.Grow(p.starts[:0], len(keys))[:len(keys)]
	leaves := p.growEnds()
	var reach uint64
	for j, k := range keys {
		p.order[j], p.starts[j] = int32(k.i), k.start
		end := k.start + uint64(k.size)
		if end < k.start {
			end = math.MaxUint64 // past the address space
		}
		p.ends[leaves+j] = end
		reach = max(reach, end)
		p.reach[j] = reach
	}
	for k := leaves - 1; k >= 1; k-- {
		p.ends[k] = max(p.ends[2*k], p.ends[2*k+1])
	}
	p.sorted = true
}

// sortedAt returns the method at position j of the sorted order.
func (p *process) sortedAt(j int) *method { return p.methods.at(int(p.order[j])) }

// growEnds sizes ends and reach for the methods, the leaves past them
// cleared, and returns the number of leaves; sort fills the rest in.
func (p *process) growEnds() int {
	leaves := 1
	for leaves < p.methods.n {
		leaves <<= 1
	}
	p.ends = slices.Grow(p.ends[:0], 2*leaves)[:2*leaves]
	p.reach = slices.Grow(p.reach[:0], p.methods.n)[:p.methods.n]
	clear(p.ends[leaves+p.methods.n:])
	return leaves
}

// coverScan is a look-up in progress (see cover).
type coverScan struct {
	p        *process
	lo       int // the methods below lo start at or before addr
	addr     uint64
	ts       int64
	best     int // the live method loaded last, -1 for none
	covered  bool
	from, to int64
}

// cover visits the methods below s.lo that cover s.addr, highest index
// first: the nearest below, then, unless reach shows that none further
// down covers it, each subtree of ends to the left in turn, entered only
// where its largest end is past addr.
func (p *process) cover(s *coverScan) {
	leaves := len(p.ends) / 2
	if s.lo == 0 || p.reach[s.lo-1] <= s.addr {
		return
	}
	// Usually only the nearest method below can cover the address.
	if p.ends[leaves+s.lo-1] > s.addr {
		s.visit(s.lo - 1)
	}
	if s.lo == 1 || p.reach[s.lo-2] <= s.addr {
		return
	}
	k := leaves + s.lo - 2
	for {
		if p.ends[k] > s.addr {
			if k < leaves {
				k = 2*k + 1 // the right child first
				continue
			}
			s.visit(k - leaves)
		}
		// The subtree before k's: its left sibling's, or its parent's.
		for k&1 == 0 {
			k >>= 1
		}
		if k == 1 {
			return
		}
		k--
	}
}

// visit takes the method at sorted position j, which covers the address,
// into the look-up.
func (s *coverScan) visit(j int) {
	me := s.p.sortedAt(j)
	s.covered = true
	s.from, s.to = narrow(s.from, s.to, s.ts, me.load, me.unload)
	if me.load <= s.ts && s.ts < me.unload {
		// The live method loaded last wins; of two loaded at the same
		// time (both before the trace: one a rundown lists, one whose
		// unload came in the trace), the one that ended first, since
		// the other took its range after it.
		if s.best < 0 {
			s.best = j
		} else if b := s.p.sortedAt(s.best); me.load > b.load || me.load == b.load && me.unload < b.unload {
			s.best = j
		}
	}
}

// Methods returns how many method entries the map holds.
func (m *Map) Methods() int { return m.methods }

// Resolve names the code at addr in process pid at time ts (the trace's raw
// clock). An unresolved address gets a frame of its own (per process and
// address) that keeps the address, and the reason. Every call counts in
// Counts.
func (m *Map) Resolve(pid int64, addr uint64, ts int64) (FrameID, Reason) {
	f, r, _, _ := m.resolve(pid, addr, ts)
	m.counts[r]++
	return f, r
}

// resolve is Resolve without counting; it also returns the span of time
// [from, to) around ts over which the address resolves the same.
func (m *Map) resolve(pid int64, addr uint64, ts int64) (f FrameID, r Reason, from, to int64) {
	from, to = never, always
	p := m.procs[pid]
	if p == nil || p.methods.n == 0 {
		return m.notManaged(pid, addr, ts, NoProcess, from, to)
	}
	if !p.sorted {
		p.sort()
	}
	// The first method starting past addr.
	lo, hi := 0, len(p.starts)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if p.starts[mid] <= addr {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	s := coverScan{p: p, lo: lo, addr: addr, ts: ts, best: -1, from: from, to: to}
	p.cover(&s)
	best, from, to := s.best, s.from, s.to
	if best < 0 {
		r := NoMethod
		if s.covered {
			r = NotLive
		}
		return m.notManaged(pid, addr, ts, r, from, to)
	}
	me := p.sortedAt(best)
	if !me.hasFrame || (!me.frameModID && p.hasModule(me.moduleID)) {
		mod := p.modules[me.moduleID]
		_, known := p.modules[me.moduleID]
		name := m.methodString(me)
		if name == "" {
			name = "0x" + hex(me.start)
		}
		me.frame = FrameID(len(m.frames))
		me.hasFrame, me.frameModID = true, known
		m.frames = append(m.frames, Frame{Module: mod.name, ModulePath: mod.path, BuildID: mod.buildID, Method: name,
			Address: me.start, Size: me.size, PID: pid, Reason: Resolved})
	}
	return me.frame, Resolved, from, to
}

// narrow narrows the span [from, to) around ts by the load and unload
// times of an entry that covers the address: the answer may change at
// either.
func narrow(from, to, ts, load, unload int64) (int64, int64) {
	for _, t := range [2]int64{load, unload} {
		switch {
		case t == never || t == always:
		case t <= ts:
			from = max(from, t)
		default:
			to = min(to, t)
		}
	}
	return from, to
}

func (p *process) hasModule(id uint64) bool {
	_, ok := p.modules[id]
	return ok
}

// notManaged resolves an address no live method covers: to a native
// image when one is mapped there at ts, else unresolved for reason r.
func (m *Map) notManaged(pid int64, addr uint64, ts int64, r Reason, from, to int64) (FrameID, Reason, int64, int64) {
	if m.imgs == nil {
		return m.unresolvedFrame(pid, addr, r), r, from, to
	}
	im, lo, hi := m.findImage(pid, addr, ts)
	from, to = max(from, lo), min(to, hi)
	if im == nil {
		return m.unresolvedFrame(pid, addr, r), r, from, to
	}
	if im.syms != nil {
		if f, ok := m.symbolFrame(pid, im, addr); ok {
			return f, Resolved, from, to
		}
	}
	if im.jit {
		return m.unresolvedFrame(pid, addr, r), r, from, to
	}
	k := nativeKey{addrKey{pid, addr}, im.load, im.base}
	f, ok := m.native[k]
	if !ok {
		if m.native == nil {
			m.native = map[nativeKey]FrameID{}
		}
		f = FrameID(len(m.frames))
		m.frames = append(m.frames, Frame{Module: im.name, ModulePath: im.path, BuildID: im.buildID,
			ImageBase: im.base, ImageEnd: im.end, ImageOffset: im.offset, Address: addr, PID: pid, Reason: Native})
		m.native[k] = f
	}
	return f, Native, from, to
}

func (m *Map) unresolvedFrame(pid int64, addr uint64, r Reason) FrameID {
	u := m.unresLast
	if u == nil || m.unresPID != pid {
		if u = m.unresolved[pid]; u == nil {
			u = map[uint64]FrameID{}
			m.unresolved[pid] = u
		}
		m.unresPID, m.unresLast = pid, u
	}
	if f, ok := u[addr]; ok {
		return f
	}
	f := FrameID(len(m.frames))
	m.frames = append(m.frames, Frame{Address: addr, PID: pid, Reason: r})
	u[addr] = f
	return f
}

func hex(v uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	i := len(b)
	for {
		i--
		b[i] = digits[v&15]
		v >>= 4
		if v == 0 {
			break
		}
	}
	return string(b[i:])
}

// Label returns the frame of a label: text that a profile puts in a stack
// where no code is, such as "Type System.String" at the leaf of the
// allocations of strings (PerfView's convention). Its Reason is Label,
// its Method the text; one frame a text.
func (m *Map) Label(text string) FrameID {
	if f, ok := m.labels[text]; ok {
		return f
	}
	if m.labels == nil {
		m.labels = make(map[string]FrameID)
	}
	f := FrameID(len(m.frames))
	m.frames = append(m.frames, Frame{Method: text, Reason: Label})
	m.labels[text] = f
	return f
}

// Frame returns a frame by ID. The pointer stays valid until the next
// Resolve.
func (m *Map) Frame(id FrameID) *Frame { return &m.frames[id] }

// NumFrames returns how many frames have been made.
func (m *Map) NumFrames() int { return len(m.frames) }

// Counts returns how many Resolve calls ended with each reason.
func (m *Map) Counts() [NumReasons]int64 { return m.counts }

// Share is the fraction of Resolve calls that resolved; 0 when none.
func (m *Map) Share() float64 {
	var total int64
	for _, c := range m.counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	return float64(m.counts[Resolved]) / float64(total)
}

// Count adds n resolutions with reason r to Counts, for a caller that
// reuses the frames of an earlier ResolveStackSpan instead of resolving
// again.
func (m *Map) Count(r Reason, n int64) {
	if r < NumReasons {
		m.counts[r] += n
	}
}

// ResolveStackSpan is ResolveStack that also says over which span of time
// [from, to) around ts the stack resolves to the same frames, and how
// many frames ended with each reason (already added to Counts): a caller
// may reuse the frames for any time in the span.
func (m *Map) ResolveStackSpan(pid int64, ts int64, ips []uint64, dst []FrameID) (frames []FrameID, from, to int64, counts [NumReasons]int64) {
	from, to = never, always
	for i := len(ips) - 1; i >= 0; i-- {
		f, r, lo, hi := m.resolve(pid, ips[i], ts)
		from, to = max(from, lo), min(to, hi)
		counts[r]++
		dst = append(dst, f)
	}
	for r, n := range counts {
		m.counts[r] += n
	}
	return dst, from, to, counts
}

// ResolveStack resolves a stack as events carry it (innermost first) and
// appends its frames to dst in call order, root first.
func (m *Map) ResolveStack(pid int64, ts int64, ips []uint64, dst []FrameID) []FrameID {
	for i := len(ips) - 1; i >= 0; i-- {
		f, _ := m.Resolve(pid, ips[i], ts)
		dst = append(dst, f)
	}
	return dst
}
