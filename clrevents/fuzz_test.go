package clrevents

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
)

// Fuzz targets for hostile payloads. The seed corpora run with plain
// go test; `make fuzz` runs each target for FUZZTIME.
//
// FuzzDecoder's seeds are every generated sample event at both pointer
// sizes (added below) plus real payloads from the traces in testdata and
// ../shared/fixtures/traces, committed under testdata/fuzz/FuzzDecoder as
// real-<trace>-<event> (this package cannot import the trace readers,
// which import it, so they were extracted once with nettrace and etl).

// FuzzDecoder decodes a fuzzed payload as a fuzzed event at a fuzzed
// pointer size. The event is chosen twice: by the fuzzed (provider, ID,
// version), which is mostly not in the schema, and by pick modulo the table,
// so that every input also reaches a real decoder. Properties:
//
//   - nothing panics;
//   - an error is a *DecodeError naming the event, with an offset inside
//     the payload and a sentinel (ErrShortPayload or ErrPointerSize); an
//     unknown triple is an *UnknownEventError;
//   - on success n <= len(payload), AppendJSON is valid JSON, AppendText
//     works, and every view in the value (strings, arrays, struct arrays
//     and their elements, recursively) is safe to use: String, AppendUTF8,
//     AppendJSON, Len, At(i) for every i in range, All (which yields exactly
//     Len elements, equal to At's);
//   - the value re-encodes to exactly n bytes, and the re-encoded bytes
//     decode to a value that re-encodes to the same bytes and writes the
//     same JSON. (Re-encoding the original payload may differ from it: a
//     win:Boolean reads any non-zero value as true and writes 1. Floats
//     keep their bits, NaN included, and strings their raw UTF-16, valid or
//     not, so the second encoding is byte-exact.)
func FuzzDecoder(f *testing.F) {
	for i, ev := range sampleEvents() {
		info := ev.Info()
		for _, ptr := range []int8{4, 8} {
			f.Add(uint8(info.Provider), info.ID, info.Version, uint16(i), ptr, ev.Encode(nil, int(ptr)))
		}
	}
	// A few invalid pointer sizes and triples.
	f.Add(uint8(0), uint16(1), uint8(0), uint16(0), int8(0), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint8(200), uint16(65535), uint8(255), uint16(65535), int8(-8), []byte{})
	f.Add(uint8(1), uint16(80), uint8(1), uint16(7), int8(6), bytes.Repeat([]byte{0xff}, 64))
	f.Fuzz(func(t *testing.T, prov uint8, id uint16, ver uint8, pick uint16, ptr int8, payload []byte) {
		d := NewDecoder()
		p := Provider(prov)
		if info, ok := Lookup(p, id, ver); ok {
			checkDecode(t, d, info, int(ptr), payload)
		} else {
			ev, n, err := d.Decode(p, id, ver, int(ptr), payload)
			var ue *UnknownEventError
			if ev != nil || n != 0 || !errors.As(err, &ue) || !errors.Is(err, ErrUnknownEvent) ||
				ue.Provider != p.String() || ue.ID != id || ue.Version != ver {
				t.Fatalf("Decode(%v, %d, %d) not in the schema: %v, %d, %v", p, id, ver, ev, n, err)
			}
		}
		table := Events()
		checkDecode(t, d, table[int(pick)%len(table)], int(ptr), payload)
	})
}

func checkDecode(t *testing.T, d *Decoder, info *EventInfo, ptr int, payload []byte) {
	t.Helper()
	// Decode into a copy whose capacity is its length, so a read past the
	// end cannot land in spare capacity unnoticed.
	payload = bytes.Clone(payload)[:len(payload):len(payload)]
	ev, n, err := d.Decode(info.Provider, info.ID, info.Version, ptr, payload)
	if err != nil {
		if ev != nil || n != 0 {
			t.Fatalf("%s ptr %d: error %v with event %v and n %d", info, ptr, err, ev, n)
		}
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("%s ptr %d: error %v (%T) is not a *DecodeError", info, ptr, err, err)
		}
		if de.Event != info.Name || de.Offset < 0 || de.Offset > len(payload) {
			t.Fatalf("%s ptr %d: error %q: event %q, offset %d of %d bytes", info, ptr, err, de.Event, de.Offset, len(payload))
		}
		if !errors.Is(err, ErrShortPayload) && !errors.Is(err, ErrPointerSize) {
			t.Fatalf("%s ptr %d: error %v has no sentinel", info, ptr, err)
		}
		if errors.Is(err, ErrPointerSize) && clrimpl.ValidPtrSize(ptr) {
			t.Fatalf("%s ptr %d: %v for a valid pointer size", info, ptr, err)
		}
		if strings.TrimSpace(err.Error()) == "" {
			t.Fatalf("%s ptr %d: empty error message", info, ptr)
		}
		return
	}
	if ev == nil || ev.Info() != info {
		t.Fatalf("%s ptr %d: Decode returned %v", info, ptr, ev)
	}
	if n < 0 || n > len(payload) {
		t.Fatalf("%s ptr %d: used %d of %d bytes", info, ptr, n, len(payload))
	}
	js := ev.AppendJSON(nil)
	if !json.Valid(js) {
		t.Fatalf("%s ptr %d: AppendJSON is not valid JSON: %s", info, ptr, js)
	}
	_ = ev.AppendText(nil)
	checkViews(t, info.Name, reflect.ValueOf(ev).Elem(), 0)

	// Re-encode: same size, and a fixed point after one round.
	enc := ev.Encode(nil, ptr)
	if len(enc) != n {
		t.Fatalf("%s ptr %d: decoded %d bytes, re-encodes to %d\npayload % x\nencoded % x", info, ptr, n, len(enc), payload[:n], enc)
	}
	back := info.New()
	m, err := back.Decode(enc, ptr)
	if err != nil || m != len(enc) {
		t.Fatalf("%s ptr %d: re-encoded payload does not decode: n=%d of %d, %v\npayload % x\nencoded % x", info, ptr, m, len(enc), err, payload[:n], enc)
	}
	if again := back.Encode(nil, ptr); !bytes.Equal(again, enc) {
		t.Fatalf("%s ptr %d: encoding is not stable\nfirst  % x\nsecond % x", info, ptr, enc, again)
	}
	if js2 := back.AppendJSON(nil); !bytes.Equal(js, js2) {
		t.Fatalf("%s ptr %d: JSON differs after re-encoding\nfirst  %s\nsecond %s", info, ptr, js, js2)
	}
}

