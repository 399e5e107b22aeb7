package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/internal/baseline"
	"github.com/clrgo/clrevents/schema"
	"github.com/clrgo/clrevents/schema/interp"
)

// enumNames maps TraceEvent's name for a map value to the manifest's, where
// they differ. TraceEvent prints enums through its own hand-written C#
// enums, not the manifest's string table.
var enumNames = map[string]string{
	// Segment type 4 (GCSegmentTypeMap): TraceEvent's GCSegmentType
	// calls it PinnedObjectHeap, the manifest PinnedHeap.
	"PinnedObjectHeap": "PinnedHeap",
	// GCBucketKindMap value 1: TraceEvent's enum says PlugsInCondemned,
	// the manifest Plug.
	"PlugsInCondemned": "Plug",
	// A flag set of 0: TraceEvent's C# flag enums have a None member, the
	// manifest's bitMaps have no name for 0, so ours prints 0.
	"None": "0",
}

// fieldNames maps TraceEvent's name of a payload field to the manifest's,
// per event symbol, where TraceEvent renamed it.
var fieldNames = map[string]map[string]string{
	// TraceEvent's GCMarkWithTypeTraceData calls the Bytes field Promoted.
	"GCMarkWithType": {"Promoted": "Bytes"},
}

// headerAttrs are the attributes of an EventPipe baseline line that are not
// payload fields.
var headerAttrs = map[string]bool{"MSec": true, "PID": true, "PName": true, "TID": true, "EventName": true,
	"ProviderName": true, "FormattedMessage": true}

// blField is one field TraceEvent printed.
type blField struct{ Name, Value string }

// blEvent is one event TraceEvent printed: an EventPipe baseline line (the
// first event of its name) or an ETW baseline EVENT line.
type blEvent struct {
	Line     int
	Provider string
	Name     string // after the provider: "GC/Start", "GC"
	Count    int    // EventPipe: events of this name
	MSec     string
	TID      int64
	Fields   []blField
	Children []blChild // EventPipe: nested elements (struct array entries)
}

type blChild struct {
	Tag    string
	Fields []blField
}

// parseEventPipeBaseline reads an EventPipe baseline: one line per event
// name, "Provider/Task/Opcode, count, <Event MSec=… …/>".
func parseEventPipeBaseline(path string) ([]blEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []blEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimPrefix(strings.TrimRight(sc.Text(), "\r"), "\ufeff")
		if line == "" {
			continue
		}
		i := strings.Index(line, ", ")
		j := strings.Index(line[i+2:], ", ")
		if i < 0 || j < 0 {
			return nil, fmt.Errorf("%s:%d: not name, count, xml", path, n)
		}
		full, cnt, xml := line[:i], line[i+2:i+2+j], line[i+2+j+2:]
		e := blEvent{Line: n}
		if e.Count, err = strconv.Atoi(cnt); err != nil {
			return nil, fmt.Errorf("%s:%d: count: %v", path, n, err)
		}
		slash := strings.IndexByte(full, '/')
		if slash < 0 {
			return nil, fmt.Errorf("%s:%d: no provider in %q", path, n, full)
		}
		e.Provider, e.Name = full[:slash], full[slash+1:]
		elems := parseElements(xml)
		if len(elems) == 0 || elems[0].Tag != "Event" {
			return nil, fmt.Errorf("%s:%d: no <Event> element", path, n)
		}
		for _, a := range elems[0].Fields {
			switch a.Name {
			case "MSec":
				e.MSec = strings.TrimSpace(a.Value)
			case "TID":
				e.TID, _ = baseline.ParseInt(a.Value)
			}
			if !headerAttrs[a.Name] {
				e.Fields = append(e.Fields, a)
			}
		}
		e.Children = elems[1:]
		out = append(out, e)
	}
	return out, sc.Err()
}

// parseElements is a tolerant reader for the baselines' XML fragments: the
// start tags and their attributes, XML entities decoded; text and end tags
// are skipped.
func parseElements(s string) []blChild {
	var out []blChild
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 || i+1 >= len(s) {
			return out
		}
		s = s[i+1:]
		if s[0] == '/' {
			continue
		}
		end := 0
		for end < len(s) && s[end] != ' ' && s[end] != '>' && s[end] != '/' {
			end++
		}
		el := blChild{Tag: s[:end]}
		s = s[end:]
		for {
			s = strings.TrimLeft(s, " ")
			if s == "" || s[0] == '>' || s[0] == '/' {
				break
			}
			eq := strings.IndexByte(s, '=')
			if eq < 0 {
				break
			}
			name := strings.TrimSpace(s[:eq])
			rest := strings.TrimLeft(s[eq+1:], " ")
			if rest == "" || rest[0] != '"' {
				break
			}
			rest = rest[1:]
			q := strings.IndexByte(rest, '"')
			if q < 0 {
				break
			}
			el.Fields = append(el.Fields, blField{name, unescapeXML(rest[:q])})
			s = rest[q+1:]
		}
		out = append(out, el)
	}
}

