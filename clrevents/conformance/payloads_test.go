package conformance

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
)

var update = flag.Bool("update", false, "rewrite ../../testdata/payloads from the shared traces")

// maxFixture caps the payloads kept: a type's longest payload above it is
// replaced by its longest payload at or below it (string-heavy events).
const maxFixture = 2048

// fixture is one real payload kept in testdata/payloads.
type fixture struct {
	Trace   string // the trace file it came from
	Line    int    // line in the fixture file
	Key     typeKey
	Ptr     int
	Index   int    // event index in the trace, from 0
	Roles   string // first, last, shortest, longest (comma-joined)
	Payload []byte
}

func fixtureFile(trace string) string {
	return filepath.Join(payloadDir, strings.TrimSuffix(trace, ".zip")+".txt")
}

// TestPayloadFixtures checks that every shared trace has a fixture file
// holding exactly the payloads the extraction picks; with -update it
// writes them.
func TestPayloadFixtures(t *testing.T) {
	for _, tf := range sharedTraceFiles(t) {
		t.Run(tf.Name, func(t *testing.T) {
			want, err := extract(tf)
			if err != nil {
				t.Fatal(err)
			}
			path := fixtureFile(tf.Name)
			if *update {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./clrevents/conformance -run TestPayloadFixtures -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: run go test ./clrevents/conformance -run TestPayloadFixtures -update", path)
			}
		})
	}
}

// extract picks, for each (provider, id, version) of the trace, its first,
// last, shortest and longest payload, and renders the fixture file.
func extract(tf traceFile) ([]byte, error) {
	type pick struct {
		idx     int
		ptr     int
		payload []byte
	}
	type picks struct{ first, last, short, long *pick }
	all := map[typeKey]*picks{}
	mk := func(r *rec) *pick {
		return &pick{r.Index, r.Ptr, append([]byte(nil), r.Payload...)}
	}
	_, err := eachCLR(tf, func(r *rec) bool {
		k := typeKey{r.Provider, r.ID, r.Version}
		p := all[k]
		if p == nil {
			p = &picks{}
			all[k] = p
			p.first = mk(r)
		}
		// last is kept cheaply: only its index and bytes when it changes.
		p.last = &pick{r.Index, r.Ptr, r.Payload}
		if p.short == nil || len(r.Payload) < len(p.short.payload) {
			p.short = mk(r)
		}
		if len(r.Payload) <= maxFixture && (p.long == nil || len(r.Payload) > len(p.long.payload)) {
			p.long = mk(r)
		}
		p.last.payload = append([]byte(nil), r.Payload...)
		return true
	})
	if err != nil {
		return nil, err
	}
	keys := make([]typeKey, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Version < b.Version
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Real CLR event payloads from %s (see testdata/PROVENANCE.md).\n", tf.Name)
	fmt.Fprintf(&b, "# Written by: go test ./clrevents/conformance -run TestPayloadFixtures -update\n")
	fmt.Fprintf(&b, "# Per (provider, id, version): the first, last, shortest and longest payload (longest at most %d bytes).\n", maxFixture)
	fmt.Fprintf(&b, "# provider id version symbol ptrsize event-index roles length hex\n")
	for _, k := range keys {
		p := all[k]
		roles := map[int][]string{}
		byIdx := map[int]*pick{}
		var order []int
		for _, x := range []struct {
			role string
			p    *pick
		}{{"first", p.first}, {"last", p.last}, {"shortest", p.short}, {"longest", p.long}} {
			if x.p == nil || len(x.p.payload) > maxFixture {
				continue
			}
			if _, ok := byIdx[x.p.idx]; !ok {
				order = append(order, x.p.idx)
				byIdx[x.p.idx] = x.p
			}
			roles[x.p.idx] = append(roles[x.p.idx], x.role)
		}
		sort.Ints(order)
		for _, idx := range order {
			x := byIdx[idx]
			fmt.Fprintf(&b, "%s %d %d %s %d %d %s %d %x\n", k.Provider, k.ID, k.Version, symbolOf(k), x.ptr, idx,
				strings.Join(roles[idx], ","), len(x.payload), x.payload)
		}
	}
	return b.Bytes(), nil
}

func symbolOf(k typeKey) string {
	if ei, ok := clrevents.Lookup(k.Provider, k.ID, k.Version); ok {
		return ei.Name
	}
	return "?"
}

// loadFixtures reads every fixture file in testdata/payloads.
func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(payloadDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no payload fixtures in %s", payloadDir)
	}
	var out []fixture
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			n++
			line := sc.Text()
			if line == "" || line[0] == '#' {
				continue
			}
			fx, err := parseFixture(line)
			if err != nil {
				t.Fatalf("%s:%d: %v", p, n, err)
			}
			fx.Trace, fx.Line = filepath.Base(p), n
			out = append(out, fx)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func parseFixture(line string) (fixture, error) {
	var fx fixture
	w := strings.Fields(line)
	if len(w) != 9 {
		return fx, fmt.Errorf("%d words, want 9", len(w))
	}
	p, ok := clrevents.ProviderByName(w[0])
	if !ok {
		return fx, fmt.Errorf("unknown provider %q", w[0])
	}
	nums := make([]uint64, 0, 5)
	for _, s := range []string{w[1], w[2], w[4], w[5], w[7]} {
		v, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return fx, err
		}
		nums = append(nums, v)
	}
	payload, err := hex.DecodeString(w[8])
	if err != nil {
		return fx, err
	}
	if uint64(len(payload)) != nums[4] {
		return fx, fmt.Errorf("length %d, but %d bytes of hex", nums[4], len(payload))
	}
	fx.Key = typeKey{p, uint16(nums[0]), uint8(nums[1])}
	if w[3] != symbolOf(fx.Key) {
		return fx, fmt.Errorf("symbol %s, but the schema names (%d, v%d) %s", w[3], nums[0], nums[1], symbolOf(fx.Key))
	}
	fx.Ptr, fx.Index, fx.Roles, fx.Payload = int(nums[2]), int(nums[3]), w[6], payload
	return fx, nil
}
