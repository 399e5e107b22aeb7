package profile

import (
	"errors"
	"maps"
	"path/filepath"
	"testing"

	"github.com/clrgo/clrevents/trace"
)

// TestThreadOrderProfiles: every profile of every trace here is the same
// built from a reader in trace.ThreadOrder (what clrdump uses: an
// EventPipe trace as stored, nothing merged) as from one in time order.
func TestThreadOrderProfiles(t *testing.T) {
	paths := []string{golden}
	for _, g := range []string{"../testdata/traces/*.zip", "../../shared/fixtures/traces/*/*.zip"} {
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	built := 0
	for _, path := range paths {
		for k := CPU; k <= Exception; k++ {
			folded := func(o trace.Order) (map[string]int64, error) {
				r, err := trace.Open(path, trace.WithOrder(o))
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				p, err := Build(r, Options{Kind: k})
				if p == nil {
					return nil, err
				}
				return p.Folded(), nil
			}
			byTime, err := folded(trace.TimeOrder)
			if errors.Is(err, ErrNoEvents) {
				continue
			}
			byThread, err2 := folded(trace.ThreadOrder)
			if !maps.Equal(byThread, byTime) || (err == nil) != (err2 == nil) {
				t.Errorf("%s, %s profile: in thread order %d bytes (%v), in time order %d (%v)", filepath.Base(path), k, len(byThread), err2, len(byTime), err)
			}
			built++
		}
	}
	if built == 0 {
		t.Fatal("no profile built")
	}
	t.Logf("%d profiles compared", built)
}
