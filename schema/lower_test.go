package schema

import (
	"testing"
)

func lowerOrFail(t *testing.T, s *Schema) *Model {
	t.Helper()
	m, err := Lower(s)
	if err != nil {
		t.Fatalf("Lower: %v", err)
	}
	return m
}

func (m *Model) provider(t *testing.T, name string) *LProvider {
	t.Helper()
	for _, p := range m.Providers {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no provider %s", name)
	return nil
}

func (p *LProvider) template(t *testing.T, tid string) *LTemplate {
	t.Helper()
	for _, lt := range p.Templates {
		if lt.TID == tid {
			return lt
		}
	}
	t.Fatalf("provider %s: no template %s", p.Name, tid)
	return nil
}

func (p *LProvider) event(t *testing.T, symbol string) *LEvent {
	t.Helper()
	for _, e := range p.Events {
		if e.Symbol == symbol {
			return e
		}
	}
	t.Fatalf("provider %s: no event %s", p.Name, symbol)
	return nil
}

func field(t *testing.T, fs []*LField, name string) *LField {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no field %s", name)
	return nil
}

// TestLowerSmall checks sizes, offsets and references on the small manifest.
func TestLowerSmall(t *testing.T) {
	m := lowerOrFail(t, loadSmall(t))
	rt := m.provider(t, "Test-Runtime")

	// All fixed: six fields, 4+4+4+4+2+8 bytes, no pointers.
	gc := rt.template(t, "GCStart_V2")
	if gc.PrefixLen != 6 || gc.PrefixSize != (Size{Bytes: 26}) || gc.Variable() {
		t.Errorf("GCStart_V2 prefix %d fields, %v bytes, variable %v; want 6, 26, false", gc.PrefixLen, gc.PrefixSize, gc.Variable())
	}
	if f := field(t, gc.Fields, "ClientSequenceNumber"); f.Offset != (Size{Bytes: 18}) || f.Size != (Size{Bytes: 8}) || f.Kind != KindUint64 {
		t.Errorf("ClientSequenceNumber offset %v size %v kind %v; want 18, 8, uint64", f.Offset, f.Size, f.Kind)
	}
	if f := field(t, gc.Fields, "Reason"); f.Map == nil || f.Map.Name != "GCReasonMap" || f.Map.Kind != KindUint32 || !f.Map.Used {
		t.Errorf("Reason map %+v", f.Map)
	}

	// Pointers: ModuleID (ptr), RangeBegin (count="1": a scalar), Flags,
	// Stack (count="2": two pointers), then a string.
	ml := rt.template(t, "ModuleLoad")
	if ml.PrefixLen != 4 || ml.PrefixSize != (Size{Bytes: 8, Ptrs: 3}) {
		t.Errorf("ModuleLoad prefix %d, %v; want 4, 8+3*ptr", ml.PrefixLen, ml.PrefixSize)
	}
	if got := ml.PrefixSize.At(4); got != 20 {
		t.Errorf("ModuleLoad prefix at 32-bit = %d, want 20", got)
	}
	if got := ml.PrefixSize.At(8); got != 32 {
		t.Errorf("ModuleLoad prefix at 64-bit = %d, want 32", got)
	}
	mid := field(t, ml.Fields, "ModuleID")
	if mid.Kind != KindPointer || mid.Size != (Size{Ptrs: 1}) || !mid.Hex {
		t.Errorf("ModuleID kind %v size %v hex %v", mid.Kind, mid.Size, mid.Hex)
	}
	rb := field(t, ml.Fields, "RangeBegin")
	if rb.IsArray() || rb.Size != (Size{Bytes: 4}) || rb.Offset != (Size{Ptrs: 1}) || !rb.Hex {
		t.Errorf("RangeBegin (count=\"1\") array %v size %v offset %v hex %v; want scalar, 4, ptr, hex", rb.IsArray(), rb.Size, rb.Offset, rb.Hex)
	}
	st := field(t, ml.Fields, "Stack")
	if !st.IsArray() || st.Count.Field != nil || st.Count.Lit != 2 || !st.Fixed || st.Size != (Size{Ptrs: 2}) || st.Offset != (Size{Bytes: 8, Ptrs: 1}) {
		t.Errorf("Stack (count=\"2\") count %+v fixed %v size %v offset %v", st.Count, st.Fixed, st.Size, st.Offset)
	}
	if p := field(t, ml.Fields, "Path"); p.Fixed || p.Kind != KindUTF16 || !ml.Variable() {
		t.Errorf("Path fixed %v kind %v", p.Fixed, p.Kind)
	}

	// One count field shared by two arrays, and a field after them.
	il := rt.template(t, "MethodILToNativeMap")
	cnt := field(t, il.Fields, "CountOfMapEntries")
	ilo, nat := field(t, il.Fields, "ILOffsets"), field(t, il.Fields, "NativeOffsets")
	if ilo.Count.Field != cnt || nat.Count.Field != cnt || len(cnt.Counts) != 2 || cnt.Counts[0] != ilo || cnt.Counts[1] != nat {
		t.Errorf("shared count: ILOffsets→%v NativeOffsets→%v Counts %d", ilo.Count.Field, nat.Count.Field, len(cnt.Counts))
	}
	if ilo.Fixed || il.PrefixLen != 2 || il.PrefixSize != (Size{Bytes: 10}) {
		t.Errorf("MethodILToNativeMap prefix %d %v; want 2, 10", il.PrefixLen, il.PrefixSize)
	}

	// A struct array whose element holds a string and a counted array.
	bt := rt.template(t, "BulkType")
	vals := field(t, bt.Fields, "Values")
	if vals.Kind != KindStruct || vals.ElemFixed || vals.ElemPrefix != 1 || vals.ElemSize != (Size{Bytes: 8}) || vals.Fixed {
		t.Errorf("BulkType Values elemFixed %v prefix %d size %v fixed %v", vals.ElemFixed, vals.ElemPrefix, vals.ElemSize, vals.Fixed)
	}
	if vals.Count.Field != field(t, bt.Fields, "Count") {
		t.Errorf("BulkType Values count not Count")
	}
	params := field(t, vals.Elem, "Params")
	if params.Count.Field != field(t, vals.Elem, "ParamCount") {
		t.Errorf("Params count does not resolve inside the struct")
	}

	// A struct array of fixed elements with a pointer, then a binary blob
	// whose length is an earlier field.
	ph := rt.template(t, "PerHeap")
	pv := field(t, ph.Fields, "Values")
	if !pv.ElemFixed || pv.ElemSize != (Size{Bytes: 4, Ptrs: 1}) || pv.ElemPrefix != 2 || pv.Fixed {
		t.Errorf("PerHeap Values elemFixed %v size %v prefix %d fixed %v", pv.ElemFixed, pv.ElemSize, pv.ElemPrefix, pv.Fixed)
	}
	if got := pv.Elem[1].Offset; got != (Size{Ptrs: 1}) {
		t.Errorf("PerHeap Values.Gen offset %v, want ptr", got)
	}
	data, ds := field(t, ph.Fields, "Data"), field(t, ph.Fields, "DataSize")
	if data.Kind != KindBinary || data.Length.Field != ds || len(ds.Counts) != 1 || data.IsArray() {
		t.Errorf("Data length %+v", data.Length)
	}

	// Events: task, opcode (standard and task-local), level, keywords.
	ev := rt.event(t, "GCStart_V2")
	if ev.Template != gc || ev.TaskRef == nil || ev.TaskRef.Name != "GarbageCollection" || ev.OpcodeValue != 1 || ev.LevelValue != 4 || ev.KeywordsMask != 0x1 {
		t.Errorf("GCStart_V2: %+v", ev)
	}
	if ev := rt.event(t, "GCPerHeap"); ev.OpcodeValue != 133 || ev.LevelValue != 5 {
		t.Errorf("GCPerHeap opcode %d level %d; want 133, 5", ev.OpcodeValue, ev.LevelValue)
	}
	if ev := rt.event(t, "BulkType"); ev.KeywordsMask != 0x9 {
		t.Errorf("BulkType keywords 0x%x, want 0x9", ev.KeywordsMask)
	}
	if ev := rt.event(t, "GCStart_V1"); ev.Template != nil {
		t.Errorf("GCStart_V1 has no template, got %v", ev.Template)
	}
	// The same id in another provider is another event.
	rd := m.provider(t, "Test-Rundown")
	if ev := rd.event(t, "ModuleDCStop"); ev.Value != 144 || ev.Template != rd.template(t, "ModuleLoad") || ev.OpcodeValue != 4 {
		t.Errorf("rundown 144: %+v", ev)
	}
	want := [16]byte{0x23, 0x0d, 0x3c, 0xe1, 0xbc, 0xcc, 0x12, 0x4e, 0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}
	if rt.GUIDBytes != want {
		t.Errorf("GUID bytes % x, want % x", rt.GUIDBytes, want)
	}
}

// TestLowerCheckedIn checks the same facts on the real templates, from the
// checked-in schema (so it runs on a fresh clone).
func TestLowerCheckedIn(t *testing.T) {
	m := lowerOrFail(t, loadCheckedIn(t))
	rt := m.provider(t, "Microsoft-Windows-DotNETRuntime")
	rd := m.provider(t, "Microsoft-Windows-DotNETRuntimeRundown")

	gc := rt.event(t, "GCStart_V2").Template
	if gc == nil || gc.PrefixLen != 6 || len(gc.Fields) != 6 || gc.PrefixSize != (Size{Bytes: 26}) {
		t.Fatalf("GCStart_V2 template: %+v", gc)
	}

	il := rt.template(t, "MethodILToNativeMap")
	cnt := field(t, il.Fields, "CountOfMapEntries")
	if cnt.Kind != KindUint16 || len(cnt.Counts) != 2 || cnt.Counts[0].Name != "ILOffsets" || cnt.Counts[1].Name != "NativeOffsets" {
		t.Errorf("CountOfMapEntries counts %v", cnt.Counts)
	}
	// MethodID 8, ReJITID 8, MethodExtent 1, CountOfMapEntries 2.
	if il.PrefixLen != 4 || il.PrefixSize != (Size{Bytes: 19}) {
		t.Errorf("MethodILToNativeMap prefix %d %v; want 4, 19", il.PrefixLen, il.PrefixSize)
	}

	mr := rd.template(t, "ModuleRangeRundown")
	if rb := field(t, mr.Fields, "RangeBegin"); rb.IsArray() || rb.Offset != (Size{Bytes: 10}) {
		t.Errorf("RangeBegin (count=\"1\") array %v offset %v; want scalar at 10", rb.IsArray(), rb.Offset)
	}
	if mr.Variable() || mr.PrefixSize != (Size{Bytes: 19}) {
		t.Errorf("ModuleRangeRundown size %v variable %v; want 19 fixed", mr.PrefixSize, mr.Variable())
	}

	// Before overrides, ClrStackWalk's Stack is the manifest's literal 2.
	sw := rt.template(t, "ClrStackWalk")
	if st := field(t, sw.Fields, "Stack"); st.Count.Field != nil || st.Count.Lit != 2 || st.Size != (Size{Ptrs: 2}) || st.Offset != (Size{Bytes: 8}) {
		t.Errorf("ClrStackWalk Stack count %+v size %v offset %v", st.Count, st.Size, st.Offset)
	}

	bt := field(t, rt.template(t, "BulkType").Fields, "Values")
	if bt.ElemFixed || bt.Fixed {
		t.Errorf("BulkType Values ElemFixed %v Fixed %v; want false, false", bt.ElemFixed, bt.Fixed)
	}

	ph := rt.template(t, "GCPerHeapHistory_V3")
	pv := field(t, ph.Fields, "Values")
	if !pv.ElemFixed || pv.ElemSize != (Size{Ptrs: 10}) || pv.ElemSize.At(4) != 40 || pv.ElemSize.At(8) != 80 {
		t.Errorf("GCPerHeapHistory_V3 Values ElemFixed %v ElemSize %v; want true, 10*ptr", pv.ElemFixed, pv.ElemSize)
	}
	// ClrInstanceID, 6 pointers, 6 uint32, a pointer, Count.
	if ph.PrefixLen != 15 || ph.PrefixSize != (Size{Bytes: 30, Ptrs: 7}) {
		t.Errorf("GCPerHeapHistory_V3 prefix %d %v; want 15, 30+7*ptr", ph.PrefixLen, ph.PrefixSize)
	}
	if f := field(t, ph.Fields, "ExtraGen0Commit"); f.Offset != (Size{Bytes: 26, Ptrs: 6}) || f.Offset.At(8) != 74 {
		t.Errorf("ExtraGen0Commit offset %v", f.Offset)
	}

	// 144 means different events in the runtime and rundown providers.
	if a, b := rt.event(t, "MethodUnloadVerbose"), rd.event(t, "MethodDCEndVerbose"); a.Value != 144 || b.Value != 144 {
		t.Errorf("144: %d %d", a.Value, b.Value)
	}
}