var (
	stringerType = reflect.TypeFor[interface{ String() string }]()
	appendUTF8T  = reflect.TypeFor[interface{ AppendUTF8([]byte) []byte }]()
	appendJSONT  = reflect.TypeFor[interface{ AppendJSON([]byte) []byte }]()
)

// checkViews walks the exported fields of a decoded struct (an event or
// an element of a struct array) and exercises every view among them.
func checkViews(t *testing.T, where string, v reflect.Value, depth int) {
	t.Helper()
	if depth > 8 {
		t.Fatalf("%s: views nested more than 8 deep", where)
	}
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		if sf.IsExported() && sf.Type.Kind() == reflect.Struct {
			checkView(t, where+"."+sf.Name, v.Field(i), depth)
		}
	}
}

// checkView exercises one view value: its string and JSON forms, Len,
// At for every index, and All.
func checkView(t *testing.T, where string, v reflect.Value, depth int) {
	t.Helper()
	typ := v.Type()
	if typ.Implements(stringerType) {
		_ = v.Interface().(interface{ String() string }).String()
	}
	if typ.Implements(appendUTF8T) {
		out := v.Interface().(interface{ AppendUTF8([]byte) []byte }).AppendUTF8([]byte("x"))
		if len(out) == 0 || out[0] != 'x' {
			t.Fatalf("%s: AppendUTF8 does not append", where)
		}
	}
	if typ.Implements(appendJSONT) {
		js := v.Interface().(interface{ AppendJSON([]byte) []byte }).AppendJSON(nil)
		if !json.Valid(js) {
			t.Fatalf("%s: AppendJSON is not valid JSON: %s", where, js)
		}
	}
	lenM := v.MethodByName("Len")
	if !lenM.IsValid() {
		return
	}
	n := int(lenM.Call(nil)[0].Int())
	if n < 0 {
		t.Fatalf("%s: Len() = %d", where, n)
	}
	var at []reflect.Value
	if atM := v.MethodByName("At"); atM.IsValid() {
		for i := range n {
			e := atM.Call([]reflect.Value{reflect.ValueOf(i)})[0]
			at = append(at, e)
			if e.Kind() == reflect.Struct {
				checkViews(t, where+"[i]", e, depth+1)
			}
		}
	}
	allM := v.MethodByName("All")
	if !allM.IsValid() {
		return
	}
	seq := allM.Call(nil)[0]
	yieldT := seq.Type().In(0)
	count := 0
	var bad string
	yield := reflect.MakeFunc(yieldT, func(args []reflect.Value) []reflect.Value {
		i := int(args[0].Int())
		if i != count && bad == "" {
			bad = "All yields index out of order"
		}
		e := args[1]
		if at != nil && i < len(at) && !reflect.DeepEqual(at[i].Interface(), e.Interface()) && !nanEqual(at[i], e) && bad == "" {
			bad = "All and At disagree"
		}
		if e.Kind() == reflect.Struct {
			checkViews(t, where+"[i]", e, depth+1)
		}
		count++
		return []reflect.Value{reflect.ValueOf(true)}
	})
	seq.Call([]reflect.Value{yield})
	if bad != "" {
		t.Fatalf("%s: %s", where, bad)
	}
	if count != n {
		t.Fatalf("%s: All yields %d elements, Len is %d", where, count, n)
	}
}

// nanEqual reports whether a and b are the same float64 bits (DeepEqual
// says NaN differs from itself).
func nanEqual(a, b reflect.Value) bool {
	if a.Kind() == reflect.Float64 && b.Kind() == reflect.Float64 {
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	}
	return false
}
