package symbols

import "testing"

// TestUnresolved: the note reads as a sentence, one clause a reason, most
// frequent first, counts grouped by thousands; without a rundown, the
// clause of frames no method covers says so.
func TestUnresolved(t *testing.T) {
	m := NewMap()
	if got := m.Unresolved(); got != "" {
		t.Errorf("no frames: %q", got)
	}
	m.Count(Resolved, 34_370)
	m.Count(NoMethod, 505_490)
	if got, want := m.Unresolved(), "505,490 of 539,860 frames: no method covers the address (the trace holds no rundown, which lists the methods compiled before it began)"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	m.rundown = 3
	m.Count(NoProcess, 7)
	m.Count(Native, 1_000_000)
	want := "1,000,000 of 1,539,867 frames: native code, named by its module only; 505,490 of 1,539,867 frames: no method covers the address; 7 of 1,539,867 frames: no method events of their process"
	if got := m.Unresolved(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
