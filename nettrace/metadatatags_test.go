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
	var p []byte
	p = append(p, u32(7)...)             // metadata ID
	p = append(p, utf16z("MySource")...) // provider
	p = append(p, u32(3)...)             // event ID
	p = append(p, utf16z("Work")...)     // name
	p = binary.LittleEndian.AppendUint64(p, 0)
	p = append(p, u32(0)...) // version
	p = append(p, u32(4)...) // level
	p = append(p, u32(0)...) // no V1 fields
	// V2Params: one field, "x", of type code 99.
	field := append(utf16z("x"), u32(99)...)
	v2 := append(append(u32(1), u32(uint32(4+len(field)))...), field...)
	p = append(append(p, u32(uint32(len(v2)))...), 2)
	p = append(p, v2...)
	// Opcode 9.
	p = append(append(p, u32(1)...), 1, 9)
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
