// Package interp is a reference decoder for event payloads (the CLR's, the
// Windows kernel's) that interprets the lowered schema at run time instead
// of generating code.
//
// Begin with New, given the lowered Model of a schema (schema.Lower, or
// gen.Load, which reads a schema file and applies an overrides file), then
// call Decoder.Decode with the provider name, event ID, version, pointer
// size and payload. It reads any schema the generator accepts, so a program
// can decode events from a YAML schema (or an XML manifest) without
// regenerating:
//
//	m, err := gen.Load("schema/clr.yaml", "schema/overrides.yaml")
//	…
//	d, err := interp.New(m)
//	…
//	v, n, err := d.Decode("Microsoft-Windows-DotNETRuntime", 1, 2, 8, payload)
//	fmt.Println(v.Get("Reason").Text(), string(v.AppendJSON(nil)))
//
// It is also the conformance suite's second opinion: every generated decoder
// must agree with it on the value (AppendJSON gives byte for byte the JSON
// the generated AppendJSON gives), on the bytes used, and on whether a
// payload is an error, and where. It is written for clarity, not speed: one
// walk over the fields in wire order, values kept in a small tree.
//
// Decoding never panics and never allocates more than the payload can back:
// a count read from the payload is checked against the bytes left before
// anything is made for it.
package interp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/schema"
)

// Sentinel errors, wrapped in a *DecodeError. Their texts are those of the
// generated package's sentinels.
var (
	// ErrShortPayload means the payload ends before a field does.
	ErrShortPayload = errors.New("payload too short")
	// ErrUnterminatedString means a NUL-terminated string runs to the end of
	// the payload. errors.Is(err, ErrShortPayload) holds for it.
	ErrUnterminatedString error = &shortError{"string has no terminator"}
	// ErrCountTooLarge means a count or length read from the payload asks
	// for more bytes than are left. errors.Is(err, ErrShortPayload) holds.
	ErrCountTooLarge error = &shortError{"count exceeds payload"}
	// ErrPointerSize means the pointer size was neither 4 nor 8 for an event
	// that has pointer-sized fields.
	ErrPointerSize = errors.New("pointer size must be 4 or 8")
	// ErrUnknownEvent means the schema has no such (provider, id, version).
	ErrUnknownEvent = errors.New("event not in schema")
)

type shortError struct{ msg string }

func (e *shortError) Error() string        { return e.msg }
func (e *shortError) Is(target error) bool { return target == ErrShortPayload }

// DecodeError says which event and field a payload failed on, and at which
// byte offset the field starts. Field is a path such as "Values[3].Name",
// empty for errors about the whole event (the pointer size).
type DecodeError struct {
	Event  string // manifest symbol
	Field  string
	Offset int
	Err    error // one of the sentinels
}

// Error formats e as `interp: GCStart_V2: field "Depth" at byte 4: payload too short`.
func (e *DecodeError) Error() string {
	s := "interp: " + e.Event + ": "
	if e.Field != "" {
		s += "field " + strconv.Quote(e.Field) + " "
	}
	return s + "at byte " + strconv.Itoa(e.Offset) + ": " + e.Err.Error()
}

// Unwrap returns the sentinel.
func (e *DecodeError) Unwrap() error { return e.Err }

// Decoder decodes payloads with a lowered schema. It is safe for concurrent
// use once made.
type Decoder struct {
	providers []*Provider
	byName    map[string]*Provider
	byGUID    map[[16]byte]*Provider
}

// Provider is a provider of the schema as the decoder sees it.
type Provider struct {
	LP     *schema.LProvider
	Short  string // the Go prefix, e.g. "Runtime"
	events map[uint32]*Event
}

// Event is one (provider, id, version) prepared for decoding.
type Event struct {
	LE     *schema.LEvent
	scope  *scope
	hasPtr bool
}

type scope struct {
	fields []*field
	prefix int
	size   schema.Size
}

type field struct {
	lf      *schema.LField
	goName  string
	enum    *enum
	elem    *scope // struct arrays
	elemMin int    // smallest element with 4-byte pointers
}

type enum struct {
	typeName string
	kind     schema.Kind
	bitmap   bool
	entries  []entry // deduplicated by Go name, in schema order
	zero     string  // bitmaps: the name of the value 0
}

