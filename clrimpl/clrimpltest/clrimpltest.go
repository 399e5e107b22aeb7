// Package clrimpltest checks a generated event package against sample
// values of its event types: the tests and benchmark that clrgen generate
// -tests writes call it, so a package generated from any manifest, or any
// subset of one, comes with tests of its own decoders.
//
// Samples round-trips every sample through its wire form at both pointer
// sizes, compares the type's descriptor with the value's own output, cuts
// every payload at every byte, and proves that decoding and writing
// allocate nothing. BenchmarkDecode measures decoding the samples.
//
// It is standard library only, like clrimpl, and is meant for tests and
// benchmarks: it reports through testing.TB.
package clrimpltest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
)

// ptrSizes are the pointer sizes every payload is checked at.
var ptrSizes = []int{4, 8}

// Samples checks the samples, one value of each event type of table in
// the table's order (a generated package's sampleEvents and Table), with
// every field set and every count and length agreeing with what it sizes.
// restLast names (by manifest symbol) the event types whose last field
// takes the rest of the payload: a payload of theirs cut among that
// field's elements decodes, with fewer elements, where any other cut
// payload is an error.
//
// For each sample and each pointer size (4 and 8) it checks that:
//   - the payload Encode writes decodes into a new value of the type, all
//     of it, to a value that encodes to the same bytes and writes the same
//     JSON, text and columns, and, for a pointer size of 8 (the size the
//     samples' arrays are made for), equals the sample (reflect.DeepEqual);
//     the JSON is valid and AppendColumns appends one value a column;
//   - three bytes more (a newer runtime's fields) decode the same and are
//     left over (of a restLast type, those that make whole elements of its
//     last field are taken);
//   - the type's Descriptor is the value's, names the type as the table
//     does, and its Fields write the payload as the value does;
//   - every cut of the payload is a *clrimpl.DecodeError naming the event,
//     a field and an offset inside the cut, that errors.Is
//     clrimpl.ErrShortPayload, and the descriptor's Fields fail on it
//     with the same error, having written nothing;
//   - a pointer size of 6 decodes or fails with clrimpl.ErrPointerSize
//     (the descriptor's Fields alike), and fails whenever the payload
//     depends on the pointer size;
//   - the table finds the type by provider, GUID, ID and version;
//   - decoding and writing JSON, text and columns, by the value or by the
//     descriptor's Fields, allocate nothing.
func Samples[E clrimpl.Event](t testing.TB, table *clrimpl.Table, samples []E, restLast ...string) {
	t.Helper()
	if len(samples) == 0 || len(samples) != table.Len() {
		t.Fatalf("%d samples for the %d event types of %v", len(samples), table.Len(), table)
	}
	rest := map[string]bool{}
	for _, n := range restLast {
		rest[n] = true
	}
	var c checker
	for i, ev := range samples {
		typ := table.Type(i)
		desc := typ.Descriptor()
		if ev.Descriptor() != desc {
			t.Errorf("sample %d is %s; the table's type %d is %s", i, name(ev.Descriptor()), i, name(desc))
			continue
		}
		if got := typ.New(); got.Descriptor() != desc {
			t.Errorf("%s: New makes a %T, of %s", name(desc), got, name(got.Descriptor()))
			continue
		}
		if found, ok := table.Lookup(desc.Provider, desc.ProviderGUID, desc.ID, desc.Version); !ok || found.Descriptor() != desc {
			t.Errorf("%s: the table's Lookup(%q, %v, %d, %d) = %v, %v", name(desc), desc.Provider, desc.ProviderGUID, desc.ID, desc.Version, found, ok)
		}
		for _, ptr := range ptrSizes {
			c.roundTrip(t, typ, ev, ptr, rest[desc.Name])
			c.cuts(t, typ, ev.Encode(nil, ptr), ptr, rest[desc.Name])
		}
		c.pointerSize(t, typ, ev)
		c.allocs(t, typ, ev)
	}
}

// checker holds the buffers the checks reuse.
type checker struct {
	a, b columns
	buf  []byte
}

