package duckdb

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/clrgo/clrevents/dataset"
	"github.com/clrgo/clrevents/internal/simruntime"
	"github.com/clrgo/clrevents/kernelevents"
)

// clrdump is built once per test binary.
var (
	buildOnce sync.Once
	clrdump   string
	buildErr  error
)

func clrdumpPath(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "clrdump-duckdb")
		if err != nil {
			buildErr = err
			return
		}
		clrdump = filepath.Join(dir, "clrdump")
		goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
		// Built in the main module (../..), with its own go.sum.
		cmd := exec.Command(goCmd, "build", "-o", clrdump, "./cmd/clrdump")
		cmd.Dir = "../.."
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build clrdump: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return clrdump
}

// testdataTraces are the small real traces of the repository: every clone
// has them.
var testdataTraces = []string{
	"../../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip",
	"../../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip",
	"../../testdata/traces/gcevents.etl.zip",
	"../../testdata/pyroscope-dotnetdiag/dotnet-5.0-SampleProfiler-single-thread.golden.nettrace",
}

const sharedDir = "../../../shared/fixtures/traces"

// sharedTraces are every trace in ../shared, or nil (and why) when it is
// not beside the checkout.
func sharedTraces() ([]string, error) {
	if _, err := os.Stat(sharedDir); err != nil {
		return nil, err
	}
	var out []string
	for _, pat := range []string{"*/*.zip", "*/*.nettrace"} {
		m, _ := filepath.Glob(filepath.Join(sharedDir, pat))
		out = append(out, m...)
	}
	return out, nil
}

