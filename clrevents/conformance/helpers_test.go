package conformance

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/gen"
	"github.com/clrgo/clrevents/nettrace"
	"github.com/clrgo/clrevents/schema/interp"
)

const (
	sharedTraces  = "../../../shared/fixtures/traces"
	localTraces   = "../../testdata/traces"
	payloadDir    = "../../testdata/payloads"
	schemaPath    = "../../schema/clr.yaml"
	overridesPath = "../../schema/overrides.yaml"
	extraPath     = "../../schema/extra.yaml"
)

var (
	interpOnce sync.Once
	interpDec  *interp.Decoder
	interpErr  error
)

// reference returns the schema-interpreting decoder for the checked-in
// schema, extra schema and overrides, the inputs the generated package was
// made from.
func reference(t testing.TB) *interp.Decoder {
	t.Helper()
	interpOnce.Do(func() {
		m, err := gen.Load(schemaPath, overridesPath, extraPath)
		if err != nil {
			interpErr = err
			return
		}
		interpDec, interpErr = interp.New(m)
	})
	if interpErr != nil {
		t.Fatal(interpErr)
	}
	return interpDec
}

// traceFile is one trace the suite reads, with its baseline if any.
type traceFile struct {
	Name     string // base name, e.g. gcevents.etl.zip
	Path     string
	Baseline string // path of the *.baseline.txt, or ""
	ETL      bool
}

// sharedTraceFiles lists every trace under ../shared, or skips the test.
func sharedTraceFiles(t testing.TB) []traceFile {
	t.Helper()
	if _, err := os.Stat(sharedTraces); err != nil {
		t.Skipf("the shared traces are not here (%s: %v); the payload fixtures in %s still run", sharedTraces, err, payloadDir)
	}
	return listTraces(t, sharedTraces+"/*/*")
}

// extraTraceFiles lists the traces in the folder CLREVENTS_TRACES names,
// if it is set: more of TraceEvent's test inputs with their baselines
// (microsoft/perfview's src/TraceEvent/TraceEvent.Tests/inputs holds some
// that neither the repository nor ../shared has, such as
// net.4.5.2.x64.etl.zip), for the suite to compare too.
func extraTraceFiles(t testing.TB) []traceFile {
	t.Helper()
	dir := os.Getenv("CLREVENTS_TRACES")
	if dir == "" {
		return nil
	}
	return listTraces(t, filepath.Join(dir, "*"))
}

// withExtra adds to traces the extra ones (extraTraceFiles) of names it
// does not hold.
func withExtra(t testing.TB, traces []traceFile) []traceFile {
	t.Helper()
	have := map[string]bool{}
	for _, tf := range traces {
		have[tf.Name] = true
	}
	for _, tf := range extraTraceFiles(t) {
		if !have[tf.Name] {
			traces = append(traces, tf)
		}
	}
	return traces
}

// holdsETL reports whether the file at p is a zip of ETW logs, whatever
// its name (a diagnostics session's archive).
func holdsETL(p string) bool {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return false
	}
	defer zr.Close()
	for _, f := range zr.File {
		if strings.HasSuffix(strings.ToLower(f.Name), ".etl") {
			return true
		}
	}
	return false
}

// localTraceFiles lists the traces copied into testdata/traces.
func localTraceFiles(t testing.TB) []traceFile { return listTraces(t, localTraces+"/*") }

func listTraces(t testing.TB, glob string) []traceFile {
	t.Helper()
	paths, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	var out []traceFile
	for _, p := range paths {
		base := filepath.Base(p)
		if strings.HasSuffix(base, ".txt") {
			continue
		}
		tf := traceFile{Name: base, Path: p, ETL: strings.Contains(base, ".etl") || holdsETL(p)}
		stem := strings.TrimSuffix(base, ".zip")
		for _, cand := range []string{stem + ".baseline.txt", strings.TrimSuffix(stem, ".etl") + ".baseline.txt"} {
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), cand)); err == nil {
				tf.Baseline = filepath.Join(filepath.Dir(p), cand)
				break
			}
		}
		out = append(out, tf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		t.Fatalf("no traces match %s", glob)
	}
	return out
}

// rec is one CLR event of a trace, as the suite needs it.
type rec struct {
	Index    int // position among all events of the trace, from 0
	Provider clrevents.Provider
	ID       uint16
	Version  uint8
	Ptr      int
	Payload  []byte // aliases the reader's buffer during the callback
	PID, TID int64
	Proc     int
	TS       int64
	MSec     float64 // TraceEvent's relative milliseconds
}

