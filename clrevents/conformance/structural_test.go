package conformance

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/schema"
	"github.com/clrgo/clrevents/schema/interp"
)

// TestStructural decodes every CLR event of every shared trace (or, on a
// fresh clone, every payload fixture) with the generated decoders and
// checks: no error; exactly the payload consumed (trailing bytes only where
// known_failures.txt explains them); every UTF-16 string well-formed;
// every count= array as long as its count field says, in the generated
// JSON; and the reference decoder agreeing on all of it.
func TestStructural(t *testing.T) {
	ref := reference(t)
	if _, err := statShared(); err != nil {
		t.Logf("shared traces absent (%v): checking the payload fixtures only", err)
		dec := clrevents.NewDecoder()
		for _, fx := range loadFixtures(t) {
			structural(t, dec, ref, fx.Trace, fx.Key, fx.Ptr, fx.Payload, nil)
		}
		return
	}
	for _, tf := range withExtra(t, sharedTraceFiles(t)) {
		t.Run(tf.Name, func(t *testing.T) {
			dec := clrevents.NewDecoder()
			seen := map[typeKey]bool{}
			trailing := map[typeKey]bool{}
			n := 0
			_, err := eachCLR(tf, func(r *rec) bool {
				k := typeKey{r.Provider, r.ID, r.Version}
				seen[k] = true
				n++
				structural(t, dec, ref, tf.Name, k, r.Ptr, r.Payload, trailing)
				return !t.Failed() || n < 1000
			})
			if err != nil {
				t.Fatal(err)
			}
			known.mu.Lock()
			s := known.sum(tf.Name)
			s.Events, s.Types = n, len(seen)
			known.mu.Unlock()
			if !t.Failed() {
				known.cover("structural", tf.Name)
			}
			t.Logf("%d CLR events of %d types", n, len(seen))
		})
	}
}

// structural checks one payload; trailing, when not nil, reports each
// type's trailing bytes once.
func structural(t *testing.T, dec *clrevents.Decoder, ref *interp.Decoder, trace string, k typeKey, ptr int, payload []byte, trailing map[typeKey]bool) {
	t.Helper()
	ev, n, err := dec.Decode(k.Provider, k.ID, k.Version, ptr, payload)
	if err != nil {
		t.Errorf("%s %s: %v (payload %x)", trace, k, err, payload)
		return
	}
	if d := agreement(dec, ref, k.Provider, k.ID, k.Version, ptr, payload); d != "" {
		t.Errorf("%s %s: reference decoder disagrees: %s", trace, k, d)
		return
	}
	if n != len(payload) && (trailing == nil || !trailing[k]) {
		if trailing != nil {
			trailing[k] = true
			known.mismatch(t, trace, k.String(), "(trailing)", fmt.Sprintf("%d of %d bytes used, trailing %x", n, len(payload), payload[n:]))
		}
	}
	v, _, _ := ref.Decode(k.Provider.String(), k.ID, k.Version, ptr, payload)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(ev.AppendJSON(nil), &obj); err != nil {
		t.Errorf("%s %s: generated JSON does not parse: %v", trace, k, err)
		return
	}
	checkTree(t, trace, k, v, obj)
}

// checkTree checks strings and counts in one event or struct element.
func checkTree(t *testing.T, trace string, k typeKey, v *interp.Value, obj map[string]json.RawMessage) {
	t.Helper()
	for i := range v.Fields {
		f := &v.Fields[i]
		switch {
		case f.Kind == schema.KindUTF16:
			if !interp.ValidUTF16(f.Raw) {
				t.Errorf("%s %s: field %s is not well-formed UTF-16: %x", trace, k, f.Field.Name, f.Raw)
			}
		case f.IsArray():
			var elems []json.RawMessage
			if err := json.Unmarshal(obj[f.GoName()], &elems); err != nil {
				t.Errorf("%s %s: field %s: generated JSON %s is not an array", trace, k, f.Field.Name, obj[f.GoName()])
				continue
			}
			want := -1
			if c := f.Field.Count; c.Field != nil {
				want = int(v.Fields[c.Field.Index].Uint)
			} else {
				want = c.Lit
			}
			if f.Kind != schema.KindStruct && f.Field.Count.Set == false {
				want = len(elems)
			}
			if len(elems) != want || f.Len() != want {
				t.Errorf("%s %s: field %s: count says %d, generated JSON has %d elements, reference %d", trace, k, f.Field.Name, want, len(elems), f.Len())
			}
			if f.Kind == schema.KindStruct {
				for j := range f.Elems {
					var sub map[string]json.RawMessage
					if j < len(elems) && json.Unmarshal(elems[j], &sub) == nil {
						checkTree(t, trace, k, &f.Elems[j], sub)
					}
				}
			}
		}
	}
}
