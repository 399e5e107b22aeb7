package nettrace

import (
	"encoding/binary"
	"testing"
)

// TestTagsAfterBadV2Params: a V2Params tag that does not parse (a type
// code no format has, as a newer runtime might write) leaves the event's
// fields undescribed, and the tags after it are still read: the opcode's
// here. (It stopped the tags, as TraceEvent does not: it reads on.)
func TestTagsAfterBadV2Params(t *testing.T) {
	u32 := func(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
	utf16z := func(b []byte, s string) []byte {
		for _, r := range s {
			b = binary.LittleEndian.AppendUint16(b, uint16(r))
		}
		return append(b, 0, 0)
	}
	var p []byte
	p = u32(p, 7)             // metadata ID
	p = utf16z(p, "MySource") // provider
	p = u32(p, 3)             // event ID
	p = utf16z(p, "Work")     // name
	p = binary.LittleEndian.AppendUint64(p, 0)
	p = u32(p, 0) // version
	p = u32(p, 4) // level
	p = u32(p, 0) // no V1 fields
	// V2Params: one field, "x", of type code 99.
	var v2 []byte
	v2 = u32(v2, 1)
	field := utf16z(nil, "x")
	field = u32(field, 99)
	v2 = u32(v2, uint32(4+len(field)))
	v2 = append(v2, field...)
	p = u32(p, uint32(len(v2)))
	p = append(p, 2)
	p = append(p, v2...)
	// Opcode 9.
	p = u32(p, 1)
	p = append(p, 1, 9)
	m, err := parseMetadataV3(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.FieldsErr == nil || m.Fields != nil {
		t.Errorf("fields %v, error %v; want none, and an error", m.Fields, m.FieldsErr)
	}
	if !m.HasOpcode || m.Opcode != 9 {
		t.Errorf("opcode %d (has %v); want 9, from the tag after the V2Params", m.Opcode, m.HasOpcode)
	}
}
