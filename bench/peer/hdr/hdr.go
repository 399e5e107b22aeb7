// Package hdr holds what a pass over a trace's event headers adds up, for
// the harness and its child programs: both readers' passes (packages ours
// and peer below) return it, so that a test can check that they see the
// same events and the compiler keeps the work.
package hdr

// Sums adds up the header fields a consumer looks at, over every event.
type Sums struct {
	Events, TS, TID, Payload uint64
	IDs                      uint64 // event IDs, when the reader knows them
}

// Total is every sum added together.
func (s Sums) Total() uint64 { return s.Events + s.TS + s.TID + s.Payload + s.IDs }
