package schema

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kind is how a field is laid out on the wire.
type Kind int

// The wire kinds. Pointer is 4 or 8 bytes depending on the event's pointer
// size; Bool is win:Boolean, a 4-byte integer.
const (
	KindInvalid Kind = iota
	KindUint8
	KindUint16
	KindUint32
	KindUint64
	KindInt8
	KindInt16
	KindInt32
	KindInt64
	KindFloat32
	KindFloat64
	KindBool
	KindGUID
	KindPointer
	KindUTF16  // win:UnicodeString: NUL-terminated, or Length code units
	KindAnsi   // win:AnsiString: NUL-terminated, or Length bytes
	KindBinary // win:Binary: Length bytes
	KindStruct // <struct>
	// The kinds of the kernel's MOF classes (the manifest's own in- and
	// out-types where it has them).
	KindPort     // win:UInt16 with outType win:Port: a port, in network byte order
	KindIPv4     // win:UInt32 with outType win:IPv4: 4 bytes in network order
	KindIPv6     // win:Binary of length 16 with outType win:IPv6
	KindFileTime // win:FILETIME: 100 ns ticks since 1601 (UTC), 8 bytes
	KindWBEMSID  // mof:Sid: a TOKEN_USER (two pointers) and a SID, or 4 zero bytes for none
)

