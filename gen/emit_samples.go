package gen

import (
	"fmt"
	"strings"

	. "github.com/dave/jennifer/jen"

	"github.com/clrgo/clrevents/schema"
)

// samples emits sampleEvents, one value of every event type with every
// field set to a distinct small value and every count and length agreeing
// with what it sizes, and the test and benchmark that walk them through
// clrimpltest: round trips, descriptors, every cut of every payload,
// allocations.
//
//	func sampleEvents() []Event {
//		return []Event{&GCStartV2{Count: 2, Depth: 3, …}, …}
//	}
func (g *pkgIR) samples(f *File) {
	var items []Code
	for _, ev := range g.events {
		s := &sampler{}
		items = append(items, Op("&").Id(ev.goName).Values(s.scope(ev.scope)))
	}
	f.Comment("sampleEvents returns one value of every event type, every field set.")
	f.Func().Id("sampleEvents").Params().Index().Id("Event").Block(
		Return(Index().Id("Event").Values(items...)),
	)

	// The tests and the benchmark over the samples: the checks are
	// clrimpltest's, the per-package facts (the table, the samples, the
	// events whose last field takes the rest) are here.
	args := []Code{Id("t"), Id("Table").Call(), Id("sampleEvents").Call()}
	for _, ev := range g.events {
		if fs := ev.scope.fields; len(fs) > 0 && fs[len(fs)-1].lf.Count.Rest {
			args = append(args, Lit(ev.le.Symbol))
		}
	}
	f.Line()
	f.Comment("TestSamples checks every event type's decoder, encoder, JSON, text and")
	f.Comment("column writers and descriptor against its sample value, at both pointer")
	f.Comment("sizes, with every cut of its payload (see clrimpltest.Samples).")
	f.Func().Id("TestSamples").Params(Id("t").Op("*").Qual("testing", "T")).Block(
		Qual(testPkg, "Samples").Call(args...),
	)
	f.Line()
	f.Comment("BenchmarkSamplesDecode decodes every event type's sample once an")
	f.Comment("operation (see clrimpltest.BenchmarkDecode).")
	f.Func().Id("BenchmarkSamplesDecode").Params(Id("b").Op("*").Qual("testing", "B")).Block(
		Qual(testPkg, "BenchmarkDecode").Call(Id("b"), Id("Table").Call(), Id("sampleEvents").Call()),
	)
}

// testPkg checks generated packages in the tests -tests writes.
const testPkg = implPkg + "/clrimpltest"

type sampler struct{ v int }

func (s *sampler) next() int {
	s.v++
	return s.v
}

// sizes is the element count or length each sizing field must hold.
const sampleLen = 2

func (s *sampler) scope(sc *scopeIR) Dict {
	d := Dict{}
	sizes := map[*schema.LField]int{}
	for _, f := range sc.fields {
		if f.lf.Count.Field != nil {
			sizes[f.lf.Count.Field] = sampleLen
		}
		if f.lf.Length.Field != nil {
			sizes[f.lf.Length.Field] = sampleLen
		}
	}
	for _, f := range sc.fields {
		if n, ok := sizes[f.lf]; ok {
			d[Id(f.goName)] = Lit(n)
			continue
		}
		d[Id(f.goName)] = s.value(f)
	}
	return d
}

func (s *sampler) value(f *fieldIR) Code {
	lf := f.lf
	n := sampleLen
	if lf.Count.Set && lf.Count.Field == nil && !lf.Count.Rest {
		n = lf.Count.Lit
	}
	if lf.Length.Set && lf.Length.Field == nil {
		n = lf.Length.Lit
	}
	switch {
	case f.elem != nil:
		var elems []Code
		for i := 0; i < n; i++ {
			elems = append(elems, Id(f.elem.goName).Values(s.scope(f.elem.scope)))
		}
		return Id(f.elem.view + "Of").Call(elems...)
	case lf.IsArray():
		t, _ := arrayType(lf.Kind)
		var vals []Code
		if lf.Kind == schema.KindPointer {
			vals = append(vals, Lit(8))
		}
		for i := 0; i < n; i++ {
			vals = append(vals, s.scalar(lf.Kind))
		}
		return Qual(implPkg, t+"Of").Call(vals...)
	case lf.Kind == schema.KindUTF16 || lf.Kind == schema.KindAnsi:
		str := fmt.Sprintf("s%d é", s.next())
		if lf.Kind == schema.KindAnsi {
			str = fmt.Sprintf("a%d", s.v)
		}
		if lf.Length.Set {
			str = strings.Repeat("x", n)
		}
		if lf.Kind == schema.KindAnsi {
			return Qual(implPkg, "AnsiOf").Call(Lit(str))
		}
		return Qual(implPkg, "UTF16Of").Call(Lit(str))
	case lf.Kind == schema.KindBinary:
		var bs []Code
		for i := 0; i < n; i++ {
			bs = append(bs, Lit(s.next()%256))
		}
		return Qual(implPkg, "BinaryOf").Call(Index().Byte().Values(bs...))
	case lf.Kind == schema.KindWBEMSID:
		// S-1-5-21-v: revision 1, one sub-authority, authority 5.
		return Qual(implPkg, "WBEMSIDOf").Call(Index().Byte().Values(Lit(1), Lit(1), Lit(0), Lit(0), Lit(0), Lit(0), Lit(0), Lit(5),
			Lit(21), Lit(0), Lit(0), Lit(s.next()%256)))
	}
	return s.scalar(lf.Kind)
}

func (s *sampler) scalar(k schema.Kind) Code {
	v := s.next()
	switch k {
	case schema.KindUint8, schema.KindUint16, schema.KindUint32, schema.KindUint64:
		return Lit(v%200 + 3)
	case schema.KindInt8, schema.KindInt16, schema.KindInt32, schema.KindInt64:
		return Lit(-(v%100 + 3))
	case schema.KindFloat32, schema.KindFloat64:
		return Lit(float64(v) + 0.5)
	case schema.KindBool:
		return Lit(v%2 == 0)
	case schema.KindGUID:
		var bs []Code
		for i := 0; i < 16; i++ {
			bs = append(bs, Lit((v*16+i)%256))
		}
		return Id("GUID").Values(bs...)
	case schema.KindPointer:
		return Lit(v * 0x1000)
	case schema.KindPort:
		return Lit(v%200 + 1000)
	case schema.KindIPv4:
		return Qual("net/netip", "AddrFrom4").Call(Index(Lit(4)).Byte().Values(Lit(10), Lit(0), Lit(v%200), Lit(1)))
	case schema.KindIPv6:
		var bs []Code
		for i := 0; i < 16; i++ {
			bs = append(bs, Lit((v*16+i)%256))
		}
		return Qual("net/netip", "AddrFrom16").Call(Index(Lit(16)).Byte().Values(bs...))
	case schema.KindFileTime:
		return Lit(133230000000000000 + v*10_000_000)
	}
	panic("sampler: " + k.String())
}