type entry struct {
	value uint64
	name  string
}

// New prepares a decoder for m. It fails where the generator would: a name
// that makes no Go identifier, or a struct element that could take no bytes.
func New(m *schema.Model) (*Decoder, error) {
	d := &Decoder{byName: map[string]*Provider{}, byGUID: map[[16]byte]*Provider{}}
	var errs []error
	for _, lp := range m.Providers {
		short, err := gen.ProviderShort(lp.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("provider %s: %v", lp.Name, err))
			continue
		}
		p := &Provider{LP: lp, Short: short, events: map[uint32]*Event{}}
		enums := map[*schema.LMap]*enum{}
		for _, lm := range lp.Maps {
			tn, err := gen.MapTypeName(short, lm.Name)
			if err != nil {
				errs = append(errs, fmt.Errorf("map %s: %v", lm.Name, err))
				continue
			}
			en := &enum{typeName: tn, kind: lm.Kind, bitmap: lm.Map.Kind == schema.BitMap}
			seen := map[string]bool{}
			for _, e := range lm.Entries {
				g, err := gen.GoName(e.Name)
				if err != nil || seen[g] {
					continue
				}
				seen[g] = true
				en.entries = append(en.entries, entry{e.Value, e.Name})
				if e.Value == 0 {
					en.zero = e.Name
				}
			}
			enums[lm] = en
		}
		for _, le := range lp.Events {
			ev := &Event{LE: le, scope: &scope{}}
			if le.Template != nil {
				s, err := newScope(le.Template.Fields, le.Template.PrefixLen, le.Template.PrefixSize, enums)
				if err != nil {
					errs = append(errs, fmt.Errorf("event %s: %v", le.Symbol, err))
					continue
				}
				ev.scope = s
			}
			ev.hasPtr = hasPtr(ev.scope)
			p.events[key(le.Value, le.Version)] = ev
		}
		d.providers = append(d.providers, p)
		d.byName[lp.Name] = p
		d.byGUID[lp.GUIDBytes] = p
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return d, nil
}

func key(id uint16, version uint8) uint32 { return uint32(id)<<8 | uint32(version) }

func newScope(fs []*schema.LField, prefix int, size schema.Size, enums map[*schema.LMap]*enum) (*scope, error) {
	s := &scope{prefix: prefix, size: size}
	for _, lf := range fs {
		g, err := gen.GoName(lf.Name)
		if err != nil {
			return nil, fmt.Errorf("field %s: %v", lf.Name, err)
		}
		f := &field{lf: lf, goName: g}
		if lf.Map != nil {
			f.enum = enums[lf.Map]
		}
		if lf.Kind == schema.KindStruct {
			f.elem, err = newScope(lf.Elem, lf.ElemPrefix, lf.ElemSize, enums)
			if err != nil {
				return nil, fmt.Errorf("struct %s: %v", lf.Name, err)
			}
			f.elemMin = lf.ElemSize.At(4)
			if f.elemMin == 0 {
				return nil, fmt.Errorf("struct %s: an element could take no bytes", lf.Name)
			}
		}
		s.fields = append(s.fields, f)
	}
	return s, nil
}

func hasPtr(s *scope) bool {
	for _, f := range s.fields {
		if f.lf.Kind == schema.KindPointer || f.lf.Kind == schema.KindWBEMSID || (f.elem != nil && hasPtr(f.elem)) {
			return true
		}
	}
	return false
}

// Providers lists the schema's providers.
func (d *Decoder) Providers() []*Provider { return d.providers }

// ProviderByName finds a provider by name.
func (d *Decoder) ProviderByName(name string) (*Provider, bool) {
	p, ok := d.byName[name]
	return p, ok
}

// ProviderByGUID finds a provider by its GUID in wire layout.
func (d *Decoder) ProviderByGUID(g [16]byte) (*Provider, bool) {
	p, ok := d.byGUID[g]
	return p, ok
}

// Event finds (id, version) in p.
func (p *Provider) Event(id uint16, version uint8) (*Event, bool) {
	e, ok := p.events[key(id, version)]
	return e, ok
}