func unescapeXML(s string) string {
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&amp;", "&").Replace(s)
}

// kept is one of our events kept for the comparison.
type kept struct {
	rec
	Key typeKey
}

// TestBaselines compares the decoders with TraceEvent's baselines: every
// shared trace that has one, and those in testdata/traces that ../shared
// does not hold (on a fresh clone without it, all of them).
func TestBaselines(t *testing.T) {
	traces := baselineTraces(t)
	ran := 0
	for _, tf := range traces {
		if tf.Baseline == "" {
			continue
		}
		ran++
		t.Run(tf.Name, func(t *testing.T) {
			if tf.ETL {
				etwBaseline(t, tf)
			} else {
				eventPipeBaseline(t, tf)
			}
			if !t.Failed() {
				known.cover("baseline", tf.Name)
			}
		})
	}
	if ran == 0 {
		t.Fatal("no trace with a baseline")
	}
}

// baselineTraces lists the traces to compare with TraceEvent's baselines:
// the shared ones when ../shared is here, those in testdata/traces it
// does not hold, and the extra ones (CLREVENTS_TRACES).
func baselineTraces(t *testing.T) []traceFile {
	traces := localTraceFiles(t)
	if _, err := statShared(); err == nil {
		shared := sharedTraceFiles(t)
		have := map[string]bool{}
		for _, tf := range shared {
			have[tf.Name] = true
		}
		for _, tf := range traces {
			if !have[tf.Name] {
				shared = append(shared, tf)
			}
		}
		traces = shared
	} else {
		t.Logf("shared traces absent (%v): comparing the baselines in testdata/traces", err)
	}
	return withExtra(t, traces)
}

