package dynamic

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/clrgo/clrevents/clrimpl"
)

// TraceLogging events describe themselves: each carries its metadata in
// an extended data item, and the provider's name in another. .NET
// EventSources write this form for EventSource.Write and for sources made
// with EtwSelfDescribingEventFormat; many Windows components use it too.
//
// Event metadata: uint16 size; tag bytes (each with 0x80 when another
// follows); the event name, UTF-8, NUL-terminated; then the fields. A
// field: its name (UTF-8, NUL-terminated); an in-type byte (0x80: an
// out-type byte follows; 0x60 bits: 0x20 a constant count, 0x40 a count
// in the payload, 0x60 a custom type; low 5 bits: the type); the out-type
// byte (0x80: tag bytes follow, chained as above); a uint16 count for a
// constant count; a uint16 size and that many bytes of schema for a
// custom type. A struct (type 24) holds the next N fields, N in its
// out-type slot. Provider traits: uint16 size; the provider name, UTF-8,
// NUL-terminated; then traits.

// TraceLogging in-types that differ from TDH's (their numbers coincide up
// to 23; binary is counted, and 24 is a struct).
const (
	tlBinary        = 14 // uint16 byte count, then bytes
	tlPointer       = 16 // not used by TraceLogging
	tlStruct        = 24
	tlCountedBinary = 25
)

// TraceLogging in-type flags.
const (
	tlChain      = 0x80
	tlFlagMask   = 0x60
	tlConstCount = 0x20
	tlVarCount   = 0x40
	tlCustom     = 0x60
	tlTypeMask   = 0x1F
)

// tlOutTypes maps TraceLogging out-types (TlgOut*) to the TDH ones the
// interpreter acts on; the rest format by in-type.
var tlOutTypes = map[byte]outType{
	2: outString, 3: outBoolean, 4: outHexInt64, 7: outPort, 8: outIPv4, 9: outIPv6, 10: outSocketAddress,
	13: outWin32Error, 14: outNTStatus, 15: outHResult, 37: outHexInt64,
}

// ParseTraceLogging describes a TraceLogging event from its metadata (the
// event's EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL extended data item) and,
// if the event carries one, its provider traits item (which names the
// provider); h is the event's header, which gives the description its
// identity. Malformed metadata is an error naming the byte of the
// metadata.
func ParseTraceLogging(h Header, meta, traits []byte) (*Description, error) {
	d, err := parseTLMeta(meta)
	if err != nil {
		return nil, fmt.Errorf("TraceLogging metadata: %w", err)
	}
	d.ProviderGUID, d.ID, d.Version, d.Opcode, d.Task, d.Level, d.Keywords =
		h.ProviderGUID, h.ID, h.Version, h.Opcode, h.Task, h.Level, h.Keywords
	if traits != nil {
		d.Provider, _ = ProviderTraitsName(traits)
	}
	return d, nil
}

// Header is the identity an ETW event header gives an event.
type Header struct {
	ProviderGUID clrimpl.GUID
	ID           uint16
	Version      uint8
	Opcode       uint8
	Task         uint16
	Level        uint8
	Keywords     uint64
}

// ProviderTraitsName reads the provider name of a provider traits
// extended data item (EVENT_HEADER_EXT_TYPE_PROV_TRAITS).
func ProviderTraitsName(b []byte) (string, bool) {
	if len(b) < 3 {
		return "", false
	}
	b = b[2:]
	n := bytes.IndexByte(b, 0)
	if n <= 0 {
		return "", false
	}
	return string(b[:n]), true
}

type tlParser struct {
	b []byte
	i int
	n int // fields so far
}

var errTLShort = errors.New("runs past the end")

func (p *tlParser) fail(what string, err error) error {
	return fmt.Errorf("metadata byte %d: %s: %w", p.i, what, err)
}

func (p *tlParser) byte() (byte, error) {
	if p.i >= len(p.b) {
		return 0, errTLShort
	}
	c := p.b[p.i]
	p.i++
	return c, nil
}