// Decode decodes the payload of event (id, version) of the named provider
// for a pointer size of 4 or 8. It returns the value and the bytes used;
// bytes past the template are not an error. An event the schema lacks is
// ErrUnknownEvent.
func (d *Decoder) Decode(provider string, id uint16, version uint8, ptrSize int, payload []byte) (*Value, int, error) {
	p, ok := d.byName[provider]
	if !ok {
		return nil, 0, fmt.Errorf("interp: provider %q: %w", provider, ErrUnknownEvent)
	}
	return p.Decode(id, version, ptrSize, payload)
}

// DecodeGUID is Decode with the provider named by its GUID (wire layout).
func (d *Decoder) DecodeGUID(guid [16]byte, id uint16, version uint8, ptrSize int, payload []byte) (*Value, int, error) {
	p, ok := d.byGUID[guid]
	if !ok {
		return nil, 0, fmt.Errorf("interp: provider %x: %w", guid, ErrUnknownEvent)
	}
	return p.Decode(id, version, ptrSize, payload)
}

// Decode decodes a payload of event (id, version) of p.
func (p *Provider) Decode(id uint16, version uint8, ptrSize int, payload []byte) (*Value, int, error) {
	ev, ok := p.events[key(id, version)]
	if !ok {
		return nil, 0, fmt.Errorf("interp: %s event %d version %d: %w", p.LP.Name, id, version, ErrUnknownEvent)
	}
	return ev.Decode(ptrSize, payload)
}

// Decode decodes a payload of e.
func (e *Event) Decode(ptrSize int, payload []byte) (*Value, int, error) {
	if e.hasPtr && ptrSize != 4 && ptrSize != 8 {
		return nil, 0, &DecodeError{Event: e.LE.Symbol, Err: ErrPointerSize}
	}
	fields, n, fe := decodeScope(e.scope, payload, ptrSize)
	if fe != nil {
		return nil, 0, &DecodeError{Event: e.LE.Symbol, Field: fe.path, Offset: fe.off, Err: fe.err}
	}
	return &Value{Kind: schema.KindStruct, Event: e.LE, Fields: fields, ptrSize: ptrSize}, n, nil
}

type fieldErr struct {
	path string
	off  int
	err  error
}

