package clrevents_test

import (
	"slices"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
)

// TestStackWalkTypes: the types whose payload is the stack of the event
// before them on their thread (the overrides' walk) are the runtime's,
// the rundown's and the private provider's CLRStackWalk, and they give
// their frames.
func TestStackWalkTypes(t *testing.T) {
	var walks []string
	for _, info := range clrevents.Events() {
		if _, ok := info.New().(clrimpl.StackWalk); ok {
			walks = append(walks, info.Provider.String()+"/"+info.Name)
		}
	}
	slices.Sort(walks)
	want := []string{
		"Microsoft-Windows-DotNETRuntime/CLRStackWalk",
		"Microsoft-Windows-DotNETRuntimePrivate/CLRStackWalkPrivate",
		"Microsoft-Windows-DotNETRuntimeRundown/CLRStackWalkDCStart",
	}
	if !slices.Equal(walks, want) {
		t.Errorf("stack walk types %v, want %v", walks, want)
	}
	// ClrInstanceID, two reserved bytes, FrameCount 2, two frames.
	payload := []byte{1, 0, 0, 0, 2, 0, 0, 0,
		0x10, 0, 0, 0, 0, 0, 0, 0,
		0x20, 0, 0, 0, 0, 0, 0, 0}
	got := new(clrevents.CLRStackWalk)
	if _, err := got.Decode(payload, 8); err != nil {
		t.Fatal(err)
	}
	if f := got.AppendStackWalk(nil); !slices.Equal(f, []uint64{0x10, 0x20}) {
		t.Errorf("frames %#x", f)
	}
}