var kindNames = [...]string{"invalid", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
	"float32", "float64", "bool", "guid", "pointer", "utf16", "ansi", "binary", "struct",
	"port", "ipv4", "ipv6", "filetime", "wbemsid"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// InTypes maps each supported manifest inType to its wire kind.
var InTypes = map[string]Kind{
	"win:UInt8": KindUint8, "win:UInt16": KindUint16, "win:UInt32": KindUint32, "win:UInt64": KindUint64,
	"win:Int8": KindInt8, "win:Int16": KindInt16, "win:Int32": KindInt32, "win:Int64": KindInt64,
	"win:HexInt32": KindUint32, "win:HexInt64": KindUint64,
	"win:Float": KindFloat32, "win:Double": KindFloat64,
	"win:Boolean": KindBool, "win:GUID": KindGUID, "win:Pointer": KindPointer,
	"win:UnicodeString": KindUTF16, "win:AnsiString": KindAnsi, "win:Binary": KindBinary,
	"win:FILETIME": KindFileTime,
	// The MOF classes' types that manifests have no inType for: a
	// pointer-sized unsigned number, shown in decimal (extension("SizeT")),
	// and a user's SID behind a TOKEN_USER (extension("Sid"), TDH's WBEM
	// SID).
	"mof:SizeT": KindPointer, "mof:Sid": KindWBEMSID,
}

// OutTypes maps an (inType, outType) pair that changes the wire kind to
// that kind: ports and IPv4 addresses are in network byte order, and an
// IPv6 address is 16 bytes of binary data.
var OutTypes = map[[2]string]Kind{
	{"win:UInt16", "win:Port"}: KindPort,
	{"win:UInt32", "win:IPv4"}: KindIPv4,
	{"win:Binary", "win:IPv6"}: KindIPv6,
}

// FixedSize is the wire size of a fixed-size kind (pointer fields count in
// Ptrs); ok is false for strings, binary and structs.
func (k Kind) FixedSize() (s Size, ok bool) {
	switch k {
	case KindUint8, KindInt8:
		return Size{Bytes: 1}, true
	case KindUint16, KindInt16, KindPort:
		return Size{Bytes: 2}, true
	case KindUint32, KindInt32, KindFloat32, KindBool, KindIPv4:
		return Size{Bytes: 4}, true
	case KindUint64, KindInt64, KindFloat64, KindFileTime:
		return Size{Bytes: 8}, true
	case KindGUID, KindIPv6:
		return Size{Bytes: 16}, true
	case KindPointer:
		return Size{Ptrs: 1}, true
	}
	return Size{}, false
}

// IsInteger reports whether k can hold a count or a length.
func (k Kind) IsInteger() bool {
	switch k {
	case KindUint8, KindUint16, KindUint32, KindUint64, KindInt8, KindInt16, KindInt32, KindInt64:
		return true
	}
	return false
}

// Size is a wire size that may depend on the pointer size: Bytes plus Ptrs
// pointers.
type Size struct{ Bytes, Ptrs int }

// At is the size for a pointer size of 4 or 8.
func (s Size) At(ptrSize int) int { return s.Bytes + s.Ptrs*ptrSize }

// Add returns s+t.
func (s Size) Add(t Size) Size { return Size{s.Bytes + t.Bytes, s.Ptrs + t.Ptrs} }

// Mul returns s*n.
func (s Size) Mul(n int) Size { return Size{s.Bytes * n, s.Ptrs * n} }

func (s Size) String() string {
	if s.Ptrs == 0 {
		return strconv.Itoa(s.Bytes)
	}
	return fmt.Sprintf("%d+%d*ptr", s.Bytes, s.Ptrs)
}

// Ref is a count= or length= resolved: a literal number, or a field of the
// same template or struct that holds it; or, for a count, the rest of the
// payload (Field rest).
type Ref struct {
	Set   bool
	Lit   int     // when Field is nil and Rest is false
	Field *LField // the field holding the number
	Rest  bool    // as many elements as the rest of the payload holds
}

// maxStructDepth bounds struct nesting (the manifests nest one deep).
const maxStructDepth = 4

// Model is the lowered schema: everything resolved, sized and validated. The
// generator walks only this.
type Model struct {
	Source    string
	Providers []*LProvider
}

// LProvider is a provider with its parts resolved.
type LProvider struct {
	*Provider
	GUIDBytes [16]byte // wire layout
	Maps      []*LMap
	Templates []*LTemplate
	Events    []*LEvent
}

// LMap is a map with the widest wire kind any field reads it with.
type LMap struct {
	*Map
	Provider *LProvider
	Kind     Kind // widest integer kind among its uses; KindUint32 if unused
	Used     bool
}

// LTemplate is a template with sized fields.
type LTemplate struct {
	*Template
	Fields []*LField
	// PrefixLen fields from the start have fixed offsets; together they
	// take PrefixSize bytes.
	PrefixLen  int
	PrefixSize Size
	// Shown are the fields the JSON, text and column forms write, in
	// their order: Fields, unless Template.Show lists others.
	Shown []*LField
}

// Variable reports whether the template's size depends on the payload.
func (t *LTemplate) Variable() bool { return t.PrefixLen < len(t.Fields) }

// LField is a field resolved to its wire form.
type LField struct {
	*Field
	Index int
	Kind  Kind
	Hex   bool  // printed in hex: outType HexInt*, or a pointer
	Map   *LMap // nil when the field is not map-bound
	// Count makes the field an array of Count elements (of Kind, or of the
	// struct Elem); unset for a scalar.
	Count Ref
	// Length is the size of a string (code units) or binary (bytes).
	Length Ref
	// Elem are a struct's fields; ElemFixed tells whether every element
	// has the same size (ElemSize), with ElemPrefix fields at fixed offsets
	// in each element.
	Elem       []*LField
	ElemFixed  bool
	ElemSize   Size
	ElemPrefix int
	// Fixed fields have size Size regardless of the payload; Offset is
	// valid for the fields of a fixed prefix.
	Fixed  bool
	Size   Size
	Offset Size
	// Counts lists the fields whose count or length this field holds.
	Counts []*LField
	// PadBefore is alignment padding on the wire before the field, and
	// ElemTail the padding that ends each element of a struct array; both
	// are zero except in align: natural structs.
	PadBefore Size
	ElemTail  Size
}

// IsArray reports whether the field repeats.
func (f *LField) IsArray() bool { return f.Count.Set }

// Padded reports whether the field is a string of fixed length (a literal
// length=): an array of characters, NUL-padded, as the kernel's MOF
// classes hold names (char16 ComputerName[256]). It is shown up to its
// first NUL, as TDH and TraceEvent show it; the value keeps every byte.
func (f *LField) Padded() bool {
	return (f.Kind == KindUTF16 || f.Kind == KindAnsi) && f.Length.Set && f.Length.Field == nil
}

// LEvent is an event with its template, task, opcode, level and keywords
// resolved.
type LEvent struct {
	*Event
	Provider     *LProvider
	Template     *LTemplate // nil: no payload
	TaskRef      *Task      // nil when the event names no task
	OpcodeValue  uint8
	LevelValue   uint8
	KeywordsMask uint64
	// DisplayName is the event's name as TraceEvent gives it: the
	// event's DisplayName where an override gives one, else the task's
	// message, then "/" and the opcode's message unless the opcode is
	// win:Info ("GC/Start", "Method/LoadVerbose", "GC/RestartEEStart");
	// the symbol when the event names no task.
	DisplayName string
	// ShownProvider is the provider name the event is shown under: its
	// DisplayProvider, else its provider's DisplayName, else its name.
	ShownProvider string
}

// displayName builds LEvent.DisplayName from the task and opcode messages,
// falling back to their names where the manifest gives no message.
func displayName(e *Event, task *Task) string {
	if task == nil {
		return e.Symbol
	}
	name := task.Message
	if name == "" {
		name = task.Name
	}
	op := ""
	switch {
	case e.Opcode == "" || e.Opcode == "win:Info":
	case strings.HasPrefix(e.Opcode, "win:"):
		op = strings.ReplaceAll(strings.TrimPrefix(e.Opcode, "win:"), "_", "")
	default:
		for _, o := range task.Opcodes {
			if o.Name == e.Opcode {
				op = o.Message
				if op == "" {
					op = o.Name
				}
			}
		}
	}
	if op == "" {
		return name
	}
	return name + "/" + op
}

// Validate checks s and reports every problem with its file:line.
func Validate(s *Schema) error {
	_, err := Lower(s)
	return err
}

// Lower resolves, sizes and validates s. s is not modified; the model points
// into it.
func Lower(s *Schema) (*Model, error) {
	var l errList
	checkTexts(s, &l)
	if err := l.err(); err != nil {
		return nil, err
	}
	m := &Model{Source: s.Source}
	symbols := map[string]*Event{}
	providerNames := map[string]bool{}
	for _, p := range s.Providers {
		if providerNames[p.Name] {
			l.add(p.Pos, "provider "+p.Name, "duplicate provider")
		}
		providerNames[p.Name] = true
		lp := lowerProvider(p, &l)
		for _, e := range p.Events {
			if e.Symbol == "" {
				l.add(e.Pos, eventWhat(e), "missing symbol")
				continue
			}
			if prev, ok := symbols[e.Symbol]; ok {
				l.add(e.Pos, eventWhat(e), "symbol already used at %s", prev.Pos)
			}
			symbols[e.Symbol] = e
		}
		m.Providers = append(m.Providers, lp)
	}
	if err := l.err(); err != nil {
		return nil, err
	}
	return m, nil
}

func lowerProvider(p *Provider, l *errList) *LProvider {
	lp := &LProvider{Provider: p}
	if g, err := ParseGUIDBytes(p.GUID); err != nil {
		l.add(p.Pos, "provider "+p.Name, "guid: %v", err)
	} else {
		lp.GUIDBytes = g
	}
	what := "provider " + p.Name

	seen := map[string]Pos{}
	dup := func(kind, name string, pos Pos) {
		k := kind + "\x00" + name
		if prev, ok := seen[k]; ok {
			l.add(pos, what, "duplicate %s %q (first at %s)", kind, name, prev)
		}
		seen[k] = pos
	}
	for _, k := range p.Keywords {
		dup("keyword", k.Name, k.Pos)
	}
	for _, t := range p.Tasks {
		dup("task", t.Name, t.Pos)
		for _, o := range t.Opcodes {
			dup("opcode of task "+t.Name, o.Name, o.Pos)
		}
	}
	maps := map[string]*LMap{}
	for _, mp := range p.Maps {
		dup("map", mp.Name, mp.Pos)
		lm := &LMap{Map: mp, Provider: lp, Kind: KindUint32}
		lp.Maps = append(lp.Maps, lm)
		maps[mp.Name] = lm
	}
	templates := map[string]*LTemplate{}
	for _, t := range p.Templates {
		dup("template", t.TID, t.Pos)
		lt := &LTemplate{Template: t}
		lt.Fields, lt.PrefixLen, lt.PrefixSize = lowerFields(t.Fields, "template "+t.TID, maps, l)
		lt.Shown = shownFields(lt, l)
		lp.Templates = append(lp.Templates, lt)
		templates[t.TID] = lt
	}
	type key struct {
		v  uint16
		ve uint8
	}
	events := map[key]*Event{}
	for _, e := range p.Events {
		le := &LEvent{Event: e, Provider: lp}
		ew := eventWhat(e)
		k := key{e.Value, e.Version}
		if prev, ok := events[k]; ok {
			l.add(e.Pos, ew, "duplicate (provider %s, id %d, version %d): also event %s at %s", p.Name, e.Value, e.Version, prev.Symbol, prev.Pos)
		}
		events[k] = e
		if e.Template != "" {
			le.Template = templates[e.Template]
			if le.Template == nil {
				l.add(e.Pos, ew, "template %q is not defined", e.Template)
			}
		}
		if e.Task != "" {
			le.TaskRef = p.Task(e.Task)
			if le.TaskRef == nil {
				l.add(e.Pos, ew, "task %q is not defined", e.Task)
			}
		}
		if e.Opcode != "" {
			v, ok := standardOpcode(e.Opcode)
			if !ok && le.TaskRef != nil {
				for _, o := range le.TaskRef.Opcodes {
					if o.Name == e.Opcode {
						v, ok = o.Value, true
					}
				}
			}
			if !ok {
				l.add(e.Pos, ew, "opcode %q is not defined (for task %q)", e.Opcode, e.Task)
			}
			le.OpcodeValue = v
		}
		le.DisplayName = e.DisplayName
		if le.DisplayName == "" {
			le.DisplayName = displayName(e, le.TaskRef)
		}
		le.ShownProvider = e.DisplayProvider
		if le.ShownProvider == "" {
			le.ShownProvider = p.DisplayName
		}
		if le.ShownProvider == "" {
			le.ShownProvider = p.Name
		}
		if e.Level != "" {
			v, ok := standardLevel(e.Level)
			if !ok {
				l.add(e.Pos, ew, "level %q is not defined", e.Level)
			}
			le.LevelValue = v
		}
		for _, kw := range e.Keywords {
			k := p.Keyword(kw)
			if k == nil {
				l.add(e.Pos, ew, "keyword %q is not defined", kw)
				continue
			}
			le.KeywordsMask |= k.Mask
		}
		lp.Events = append(lp.Events, le)
	}
	return lp
}

func standardOpcode(name string) (uint8, bool) {
	for _, o := range StandardOpcodes {
		if o.Name == name {
			return o.Value, true
		}
	}
	return 0, false
}

func standardLevel(name string) (uint8, bool) {
	for _, lv := range StandardLevels {
		if lv.Name == name {
			return lv.Value, true
		}
	}
	return 0, false
}

// lowerFields resolves one scope (a template, or a struct's element). It
// returns the lowered fields and the fixed prefix: how many fields have fixed
// offsets, and their total size.
func lowerFields(fs []*Field, owner string, maps map[string]*LMap, l *errList) ([]*LField, int, Size) {
	out := make([]*LField, len(fs))
	byName := map[string]*LField{}
	for i, f := range fs {
		lf := &LField{Field: f, Index: i}
		out[i] = lf
		fw := fieldWhat(owner, f.Name)
		if f.Name == "" {
			l.add(f.Pos, owner, "field %d has no name", i)
		} else if _, ok := byName[f.Name]; ok {
			l.add(f.Pos, fw, "duplicate field name")
		}

		if f.Struct {
			lf.Kind = KindStruct
			if len(f.Fields) == 0 {
				l.add(f.Pos, fw, "struct has no fields")
			}
			if depth := strings.Count(owner, ": struct "); depth >= maxStructDepth {
				l.add(f.Pos, fw, "structs nest deeper than %d", maxStructDepth)
				out[i] = lf
				continue
			}
			lf.Elem, lf.ElemPrefix, lf.ElemSize = lowerFields(f.Fields, owner+": struct "+f.Name, maps, l)
			lf.ElemFixed = lf.ElemPrefix == len(lf.Elem)
			switch f.Align {
			case "":
			case "natural":
				alignNatural(lf, fw, l)
			default:
				l.add(f.Pos, fw, "align %q: the only alignment is natural", f.Align)
			}
		} else {
			k, ok := InTypes[f.InType]
			if !ok {
				l.add(f.Pos, fw, "unknown inType %q", f.InType)
			}
			if ok2, known := OutTypes[[2]string{f.InType, f.OutType}]; known {
				k = ok2
			} else if isAddressOut(f.OutType) {
				l.add(f.Pos, fw, "outType %s on inType %s: it goes with %s", f.OutType, f.InType, addressInType(f.OutType))
			}
			lf.Kind = k
			lf.Hex = k == KindPointer && f.InType != "mof:SizeT" || strings.HasPrefix(f.OutType, "win:HexInt") || strings.HasPrefix(f.InType, "win:HexInt")
		}

		if f.Map != "" {
			lm := maps[f.Map]
			switch {
			case lm == nil:
				l.add(f.Pos, fw, "map %q is not defined", f.Map)
			case lf.Kind == KindInvalid:
				// Its inType is unknown, which is said already.
			case !lf.Kind.IsInteger():
				l.add(f.Pos, fw, "map %q on a %s field", f.Map, lf.Kind)
			default:
				lf.Map = lm
				if !lm.Used || widerKind(lf.Kind, lm.Kind) {
					lm.Kind = lf.Kind
				}
				lm.Used = true
			}
		}

		lf.Count = resolveRef(f.Count, "count", lf, fw, byName, l)
		if lf.Count.Set && lf.Count.Field == nil && lf.Count.Lit == 1 {
			lf.Count = Ref{} // count="1" is a scalar
		}
		lf.Length = resolveRef(f.Length, "length", lf, fw, byName, l)
		if f.Rest {
			switch {
			case f.Count != "":
				l.add(f.Pos, fw, "rest and count= both say how many elements there are")
			case i != len(fs)-1:
				l.add(f.Pos, fw, "rest takes the rest of the payload, so it must be the last field")
			case strings.Contains(owner, ": struct "):
				l.add(f.Pos, fw, "rest in a struct: only a template's last field can take the rest of the payload")
			default:
				lf.Count = Ref{Set: true, Rest: true}
			}
		}
		switch {
		case lf.Kind == KindIPv6:
			if !lf.Length.Set || lf.Length.Field != nil || lf.Length.Lit != 16 {
				l.add(f.Pos, fw, "an IPv6 address (outType win:IPv6) is win:Binary of length 16")
			}
			lf.Length = Ref{}
		case lf.Length.Set:
			switch lf.Kind {
			case KindUTF16, KindAnsi, KindBinary:
			default:
				l.add(f.Pos, fw, "length= on a %s field", lf.Kind)
			}
		case lf.Kind == KindBinary:
			l.add(f.Pos, fw, "win:Binary needs length=")
		}
		if lf.Count.Set && lf.Kind != KindStruct {
			if _, ok := lf.Kind.FixedSize(); !ok && lf.Kind != KindInvalid {
				l.add(f.Pos, fw, "count= on a %s field is not supported", lf.Kind)
			}
		}
		if f.Walk && (lf.Kind != KindPointer || !lf.Count.Set || strings.Contains(owner, ": struct ")) {
			l.add(f.Pos, fw, "walk on a %s field: a stack walk is an array of pointers in a template", lf.Kind)
		}
		if lf.Count.Rest && lf.Kind == KindStruct {
			l.add(f.Pos, fw, "rest on a struct is not supported: only arrays of fixed-size values take the rest of the payload")
		}

		// Size.
		var one Size
		oneFixed := false
		switch {
		case lf.Kind == KindStruct:
			one, oneFixed = lf.ElemSize, lf.ElemFixed
		case lf.Length.Set && lf.Length.Field == nil:
			unit := 1
			if lf.Kind == KindUTF16 {
				unit = 2
			}
			one, oneFixed = Size{Bytes: lf.Length.Lit * unit}, true
		default:
			one, oneFixed = lf.Kind.FixedSize()
		}
		switch {
		case !lf.Count.Set:
			lf.Fixed, lf.Size = oneFixed, one
		case lf.Count.Field == nil && !lf.Count.Rest:
			lf.Fixed, lf.Size = oneFixed, one.Mul(lf.Count.Lit)
		}
		if f.Name != "" {
			byName[f.Name] = lf
		}
	}
	// Fixed prefix.
	var off Size
	n := 0
	for _, lf := range out {
		if !lf.Fixed {
			break
		}
		lf.Offset = off
		off = off.Add(lf.Size)
		n++
	}
	return out, n, off
}

// alignNatural lays out a struct's fixed elements with C natural alignment,
// for 4- and 8-byte pointers, and encodes each offset and size as a Size:
// the two layouts differ by a multiple of 4, so Bytes + Ptrs*ptrSize fits
// both exactly.
func alignNatural(lf *LField, fw string, l *errList) {
	if !lf.ElemFixed {
		l.add(lf.Pos, fw, "align natural needs fixed-size element fields")
		return
	}
	var offs [2][]int // per pointer size: 4, 8
	var ends, sizes [2]int
	for pi, ptr := range []int{4, 8} {
		off, maxAlign := 0, 1
		for _, e := range lf.Elem {
			sz := e.Size.At(ptr)
			a := sz
			if e.IsArray() || e.Kind == KindGUID {
				one, _ := e.Kind.FixedSize()
				a = one.At(ptr)
			}
			if e.Kind == KindGUID {
				a = 4
			}
			if a < 1 {
				a = 1
			}
			maxAlign = max(maxAlign, a)
			off = (off + a - 1) / a * a
			offs[pi] = append(offs[pi], off)
			off += sz
		}
		ends[pi] = off
		sizes[pi] = (off + maxAlign - 1) / maxAlign * maxAlign
	}
	linear := func(s4, s8 int) (Size, bool) {
		if (s8-s4)%4 != 0 || s8 < s4 {
			return Size{}, false
		}
		p := (s8 - s4) / 4
		return Size{Bytes: s4 - 4*p, Ptrs: p}, true // Bytes may be negative: a padding of 0 at 4 and 4 at 8
	}
	prevEnd := [2]int{}
	for i, e := range lf.Elem {
		o, ok := linear(offs[0][i], offs[1][i])
		pad, ok2 := linear(offs[0][i]-prevEnd[0], offs[1][i]-prevEnd[1])
		if !ok || !ok2 {
			l.add(lf.Pos, fw, "field %s: natural alignment gives offsets %d and %d, which no pointer-size formula fits", e.Name, offs[0][i], offs[1][i])
			return
		}
		e.Offset, e.PadBefore = o, pad
		prevEnd = [2]int{offs[0][i] + e.Size.At(4), offs[1][i] + e.Size.At(8)}
	}
	size, ok := linear(sizes[0], sizes[1])
	tail, ok2 := linear(sizes[0]-ends[0], sizes[1]-ends[1])
	if !ok || !ok2 {
		l.add(lf.Pos, fw, "natural alignment gives element sizes %d and %d, which no pointer-size formula fits", sizes[0], sizes[1])
		return
	}
	lf.ElemSize, lf.ElemTail = size, tail
}

// isAddressOut reports whether an outType is one that changes the wire
// kind (OutTypes) with the right inType.
func isAddressOut(out string) bool { return addressInType(out) != "" }

// addressInType is the inType an address or port outType goes with.
func addressInType(out string) string {
	for k := range OutTypes {
		if k[1] == out {
			return k[0]
		}
	}
	return ""
}

// shownFields resolves a template's Show: the fields it names, in its
// order, each once; every field when it is empty.
func shownFields(t *LTemplate, l *errList) []*LField {
	if len(t.Show) == 0 {
		return t.Fields
	}
	what := "template " + t.TID
	byName := map[string]*LField{}
	for _, f := range t.Fields {
		byName[f.Name] = f
	}
	seen := map[string]bool{}
	out := make([]*LField, 0, len(t.Show))
	for _, n := range t.Show {
		f := byName[n]
		switch {
		case f == nil:
			l.add(t.Pos, what, "show names %q, which is no field of the template", n)
		case seen[n]:
			l.add(t.Pos, what, "show names %q twice", n)
		default:
			out = append(out, f)
		}
		seen[n] = true
	}
	return out
}

// widerKind reports whether integer kind a is wider than b.
func widerKind(a, b Kind) bool {
	sa, _ := a.FixedSize()
	sb, _ := b.FixedSize()
	return sa.Bytes > sb.Bytes
}

// maxLiteralCount bounds a literal count= or length=: a payload is at most
// 64 KB, so no array or string in one has more elements or units.
const maxLiteralCount = 65535

// resolveRef resolves a count= or length= attribute: a literal, or an
// earlier integer field of the same scope.
func resolveRef(text, attr string, lf *LField, fw string, byName map[string]*LField, l *errList) Ref {
	if text == "" {
		return Ref{}
	}
	if n, err := strconv.ParseUint(text, 0, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if err != nil || n > maxLiteralCount {
			// An ETW or EventPipe payload is at most 64 KB: no more
			// elements or units than that fit one.
			l.add(lf.Pos, fw, "%s=%q is more than an event's payload can hold (at most %d)", attr, text, maxLiteralCount)
			return Ref{Set: true, Lit: 0}
		}
		return Ref{Set: true, Lit: int(n)}
	}
	if _, err := strconv.ParseInt(text, 0, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		l.add(lf.Pos, fw, "%s=%q is negative", attr, text)
		return Ref{Set: true, Lit: 0}
	}
	ref, ok := byName[text]
	switch {
	case !ok:
		l.add(lf.Pos, fw, "%s=%q names no earlier field of the same template or struct", attr, text)
	case ref.IsArray():
		l.add(lf.Pos, fw, "%s=%q names an array", attr, text)
	case !ref.Kind.IsInteger():
		l.add(lf.Pos, fw, "%s=%q names a %s field, not an integer", attr, text, ref.Kind)
	default:
		ref.Counts = append(ref.Counts, lf)
		return Ref{Set: true, Field: ref}
	}
	return Ref{Set: true, Lit: 0}
}

// ParseGUIDBytes parses a canonical GUID string into its 16-byte wire
// layout (Data1..3 little-endian).
func ParseGUIDBytes(s string) ([16]byte, error) {
	var g [16]byte
	c, err := canonicalGUID(s)
	if err != nil {
		return g, err
	}
	hexs := strings.ReplaceAll(c, "-", "")
	var raw [16]byte
	for i := 0; i < 16; i++ {
		v, _ := strconv.ParseUint(hexs[2*i:2*i+2], 16, 8)
		raw[i] = byte(v)
	}
	// Data1 (4), Data2 (2), Data3 (2) are little-endian on the wire.
	g[0], g[1], g[2], g[3] = raw[3], raw[2], raw[1], raw[0]
	g[4], g[5] = raw[5], raw[4]
	g[6], g[7] = raw[7], raw[6]
	copy(g[8:], raw[8:])
	return g, nil
}

// checkTexts rejects control characters (a newline, say) in every name and
// attribute: they would end a generated comment and let manifest text into
// generated code, and no real manifest has them.
func checkTexts(s *Schema, l *errList) {
	check := func(pos Pos, what string, vals ...string) {
		for _, v := range vals {
			if i := strings.IndexFunc(v, isControl); i >= 0 {
				l.add(pos, what, "%q has a control character at byte %d", v, i)
			}
		}
	}
	var fields func(owner string, fs []*Field)
	fields = func(owner string, fs []*Field) {
		for _, f := range fs {
			check(f.Pos, owner+": field", f.Name, f.InType, f.OutType, f.Map, f.Count, f.Length)
			fields(owner, f.Fields)
		}
	}
	check(s.SourcePos, "source", s.Source)
	for _, p := range s.Providers {
		check(p.Pos, "provider", p.Name, p.GUID, p.Symbol, p.DisplayName)
		for _, k := range p.Keywords {
			check(k.Pos, "keyword", append([]string{k.Name, k.Symbol}, k.Aliases...)...)
		}
		for _, t := range p.Tasks {
			check(t.Pos, "task", t.Name, t.Symbol, t.EventGUID)
			for _, o := range t.Opcodes {
				check(o.Pos, "opcode", o.Name, o.Symbol)
			}
		}
		for _, m := range p.Maps {
			check(m.Pos, "map", m.Name)
			for _, e := range m.Entries {
				check(e.Pos, "map "+m.Name, e.Name)
			}
		}
		for _, t := range p.Templates {
			check(t.Pos, "template", append([]string{t.TID}, t.Show...)...)
			fields("template "+t.TID, t.Fields)
		}
		for _, e := range p.Events {
			check(e.Pos, "event", append([]string{e.Symbol, e.Task, e.Opcode, e.Level, e.Channel, e.Template, e.GoName, e.DisplayProvider, e.DisplayName}, e.Keywords...)...)
		}
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }
