package gen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/clrgo/clrevents/schema"
)

// Families group the event types that carry the same kind of payload, so
// that one type switch case handles them all. The rule, computed here from
// the schema and never hand-listed:
//
//   - The key of an event is its template name with a trailing _V<digits>
//     removed and then every "Rundown" removed: MethodLoadUnloadVerbose_V2
//     (runtime) and MethodLoadUnloadRundownVerbose_V1 (rundown) both have
//     the key MethodLoadUnloadVerbose.
//   - Events with the same key join, across all providers; so do the
//     versions of one event (same provider, same symbol once a trailing
//     _V<digits> is removed), whatever their templates are called
//     (ContentionStart V0 has template Contention, V1 ContentionStart).
//   - A group of two or more event types is a family, named after the
//     lexicographically smallest key in it (unless an override names the
//     family: familyNames). Events without a template are in no family.
//
// For a family F the generator emits FFields (the union of the members'
// fields), FEvent (an interface: Event plus the accessor) and, on every
// member, func (e *T) FFields() FFields. When the members mean more than
// one thing (loads, unloads and the rundown's DCStart and DCEnd), it also
// emits FKind, one constant per meaning, and FFields.Kind (see kindLabel).

type familyIR struct {
	name      string // F
	fieldsT   string // FFields: the struct and the accessor method
	iface     string // FEvent
	kindT     string // FKind, when the family has two kinds or more
	keys      []string
	members   []*eventIR // table order
	fields    []*famField
	conflicts []*famField // left out: their Go types differ
	kinds     []*famKind  // in the order of their first member
	kindOf    map[*eventIR]*famKind
}

type famField struct {
	goName   string
	hasName  string // HasX, for optional fields
	typ      string // the family's Go type
	under    string // the integer kind, when the type is integer-like
	enum     *mapIR // the map whose type typ is, when the members' maps agree
	untyped  string // why the members' maps did not give the type, when they differ
	optional bool
	in       []*eventIR
	src      map[*eventIR]*fieldIR
	conflict bool
}

// famKind is one meaning of a family's members: a value of FKind.
type famKind struct {
	label   string // "MethodLoadVerbose", what String returns
	goName  string // KindMethodLoadVerbose
	value   int    // 1, 2, …: 0 is no kind
	members []*eventIR
}

// kindFieldName is the FFields field that holds the kind.
const kindFieldName = "Kind"

func familyKey(tid string) string { return schema.FamilyKey(tid) }

// buildFamilies groups p.events into families and resolves their fields.
func (p *pkgIR) buildFamilies(n *names) {
	parent := make([]int, len(p.events))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		ra, rb := find(a), find(b)
		if ra == rb {
			return
		}
		if ra > rb {
			ra, rb = rb, ra
		}
		parent[rb] = ra // the root is the earliest event: deterministic
	}
	byKey := map[string]int{}
	bySymbol := map[string]int{}
	for i, ev := range p.events {
		if ev.le.Template == nil {
			continue
		}
		k := familyKey(ev.le.Template.TID)
		if j, ok := byKey[k]; ok {
			union(i, j)
		} else {
			byKey[k] = i
		}
		s := ev.le.Provider.Name + "\x00" + schema.StripVersion(ev.le.Symbol)
		if j, ok := bySymbol[s]; ok {
			union(i, j)
		} else {
			bySymbol[s] = i
		}
	}
	groups := map[int]*familyIR{}
	var roots []int
	for i, ev := range p.events {
		if ev.le.Template == nil {
			continue
		}
		r := find(i)
		fam := groups[r]
		if fam == nil {
			fam = &familyIR{}
			groups[r] = fam
			roots = append(roots, r)
		}
		fam.members = append(fam.members, ev)
		k := familyKey(ev.le.Template.TID)
		if !contains(fam.keys, k) {
			fam.keys = append(fam.keys, k)
		}
	}
	for _, r := range roots {
		fam := groups[r]
		if len(fam.members) < 2 {
			continue
		}
		sort.Strings(fam.keys)
		first := fam.members[0]
		g, err := GoName(fam.keys[0])
		if err != nil {
			n.fail(first.le.Pos, "family "+fam.keys[0], err)
			continue
		}
		// An explicit name from the overrides; every member template
		// that names one must name the same.
		var named *eventIR
		for _, ev := range fam.members {
			fn := ev.le.Template.FamilyName
			switch {
			case fn == "":
			case named == nil:
				named, g = ev, fn
			case fn != g:
				n.fail(ev.le.Template.Pos, "template "+ev.le.Template.TID,
					fmt.Errorf("family name %s differs from %s, given to template %s of the same family", fn, g, named.le.Template.TID))
			}
		}
		fam.name, fam.fieldsT, fam.iface = g, g+"Fields", g+"Event"
		n.declare(fam.fieldsT, "fields of family "+g, first.le.Pos)
		n.declare(fam.iface, "interface of family "+g, first.le.Pos)
		fam.resolveFields(n)
		fam.resolveKinds(n)
		for _, ev := range fam.members {
			ev.family = fam
		}
		p.families = append(p.families, fam)
	}
	sort.Slice(p.families, func(i, j int) bool { return p.families[i].name < p.families[j].name })
}

