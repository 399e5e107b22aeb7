package trace

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/nettrace"
)

// shipped are the traces in testdata, readable on a fresh clone.
var shipped = []string{
	"../testdata/traces/eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace.zip",
	"../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip",
	"../testdata/traces/gcevents.etl.zip",
}

// sharedDir holds the larger real traces when ../shared is beside the
// checkout.
const sharedDir = "../../shared/fixtures/traces/perfview"

// allTraces is shipped plus every shared trace present.
func allTraces(t *testing.T) []string {
	out := append([]string(nil), shipped...)
	m, _ := filepath.Glob(filepath.Join(sharedDir, "*.zip"))
	out = append(out, m...)
	if len(m) == 0 {
		t.Logf("no shared traces in %s: checking only the %d shipped ones", sharedDir, len(shipped))
	}
	return out
}

// rec is what a test compares of an event.
type rec struct {
	Provider     string
	GUID         clrevents.GUID
	Name         string
	ID           uint16
	Version      uint8
	Task         uint16
	Opcode       uint8
	Level        uint8
	Keywords     uint64
	PID, TID     int64
	CPU          int
	Timestamp    int64
	Offset       int64
	PtrSize      int
	Payload      string
	Stack        int
	Act, RelAct  clrevents.GUID
	TimeUnixNano int64
}

func recOf(e *Event) rec {
	return rec{
		Provider: e.Provider(), GUID: e.ProviderGUID(), Name: e.Name(), ID: e.ID(), Version: e.Version(),
		Task: e.Task(), Opcode: e.Opcode(), Level: e.Level(), Keywords: e.Keywords(),
		PID: e.ProcessID(), TID: e.ThreadID(), CPU: e.CPU(), Timestamp: e.Timestamp(), Offset: e.Offset(),
		PtrSize: e.PointerSize(), Payload: string(e.Payload()), Stack: len(e.Stack()),
		Act: e.ActivityID(), RelAct: e.RelatedActivityID(), TimeUnixNano: e.Time().UnixNano(),
	}
}

func readAll(t *testing.T, r *Reader) []rec {
	t.Helper()
	var out []rec
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: event %d: %v", r.Name(), len(out), err)
		}
		out = append(out, recOf(e))
	}
}

func openAll(t *testing.T, path string, opts ...Option) []rec {
	t.Helper()
	r, err := Open(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return readAll(t, r)
}

// onlyReader hides every method but Read, as a pipe would.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestOpenMatchesFormatReaders(t *testing.T) {
	for _, path := range allTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			got := openAll(t, path)
			if len(got) == 0 {
				t.Fatal("no events")
			}
			// The format reader over the same file, in the same order.
			var n int
			if strings.Contains(path, ".etl") {
				er, err := etl.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer er.Close()
				for ; ; n++ {
					e, err := er.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if n >= len(got) || got[n].ID != e.ID || got[n].Timestamp != e.Timestamp || got[n].Payload != string(e.Payload) || got[n].GUID != e.ProviderGUID {
						t.Fatalf("event %d differs from etl's", n)
					}
				}
			} else {
				nr, err := nettrace.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer nr.Close()
				nr.SetOrder(nettrace.TimeOrder)
				for ; ; n++ {
					e, err := nr.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if n >= len(got) || got[n].ID != e.ID || got[n].Timestamp != e.Timestamp || got[n].Payload != string(e.Payload) || got[n].Provider != e.Provider {
						t.Fatalf("event %d differs from nettrace's", n)
					}
				}
			}
			if n != len(got) {
				t.Fatalf("front door gave %d events, the format reader %d", len(got), n)
			}
		})
	}
}