// decodeScope reads the fields of a template or struct element from the
// start of b: first the fixed prefix (one length check), then each
// remaining field at a running offset.
func decodeScope(s *scope, b []byte, ptrSize int) ([]Value, int, *fieldErr) {
	out := make([]Value, len(s.fields))
	off := 0
	if s.prefix > 0 {
		ps := 8
		if ptrSize != 8 {
			ps = 4
		}
		if need := s.size.At(ps); len(b) < need {
			// Name the first field the payload cuts, at its start.
			start := 0
			for _, f := range s.fields[:s.prefix] {
				end := f.lf.Offset.Add(f.lf.Size).At(ps)
				if end > len(b) {
					return nil, 0, &fieldErr{f.lf.Name, start, ErrShortPayload}
				}
				start = end
			}
			return nil, 0, &fieldErr{"", len(b), ErrShortPayload}
		}
		for i, f := range s.fields[:s.prefix] {
			at := f.lf.Offset.At(ps)
			out[i] = readFixed(f, b[at:at+f.lf.Size.At(ps)], ps)
		}
		off = s.size.At(ps)
	}
	for i := s.prefix; i < len(s.fields); i++ {
		f := s.fields[i]
		lf := f.lf
		name := lf.Name
		switch {
		case lf.Count.Rest:
			// As many whole elements as the rest of the payload holds.
			unit := elemSize(f, ptrSize)
			n := (len(b) - off) / unit * unit
			out[i] = readFixed(f, b[off:off+n], ptrSize)
			off += n
		case lf.Kind == schema.KindWBEMSID:
			n, ok := wbemSIDLen(b, off, ptrSize)
			if !ok {
				return nil, 0, &fieldErr{name, off, ErrShortPayload}
			}
			out[i] = Value{f: f, Field: lf, Kind: lf.Kind, Raw: b[off : off+n : off+n], ptrSize: ptrSize}
			off += n
		case f.elem != nil && !lf.ElemFixed:
			cnt := countOf(lf.Count, out)
			if _, ok := arrayLen(b, off, cnt, f.elemMin); !ok {
				return nil, 0, &fieldErr{name, off, ErrCountTooLarge}
			}
			v := Value{f: f, Field: lf, Kind: schema.KindStruct, ptrSize: ptrSize}
			v.Elems = make([]Value, 0, int(cnt))
			for j := uint64(0); j < cnt; j++ {
				fs, n, fe := decodeScope(f.elem, b[off:], ptrSize)
				if fe != nil {
					return nil, 0, &fieldErr{elemPath(name, j, fe.path), off + fe.off, fe.err}
				}
				v.Elems = append(v.Elems, Value{Kind: schema.KindStruct, Fields: fs, ptrSize: ptrSize})
				off += n
			}
			out[i] = v
		case lf.IsArray() || lf.Length.Set:
			var cnt uint64
			var unit int
			if lf.IsArray() {
				cnt = countOf(lf.Count, out)
				unit = elemSize(f, ptrSize)
			} else {
				cnt = countOf(lf.Length, out)
				unit = 1
				if lf.Kind == schema.KindUTF16 {
					unit = 2
				}
			}
			n, ok := arrayLen(b, off, cnt, unit)
			if !ok {
				return nil, 0, &fieldErr{name, off, ErrCountTooLarge}
			}
			out[i] = readFixed(f, b[off:off+n], ptrSize)
			off += n
		case lf.Kind == schema.KindUTF16:
			end := -1
			for j := off; j+2 <= len(b); j += 2 {
				if b[j] == 0 && b[j+1] == 0 {
					end = j
					break
				}
			}
			if end < 0 {
				return nil, 0, &fieldErr{name, off, ErrUnterminatedString}
			}
			out[i] = Value{f: f, Field: lf, Kind: lf.Kind, Raw: b[off:end:end]}
			off = end + 2
		case lf.Kind == schema.KindAnsi:
			end := -1
			for j := off; j < len(b); j++ {
				if b[j] == 0 {
					end = j
					break
				}
			}
			if end < 0 {
				return nil, 0, &fieldErr{name, off, ErrUnterminatedString}
			}
			out[i] = Value{f: f, Field: lf, Kind: lf.Kind, Raw: b[off:end:end]}
			off = end + 1
		default:
			sz, _ := lf.Kind.FixedSize()
			n := sz.At(ptrSize)
			if len(b)-off < n {
				return nil, 0, &fieldErr{name, off, ErrShortPayload}
			}
			out[i] = readFixed(f, b[off:off+n], ptrSize)
			off += n
		}
	}
	return out, off, nil
}

// wbemSIDLen measures a mof:Sid at off: 4 zero bytes for none, else a
// TOKEN_USER of two pointers, then a SID of 8 bytes and 4 a
// sub-authority (their count in its second byte).
func wbemSIDLen(b []byte, off, ptrSize int) (int, bool) {
	if len(b)-off < 4 {
		return 0, false
	}
	if binary.LittleEndian.Uint32(b[off:]) == 0 {
		return 4, true
	}
	n := 2*ptrSize + 8
	if len(b)-off < n {
		return 0, false
	}
	n += 4 * int(b[off+2*ptrSize+1])
	return n, len(b)-off >= n
}

// elemSize is the wire size of one element of an array field.
func elemSize(f *field, ptrSize int) int {
	if f.elem != nil {
		return f.lf.ElemSize.At(ptrSize)
	}
	sz, _ := f.lf.Kind.FixedSize()
	return sz.At(ptrSize)
}

// countOf is the value of a count= or length=: a literal, or the earlier
// field's value converted to uint64 as Go converts it.
func countOf(r schema.Ref, fields []Value) uint64 {
	if r.Field == nil {
		return uint64(r.Lit)
	}
	return fields[r.Field.Index].Uint
}

// arrayLen is count*size when it fits in b after off.
func arrayLen(b []byte, off int, count uint64, size int) (int, bool) {
	if off < 0 || off > len(b) || size <= 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(count, uint64(size))
	if hi != 0 || lo > uint64(len(b)-off) {
		return 0, false
	}
	return int(lo), true
}

