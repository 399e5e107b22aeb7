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

// TestETLOrderSaid: an ETW log read from a file is merged by time
// whatever order was asked, and Reader.Order says so (it said file order
// while giving time order); from a stream that cannot seek, file order is
// what it says.
func TestETLOrderSaid(t *testing.T) {
	const path = "../testdata/traces/gcevents.etl.zip"
	for _, o := range []Order{FileOrder, ThreadOrder, TimeOrder} {
		r, err := Open(path, WithOrder(o))
		if err != nil {
			t.Fatal(err)
		}
		if r.Order() != TimeOrder {
			t.Errorf("%v asked of a file: Order says %v, the log is read in time order", o, r.Order())
		}
		last := int64(-1 << 63)
		for {
			e, err := r.Next()
			if err != nil {
				break
			}
			if e.Timestamp() < last {
				t.Fatalf("%v asked of a file: events out of time order", o)
			}
			last = e.Timestamp()
		}
		r.Close()
	}
	data := tracetest.Bytes(t, path)
	r, err := NewReader(io.MultiReader(bytes.NewReader(data)), WithOrder(FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Order() != FileOrder {
		t.Errorf("file order asked of a stream: Order says %v", r.Order())
	}
}