// TestStreams: the same events whether the trace comes as a file, through
// a reader that cannot seek, unzipped, or spooled to a temporary file.
func TestStreams(t *testing.T) {
	for _, path := range allTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := openAll(t, path)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			check := func(how string, r *Reader, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				defer r.Close()
				got := readAll(t, r)
				if len(got) != len(want) {
					t.Fatalf("%s: %d events, want %d", how, len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s: event %d:\n got %+v\nwant %+v", how, i, got[i], want[i])
					}
				}
			}
			r, err := NewReader(onlyReader{bytes.NewReader(data)}, WithName("pipe"))
			check("zip through a pipe", r, err)

			small := func(c *config) { c.memMax = 1 << 10 } // force the temporary file
			dir := t.TempDir()
			r, err = NewReader(onlyReader{bytes.NewReader(data)}, small, WithTempDir(dir))
			check("zip through a pipe, spooled to a file", r, err)
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("Close left %d temporary files", len(left))
			}

			member := unzipOne(t, data)
			r, err = NewReader(onlyReader{bytes.NewReader(member)})
			check("unzipped through a pipe", r, err)
			r, err = NewReader(onlyReader{bytes.NewReader(member)}, small, WithTempDir(dir))
			check("unzipped through a pipe, spooled", r, err)
			plain := filepath.Join(t.TempDir(), "trace.bin") // the name says nothing
			if err := os.WriteFile(plain, member, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err = Open(plain)
			check("unzipped file", r, err)
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("Close left %d temporary files", len(left))
			}
		})
	}
}

