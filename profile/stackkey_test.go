package profile

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clrgo/clrevents/trace"
)

// TestStackKeysChangeNothing: a CPU profile built with the samples'
// StackKeys (the raw stack found by key) is the profile built by hashing
// and comparing every sample's addresses, sample for sample, on every
// trace with samples here, all time and managed-only.
func TestStackKeysChangeNothing(t *testing.T) {
	names := append([]string{"../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"}, goldenTraces()...)
	for _, name := range names {
		for _, o := range []Options{{}, {ManagedOnly: true}} {
			t.Run(filepath.Base(name), func(t *testing.T) {
				keyed, err := build(t, name, o)
				if err != nil {
					t.Fatal(err)
				}
				r, err := trace.Open(name)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				info := r.Info()
				b := NewBuilder(o, info.SyncTimestamp, info.ClockFrequency)
				b.keyless = true
				keys := 0
				for {
					e, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if e.StackKey() != 0 {
						keys++
					}
					b.Add(e) // events it cannot use are left out as Build leaves them
				}
				plain, err := b.Finish()
				if err != nil {
					t.Fatal(err)
				}
				if keys == 0 {
					t.Fatal("no event has a StackKey: nothing is compared")
				}
				if b.skeys != nil {
					t.Fatal("a keyless Builder used StackKeys")
				}
				if len(plain.Samples) == 0 {
					t.Fatal("no samples")
				}
				if diff := cmp.Diff(plain.Folded(), keyed.Folded()); diff != "" {
					t.Errorf("folded stacks (-by addresses +by key):\n%s", diff)
				}
				if len(plain.Samples) != len(keyed.Samples) {
					t.Fatalf("%d samples by addresses, %d by key", len(plain.Samples), len(keyed.Samples))
				}
				for i := range plain.Samples {
					if diff := cmp.Diff(plain.Samples[i], keyed.Samples[i]); diff != "" {
						t.Fatalf("sample %d (-by addresses +by key):\n%s", i, diff)
					}
				}
			})
		}
	}
}
