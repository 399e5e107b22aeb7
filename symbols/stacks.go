package symbols

import "unsafe"

// StackID names an interned stack of a Stacks table. IDs are dense, from 0
// (the empty stack), in the order stacks are first interned, and stay the
// same for the life of the table, whatever sequence points or stack blocks
// the trace had.
type StackID uint32

// Stacks interns stacks of frames (root first) into stable IDs. The zero
// value is not ready; use NewStacks. It is not safe for concurrent use.
type Stacks struct {
	index  map[string]StackID
	frames []FrameID
	offs   []uint32 // stack i is frames[offs[i]:offs[i+1]]
	key    []byte
}

// NewStacks returns a table holding only the empty stack, ID 0.
func NewStacks() *Stacks {
	return &Stacks{index: map[string]StackID{"": 0}, offs: []uint32{0, 0}}
}

// Intern returns the ID of the stack, adding it when new. Once a stack is
// in the table, interning it again allocates nothing.
func (s *Stacks) Intern(frames []FrameID) StackID {
	if len(frames) == 0 {
		return 0
	}
	s.key = s.key[:0]
	s.key = append(s.key, unsafe.Slice((*byte)(unsafe.Pointer(&frames[0])), len(frames)*4)...)
	if id, ok := s.index[string(s.key)]; ok {
		return id
	}
	id := StackID(len(s.offs) - 1)
	s.frames = append(s.frames, frames...)
	s.offs = append(s.offs, uint32(len(s.frames)))
	s.index[string(s.key)] = id
	return id
}

// Frames returns a stack's frames, root first. The caller must not modify
// them.
func (s *Stacks) Frames(id StackID) []FrameID {
	if int(id)+1 >= len(s.offs) {
		return nil
	}
	return s.frames[s.offs[id]:s.offs[id+1]:s.offs[id+1]]
}

// Len returns the number of stacks, the empty one included.
func (s *Stacks) Len() int { return len(s.offs) - 1 }
