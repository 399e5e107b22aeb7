package etl

import (
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReopen: a Reader made by Reopen gives every event of the log again,
// from the first, whether the original has been read half, whole or not
// at all, and reading the two in turns gives each its own events; a
// merged Reader reopens every log (Log indexes included); a stream read
// once cannot be reopened.
func TestReopen(t *testing.T) {
	b := gcETL(t)
	want := readAll(t, mustReader(t, b))

	r := mustReader(t, b)
	half := len(want) / 2
	var got []ev
	for range half {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, copyEvent(e))
	}
	c, err := r.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	var again []ev
	for { // in turns: one of the copy's, one of the original's
		e, err := c.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		again = append(again, copyEvent(e))
		if e, err := r.Next(); err == nil {
			got = append(got, copyEvent(e))
		} else if err != io.EOF {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(want, again); diff != "" {
		t.Fatalf("the reopened log's events differ (-first read +reopened):\n%s", diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the original's events differ once a copy is read beside it (-want +got):\n%s", diff)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reopen(); err != nil {
		t.Fatalf("reopening a log read to its end: %v", err)
	}

	_, logs := diagLogs(t)
	m := mergeOf(t, logs)
	wantM, err := readLogged(t, m)
	if err != io.EOF {
		t.Fatal(err)
	}
	mc, err := m.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	gotM, err := readLogged(t, mc)
	if err != io.EOF {
		t.Fatal(err)
	}
	if !slices.EqualFunc(wantM, gotM, func(a, b logged) bool { return a.log == b.log && cmp.Equal(a.ev, b.ev) }) {
		t.Fatalf("the reopened merge gives %d events, not the %d of the first read in the same order", len(gotM), len(wantM))
	}

	s := mustFileOrder(t, b)
	if _, err := s.Reopen(); !errors.Is(err, ErrStream) {
		t.Fatalf("reopening a stream: %v, want ErrStream", err)
	}
}
