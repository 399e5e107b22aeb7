package symbols

// openIndex maps a live method's (MethodID, start) to its index in
// process.methods: an open-addressing table with linear probing, cheaper
// than a Go map for the thousands of methods a rundown lists.
type openIndex struct {
	slots []openSlot
	n     int
}

type openSlot struct {
	key [2]uint64
	i   int32 // index+1; 0: empty
}

func (t *openIndex) hash(k [2]uint64) uint64 {
	// Addresses and method IDs are aligned: mix the high bits down.
	h := k[0]*0x9E3779B97F4A7C15 + k[1]
	h ^= h >> 32
	h *= 0xBF58476D1CE4E5B9
	return h ^ h>>29
}

func (t *openIndex) get(k [2]uint64) (int, bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for j := t.hash(k) & mask; ; j = (j + 1) & mask {
		s := &t.slots[j]
		if s.i == 0 {
			return 0, false
		}
		if s.key == k {
			return int(s.i - 1), true
		}
	}
}

func (t *openIndex) put(k [2]uint64, i int) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for j := t.hash(k) & mask; ; j = (j + 1) & mask {
		s := &t.slots[j]
		if s.i == 0 {
			*s = openSlot{k, int32(i + 1)}
			t.n++
			return
		}
		if s.key == k {
			s.i = int32(i + 1)
			return
		}
	}
}

func (t *openIndex) grow() {
	old := t.slots
	t.slots = make([]openSlot, max(64, 2*len(old)))
	t.n = 0
	for _, s := range old {
		if s.i != 0 {
			t.put(s.key, int(s.i-1))
		}
	}
}

// del removes k, shifting back the entries after it (no tombstones).
func (t *openIndex) del(k [2]uint64) {
	if t.n == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	j := t.hash(k) & mask
	for {
		s := &t.slots[j]
		if s.i == 0 {
			return
		}
		if s.key == k {
			break
		}
		j = (j + 1) & mask
	}
	t.n--
	for {
		t.slots[j].i = 0
		next := j
		for {
			next = (next + 1) & mask
			s := t.slots[next]
			if s.i == 0 {
				return
			}
			home := t.hash(s.key) & mask
			// Move s to j when j lies cyclically in [home, next).
			if (next > j && (home <= j || home > next)) || (next < j && home <= j && home > next) {
				t.slots[j] = s
				j = next
				break
			}
		}
	}
}