func name(d *clrimpl.Descriptor) string {
	if d == nil {
		return "<nil descriptor>"
	}
	return d.Provider + "/" + d.Name
}

func (c *checker) roundTrip(t testing.TB, typ clrimpl.EventType, ev clrimpl.Event, ptr int, restLast bool) {
	t.Helper()
	desc := typ.Descriptor()
	payload := ev.Encode(nil, ptr)
	got := typ.New()
	n, err := got.Decode(payload, ptr)
	if err != nil || n != len(payload) {
		t.Errorf("%s ptr %d: decoded %d of %d bytes: %v", name(desc), ptr, n, len(payload), err)
		return
	}
	// The samples' arrays are views of 8-byte pointers: at that size the
	// decoded value is the sample itself, at 4 it differs in the views'
	// wire form (the checks below compare what it writes).
	if ptr == 8 && !reflect.DeepEqual(got, ev) {
		t.Errorf("%s ptr %d: decoded\n%+v\nfrom the payload of\n%+v", name(desc), ptr, got, ev)
	}
	if again := got.Encode(nil, ptr); !bytes.Equal(again, payload) {
		t.Errorf("%s ptr %d: the decoded value encodes to\n%x\nnot\n%x", name(desc), ptr, again, payload)
	}
	wantJSON := ev.AppendJSON(nil)
	if !json.Valid(wantJSON) {
		t.Errorf("%s: invalid JSON %s", name(desc), wantJSON)
	}
	if gotJSON := got.AppendJSON(nil); !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("%s ptr %d: the decoded value's JSON is\n%s\nnot\n%s", name(desc), ptr, gotJSON, wantJSON)
	}
	wantText := ev.AppendText(nil)
	if gotText := got.AppendText(nil); !bytes.Equal(gotText, wantText) {
		t.Errorf("%s ptr %d: the decoded value's text is %s, not %s", name(desc), ptr, gotText, wantText)
	}
	c.a.reset()
	ev.AppendColumns(&c.a)
	if c.a.calls != len(desc.Columns) {
		t.Errorf("%s: AppendColumns appended %d values for %d columns", name(desc), c.a.calls, len(desc.Columns))
	}
	c.b.reset()
	got.AppendColumns(&c.b)
	if !bytes.Equal(c.a.row, c.b.row) {
		t.Errorf("%s ptr %d: the decoded value's columns are %s, not %s", name(desc), ptr, c.b.row, c.a.row)
	}

	// A last field that takes the rest takes those of the three bytes
	// that make whole elements (all three, of bytes).
	long := append(payload[:len(payload):len(payload)], 1, 2, 3)
	if n, err := typ.New().Decode(long, ptr); err != nil || n != len(payload) && !(restLast && n > len(payload) && n <= len(long)) {
		t.Errorf("%s ptr %d with 3 bytes more: decoded %d bytes, %v; want %d", name(desc), ptr, n, err, len(payload))
	}

	// The descriptor writes the payload as the value does.
	if out, err := desc.Fields.AppendJSON(nil, payload, ptr); err != nil || !bytes.Equal(out, wantJSON) {
		t.Errorf("%s ptr %d: Descriptor().Fields.AppendJSON = %s, %v; want %s", name(desc), ptr, out, err, wantJSON)
	}
	if out, err := desc.Fields.AppendText(nil, payload, ptr); err != nil || !bytes.Equal(out, wantText) {
		t.Errorf("%s ptr %d: Descriptor().Fields.AppendText = %s, %v; want %s", name(desc), ptr, out, err, wantText)
	}
	c.b.reset()
	if err := desc.Fields.AppendColumns(&c.b, payload, ptr); err != nil || !bytes.Equal(c.b.row, c.a.row) {
		t.Errorf("%s ptr %d: Descriptor().Fields.AppendColumns = %s, %v; want %s", name(desc), ptr, c.b.row, err, c.a.row)
	}
}

