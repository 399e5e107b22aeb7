package profile

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/clrgo/clrevents/trace"
)

// TestStackKeysChangeNothing: a profile built with the samples' StackKeys
// (the raw stack found by key) is the profile built by hashing and
// comparing every sample's addresses, sample for sample: CPU profiles of
// every trace with samples here, all time and managed-only, and the 3.0
// trace's allocation and contention profiles (no trace here has
// exceptions).
func TestStackKeysChangeNothing(t *testing.T) {
	const core30 = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"
	names := append([]string{core30}, goldenTraces()...)
	for _, name := range names {
		opts := []Options{{}, {ManagedOnly: true}}
		if name == core30 {
			opts = append(opts, Options{Kind: Alloc}, Options{Kind: Contention})
		}
		for _, o := range opts {
			t.Run(filepath.Base(name)+"/"+o.Kind.String(), func(t *testing.T) {
				// The same trace read twice, one Builder using the keys and
				// one not.
				from := func(keyless bool) (*Profile, *Builder) {
					r, err := trace.Open(name)
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					info := r.Info()
					b := NewBuilder(o, info.SyncTimestamp, info.ClockFrequency)
					b.keyless = keyless
					p, err := buildFrom(r, b)
					if err != nil {
						t.Fatal(err)
					}
					return p, b
				}
				keyed, kb := from(false)
				plain, pb := from(true)
				if kb.skeys == nil {
					t.Fatal("no sample had a StackKey: nothing is compared")
				}
				if pb.skeys != nil {
					t.Fatal("a keyless Builder used StackKeys")
				}
				if len(plain.Samples) == 0 {
					t.Fatalf("no %s samples", o.Kind)
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

// TestStackKeySlots: the key table gives a sample the raw stack of its
// own label and state, not of another sample's with the same stack (two
// types allocated at one call site, a stack seen managed and then
// external), and the same raw stacks as the samples would get without
// keys.
func TestStackKeySlots(t *testing.T) {
	ips := []uint64{0x10, 0x20, 0x30}
	const key = 5<<32 | 7
	keyed := NewBuilder(Options{Kind: Alloc}, 0, 1_000_000_000)
	plain := NewBuilder(Options{Kind: Alloc}, 0, 1_000_000_000)
	var got, want []uint32
	for i, c := range []struct {
		leaf uint32
		st   State
	}{{1, StateNone}, {2, StateNone}, {1, StateNone}, {0, StateManaged}, {0, StateExternal}, {0, StateManaged}, {2, StateNone}} {
		got = append(got, keyed.rawStack(1, ips, key, c.leaf, c.st, 0))
		want = append(want, plain.rawStack(1, ips, 0, c.leaf, c.st, 0))
		if got[i] != want[i] {
			t.Fatalf("sample %d (label %d, %v): raw stack %d by key, %d by addresses", i, c.leaf, c.st, got[i], want[i])
		}
	}
	if !(got[0] == got[2] && got[1] == got[6] && got[3] == got[5] && got[0] != got[1] && got[3] != got[4] && got[0] != got[3]) {
		t.Errorf("raw stacks %v: want one for each label and state", got)
	}
	// Another process's sample under the same key, label and state as
	// the last one (a Builder may see several processes): its own raw
	// stack.
	if a, b := keyed.rawStack(2, ips, key, 2, StateNone, 0), plain.rawStack(2, ips, 0, 2, StateNone, 0); a != b || a == got[6] {
		t.Errorf("process 2's sample: raw stack %d by key, %d by addresses, process 1's %d", a, b, got[6])
	}
}