// resolveFields takes the union of the members' fields by Go name: the
// newest, largest member's fields in wire order first, then the others' as
// they appear. Types that differ are widened where that is lossless, else
// the field is left out.
func (fam *familyIR) resolveFields(n *names) {
	lead := fam.members[0]
	for _, ev := range fam.members[1:] {
		if a, b := len(ev.scope.fields), len(lead.scope.fields); a > b || a == b && ev.le.Version > lead.le.Version {
			lead = ev
		}
	}
	order := append([]*eventIR{lead}, fam.members...)
	byName := map[string]*famField{}
	var all []*famField
	for _, ev := range order {
		for _, f := range ev.scope.fields {
			ff := byName[f.goName]
			if ff == nil {
				ff = &famField{goName: f.goName, src: map[*eventIR]*fieldIR{}}
				ff.typ, ff.under = memberType(f)
				byName[f.goName] = ff
				all = append(all, ff)
			}
			if _, seen := ff.src[ev]; seen {
				continue // the lead, met twice
			}
			ff.src[ev] = f
			if ff.conflict {
				continue
			}
			t, u := memberType(f)
			ff.typ, ff.under, ff.conflict = mergeTypes(ff.typ, ff.under, t, u)
		}
	}
	for _, ff := range all {
		for _, ev := range fam.members {
			if _, ok := ff.src[ev]; ok {
				ff.in = append(ff.in, ev)
			}
		}
		if m, why := commonMap(ff); m != nil {
			ff.typ, ff.under, ff.enum, ff.conflict = m.goType, intKind(m.under), m, false
		} else {
			ff.untyped = why
		}
		if ff.conflict {
			fam.conflicts = append(fam.conflicts, ff)
			continue
		}
		ff.optional = len(ff.in) < len(fam.members)
		if ff.optional {
			ff.hasName = "Has" + ff.goName
		}
		fam.fields = append(fam.fields, ff)
	}
	first := fam.members[0]
	for _, ff := range fam.fields {
		if ff.optional {
			if other := byName[ff.hasName]; other != nil {
				n.fail(first.le.Pos, "family "+fam.name, fmt.Errorf("field %s of %s would clash with %s, which tells whether %s is present", other.goName, fam.fieldsT, ff.hasName, ff.goName))
			}
		}
	}
	for _, ev := range fam.members {
		if methodNames[fam.fieldsT] {
			n.fail(ev.le.Pos, "event "+ev.le.Symbol, fmt.Errorf("family method %s is a method of the event type", fam.fieldsT))
		}
		for _, f := range ev.scope.fields {
			if f.goName == fam.fieldsT {
				n.fail(f.lf.Pos, "event "+ev.le.Symbol+": field "+f.lf.Name,
					fmt.Errorf("its Go name %s clashes with the method %s of family %s on %s", f.goName, fam.fieldsT, fam.name, ev.goName))
			}
		}
	}
}