// writeDataset runs clrdump -format parquet over traces (absolute paths)
// into dir/ds.
func writeDataset(t *testing.T, dir string, traces []string) {
	t.Helper()
	args := append([]string{"-format", "parquet", "-o", filepath.Join(dir, "ds")}, traces...)
	out, err := exec.Command(clrdumpPath(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("clrdump %v: %v\n%s", args, err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "ds", dataset.MarkerFile)); err != nil {
		t.Fatalf("no dataset marker: %v", err)
	}
}

// fromJSON is what the JSON lines of a trace add up to.
type fromJSON struct {
	counts      map[string]int64 // "trace|provider|event" → events
	sizes       map[string]int64 // trace → payload bytes
	gcCount     int64            // sum of the Count field of every GCStart version
	exceptions  map[string]int64 // ExceptionType → ExceptionThrown events
	methodLoads int64            // MethodLoadVerbose events of the runtime provider
	timeSums    map[string]int64 // trace → sum of each time's microseconds modulo 10⁹
}

func readJSON(t *testing.T, traces []string) fromJSON {
	t.Helper()
	j := fromJSON{counts: map[string]int64{}, sizes: map[string]int64{}, exceptions: map[string]int64{}, timeSums: map[string]int64{}}
	for _, tr := range traces {
		cmd := exec.Command(clrdumpPath(t), "-format", "jsonl", tr)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("clrdump -format jsonl %s: %v", tr, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var line struct {
				Time            time.Time
				Provider, Event string
				Version         uint8
				Size            int64
				Fields          map[string]json.RawMessage
			}
			d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			d.UseNumber()
			if err := d.Decode(&line); err != nil {
				t.Fatal(err)
			}
			// A table's directory has "_" for "/" in the event's name;
			// the kernel's events are in their kernelevents type's table.
			j.counts[tr+"|"+line.Provider+"|"+tableOf(line.Provider, line.Event, line.Version)]++
			j.sizes[tr] += line.Size
			j.timeSums[tr] += line.Time.UnixMicro() % 1e9
			switch {
			case strings.HasPrefix(line.Event, "GCStart"):
				var n int64
				json.Unmarshal(line.Fields["Count"], &n)
				j.gcCount += n
			case strings.HasPrefix(line.Event, "ExceptionThrown_V"): // not ExceptionThrownStop
				var typ string
				json.Unmarshal(line.Fields["ExceptionType"], &typ)
				j.exceptions[typ]++
			case strings.HasPrefix(line.Event, "MethodLoadVerbose") && line.Provider == "Microsoft-Windows-DotNETRuntime":
				j.methodLoads++
			}
		}
	}
	return j
}

// kernelTypes lists kernelevents' types by provider and display name
// ("Windows Kernel|Image/Load"), newest version first.
var kernelTypes = sync.OnceValue(func() map[string][]*kernelevents.EventInfo {
	m := map[string][]*kernelevents.EventInfo{}
	for _, info := range kernelevents.Events() {
		d := info.Descriptor()
		k := d.Provider + "|" + d.DisplayName
		m[k] = append(m[k], info)
	}
	for _, infos := range m {
		sort.Slice(infos, func(i, j int) bool { return infos[i].Version > infos[j].Version })
	}
	return m
})

// tableOf is the table an event of a JSON line goes to: its kernelevents
// type's (the newest not newer than the event, as the front door decodes
// it) for the kernel's events, else its name with "_" for "/".
func tableOf(provider, event string, version uint8) string {
	for _, info := range kernelTypes()[provider+"|"+event] {
		if info.Version <= version {
			return info.Name
		}
	}
	return strings.ReplaceAll(event, "/", "_")
}

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queryMap(t *testing.T, db *sql.DB, q string) map[string]int64 {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		m[k] += v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func queryInt(t *testing.T, db *sql.DB, q string) int64 {
	t.Helper()
	var v sql.NullInt64
	if err := db.QueryRow(q).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v.Int64
}

func diffMaps(want, got map[string]int64) string {
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if want[k] != got[k] {
			fmt.Fprintf(&b, "%s: JSON %d, DuckDB %d\n", k, want[k], got[k])
		}
	}
	return b.String()
}

// checkAgainstJSON: DuckDB's counts and sums over the dataset of traces
// equal the JSON lines'.
func checkAgainstJSON(t *testing.T, traces []string) {
	dir := t.TempDir()
	writeDataset(t, dir, traces)
	want := readJSON(t, traces)
	t.Chdir(dir)
	db := openDB(t)
	all := `(SELECT trace, provider, event, payload_size, seq, time FROM read_parquet('ds/events/*/*/*.parquet', hive_partitioning = true, union_by_name = true)
	         UNION ALL SELECT trace, provider, event, payload_size, seq, time FROM read_parquet('ds/generic/*.parquet'))`
	counts := queryMap(t, db, `SELECT trace || '|' || provider || '|' || replace(event, '/', '_'), count(*) FROM `+all+` GROUP BY ALL`)
	if d := diffMaps(want.counts, counts); d != "" {
		t.Errorf("events per trace and type differ:\n%s", d)
	}
	if len(counts) == 0 {
		t.Error("no events")
	}
	sizes := queryMap(t, db, `SELECT trace, sum(payload_size)::BIGINT FROM `+all+` GROUP BY ALL`)
	if d := diffMaps(want.sizes, sizes); d != "" {
		t.Errorf("payload bytes per trace differ:\n%s", d)
	}
	// seq and time (DELTA_BINARY_PACKED): every event's index once, and
	// its time as the JSON lines give it (to the microsecond, truncated).
	seqs := queryMap(t, db, `SELECT trace, (CASE WHEN count(DISTINCT seq) = count(*) AND min(seq) = 0 AND max(seq) = count(*) - 1 THEN count(*) ELSE -1 END)::BIGINT FROM `+all+` GROUP BY ALL`)
	wantSeqs := map[string]int64{}
	for k, n := range want.counts {
		wantSeqs[strings.SplitN(k, "|", 2)[0]] += n
	}
	if d := diffMaps(wantSeqs, seqs); d != "" {
		t.Errorf("seq is not 0 to events-1 once each (-1):\n%s", d)
	}
	times := queryMap(t, db, `SELECT trace, sum((epoch_ns(time) // 1000) % 1000000000)::BIGINT FROM `+all+` GROUP BY ALL`)
	if d := diffMaps(want.timeSums, times); d != "" {
		t.Errorf("sums of the times' microseconds differ:\n%s", d)
	}
	if got := queryInt(t, db, `SELECT sum("Count")::BIGINT FROM read_parquet('ds/events/*/event=GCStart*/*.parquet', union_by_name = true)`); got != want.gcCount {
		t.Errorf("sum of GCStart Count: DuckDB %d, JSON %d", got, want.gcCount)
	}
	traceRows := queryInt(t, db, `SELECT count(*) FROM read_parquet('ds/traces/*.parquet')`)
	if traceRows != int64(len(traces)) {
		t.Errorf("traces table: %d rows for %d traces", traceRows, len(traces))
	}
	if total := queryInt(t, db, `SELECT sum(events)::BIGINT FROM read_parquet('ds/traces/*.parquet')`); total != sum(want.counts) {
		t.Errorf("traces.events sums to %d, JSON has %d lines", total, sum(want.counts))
	}
	if len(want.exceptions) > 0 {
		got := queryMap(t, db, `SELECT "ExceptionType", count(*) FROM read_parquet('ds/events/*/event=ExceptionThrown_V*/*.parquet', union_by_name = true) GROUP BY ALL`)
		if d := diffMaps(want.exceptions, got); d != "" {
			t.Errorf("exceptions by type differ:\n%s", d)
		}
	}
	if want.methodLoads > 0 {
		got := queryInt(t, db, `SELECT count(*) FROM read_parquet('ds/events/provider=Microsoft-Windows-DotNETRuntime/event=MethodLoadVerbose*/*.parquet', union_by_name = true)`)
		if got != want.methodLoads {
			t.Errorf("MethodLoadVerbose: DuckDB %d, JSON %d", got, want.methodLoads)
		}
	}
	// Types: time is a timestamp, GUIDs are UUIDs, hex fields numbers.
	// The README says DuckDB reads time to the microsecond, as a
	// TIMESTAMP WITH TIME ZONE: if that changes, so must the README.
	var typ string
	if err := db.QueryRow(`SELECT typeof(time) FROM read_parquet('ds/generic/*.parquet') LIMIT 1`).Scan(&typ); err == nil && typ != "TIMESTAMP WITH TIME ZONE" {
		t.Errorf("time is %s, the README says TIMESTAMP WITH TIME ZONE", typ)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM `+all+` WHERE epoch_ns(time) % 1000 <> 0`); n != 0 {
		t.Errorf("%d times with nanoseconds: the README says DuckDB reads microseconds", n)
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func abs(t *testing.T, paths []string) []string {
	var out []string
	for _, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// TestTestdataTraces: on any clone.
func TestTestdataTraces(t *testing.T) {
	checkAgainstJSON(t, abs(t, testdataTraces))
}

// TestSharedTraces: every shared trace, in one dataset.
func TestSharedTraces(t *testing.T) {
	traces, err := sharedTraces()
	if err != nil {
		t.Skip("../shared/fixtures is not beside the checkout (CI has it): ", err)
	}
	checkAgainstJSON(t, abs(t, traces))
}

// readmeQueries are the SQL blocks of the README's "Querying many traces"
// section that are DuckDB's (those before the Spark paragraph).
func readmeQueries(t *testing.T) []string {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## Querying many traces")
	if i < 0 {
		t.Fatal("README.md has no section Querying many traces")
	}
	s = s[i:]
	if j := strings.Index(s, "**Spark**"); j >= 0 {
		s = s[:j]
	}
	var qs []string
	for {
		i := strings.Index(s, "```sql\n")
		if i < 0 {
			break
		}
		s = s[i+len("```sql\n"):]
		j := strings.Index(s, "```")
		qs = append(qs, s[:j])
		s = s[j+3:]
	}
	return qs
}

// TestREADMEQueries: the README's DuckDB queries run as written over the
// shared traces laid out one directory per service, and find rows.
func TestREADMEQueries(t *testing.T) {
	qs := readmeQueries(t)
	if len(qs) < 4 {
		t.Fatalf("README has %d DuckDB queries, want the 4 of the section", len(qs))
	}
	traces, err := sharedTraces()
	if err != nil {
		t.Skip("the README's queries need traces with exceptions and GCs: ../shared/fixtures is not beside the checkout (CI has it): ", err)
	}
	dir := t.TempDir()
	// The shared traces enabled no EventCounters: a service of the
	// simulated runtime's counters joins the fleet for the counters query.
	traces = append(abs(t, traces), countersTrace(t, filepath.Join(dir, "fleet", "counters")))
	writeDataset(t, dir, traces)
	t.Chdir(dir)
	db := openDB(t)
	for i, q := range qs {
		rows, err := db.Query(q)
		if err != nil {
			t.Errorf("README query %d: %v\n%s", i+1, err, q)
			continue
		}
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for k := range vals {
				ptrs[k] = &vals[k]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			if n < 3 {
				t.Logf("query %d: %v", i+1, vals)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			t.Errorf("README query %d: %v", i+1, err)
		}
		rows.Close()
		if n == 0 {
			t.Errorf("README query %d found no rows:\n%s", i+1, q)
		}
	}
}

// TestREADMEExceptions: the README's exceptions query counts each thrown
// exception once, over a trace of a .NET Core runtime, which fires
// ExceptionThrownStop (a table of its own, without ExceptionType) after
// each ExceptionThrown_V1.
func TestREADMEExceptions(t *testing.T) {
	var q string
	for _, s := range readmeQueries(t) {
		if strings.Contains(s, `"ExceptionType"`) {
			q = s
		}
	}
	if q == "" {
		t.Fatal("README has no exceptions query")
	}
	dir := t.TempDir()
	tr := filepath.Join(dir, "exc.nettrace")
	b := simruntime.ExceptionTrace(4321, "System.InvalidOperationException", "System.InvalidOperationException", "System.ArgumentException")
	if err := os.WriteFile(tr, b, 0o644); err != nil {
		t.Fatal(err)
	}
	writeDataset(t, dir, []string{tr})
	t.Chdir(dir)
	db := openDB(t)
	if n := queryInt(t, db, `SELECT count(*) FROM read_parquet('ds/events/*/event=ExceptionThrownStop/*.parquet')`); n != 3 {
		t.Fatalf("%d ExceptionThrownStop rows, want 3", n)
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	got := map[string]int64{}
	for rows.Next() {
		var typ sql.NullString
		var thrown, traces int64
		var msg any
		if err := rows.Scan(&typ, &thrown, &traces, &msg); err != nil {
			t.Fatal(err)
		}
		got[typ.String] += thrown
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"System.InvalidOperationException": 2, "System.ArgumentException": 1}
	if d := diffMaps(want, got); d != "" {
		t.Errorf("README exceptions query (an empty type is NULL):\n%s", d)
	}
}

// countersTrace writes, in dir, a trace in which System.Runtime reports a
// mean counter (cpu-usage: 10, 20, then 60 a minute later) and a rate
// (gc-count: 3, 4, then 1) three times, and returns its path.
func countersTrace(t *testing.T, dir string) string {
	t.Helper()
	cpu := func(v float64) simruntime.Counter {
		return simruntime.Counter{Name: "cpu-usage", DisplayName: "CPU Usage", Units: "%", Value: v}
	}
	gcs := func(v float64) simruntime.Counter {
		return simruntime.Counter{Name: "gc-count", DisplayName: "GC Count", Increment: true, Value: v}
	}
	intervals := [][]simruntime.Counter{{cpu(10), gcs(3)}, {cpu(20), gcs(4)}}
	for range 58 { // intervals 1 s apart: the last one a minute after the first
		intervals = append(intervals, nil)
	}
	intervals = append(intervals, []simruntime.Counter{cpu(60), gcs(1)})
	b, _ := simruntime.CountersTrace(4321, intervals)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(dir, "host.nettrace")
	if err := os.WriteFile(tr, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestREADMECounters: the README's counters query averages a mean
// counter and adds up a rate, minute by minute.
func TestREADMECounters(t *testing.T) {
	var q string
	for _, s := range readmeQueries(t) {
		if strings.Contains(s, "event=EventCounters") {
			q = s
		}
	}
	if q == "" {
		t.Fatal("README has no counters query")
	}
	dir := t.TempDir()
	writeDataset(t, dir, []string{countersTrace(t, filepath.Join(dir, "fleet", "svc"))})
	t.Chdir(dir)
	db := openDB(t)
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var service, counter string
		var pid int64
		var minute time.Time
		var value float64
		if err := rows.Scan(&service, &pid, &minute, &counter, &value); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %d %s %s %g", service, pid, minute.UTC().Format("15:04"), counter, value))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"svc 4321 12:00 cpu-usage 15",
		"svc 4321 12:01 cpu-usage 60",
		"svc 4321 12:00 gc-count 7",
		"svc 4321 12:01 gc-count 1",
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("README counters query gives\n%s\nwant\n%s", g, w)
	}
}

// TestPartitionKeyFields: an EventSource event's fields named Event and
// Provider, like the hive partition keys of the table's folders, read
// back in DuckDB with their own values (Event_field, Provider_field), not
// the folder's.
func TestPartitionKeyFields(t *testing.T) {
	var ps [][]byte
	for i, s := range []string{"login", "logout"} {
		p := utf16z(s)
		p = append(p, utf16z("okta")...)
		p = binary.LittleEndian.AppendUint32(p, uint32(i+7))
		ps = append(ps, p)
	}
	b := simruntime.EventSourceTrace(4321, "MyCompany-Audit", "UserAction",
		[]simruntime.Field{{Name: "Event", Type: simruntime.TypeString}, {Name: "Provider", Type: simruntime.TypeString}, {Name: "Count", Type: simruntime.TypeInt32}}, ps...)
	dir := t.TempDir()
	tr := filepath.Join(dir, "audit.nettrace")
	if err := os.WriteFile(tr, b, 0o644); err != nil {
		t.Fatal(err)
	}
	writeDataset(t, dir, []string{tr})
	t.Chdir(dir)
	db := openDB(t)
	got := queryMap(t, db, `SELECT provider || '|' || event || '|' || "Event_field" || '|' || "Provider_field", "Count"::BIGINT
		FROM read_parquet('ds/events/provider=MyCompany-Audit/event=UserAction/*.parquet', union_by_name = true)`)
	want := map[string]int64{"MyCompany-Audit|UserAction|login|okta": 7, "MyCompany-Audit|UserAction|logout|okta": 8}
	if d := diffMaps(want, got); d != "" {
		t.Errorf("fields named like the partition keys:\n%s", d)
	}
}

// utf16z is s as an EventSource string field: UTF-16LE, NUL-terminated.
func utf16z(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return binary.LittleEndian.AppendUint16(b, 0)
}
