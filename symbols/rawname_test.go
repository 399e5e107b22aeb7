package symbols

import (
	"bytes"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
)

// eagerName is the name a method event's UTF-16 parts make, converted as
// the Map converted them when it took the event (before it kept them as
// the event has them): Namespace, a '.' when it converts to something,
// Name, and the signature from its '(' on ("NULL" namespaces and
// signatures without a '(' add nothing).
func eagerName(ns, name, sig []byte) string {
	switch i := indexParen(sig); {
	case i > 0:
		sig = sig[2*i:]
	case i < 0:
		sig = nil
	}
	if bytes.Equal(ns, utf16Null) {
		ns = nil
	}
	b := clrevents.MakeUTF16(ns).AppendUTF8(nil)
	if len(b) > 0 {
		b = append(b, '.')
	}
	b = clrevents.MakeUTF16(name).AppendUTF8(b)
	return string(clrevents.MakeUTF16(sig).AppendUTF8(b))
}

// TestRawNamesConvertAsEager: a method's name, kept as the event has it
// and converted when a frame is made of it, is the name converting it
// when the event came made: for ASCII, other code points, surrogate pairs
// and lone surrogates, the runtime's "NULL" placeholders, signatures with
// and without a return type or a parameter list, empty parts, and names
// longer than an arena block's share. A name that converts to nothing is
// none (a later event of the method may still name it); the conversion is
// made once.
func TestRawNamesConvertAsEager(t *testing.T) {
	u := func(s string) []byte { return clrevents.UTF16Of(s).Bytes() }
	long := strings.Repeat("Ab", arenaBlock/4)
	parts := [][]byte{
		nil, {}, u("A"), u("System.Collections.Generic"), u("Grüße"), u("日本語"),
		u("😀x"), {0x00, 0xD8}, {0x00, 0xD8, 'a', 0}, {0x3D, 0xD8, 0x3D, 0xD8}, u("NULL"), u(long),
	}
	sigs := [][]byte{
		nil, u("NULL"), u("void  ()"), u("class System.String  (int32,class System.String)"),
		u("(x)"), u("void"), u("int (ü)"), u("void  (" + long + ")"),
	}
	m := NewMap()
	n := 0
	for _, ns := range parts {
		for _, name := range parts {
			for _, sig := range sigs {
				want := eagerName(ns, name, sig)
				r := m.methodName(&[3]clrevents.UTF16{clrevents.MakeUTF16(ns), clrevents.MakeUTF16(name), clrevents.MakeUTF16(sig)})
				if (r.n == 0) != (want == "") {
					t.Fatalf("ns %q, name %q, sig %q: ref %+v, want a name %q", ns, name, sig, r, want)
				}
				me := &method{name: r}
				if got := m.methodString(me); got != want {
					t.Fatalf("ns %q, name %q, sig %q: %q, want %q", ns, name, sig, got, want)
				}
				if me.name.n&rawName != 0 {
					t.Fatalf("ns %q, name %q, sig %q: the method keeps the raw name after converting it", ns, name, sig)
				}
				conv := me.name
				if got := m.methodString(me); got != want || me.name != conv {
					t.Fatalf("ns %q, name %q, sig %q: a second call gives %q (ref %+v, then %+v)", ns, name, sig, got, conv, me.name)
				}
				n++
			}
		}
	}
	t.Logf("%d names", n)
}

// TestRundownNamesNotConverted: the names of a rundown's methods that no
// stack refers to stay as the events had them; the ones frames are made
// of are converted.
func TestRundownNamesNotConverted(t *testing.T) {
	m := NewMap()
	for i := range uint64(1000) {
		m.Observe(1, 0, &clrevents.MethodDCEndVerboseV1{MethodID: i + 1, ModuleID: 1, MethodStartAddress: 0x10000 + 0x100*i, MethodSize: 0x80,
			MethodNamespace: clrevents.UTF16Of("App.C"), MethodName: clrevents.UTF16Of("M"), MethodSignature: clrevents.UTF16Of("void  ()")})
	}
	f, r := m.Resolve(1, 0x10000+0x100*7+4, 1)
	if r != Resolved || m.Frame(f).Method != "App.C.M()" {
		t.Fatalf("Resolve: %v %q", r, m.Frame(f).Method)
	}
	raw := 0
	p := m.procs[1]
	for i := range p.methods.n {
		if p.methods.at(i).name.n&rawName != 0 {
			raw++
		}
	}
	if raw != 999 {
		t.Errorf("%d of 1,000 names raw after one resolve, want 999", raw)
	}
}