// unzipOne returns the trace member of a zip.
func unzipOne(t testing.TB, data []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		switch strings.ToLower(filepath.Ext(f.Name)) {
		case ".nettrace", ".netperf", ".etl":
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatal("no trace in the zip")
	return nil
}

func TestFileOrder(t *testing.T) {
	// In file order an EventPipe trace gives the same events, differently
	// ordered; an ETL log through a pipe is read without spooling.
	for _, path := range shipped {
		t.Run(filepath.Base(path), func(t *testing.T) {
			timeOrder := openAll(t, path)
			fileOrder := openAll(t, path, WithOrder(FileOrder))
			if len(timeOrder) != len(fileOrder) {
				t.Fatalf("file order: %d events, time order %d", len(fileOrder), len(timeOrder))
			}
			count := map[rec]int{}
			for _, e := range timeOrder {
				count[e]++
			}
			for _, e := range fileOrder {
				count[e]--
			}
			for e, n := range count {
				if n != 0 {
					t.Fatalf("event %+v: %d more in time order", e, n)
				}
			}
			for i := 1; i < len(timeOrder); i++ {
				if timeOrder[i].Timestamp < timeOrder[i-1].Timestamp && !strings.Contains(path, "netperf") {
					t.Fatalf("time order: event %d at %d before event %d at %d", i, timeOrder[i].Timestamp, i-1, timeOrder[i-1].Timestamp)
				}
			}
		})
	}
}

func TestEventShape(t *testing.T) {
	// The .NET 6 trace: EventPipe, schema events, CPU recorded or not.
	r, err := Open(shipped[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Format() != NetTrace || r.Info().PointerSize != 8 || r.Info().ClockFrequency == 0 {
		t.Errorf("info = %+v", r.Info())
	}
	sawSchema := false
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.ProcessID() <= 0 || e.ThreadID() <= 0 || e.Time().IsZero() || e.Provider() == "" {
			t.Errorf("event at %d: pid %d tid %d time %v provider %q", e.Offset(), e.ProcessID(), e.ThreadID(), e.Time(), e.Provider())
		}
		if typ, ok := e.Type(); ok {
			sawSchema = true
			info := typ.(*clrevents.EventInfo)
			if e.Name() != info.Name || e.Task() != info.Task || (e.nt.Keywords == 0 && e.Keywords() != info.Keywords) {
				t.Errorf("%s: name %q task %d keywords %#x; schema says %q task %d keywords %#x", info, e.Name(), e.Task(), e.Keywords(), info.Name, info.Task, info.Keywords)
			}
			ev, err := e.Decode()
			if err != nil {
				t.Fatalf("%s: %v", info, err)
			}
			if ev.(clrevents.Event).Info() != info {
				t.Errorf("decoded %s, want %s", ev.(clrevents.Event).Info(), info)
			}
		}
	}
	if !sawSchema {
		t.Fatal("no schema events in the .NET 6 trace")
	}
}

func TestETLShape(t *testing.T) {
	r, err := Open(shipped[2])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Format() != ETL || r.Info().ProcessID != -1 || r.Info().NumProcessors != 8 {
		t.Errorf("info = %+v", r.Info())
	}
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	// TraceEvent: "Windows Kernel/EventTrace PID=179356; TID=179388; ProceNum=0; DataLen=392".
	if e.Provider() != "Windows Kernel" || e.Name() != "EventTrace" || e.ProcessID() != 179356 || e.ThreadID() != 179388 || e.CPU() != 0 || len(e.Payload()) != 392 {
		t.Errorf("header event: %q %q pid %d tid %d cpu %d len %d", e.Provider(), e.Name(), e.ProcessID(), e.ThreadID(), e.CPU(), len(e.Payload()))
	}
	if ev, err := e.Decode(); err != nil || ev.(*kernelevents.EventTraceHeaderV2).NumberOfProcessors != 8 {
		t.Errorf("Decode of the kernel header: %v, %v", ev, err)
	}
	// Then kernel rundown, then "Microsoft-Windows-DotNETRuntime/Runtime/Start
	// PID=179596; TID=168672; ProceNum=4; DataLen=203".
	for e.Provider() == "Windows Kernel" {
		if !strings.HasPrefix(e.Name(), "EventTrace") {
			t.Errorf("kernel event %q", e.Name())
		}
		if e, err = r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if e.Provider() != "Microsoft-Windows-DotNETRuntime" || e.Name() != "RuntimeInformationStart" || e.ProcessID() != 179596 || e.ThreadID() != 168672 || e.CPU() != 4 || len(e.Payload()) != 203 {
		t.Errorf("runtime start: %q %q pid %d tid %d cpu %d len %d", e.Provider(), e.Name(), e.ProcessID(), e.ThreadID(), e.CPU(), len(e.Payload()))
	}
	ev, err := e.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ev.(*clrevents.RuntimeInformationStart); !ok {
		t.Errorf("decoded %T", ev)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zipOf := func(members map[string][]byte) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		names := slices.Sorted(maps.Keys(members))
		for _, name := range names {
			w, _ := zw.Create(name)
			w.Write(members[name])
		}
		zw.Close()
		return buf.Bytes()
	}
	nettraceData := unzipOne(t, mustRead(t, shipped[0]))
	cases := []struct {
		name    string
		data    []byte
		wantIs  error
		wantMsg string
	}{
		{"empty.nettrace", nil, ErrEmpty, "empty.nettrace: empty input"},
		{"text.etl", []byte("hello, this is not a trace at all, not even close, I promise you that......."), ErrFormat, "text.etl: not a trace"},
		{"short.bin", []byte("PK"), ErrFormat, "short.bin: not a trace"},
		{"two.zip", zipOf(map[string][]byte{"a.etl": {1}, "b.nettrace": {2}}), nil, "two.zip: zip archive holds 2 trace files (.nettrace, .netperf, .etl), want exactly one (members: a.etl, b.nettrace)"},
		{"none.zip", zipOf(map[string][]byte{"notes.txt": {1}}), nil, "none.zip: zip archive holds 0"},
		// One member without an extension is read as the trace: its
		// bytes say what it is.
		{"one-unnamed.zip", zipOf(map[string][]byte{"-": {1}}), ErrFormat, "one-unnamed.zip: -: not a trace"},
		{"badmember.zip", zipOf(map[string][]byte{"b.nettrace": []byte("garbage")}), ErrFormat, "badmember.zip: b.nettrace: not a trace"},
		{"cut.nettrace", nettraceData[:200], nil, "cut.nettrace: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := write(c.name, c.data)
			for _, how := range []string{"file", "pipe"} {
				var r *Reader
				var err error
				if how == "file" {
					r, err = Open(p)
				} else {
					r, err = NewReader(onlyReader{bytes.NewReader(c.data)}, WithName(p))
				}
				if err == nil {
					// A cut file opens; reading it must fail, naming it.
					for err == nil {
						_, err = r.Next()
					}
					r.Close()
					if err == io.EOF {
						t.Fatalf("%s: read to the end without an error", how)
					}
				}
				msg := strings.TrimPrefix(err.Error(), dir+string(filepath.Separator))
				if !strings.HasPrefix(msg, c.wantMsg) {
					t.Errorf("%s: error %q, want it to start with %q", how, msg, c.wantMsg)
				}
				if c.wantIs != nil && !errors.Is(err, c.wantIs) {
					t.Errorf("%s: error %v is not %v", how, err, c.wantIs)
				}
			}
		})
	}
	// Archives macOS made (their AppleDouble metadata beside the trace),
	// and a trace member without an extension alone in its archive (zip
	// - - writes standard input as "-"), are read.
	for name, members := range map[string]map[string][]byte{
		"mac.zip":  {"sub/t.nettrace": nettraceData, "__MACOSX/sub/._t.nettrace": []byte("\x00\x05\x16\x07 AppleDouble")},
		"dash.zip": {"-": nettraceData},
	} {
		r, err := Open(write(name, zipOf(members)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		n, err := tracetest.Drain(r.Next)
		r.Close()
		if err != io.EOF || n == 0 {
			t.Errorf("%s: %d events, then %v", name, n, err)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing.nettrace")); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.nettrace") {
		t.Errorf("missing file: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeError(t *testing.T) {
	r, err := Open(shipped[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal("no schema event with a payload")
		}
		if _, ok := e.Type(); !ok || len(e.Payload()) == 0 {
			continue
		}
		e.nt.Payload = e.nt.Payload[:0]
		_, err = e.Decode()
		var de *DecodeError
		if !errors.As(err, &de) || de.Offset != e.Offset() || !errors.Is(err, clrevents.ErrShortPayload) {
			t.Fatalf("cut payload: %v", err)
		}
		if !strings.Contains(err.Error(), "executioncheckpoints.nettrace.zip: eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace: event at offset "+strconv.FormatInt(e.Offset(), 10)+": ") {
			t.Errorf("error %q does not name the file and offset", err)
		}
		return
	}
}

// TestAllocs: the front door adds no allocation per event to the format
// reader's: reading a whole trace through it allocates what the format
// reader does plus a constant (the caches, made once).
func TestAllocs(t *testing.T) {
	for _, path := range allTraces(t) {
		if strings.Contains(path, ".etl") {
			continue // etl's own reader allocates per file, not per event; checked by its tests
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			member := unzipOne(t, mustRead(t, path))
			events := 0
			front := testing.AllocsPerRun(2, func() {
				r, err := NewReader(bytes.NewReader(member), WithOrder(FileOrder))
				if err != nil {
					t.Fatal(err)
				}
				events = 0
				for {
					if _, err := r.Next(); err != nil {
						break
					}
					events++
				}
			})
			raw := testing.AllocsPerRun(2, func() {
				r, err := nettrace.NewReader(bytes.NewReader(member))
				if err != nil {
					t.Fatal(err)
				}
				for {
					if _, err := r.Next(); err != nil {
						break
					}
				}
			})
			extra := front - raw
			t.Logf("%d events: %.0f allocations through the front door, %.0f through nettrace", events, front, raw)
			if extra > 100 {
				t.Errorf("the front door allocates %.0f more than nettrace for %d events", extra, events)
			}
		})
	}
}

var osReadFile = os.ReadFile

func unzipOneF(f *testing.F, data []byte) []byte { return unzipOne(f, data) }

func TestKernelNames(t *testing.T) {
	for g, k := range etwClasses().groups {
		guid := etl.KernelGroupGUID(g)
		if guid.IsZero() {
			t.Errorf("group %#x (%s) has no GUID in package etl", g, k.task)
			continue
		}
		if kernelGroupOf(guid) != k {
			t.Errorf("group %#x: GUID %v does not resolve to %s", g, guid, k.task)
		}
	}
	header := kernelGroupOf(etl.EventTraceGUID)
	if got := header.eventName(0); got != "EventTrace" {
		t.Errorf("header: %q", got)
	}
	if got := kernelGroupOf(etl.ProcessGUID).eventName(1); got != "Process/Start" {
		t.Errorf("process start: %q", got)
	}
	if got := kernelGroupOf(etl.ProcessGUID).eventName(200); got != "Process/Opcode(200)" {
		t.Errorf("unknown opcode: %q", got)
	}
}

// TestNewReaderShortLiveHead: a NetTrace V6 stream whose header and
// TraceBlock are shorter than the sniffing length, and which then pauses
// (a live session of an idle process), opens without waiting for more.
func TestNewReaderShortLiveHead(t *testing.T) {
	head := []byte("Nettrace")
	head = binary.LittleEndian.AppendUint32(head, 0)
	head = binary.LittleEndian.AppendUint32(head, 6) // major
	head = binary.LittleEndian.AppendUint32(head, 0) // minor
	var tb []byte
	for _, v := range []uint16{2026, 11, 1, 23, 12, 0, 0, 0} {
		tb = binary.LittleEndian.AppendUint16(tb, v)
	}
	tb = binary.LittleEndian.AppendUint64(tb, 1)
	tb = binary.LittleEndian.AppendUint64(tb, 10_000_000)
	tb = binary.LittleEndian.AppendUint32(tb, 8) // pointer size
	tb = binary.LittleEndian.AppendUint32(tb, 0) // no key/value pairs
	head = binary.LittleEndian.AppendUint32(head, uint32(len(tb))|1<<24)
	head = append(head, tb...)
	if len(head) >= sniffLen {
		t.Fatalf("header of %d bytes tests nothing", len(head))
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write(head) // then nothing
	done := make(chan error, 1)
	go func() {
		r, err := NewReader(pr)
		if err == nil && r.Info().Version != 6 {
			err = fmt.Errorf("version %d", r.Info().Version)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("NewReader waited for more than the stream had sent")
	}
}

// TestAppendJSON: every event of the repository's traces writes its fields
// through Event.AppendJSON as valid JSON, by whatever describes it (the
// schema, EventSource metadata, the kernel's parsers and layouts), and
// the rest give clrevents.ErrUnknownEvent.
func TestAppendJSON(t *testing.T) {
	for _, name := range []string{
		"../testdata/traces/eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace.zip",
		"../testdata/traces/gcevents.etl.zip",
	} {
		r, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		var out []byte
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err = e.AppendJSON(out[:0])
			_, schemaErr := e.Decode()
			switch {
			case errors.Is(err, clrevents.ErrUnknownEvent):
				kinds["unknown"]++
			case err != nil:
				t.Fatalf("%s/%s: %v", e.Provider(), e.Name(), err)
			case !json.Valid(out):
				t.Fatalf("%s/%s: invalid JSON %s", e.Provider(), e.Name(), out)
			case schemaErr == nil:
				if strings.HasPrefix(e.Provider(), "Microsoft-") {
					kinds["schema"]++
				} else {
					kinds["kernel"]++
				}
			case e.nt != nil && e.nt.Metadata != nil:
				kinds["metadata"]++
			default:
				kinds["trace"]++
			}
			txt, terr := e.AppendText(nil)
			if (terr == nil) != (err == nil) || err == nil && len(txt) == 0 && len(out) > 2 {
				t.Fatalf("%s/%s: text %q, %v; JSON %v", e.Provider(), e.Name(), txt, terr, err)
			}
		}
		r.Close()
		t.Logf("%s: %v", name, kinds)
		if kinds["schema"] == 0 || kinds["metadata"]+kinds["kernel"]+kinds["trace"] == 0 {
			t.Errorf("%s: %v: want events decoded by the schema and by the trace", name, kinds)
		}
	}
}
