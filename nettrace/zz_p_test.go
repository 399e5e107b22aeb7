package nettrace

import (
	"math/rand/v2"
	"testing"
)

func TestZZPyro(t *testing.T) {
	tr := threeTraces(1, 1, 1)[0]
	data := loadTrace(t, tr.path)
	want, _, _, _ := readFull(t, data, FileOrder)
	rng := rand.New(rand.NewPCG(21, 23))
	for i := 0; i < 700; i++ {
		at := 200 + rng.IntN(len(data)-400)
		m := byte(1 + rng.IntN(255))
		bad := append([]byte(nil), data...)
		bad[at] ^= m
		r, n, _ := readToEnd(bad, FileOrder)
		if r.Dropped() > 0 {
			got, _, _, _ := readFull(t, bad, FileOrder)
			lost, changed := lostChanged(want, got, 0, 0)
			t.Logf("at %d ^%#x: n %d lost %d changed %d dropped %d damage %d", at, m, n, lost, changed, r.Dropped(), len(r.Damage()))
		}
	}
}
