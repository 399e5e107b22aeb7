package schema

import (
	"strings"
	"testing"
)

// TestKernelSchema checks the checked-in kernel schema against the rules
// its header states: a provider per class with a GUID and TraceEvent's
// provider name, its tasks of value 0, every event's ID its opcode, the
// fields' kinds.
func TestKernelSchema(t *testing.T) {
	s, err := LoadYAML("kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := lowerOrFail(t, s)
	guids := map[string]string{}
	events := 0
	for _, p := range m.Providers {
		if prev, ok := guids[p.GUID]; ok {
			t.Errorf("providers %s and %s have GUID %s", prev, p.Name, p.GUID)
		}
		guids[p.GUID] = p.Name
		if p.DisplayName == "" {
			t.Errorf("provider %s: no displayName", p.Name)
		}
		if len(p.Tasks) == 0 {
			t.Errorf("provider %s: no task", p.Name)
		}
		for _, task := range p.Tasks {
			if task.Value != 0 {
				t.Errorf("provider %s: task %s has value %d, want 0", p.Name, task.Name, task.Value)
			}
		}
		for _, e := range p.Events {
			events++
			if uint16(e.OpcodeValue) != e.Value {
				t.Errorf("%s: ID %d is not its opcode %d", e.Symbol, e.Value, e.OpcodeValue)
			}
			if !strings.HasPrefix(e.DisplayName, e.TaskRef.Name) || strings.Contains(e.DisplayName, "win:") {
				t.Errorf("%s: display name %q", e.Symbol, e.DisplayName)
			}
		}
	}
	if len(m.Providers) != 18 || events != 176 {
		t.Errorf("%d classes, %d events; want 18 and 176 (update this test with the schema)", len(m.Providers), events)
	}

	hdr := m.provider(t, "EventTraceEvent").template(t, "EventTraceHeader_V2")
	if n := len(hdr.Shown); n != 21 || hdr.Shown[n-1].Name != "UtcOffsetMinutes" || hdr.Shown[n-2].Name != "LogFileName" {
		t.Errorf("header shows %d fields, last %s", n, hdr.Shown[n-1].Name)
	}
	if f := field(t, hdr.Fields, "BootTime"); f.Offset != (Size{Bytes: 232, Ptrs: 2}) || f.Kind != KindFileTime {
		t.Errorf("BootTime at %v, kind %v: want 232+2*ptr (248 for 8-byte pointers), filetime", f.Offset, f.Kind)
	}
	if f := field(t, hdr.Fields, "StandardName"); !f.Padded() || f.Size != (Size{Bytes: 64}) {
		t.Errorf("StandardName: padded %v, size %v", f.Padded(), f.Size)
	}
	tcp := m.provider(t, "TcpIp")
	v4, v6 := tcp.template(t, "TcpIp_V2"), tcp.template(t, "TcpIpV6_V2")
	for _, c := range []struct {
		f    *LField
		kind Kind
		size Size
	}{
		{field(t, v4.Fields, "daddr"), KindIPv4, Size{Bytes: 4}},
		{field(t, v4.Fields, "dport"), KindPort, Size{Bytes: 2}},
		{field(t, v6.Fields, "saddr"), KindIPv6, Size{Bytes: 16}},
		{field(t, v6.Fields, "connid"), KindPointer, Size{Ptrs: 1}},
	} {
		if c.f.Kind != c.kind || c.f.Size != c.size || !c.f.Fixed {
			t.Errorf("%s: kind %v size %v fixed %v; want %v %v", c.f.Name, c.f.Kind, c.f.Size, c.f.Fixed, c.kind, c.size)
		}
	}
	if f := field(t, m.provider(t, "Image").template(t, "Image_V2").Fields, "ImageSize"); f.Kind != KindPointer || f.Hex {
		t.Errorf("ImageSize (mof:SizeT): kind %v hex %v; want a pointer in decimal", f.Kind, f.Hex)
	}
	pr := m.provider(t, "Process").template(t, "Process_V4")
	if f := field(t, pr.Fields, "UserSID"); f.Kind != KindWBEMSID || f.Fixed || pr.PrefixLen != 7 {
		t.Errorf("UserSID: kind %v, fixed %v, prefix %d fields", f.Kind, f.Fixed, pr.PrefixLen)
	}
	st := m.provider(t, "StackWalk").template(t, "StackWalkStack_V2")
	if f := field(t, st.Fields, "Stack"); !f.Count.Rest || f.Fixed || st.PrefixLen != 3 {
		t.Errorf("Stack: rest %v fixed %v, prefix %d", f.Count.Rest, f.Fixed, st.PrefixLen)
	}
	kb := m.provider(t, "Image").event(t, "ImageKernelBase_V2")
	if kb.ShownProvider != "MSNT_SystemTrace" || m.provider(t, "Image").event(t, "ImageLoad_V2").ShownProvider != "Windows Kernel" {
		t.Errorf("shown providers: %s", kb.ShownProvider)
	}
}

// TestKernelModelErrors checks that misuse of what the kernel's classes
// added to the model is an error naming the file and line.
func TestKernelModelErrors(t *testing.T) {
	const head = "source: k.yaml\nproviders:\n  - name: K\n    guid: 3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c\n    templates:\n      - tid: T\n"
	for _, c := range []struct {
		name, body, want string
	}{
		{"show unknown", "        show: [A, B]\n        fields:\n          - {name: A, inType: 'win:UInt32'}\n",
			`k.yaml:6: template T: show names "B", which is no field of the template`},
		{"show twice", "        show: [A, A]\n        fields:\n          - {name: A, inType: 'win:UInt32'}\n",
			`k.yaml:6: template T: show names "A" twice`},
		{"rest not last", "        fields:\n          - {name: A, inType: 'win:Pointer', rest: true}\n          - {name: B, inType: 'win:UInt32'}\n",
			`k.yaml:8: template T: field "A": rest takes the rest of the payload, so it must be the last field`},
		{"rest and count", "        fields:\n          - {name: A, inType: 'win:Pointer', count: '2', rest: true}\n",
			`k.yaml:8: template T: field "A": rest and count= both say how many elements there are`},
		{"rest on a string", "        fields:\n          - {name: A, inType: 'win:UnicodeString', rest: true}\n",
			`k.yaml:8: template T: field "A": count= on a utf16 field is not supported`},
		{"rest in a struct", "        fields:\n          - {name: N, inType: 'win:UInt32'}\n          - name: S\n            count: N\n            struct: true\n            fields:\n              - {name: A, inType: 'win:Pointer', rest: true}\n",
			`k.yaml:13: template T: struct S: field "A": rest in a struct`},
		{"IPv6 length", "        fields:\n          - {name: A, inType: 'win:Binary', outType: 'win:IPv6', length: '4'}\n",
			`k.yaml:8: template T: field "A": an IPv6 address (outType win:IPv6) is win:Binary of length 16`},
		{"port on uint32", "        fields:\n          - {name: A, inType: 'win:UInt32', outType: 'win:Port'}\n",
			`k.yaml:8: template T: field "A": outType win:Port on inType win:UInt32: it goes with win:UInt16`},
		{"unknown mof type", "        fields:\n          - {name: A, inType: 'mof:Object'}\n",
			`k.yaml:8: template T: field "A": unknown inType "mof:Object"`},
		{"walk on a number", "        fields:\n          - {name: A, inType: 'win:UInt32', walk: true}\n",
			`k.yaml:8: template T: field "A": walk on a uint32 field: a stack walk is an array of pointers in a template`},
		{"walk on one pointer", "        fields:\n          - {name: A, inType: 'win:Pointer', walk: true}\n",
			`k.yaml:8: template T: field "A": walk on a pointer field: a stack walk is an array of pointers in a template`},
	} {
		_, err := ParseYAML("k.yaml", []byte(head+c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
	}
	// And what the model allows: a rest array ends the template.
	ok := head + "        show: [B]\n        fields:\n          - {name: A, inType: 'win:UInt32'}\n          - {name: B, inType: 'win:Pointer', rest: true, walk: true}\n"
	if _, err := ParseYAML("k.yaml", []byte(ok)); err != nil {
		t.Error(err)
	}
}

// TestKernelYAMLRoundTrip checks that MarshalYAML keeps what the kernel's
// classes added to the model.
func TestKernelYAMLRoundTrip(t *testing.T) {
	s, err := LoadYAML("kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalYAML(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"displayName: Windows Kernel", "displayProvider: MSNT_SystemTrace", "rest: true", "show: [InstructionPointer, ThreadID, Count]"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("MarshalYAML lost %q", want)
		}
	}
	back, err := ParseYAML("kernel.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(s, back); !d.Empty() {
		var b strings.Builder
		d.Write(&b)
		t.Errorf("the marshalled schema differs:\n%s", b.String())
	}
}

// TestKernelDiff checks that Diff reports what the kernel's classes added
// to the model: a change of the fields a template shows, of the name an
// event is shown under, of a rest array.
func TestKernelDiff(t *testing.T) {
	a, err := LoadYAML("kernel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := LoadYAML("kernel.yaml")
	b.Provider("PerfInfo").Template("SampledProfile_V2").Show = []string{"ThreadID", "InstructionPointer", "Count"}
	b.Provider("Image").Event("ImageKernelBase_V2").DisplayProvider = ""
	b.Provider("StackWalk").Template("StackWalkStack_V2").Fields[3].Rest = false
	var out strings.Builder
	Diff(a, b).Write(&out)
	for _, want := range []string{
		"~ PerfInfoSample_V2 (46 v2): shown fields InstructionPointer, ThreadID, Count → ThreadID, InstructionPointer, Count",
		"~ ImageKernelBase_V2 (33 v2): shown under MSNT_SystemTrace → Windows Kernel",
		"~ StackWalkStack_V2 (32 v2): field Stack win:Pointer rest → win:Pointer",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the diff lacks %q:\n%s", want, out.String())
		}
	}
}