func (p *tlParser) u16() (int, error) {
	if len(p.b)-p.i < 2 {
		return 0, errTLShort
	}
	v := int(le.Uint16(p.b[p.i:]))
	p.i += 2
	return v, nil
}

func (p *tlParser) cstring() (string, error) {
	n := bytes.IndexByte(p.b[p.i:], 0)
	if n < 0 {
		return "", errors.New("name has no terminator")
	}
	s := string(p.b[p.i : p.i+n])
	p.i += n + 1
	return s, nil
}

// tags skips chained tag bytes.
func (p *tlParser) tags() error {
	for {
		c, err := p.byte()
		if err != nil || c&tlChain == 0 {
			return err
		}
	}
}

func parseTLMeta(meta []byte) (*Description, error) {
	p := &tlParser{b: meta}
	size, err := p.u16()
	if err != nil {
		return nil, p.fail("size", err)
	}
	if size < 4 || size > len(meta) {
		return nil, fmt.Errorf("metadata size %d outside 4..%d", size, len(meta))
	}
	p.b = meta[:size]
	if err := p.tags(); err != nil {
		return nil, p.fail("event tag", err)
	}
	d := &Description{}
	if d.Name, err = p.cstring(); err != nil {
		return nil, p.fail("event name", err)
	}
	if d.Fields, err = p.fields(-1, 0); err != nil {
		return nil, err
	}
	return d, nil
}

// fields reads n fields, or to the end of the metadata when n < 0.
func (p *tlParser) fields(n, depth int) ([]Field, error) {
	if depth > maxStructDepth {
		return nil, p.fail("struct", errors.New("nested too deep"))
	}
	var fs []Field
	for k := 0; n < 0 && p.i < len(p.b) || k < n; k++ {
		if p.n++; p.n > maxDescribedFields {
			return nil, p.fail("fields", fmt.Errorf("more than %d", maxDescribedFields))
		}
		var f Field
		var err error
		if f.Name, err = p.cstring(); err != nil {
			return nil, p.fail("field name", err)
		}
		in, err := p.byte()
		if err != nil {
			return nil, p.fail("field "+f.Name+" in-type", err)
		}
		var out byte
		if in&tlChain != 0 {
			if out, err = p.byte(); err != nil {
				return nil, p.fail("field "+f.Name+" out-type", err)
			}
			if out&tlChain != 0 {
				if err := p.tags(); err != nil {
					return nil, p.fail("field "+f.Name+" tag", err)
				}
			}
			out &^= tlChain
		}
		typ := in & tlTypeMask
		count, array, prefix := 1, false, false
		switch in & tlFlagMask {
		case tlConstCount:
			if count, err = p.u16(); err != nil {
				return nil, p.fail("field "+f.Name+" count", err)
			}
			array = true
		case tlVarCount:
			array, prefix = true, true
		case tlCustom:
			sz, err := p.u16()
			if err == nil && sz > len(p.b)-p.i {
				err = errTLShort
			}
			if err != nil {
				return nil, p.fail("field "+f.Name+" custom schema", err)
			}
			p.i += sz
			typ = tlCountedBinary // its data: a uint16 size, then bytes
		}
		switch typ {
		case tlStruct:
			if out == 0 {
				return nil, p.fail("struct "+f.Name, errors.New("has no fields"))
			}
			f.Kind = Struct
			if f.Fields, err = p.fields(int(out), depth+1); err != nil {
				return nil, err
			}
		case tlBinary, tlCountedBinary:
			tdhField(&f, inManifestCountedBinary, tlOutTypes[out])
		case 0, tlPointer:
			return nil, p.fail("field "+f.Name, fmt.Errorf("in-type %d is not a TraceLogging type", typ))
		default:
			tdhField(&f, inType(typ), tlOutTypes[out]) // 1-23 are TDH's numbers
		}
		if array {
			f = arrayOf(f, count, 0, prefix)
		}
		fs = append(fs, f)
	}
	return fs, nil
}