// commonMap is the map whose type a family field takes when its members
// bind it to different maps (the runtime provider's MethodFlagsMap and the
// rundown provider's, which are two Go types): nil unless that is sound.
// The rule, for every family alike:
//
//   - every member's field is a scalar bound to a map, all maps of one
//     kind (valueMap or bitMap) and one Go integer type;
//   - the chosen map names every value any of the others names, by the
//     same name, so that the family's value prints as the member's would;
//   - of the maps that qualify, the one with the shortest Go name wins
//     (the runtime provider's, whose maps carry no provider prefix), then
//     the first in alphabetical order.
//
// Otherwise the field keeps the integer type mergeTypes gives it, and why
// says why when the members' maps were the reason.
func commonMap(ff *famField) (m *mapIR, why string) {
	var maps []*mapIR
	for _, ev := range ff.in {
		f := ff.src[ev]
		if f.enum == nil || f.elem != nil || f.lf.IsArray() {
			return nil, ""
		}
		if !containsMap(maps, f.enum) {
			maps = append(maps, f.enum)
		}
	}
	if len(maps) < 2 {
		return nil, "" // one map: the members' type is already the family's
	}
	for _, m := range maps[1:] {
		if m.bitmap != maps[0].bitmap {
			return nil, "one map is a valueMap, another a bitMap"
		}
		if m.under != maps[0].under {
			return nil, "the maps' integer types differ"
		}
	}
	var best *mapIR
	for _, m := range maps {
		if !namesAll(m, maps) {
			continue
		}
		if best == nil || len(m.goType) < len(best.goType) || len(m.goType) == len(best.goType) && m.goType < best.goType {
			best = m
		}
	}
	if best == nil {
		return nil, "no map names every value the others name, by the same name"
	}
	return best, ""
}

// namesAll reports whether m names every value each of maps names, by the
// same name (the name a value prints as), and defines a constant of the
// same name and value for each of their constants.
func namesAll(m *mapIR, maps []*mapIR) bool {
	printed := map[uint64]string{}
	for _, e := range m.byValue {
		printed[e.value] = e.name
	}
	consts := map[string]uint64{}
	for _, e := range m.entries {
		consts[e.name] = e.value
	}
	for _, o := range maps {
		for _, e := range o.byValue {
			if n, ok := printed[e.value]; !ok || n != e.name {
				return false
			}
		}
		for _, e := range o.entries {
			if v, ok := consts[e.name]; !ok || v != e.value {
				return false
			}
		}
	}
	return true
}

func containsMap(ms []*mapIR, m *mapIR) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// kindLabel is what a member of a family means, as its opcode says it:
//
//   - an opcode the task defines, by its name: MethodLoadVerbose,
//     MethodDCStartVerbose (the runtime provider's and the rundown
//     provider's alike; opcode numbers are not compared, since providers
//     number their opcodes apart: ModuleRangeLoad and ModuleRangeDCStart
//     are both 10);
//   - a standard opcode (win:Start, win:Stop, …) says nothing alone, so the
//     task's name comes first, without "Rundown" as in family keys:
//     WorkerThreadCreationStart, WorkerThreadRetirementStart, ThreadDCStart
//     (win:DC_Start, written as the display name writes it); win:Info, or
//     no opcode, is the task's name alone;
//   - an event with neither task nor opcode of its own is its symbol
//     without _V<n>.
//
// Versions of one event always share their label, so a newer manifest that
// adds versions adds no kind and renames none.
func kindLabel(le *schema.LEvent) string {
	op := le.Opcode
	if op != "" && !strings.HasPrefix(op, "win:") {
		return op
	}
	if le.Task == "" {
		return schema.StripVersion(le.Symbol)
	}
	task := strings.ReplaceAll(le.Task, "Rundown", "")
	if task == "" {
		task = le.Task
	}
	if op == "" || op == "win:Info" {
		return task
	}
	// As the display name writes a standard opcode: win:DC_Start is DCStart.
	return task + strings.ReplaceAll(strings.TrimPrefix(op, "win:"), "_", "")
}