func elemPath(field string, i uint64, sub string) string {
	p := field + "[" + strconv.FormatUint(i, 10) + "]"
	if sub != "" {
		p += "." + sub
	}
	return p
}

// readFixed makes the value of field f from exactly its bytes w.
func readFixed(f *field, w []byte, ptrSize int) Value {
	lf := f.lf
	v := Value{f: f, Field: lf, Kind: lf.Kind, ptrSize: ptrSize}
	switch {
	case f.elem != nil:
		n := lf.ElemSize.At(ptrSize)
		cnt := len(w) / n
		v.Elems = make([]Value, 0, cnt)
		for i := 0; i < cnt; i++ {
			fs, _, _ := decodeScope(f.elem, w[i*n:(i+1)*n], ptrSize)
			v.Elems = append(v.Elems, Value{Kind: schema.KindStruct, Fields: fs, ptrSize: ptrSize})
		}
		return v
	case lf.IsArray():
		n := elemSize(f, ptrSize)
		v.Raw = w[: len(w)/n*n : len(w)/n*n]
		return v
	case lf.Kind == schema.KindUTF16:
		v.Raw = w[: len(w)&^1 : len(w)&^1]
		return v
	case lf.Kind == schema.KindAnsi || lf.Kind == schema.KindBinary || lf.Kind == schema.KindIPv4 || lf.Kind == schema.KindIPv6:
		v.Raw = w[:len(w):len(w)]
		return v
	}
	setScalar(&v, lf.Kind, w, ptrSize)
	if f.enum != nil {
		v.Uint = convert(v.Uint, lf.Kind, f.enum.kind)
	}
	return v
}

// setScalar reads one scalar of kind k from w.
func setScalar(v *Value, k schema.Kind, w []byte, ptrSize int) {
	le := binary.LittleEndian
	switch k {
	case schema.KindUint8:
		v.Uint = uint64(w[0])
	case schema.KindUint16:
		v.Uint = uint64(le.Uint16(w))
	case schema.KindUint32:
		v.Uint = uint64(le.Uint32(w))
	case schema.KindUint64:
		v.Uint = le.Uint64(w)
	case schema.KindInt8:
		v.Int = int64(int8(w[0]))
	case schema.KindInt16:
		v.Int = int64(int16(le.Uint16(w)))
	case schema.KindInt32:
		v.Int = int64(int32(le.Uint32(w)))
	case schema.KindInt64:
		v.Int = int64(le.Uint64(w))
	case schema.KindFloat32:
		v.Float = float64(math.Float32frombits(le.Uint32(w)))
	case schema.KindFloat64:
		v.Float = math.Float64frombits(le.Uint64(w))
	case schema.KindBool:
		if le.Uint32(w) != 0 {
			v.Uint = 1
		}
	case schema.KindGUID:
		copy(v.GUID[:], w)
	case schema.KindPointer:
		if ptrSize == 4 {
			v.Uint = uint64(le.Uint32(w))
		} else {
			v.Uint = le.Uint64(w)
		}
	case schema.KindPort:
		v.Uint = uint64(binary.BigEndian.Uint16(w))
	case schema.KindFileTime:
		v.Int = int64(le.Uint64(w))
	}
	switch k {
	case schema.KindInt8, schema.KindInt16, schema.KindInt32, schema.KindInt64, schema.KindFileTime:
		v.Uint = uint64(v.Int)
	case schema.KindUint8, schema.KindUint16, schema.KindUint32, schema.KindUint64, schema.KindPort:
		v.Int = int64(v.Uint)
	}
}

// convert is Go's conversion of an integer of kind from (held in u as
// uint64(x)) to kind to, returned as uint64 of the result.
func convert(u uint64, from, to schema.Kind) uint64 {
	sz, _ := to.FixedSize()
	width := uint(sz.Bytes * 8)
	if width == 0 || width >= 64 {
		return u
	}
	u &= 1<<width - 1
	switch to {
	case schema.KindInt8, schema.KindInt16, schema.KindInt32:
		if u&(1<<(width-1)) != 0 {
			u |= ^uint64(0) << width
		}
	}
	return u
}
