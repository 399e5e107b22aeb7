package trace

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
)

// TestStrictCut holds WithStrict to its doc on traces cut short: it ends
// with the format reader's error (a cut: io.ErrUnexpectedEOF, for an ETW
// log too, whose etl.ErrTruncated was not one), not a *DamageError;
// before it, an ETW log gives the events the default reading gives, and
// an EventPipe trace those before the cut block.
func TestStrictCut(t *testing.T) {
	for _, c := range []struct {
		path string
		same bool // strict gives every event the default reading gives
	}{
		{"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip", false},
		{"../testdata/traces/gcevents.etl.zip", true},
	} {
		data := tracetest.Bytes(t, c.path)
		cut := data[:len(data)*2/3]
		read := func(opts ...Option) (int, error) {
			r, err := NewReader(bytes.NewReader(cut), opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			n := 0
			for {
				_, err := r.Next()
				if err != nil {
					return n, err
				}
				n++
			}
		}
		all, derr := read()
		strict, serr := read(WithStrict())
		if !errors.Is(derr, ErrDamaged) || !errors.Is(derr, io.ErrUnexpectedEOF) {
			t.Errorf("%s cut: the default reading ends with %v, want damage that is a cut (io.ErrUnexpectedEOF)", c.path, derr)
		}
		if serr == io.EOF || errors.Is(serr, ErrDamaged) || !errors.Is(serr, io.ErrUnexpectedEOF) {
			t.Errorf("%s cut: the strict reading ends with %v, want the format reader's cut (io.ErrUnexpectedEOF), not damage", c.path, serr)
		}
		if strict > all || c.same != (strict == all) || strict == 0 {
			t.Errorf("%s cut: %d events strict, %d by default; the same: %v", c.path, strict, all, c.same)
		}
	}
}
