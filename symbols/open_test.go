package symbols

import (
	"math/rand/v2"
	"testing"
)

// TestOpenIndex checks the open-method table against a map through random
// puts and deletes on few keys (many collisions).
func TestOpenIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var o openIndex
	m := map[[2]uint64]int{}
	for step := range 200000 {
		k := [2]uint64{uint64(r.IntN(300)), uint64(r.IntN(4)) << 12}
		switch r.IntN(3) {
		case 0, 1:
			o.put(k, step)
			m[k] = step
		case 2:
			o.del(k)
			delete(m, k)
		}
		if step%1000 == 0 {
			if o.n != len(m) {
				t.Fatalf("step %d: %d entries, want %d", step, o.n, len(m))
			}
			for k, v := range m {
				if got, ok := o.get(k); !ok || got != v {
					t.Fatalf("step %d: get(%v) = %d, %v; want %d", step, k, got, ok, v)
				}
			}
		}
		if got, ok := o.get(k); ok != (m[k] != 0 || hasKey(m, k)) || ok && got != m[k] {
			t.Fatalf("step %d: get(%v) = %d, %v", step, k, got, ok)
		}
	}
}

func hasKey(m map[[2]uint64]int, k [2]uint64) bool { _, ok := m[k]; return ok }