// cuts decodes payload cut at every byte.
func (c *checker) cuts(t testing.TB, typ clrimpl.EventType, payload []byte, ptr int, restLast bool) {
	t.Helper()
	desc := typ.Descriptor()
	got := typ.New()
	last := 0
	for cut := 0; cut < len(payload); cut++ {
		short := payload[:cut:cut]
		n, err := got.Decode(short, ptr)
		if err == nil && restLast {
			// Cut among the elements of the field that takes the rest:
			// the whole elements before the cut decode, and are the
			// bytes they came from.
			if n > cut || n < last || !bytes.Equal(got.Encode(c.buf[:0], ptr), short[:n]) {
				t.Errorf("%s ptr %d cut at %d of %d: decoded %d bytes (%d at the cut before), to a value that does not encode to them", name(desc), ptr, cut, len(payload), n, last)
				return
			}
			last = n
			continue
		}
		var de *clrimpl.DecodeError
		if !errors.As(err, &de) || !errors.Is(err, clrimpl.ErrShortPayload) {
			t.Errorf("%s ptr %d cut at %d of %d: %v; want a *clrimpl.DecodeError that is ErrShortPayload", name(desc), ptr, cut, len(payload), err)
			return
		}
		if de.Event != desc.Name || de.Field == "" || de.Offset > cut {
			t.Errorf("%s ptr %d cut at %d of %d: %v does not name the event, a field and an offset inside the payload", name(desc), ptr, cut, len(payload), err)
			return
		}
		if out, ferr := desc.Fields.AppendJSON(append(c.buf[:0], 'x'), short, ptr); ferr == nil || ferr.Error() != err.Error() || string(out) != "x" {
			t.Errorf("%s ptr %d cut at %d of %d: Descriptor().Fields.AppendJSON = %q, %v; the decoder fails with %v", name(desc), ptr, cut, len(payload), out, ferr, err)
			return
		}
		if _, ferr := desc.Fields.AppendText(c.buf[:0], short, ptr); ferr == nil || ferr.Error() != err.Error() {
			t.Errorf("%s ptr %d cut at %d of %d: Descriptor().Fields.AppendText fails with %v, the decoder with %v", name(desc), ptr, cut, len(payload), ferr, err)
			return
		}
		c.b.reset()
		if ferr := desc.Fields.AppendColumns(&c.b, short, ptr); ferr == nil || ferr.Error() != err.Error() || c.b.calls != 0 {
			t.Errorf("%s ptr %d cut at %d of %d: Descriptor().Fields.AppendColumns fails with %v after %d values; the decoder with %v", name(desc), ptr, cut, len(payload), ferr, c.b.calls, err)
			return
		}
	}
}

// pointerSize decodes with a pointer size of 6.
func (c *checker) pointerSize(t testing.TB, typ clrimpl.EventType, ev clrimpl.Event) {
	t.Helper()
	p8 := ev.Encode(nil, 8)
	_, err := typ.New().Decode(p8, 6)
	if err != nil && !errors.Is(err, clrimpl.ErrPointerSize) {
		t.Errorf("%s ptr 6: %v; want nil or ErrPointerSize", name(typ.Descriptor()), err)
	}
	if err == nil && !bytes.Equal(p8, ev.Encode(nil, 4)) {
		t.Errorf("%s: its payload depends on the pointer size, yet it decodes with a pointer size of 6", name(typ.Descriptor()))
	}
	if _, ferr := typ.Descriptor().Fields.AppendJSON(nil, p8, 6); fmt.Sprint(ferr) != fmt.Sprint(err) {
		t.Errorf("%s: Descriptor().Fields.AppendJSON with a pointer size of 6 gives %v, the decoder %v", name(typ.Descriptor()), ferr, err)
	}
}