// eachCLR calls fn for every event of a CLR provider of the trace, in the
// order the reader delivers them (time order for ETW). fn returns false to
// stop. It returns the number of events of any provider read.
func eachCLR(tf traceFile, fn func(r *rec) bool) (int, error) {
	if tf.ETL {
		r, err := etl.Open(tf.Path)
		if err != nil {
			return 0, err
		}
		defer r.Close()
		n := 0
		for {
			e, err := r.Next()
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, fmt.Errorf("%s: event %d: %w", tf.Name, n, err)
			}
			n++
			p, ok := clrevents.ProviderByGUID(e.ProviderGUID)
			if !ok || e.HeaderKind != etl.EventHeader {
				continue
			}
			x := rec{Index: n - 1, Provider: p, ID: e.ID, Version: e.Version, Ptr: e.PointerSize, Payload: e.Payload,
				PID: int64(int32(e.ProcessID)), TID: int64(int32(e.ThreadID)), Proc: int(e.ProcessorNumber),
				TS: e.Timestamp, MSec: r.RelativeMSec(e.Timestamp)}
			if !fn(&x) {
				return n, nil
			}
		}
	}
	r, err := nettrace.Open(tf.Path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	info := r.Info()
	n := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("%s: event %d: %w", tf.Name, n, err)
		}
		n++
		p, ok := clrevents.ProviderByName(e.Provider)
		if !ok {
			continue
		}
		ms := 0.0
		if info.QPCFrequency > 0 {
			ms = float64(e.Timestamp-info.SyncTimeQPC) * 1000 / float64(info.QPCFrequency)
		}
		x := rec{Index: n - 1, Provider: p, ID: e.ID, Version: e.Version, Ptr: e.PointerSize, Payload: e.Payload,
			PID: int64(e.ProcessID), TID: int64(e.ThreadID), Proc: int(e.ProcessorNumber), TS: e.Timestamp, MSec: ms}
		if !fn(&x) {
			return n, nil
		}
	}
}

// typeKey names one event type.
type typeKey struct {
	Provider clrevents.Provider
	ID       uint16
	Version  uint8
}

func (k typeKey) String() string {
	if ei, ok := clrevents.Lookup(k.Provider, k.ID, k.Version); ok {
		return ei.Name
	}
	return fmt.Sprintf("%s/%d/v%d", k.Provider, k.ID, k.Version)
}

// agreement compares the generated decoder with the reference decoder on
// one payload. It returns "" when they agree, else what differs.
func agreement(dec *clrevents.Decoder, ref *interp.Decoder, p clrevents.Provider, id uint16, ver uint8, ptr int, payload []byte) string {
	gev, gn, gerr := dec.Decode(p, id, ver, ptr, payload)
	v, rn, rerr := ref.Decode(p.String(), id, ver, ptr, payload)
	if (gerr == nil) != (rerr == nil) {
		return fmt.Sprintf("generated error %v, reference error %v", gerr, rerr)
	}
	if gerr != nil {
		if errors.Is(gerr, clrevents.ErrUnknownEvent) != errors.Is(rerr, interp.ErrUnknownEvent) {
			return fmt.Sprintf("unknown event: generated %v, reference %v", gerr, rerr)
		}
		var ge *clrevents.DecodeError
		var re *interp.DecodeError
		if errors.As(gerr, &ge) != errors.As(rerr, &re) {
			return fmt.Sprintf("error kinds differ: generated %v, reference %v", gerr, rerr)
		}
		if ge != nil && (ge.Event != re.Event || ge.Field != re.Field || ge.Offset != re.Offset || ge.Err.Error() != re.Err.Error()) {
			return fmt.Sprintf("errors differ: generated %v, reference %v", gerr, rerr)
		}
		return ""
	}
	if gn != rn {
		return fmt.Sprintf("bytes used: generated %d, reference %d", gn, rn)
	}
	gj, rj := gev.AppendJSON(nil), v.AppendJSON(nil)
	if string(gj) != string(rj) {
		return fmt.Sprintf("JSON differs:\ngenerated %s\nreference %s", gj, rj)
	}
	return ""
}

// statShared reports whether the shared traces are present.
func statShared() (os.FileInfo, error) { return os.Stat(sharedTraces) }