// eventPipeBaseline joins each baseline line to the first event of its type
// (the earliest of ours with the same provider, thread and time to 0.1 µs),
// compares its fields and the count of its name.
func eventPipeBaseline(t *testing.T, tf traceFile) {
	lines, err := parseEventPipeBaseline(tf.Baseline)
	if err != nil {
		t.Fatal(err)
	}
	first := map[typeKey]*kept{}
	counts := map[typeKey]int{}
	if _, err := eachCLR(tf, func(r *rec) bool {
		k := typeKey{r.Provider, r.ID, r.Version}
		counts[k]++
		if f := first[k]; f == nil || r.TS < f.TS {
			c := *r
			c.Payload = append([]byte(nil), r.Payload...)
			first[k] = &kept{c, k}
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	matched := map[int]typeKey{}
	for _, b := range lines {
		p, ok := clrevents.ProviderByName(b.Provider)
		if !ok {
			continue // not a CLR provider
		}
		var cands []typeKey
		for k, f := range first {
			if k.Provider == p && f.TID == b.TID && fmt.Sprintf("%.4f", f.MSec) == b.MSec {
				cands = append(cands, k)
			}
		}
		if len(cands) != 1 {
			known.mismatch(t, tf.Name, b.Provider+"/"+b.Name, "(unmatched)", fmt.Sprintf("line %d: %d events of ours are first of their type at %s ms on thread %d", b.Line, len(cands), b.MSec, b.TID))
			continue
		}
		k := cands[0]
		matched[b.Line] = k
		compareEvent(t, tf.Name, b, first[k])
	}
	checkCounts(t, tf.Name, lines, matched, counts)
}

// checkCounts compares each matched line's count with ours for the events
// TraceEvent gives that name: the types with the same task and opcode as
// the matched one; for a name without an opcode (TraceEvent knew the task
// only), every type of that task no other line names.
func checkCounts(t *testing.T, trace string, lines []blEvent, matched map[int]typeKey, counts map[typeKey]int) {
	type taskOp struct {
		p    clrevents.Provider
		task uint16
		op   clrevents.Opcode
	}
	to := func(k typeKey) taskOp {
		ei, _ := clrevents.Lookup(k.Provider, k.ID, k.Version)
		return taskOp{k.Provider, ei.Task, ei.Opcode}
	}
	claimed := map[taskOp]bool{}
	for _, b := range lines {
		if k, ok := matched[b.Line]; ok && strings.Contains(b.Name, "/") {
			claimed[to(k)] = true
		}
	}
	for _, b := range lines {
		k, ok := matched[b.Line]
		if !ok {
			continue
		}
		want := to(k)
		sum := 0
		for k2, n := range counts {
			got := to(k2)
			if got == want || !strings.Contains(b.Name, "/") && got.p == want.p && got.task == want.task && !claimed[got] {
				sum += n
			}
		}
		if sum != b.Count {
			known.mismatch(t, trace, k.String(), "(count)", fmt.Sprintf("%s: baseline %d, ours %d", b.Name, b.Count, sum))
		}
	}
}

// etwBaseline joins every CLR EVENT line of an ETW baseline to our event
// with the same time (to the microsecond), PID, TID, processor and DataLen,
// compares the fields, and the counts of the names whose lines all join to
// one type.
func etwBaseline(t *testing.T, tf traceFile) {
	bl, err := baseline.ParseFile(tf.Baseline)
	if err != nil {
		t.Fatal(err)
	}
	type sig struct {
		p        clrevents.Provider
		ms       string
		pid, tid int64
		proc     int
		n        int
	}
	index := map[sig][]*kept{}
	counts := map[typeKey]int{}
	if _, err := eachCLR(tf, func(r *rec) bool {
		k := typeKey{r.Provider, r.ID, r.Version}
		counts[k]++
		c := *r
		c.Payload = append([]byte(nil), r.Payload...)
		s := sig{r.Provider, baseline.FormatMSec(r.MSec), r.PID, r.TID, r.Proc, len(r.Payload)}
		index[s] = append(index[s], &kept{c, k})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[typeKey]bool{}
	for _, b := range bl.Events {
		p, ok := clrevents.ProviderByName(b.Provider)
		if !ok {
			continue
		}
		c := index[sig{p, b.MSecText, b.PID, b.TID, b.ProcNum, b.DataLen}]
		if len(c) == 0 {
			known.mismatch(t, tf.Name, b.FullName(), "(unmatched)", fmt.Sprintf("line %d: no event of ours at %s ms PID %d TID %d DataLen %d", b.Line, b.MSecText, b.PID, b.TID, b.DataLen))
			continue
		}
		e := c[0]
		if len(e.Payload) != b.DataLen {
			t.Errorf("line %d: DataLen %d, ours %d", b.Line, b.DataLen, len(e.Payload))
		}
		known.mu.Lock()
		known.sum(tf.Name).Fields++ // DataLen
		known.mu.Unlock()
		ev := blEvent{Line: b.Line, Provider: b.Provider, Name: b.Name, MSec: b.MSecText, TID: b.TID}
		for _, f := range b.Fields {
			ev.Fields = append(ev.Fields, blField{f.Name, f.Value})
		}
		compareEvent(t, tf.Name, ev, e)
		if byName[b.FullName()] == nil {
			byName[b.FullName()] = map[typeKey]bool{}
		}
		byName[b.FullName()][e.Key] = true
	}
	var names []string
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		ks := byName[name]
		sum := 0
		var k typeKey
		for k2 := range ks {
			k = k2
			sum += counts[k2]
		}
		if want, ok := bl.Counts[name]; ok && sum != want {
			known.mismatch(t, tf.Name, k.String(), "(count)", fmt.Sprintf("%s: baseline COUNT %d, ours %d (types %v)", name, want, sum, ks))
		}
	}
}

// compareEvent decodes our event and compares every field TraceEvent
// printed, and reports the fields we decode that TraceEvent does not print.
func compareEvent(t *testing.T, trace string, b blEvent, e *kept) {
	t.Helper()
	dec := clrevents.NewDecoder()
	ev, _, err := dec.Decode(e.Key.Provider, e.Key.ID, e.Key.Version, e.Ptr, e.Payload)
	if err != nil {
		t.Errorf("line %d: %s: %v", b.Line, e.Key, err)
		return
	}
	v, _, err := reference(t).Decode(e.Key.Provider.String(), e.Key.ID, e.Key.Version, e.Ptr, e.Payload)
	if err != nil {
		t.Errorf("line %d: %s: reference: %v", b.Line, e.Key, err)
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(ev.AppendJSON(nil), &obj); err != nil {
		t.Fatal(err)
	}
	event := e.Key.String()
	if info := ev.Info(); info.DisplayName != b.Name {
		known.mismatch(t, trace, event, "(name)", fmt.Sprintf("line %d: TraceEvent names it %q, our DisplayName is %q", b.Line, b.Name, info.DisplayName))
	}
	printed := map[string]bool{}
	compared := 0
	for _, f := range b.Fields {
		name := f.Name
		if m, ok := fieldNames[event][name]; ok {
			name = m
		}
		ours := lookupField(v, name)
		if ours == nil {
			if d, ok := derivedValue(ev, f.Name); ok {
				compared++
				if !sameDerived(f.Value, d) {
					known.mismatch(t, trace, event, f.Name, fmt.Sprintf("line %d: TraceEvent %q, our derived value %q", b.Line, f.Value, d))
				}
				continue
			}
			known.mismatch(t, trace, event, f.Name, fmt.Sprintf("line %d: TraceEvent prints %s=%q; the template has no such field", b.Line, f.Name, f.Value))
			continue
		}
		printed[ours.Field.Name] = true
		compared++
		if ok, why := sameValue(f.Value, ours, obj[ours.GoName()]); !ok {
			known.mismatch(t, trace, event, f.Name, fmt.Sprintf("line %d: TraceEvent %q, ours %s (%s)", b.Line, f.Value, obj[ours.GoName()], why))
		}
	}
	// Struct arrays: TraceEvent prints the elements as child elements.
	if len(b.Children) > 0 {
		var arr *interp.Value
		for i := range v.Fields {
			if v.Fields[i].Kind == schema.KindStruct {
				arr = &v.Fields[i]
			}
		}
		if arr != nil {
			printed[arr.Field.Name] = true
			var elems []map[string]json.RawMessage
			_ = json.Unmarshal(obj[arr.GoName()], &elems)
			for j, c := range b.Children {
				if j >= len(arr.Elems) || j >= len(elems) {
					known.mismatch(t, trace, event, arr.Field.Name, fmt.Sprintf("line %d: TraceEvent prints element %d, we have %d", b.Line, j, len(arr.Elems)))
					break
				}
				for _, f := range c.Fields {
					ours := lookupField(&arr.Elems[j], f.Name)
					if ours == nil {
						known.mismatch(t, trace, event, c.Tag+"."+f.Name, fmt.Sprintf("line %d: element %d: TraceEvent prints %s=%q; the struct has no such field", b.Line, j, f.Name, f.Value))
						continue
					}
					compared++
					if ok, why := sameValue(f.Value, ours, elems[j][ours.GoName()]); !ok {
						known.mismatch(t, trace, event, arr.Field.Name+"."+f.Name, fmt.Sprintf("line %d: element %d: TraceEvent %q, ours %s (%s)", b.Line, j, f.Value, elems[j][ours.GoName()], why))
					}
				}
			}
		}
	}
	for i := range v.Fields {
		if f := v.Fields[i].Field; !printed[f.Name] {
			known.mismatch(t, trace, event, f.Name, fmt.Sprintf("line %d: we decode %s=%s; TraceEvent does not print it", b.Line, f.Name, obj[v.Fields[i].GoName()]))
		}
	}
	known.mu.Lock()
	known.sum(trace).Fields += compared
	known.mu.Unlock()
}

// derivedValue gives what TraceEvent prints as a property but the payload
// holds only implicitly, from the methods of our family types: the
// optimization tier of a method load, GC heap totals, a module's file name.
func derivedValue(ev clrevents.Event, name string) (string, bool) {
	switch name {
	case "OptimizationTier":
		switch e := ev.(type) {
		case clrevents.MethodLoadUnloadVerboseEvent:
			return e.MethodLoadUnloadVerboseFields().OptimizationTier().String(), true
		case clrevents.MethodLoadUnloadEvent:
			return e.MethodLoadUnloadFields().OptimizationTier().String(), true
		}
	case "TotalHeapSize", "TotalPromoted":
		if e, ok := ev.(clrevents.GCHeapStatsEvent); ok {
			f := e.GCHeapStatsFields()
			if name == "TotalHeapSize" {
				return strconv.FormatUint(f.TotalHeapSize(), 10), true
			}
			return strconv.FormatUint(f.TotalPromoted(), 10), true
		}
	case "ModuleILFileName":
		if e, ok := ev.(clrevents.ModuleLoadUnloadEvent); ok {
			return e.ModuleLoadUnloadFields().ModuleILFileName(), true
		}
	}
	return "", false
}

// sameDerived compares TraceEvent's text with a derived value: numbers by
// value, strings exactly or, where TraceEvent cut the text ("…..."), by
// prefix.
func sameDerived(bv, ours string) bool {
	if a, ok := parseNum(bv); ok {
		b, ok := parseNum(ours)
		return ok && a == b
	}
	if p, ok := strings.CutSuffix(bv, "..."); ok {
		return strings.HasPrefix(ours, p)
	}
	return bv == ours
}

// lookupField finds a field by TraceEvent's name: the manifest name, else
// the same name in another case.
func lookupField(v *interp.Value, name string) *interp.Value {
	if f := v.Get(name); f != nil {
		return f
	}
	for i := range v.Fields {
		if strings.EqualFold(v.Fields[i].Field.Name, name) {
			return &v.Fields[i]
		}
	}
	return nil
}

// parseNum reads TraceEvent's number forms: "3,444", "-1", "0x0000019A".
func parseNum(s string) (uint64, bool) {
	s = strings.ReplaceAll(s, ",", "")
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		u, err := strconv.ParseUint(h, 16, 64)
		return u, err == nil
	}
	if strings.HasPrefix(s, "-") {
		i, err := strconv.ParseInt(s, 10, 64)
		return uint64(i), err == nil
	}
	u, err := strconv.ParseUint(s, 10, 64)
	return u, err == nil
}

// sameValue compares TraceEvent's text for a field with our generated JSON
// for it, normalizing only formatting; v gives the field's type.
func sameValue(bv string, v *interp.Value, gj json.RawMessage) (bool, string) {
	if v.IsArray() {
		return false, "TraceEvent prints an array as a scalar"
	}
	truncated := baseline.Truncated(bv)
	var ours any
	if err := json.Unmarshal(gj, &ours); err != nil {
		return false, "our JSON does not parse"
	}
	if truncated {
		// The ETW dumper cut the value to 20 characters: compare those
		// with the start of ours as TraceEvent would print it.
		text := strings.Trim(string(gj), `"`)
		if _, err := strconv.ParseUint(bv[:1], 10, 8); err != nil || strings.Contains(text, "|") {
			text = strings.ReplaceAll(text, "|", ", ")
		}
		if v.Kind == schema.KindUTF16 || v.Kind == schema.KindAnsi {
			text = v.String()
		}
		return strings.HasPrefix(text, baseline.TruncatedPrefix(bv)) && utf8.RuneCountInString(text) > 20, "cut to 20 characters"
	}
	if _, isEnum := v.EnumName(); isEnum || v.Text() != v.String() {
		if n, ok := parseNum(bv); ok {
			return sameInt(n, v.Uint, v.Kind), "numeric map value"
		}
		s, _ := ours.(string)
		return sameNames(bv, s), "map names"
	}
	switch v.Kind {
	case schema.KindBool:
		return strings.EqualFold(bv, strconv.FormatBool(v.Uint != 0)), "boolean"
	case schema.KindFloat32, schema.KindFloat64:
		f, err := strconv.ParseFloat(bv, 64)
		if err != nil {
			return false, "not a number"
		}
		if v.Kind == schema.KindFloat32 {
			return float32(f) == float32(v.Float), "float32"
		}
		return f == v.Float || math.Abs(f-v.Float) <= 1e-13*math.Max(math.Abs(f), math.Abs(v.Float)), "float64 to 15 digits"
	case schema.KindGUID:
		s, _ := ours.(string)
		return strings.EqualFold(strings.Trim(bv, "{}"), s), "GUID"
	case schema.KindUTF16, schema.KindAnsi:
		s, _ := ours.(string)
		return s == bv, "string"
	case schema.KindBinary:
		s, _ := ours.(string)
		return strings.EqualFold(s, bv), "blob"
	}
	n, ok := parseNum(bv)
	if !ok {
		return false, "not a number"
	}
	return sameInt(n, v.Uint, v.Kind), "integer"
}

// sameInt compares two integers' bits at the width of kind k.
func sameInt(a, b uint64, k schema.Kind) bool {
	if a == b {
		return true
	}
	sz, ok := k.FixedSize()
	if ok && sz.Bytes > 0 && sz.Bytes < 8 {
		m := uint64(1)<<(8*sz.Bytes) - 1
		return a&m == b&m
	}
	return false
}

// sameNames compares TraceEvent's enum text ("A, B" or "A") with ours ("A|B").
func sameNames(bv, ours string) bool {
	norm := func(s, sep string) []string {
		var out []string
		for _, p := range strings.Split(s, sep) {
			p = strings.TrimSpace(p)
			if m, ok := enumNames[p]; ok {
				p = m
			}
			if p != "" {
				out = append(out, p)
			}
		}
		sort.Strings(out)
		return out
	}
	a, b := norm(strings.ReplaceAll(bv, "|", ", "), ", "), norm(ours, "|")
	return strings.Join(a, "|") == strings.Join(b, "|")
}