// allocs checks that decoding and writing allocate nothing.
func (c *checker) allocs(t testing.TB, typ clrimpl.EventType, ev clrimpl.Event) {
	t.Helper()
	desc := typ.Descriptor()
	dst := typ.New()
	c.buf = ev.AppendJSON(c.buf[:0])
	c.buf = ev.AppendText(c.buf)
	var d discard
	type writer struct {
		what string
		f    func()
	}
	for _, w := range []writer{
		{"AppendJSON", func() { ev.AppendJSON(c.buf[:0]) }},
		{"AppendText", func() { ev.AppendText(c.buf[:0]) }},
		{"AppendColumns", func() { ev.AppendColumns(&d) }},
	} {
		if n := testing.AllocsPerRun(10, w.f); n != 0 {
			t.Errorf("%s: %s allocates %v times", name(desc), w.what, n)
		}
	}
	for _, ptr := range ptrSizes {
		payload := ev.Encode(nil, ptr)
		for _, w := range []writer{
			{"Decode", func() { dst.Decode(payload, ptr) }},
			{"Descriptor().Fields.AppendJSON", func() { desc.Fields.AppendJSON(c.buf[:0], payload, ptr) }},
			{"Descriptor().Fields.AppendText", func() { desc.Fields.AppendText(c.buf[:0], payload, ptr) }},
			{"Descriptor().Fields.AppendColumns", func() { desc.Fields.AppendColumns(&d, payload, ptr) }},
		} {
			if n := testing.AllocsPerRun(10, w.f); n != 0 {
				t.Errorf("%s ptr %d: %s allocates %v times", name(desc), ptr, w.what, n)
			}
		}
	}
}

// BenchmarkDecode decodes the payload of every sample (for a pointer size
// of 8) once an operation, each into a value of its type (from table) kept
// from one operation to the next, as a reader does.
func BenchmarkDecode[E clrimpl.Event](b *testing.B, table *clrimpl.Table, samples []E) {
	if len(samples) != table.Len() {
		b.Fatalf("%d samples for the %d event types of %v", len(samples), table.Len(), table)
	}
	type job struct {
		dst     clrimpl.Event
		payload []byte
	}
	jobs := make([]job, len(samples))
	size := 0
	for i, ev := range samples {
		jobs[i] = job{table.Type(i).New(), ev.Encode(nil, 8)}
		size += len(jobs[i].payload)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, j := range jobs {
			if _, err := j.dst.Decode(j.payload, 8); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// columns is a ColumnAppender that writes each value it is given as text,
// so that two rows can be compared.
type columns struct {
	row     []byte
	scratch []byte
	calls   int
}

func (c *columns) reset() { c.row, c.calls = c.row[:0], 0 }

func (c *columns) add(kind byte, v string) {
	c.calls++
	c.row = append(c.row, kind, '=')
	c.row = append(c.row, v...)
	c.row = append(c.row, ' ')
}

func (c *columns) Bool(v bool)         { c.add('b', strconv.FormatBool(v)) }
func (c *columns) Int(v int64)         { c.add('i', strconv.FormatInt(v, 10)) }
func (c *columns) Uint(v uint64)       { c.add('u', strconv.FormatUint(v, 10)) }
func (c *columns) Float(v float64)     { c.add('f', strconv.FormatUint(math.Float64bits(v), 16)) }
func (c *columns) GUID(v clrimpl.GUID) { c.add('g', v.String()) }
func (c *columns) Bytes(v []byte) {
	c.add('s', strconv.Quote(string(v)))
	keepScratch(&c.scratch, v)
}
func (c *columns) Scratch() []byte { return c.scratch[:0] }

// discard is a ColumnAppender that keeps nothing, but for a scratch
// buffer as big as the biggest value it was given.
type discard struct{ scratch []byte }

func (*discard) Bool(bool)         {}
func (*discard) Int(int64)         {}
func (*discard) Uint(uint64)       {}
func (*discard) Float(float64)     {}
func (*discard) GUID(clrimpl.GUID) {}
func (d *discard) Bytes(v []byte)  { keepScratch(&d.scratch, v) }
func (d *discard) Scratch() []byte { return d.scratch[:0] }

// keepScratch grows the scratch buffer to hold v, which its caller may
// have made by growing it: an appender that copies what Bytes is given
// into a buffer of its own hands that out next time, so a caller's
// appends stop allocating once it is as big as the biggest value.
func keepScratch(scratch *[]byte, v []byte) {
	if len(v) > cap(*scratch) {
		*scratch = make([]byte, 0, len(v))
	}
}