// resolveKinds groups the members by kindLabel; a family with two kinds or
// more gets FKind, its constants Kind<label> and the field FFields.Kind.
func (fam *familyIR) resolveKinds(n *names) {
	byLabel := map[string]*famKind{}
	kindOf := map[*eventIR]*famKind{}
	var kinds []*famKind
	for _, ev := range fam.members {
		l := kindLabel(ev.le)
		k := byLabel[l]
		if k == nil {
			k = &famKind{label: l, value: len(kinds) + 1}
			byLabel[l] = k
			kinds = append(kinds, k)
		}
		k.members = append(k.members, ev)
		kindOf[ev] = k
	}
	if len(kinds) < 2 {
		return
	}
	fam.kindT, fam.kinds, fam.kindOf = fam.name+"Kind", kinds, kindOf
	first := fam.members[0]
	n.declare(fam.kindT, "kinds of family "+fam.name, first.le.Pos)
	for _, k := range kinds {
		g, err := GoName(k.label)
		if err != nil {
			n.fail(k.members[0].le.Pos, "event "+k.members[0].le.Symbol, fmt.Errorf("family %s: kind %q: %v", fam.name, k.label, err))
			continue
		}
		k.goName = "Kind" + g
		n.declareHint(k.goName, "kind "+k.label+" of family "+fam.name, k.members[0].le.Pos,
			"kinds are named after opcodes (and tasks), which must then differ between families")
	}
	for _, ff := range append(append([]*famField(nil), fam.fields...), fam.conflicts...) {
		if ff.goName == kindFieldName {
			ev := ff.in[0]
			n.fail(ff.src[ev].lf.Pos, "event "+ev.le.Symbol+": field "+ff.src[ev].lf.Name,
				fmt.Errorf("its Go name %s clashes with the field %s.%s, which tells the members of family %s apart", ff.goName, fam.fieldsT, kindFieldName, fam.name))
		}
	}
}

// memberType is a member field's Go type, and its integer kind when it is
// an integer or an integer-based enum.
func memberType(f *fieldIR) (typ, under string) {
	lf := f.lf
	switch {
	case f.elem != nil:
		return f.elem.typeView(), ""
	case lf.IsArray():
		t, _ := arrayType(lf.Kind)
		return t, ""
	case f.enum != nil:
		return f.enum.goType, intKind(f.enum.under)
	}
	k := goKind(lf.Kind)
	return k, intKind(k)
}

func intKind(k string) string {
	switch k {
	case "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64":
		return k
	}
	return ""
}

// mergeTypes is the family type of a field that is (t1, u1) in some members
// and (t2, u2) in another: the same type; or, for integers (or enums) of
// the same signedness, the wider integer kind; else a conflict.
func mergeTypes(t1, u1, t2, u2 string) (string, string, bool) {
	if t1 == t2 {
		return t1, u1, false
	}
	if u1 == "" || u2 == "" || (u1[0] == 'u') != (u2[0] == 'u') {
		return t1, u1, true
	}
	w := u1
	if intBits(u2) > intBits(u1) {
		w = u2
	}
	return w, w, false
}

func intBits(k string) int {
	var b int
	fmt.Sscanf(strings.TrimPrefix(strings.TrimPrefix(k, "u"), "int"), "%d", &b)
	return b
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// memberList names the members by provider: "GCStart, GCStartV1
// (Microsoft-Windows-DotNETRuntime); …".
func memberList(evs []*eventIR) string {
	var parts []string
	for i := 0; i < len(evs); {
		j := i
		var ns []string
		for ; j < len(evs) && evs[j].prov == evs[i].prov; j++ {
			ns = append(ns, evs[j].goName)
		}
		parts = append(parts, strings.Join(ns, ", ")+" ("+evs[i].prov.lp.Name+")")
		i = j
	}
	return strings.Join(parts, "; ")
}
