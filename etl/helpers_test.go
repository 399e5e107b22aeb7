package etl

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/clrimpl"
)

const (
	gcZip       = "../testdata/traces/gcevents.etl.zip"
	gcBaseline  = "../testdata/traces/gcevents.baseline.txt"
	netZip      = "../../shared/fixtures/traces/perfview/net.4.5.2.x86.etl.zip"
	netBaseline = "../../shared/fixtures/traces/perfview/net.4.5.2.x86.baseline.txt"
)

var (
	runtimeGUID = clrimpl.MustParseGUID("e13c0d23-ccbc-4e12-931b-d9cc2eee27e4")
	rundownGUID = clrimpl.MustParseGUID("a669021c-c450-4609-a035-5af59af4df18")
	privateGUID = clrimpl.MustParseGUID("763fd754-7086-4dfe-95eb-c01a46faf4ca")
)

// clrProviders maps the CLR provider names to their GUIDs.
var clrProviders = map[string]clrimpl.GUID{
	"Microsoft-Windows-DotNETRuntime":        runtimeGUID,
	"Microsoft-Windows-DotNETRuntimeRundown": rundownGUID,
	"Microsoft-Windows-DotNETRuntimePrivate": privateGUID,
}

// readZipETL returns the bytes of the one .etl inside the zip at name.
func readZipETL(name string) ([]byte, error) {
	zr, err := zip.OpenReader(name)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if strings.EqualFold(path.Ext(f.Name), ".etl") {
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			return io.ReadAll(rc)
		}
	}
	return nil, fmt.Errorf("%s: no .etl inside", name)
}

// unzipETL is readZipETL for tests.
func unzipETL(t testing.TB, name string) []byte {
	t.Helper()
	b, err := readZipETL(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gcETL returns the gcevents trace.
func gcETL(t testing.TB) []byte { return unzipETL(t, gcZip) }

// netETL returns the net.4.5.2.x86 trace, or skips the test when the
// shared fixtures are not there.
func netETL(t testing.TB) []byte {
	t.Helper()
	if _, err := os.Stat(netZip); err != nil {
		t.Skipf("net.4.5.2.x86.etl.zip is not in ../../shared/fixtures/traces/perfview (only the shared fixture set has it): %v", err)
	}
	return unzipETL(t, netZip)
}

// ev is a copy of the facts of one event.
type ev struct {
	Offset     int64
	Buffer     int
	Kind       HeaderKind
	GUID       clrimpl.GUID
	ID         uint16
	Version    uint8
	Opcode     uint8
	Task       uint16
	HookID     uint16
	PID, TID   uint32
	Proc       uint16
	TS         int64
	Ptr        int
	Flags      uint16
	DataLen    int
	PayloadSum uint64
	Stack      int
	Ext        int
	Payload    []byte
}

func copyEvent(e *Event) ev {
	var sum uint64
	for _, c := range e.Payload {
		sum = sum*131 + uint64(c)
	}
	return ev{e.Offset, e.Buffer, e.HeaderKind, e.ProviderGUID, e.ID, e.Version, e.Opcode, e.Task, e.HookID,
		e.ProcessID, e.ThreadID, e.ProcessorNumber, e.Timestamp, e.PointerSize, e.Flags, len(e.Payload), sum,
		len(e.Stack), len(e.Extended), append([]byte(nil), e.Payload...)}
}

// traceLogDrops reports whether TraceLog (which made the baselines)
// removes e from its event stream as a "bookkeeping" event, so the
// baseline neither dumps nor counts it (TraceLog.cs, CopyRawEvents):
// method load/rundown events of methods that are neither jitted nor
// dynamic, DCStop/unload rundown of methods and IL-to-native maps.
func traceLogDrops(e ev) bool {
	flags := func() uint32 { // MethodFlags, after three UInt64 and two UInt32
		if len(e.Payload) < 36 {
			return 0
		}
		return uint32(e.Payload[32]) | uint32(e.Payload[33])<<8 | uint32(e.Payload[34])<<16 | uint32(e.Payload[35])<<24
	}
	const dynamic, jitted = 0x1, 0x8
	switch e.GUID {
	case runtimeGUID:
		switch e.ID {
		case 143: // MethodLoadVerbose
			return flags()&(dynamic|jitted) == 0
		case 144: // MethodUnloadVerbose
			return flags()&jitted == 0
		case 139, 140, 190: // MethodDCStartVerboseV2, MethodDCEndVerboseV2, MethodILToNativeMap
			return true
		}
	case rundownGUID:
		switch e.ID {
		case 143: // MethodDCStartVerbose
			return flags()&(dynamic|jitted) == 0
		case 144, 150: // MethodDCEndVerbose, MethodDCEndILToNativeMap
			return true
		}
	}
	return false
}

// readAll reads every event, failing the test on any error.
func readAll(t testing.TB, r *Reader) []ev {
	t.Helper()
	var out []ev
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		out = append(out, copyEvent(e))
	}
}

// readUntilErr reads events until an error, returning them and the error
// (io.EOF at a clean end). It gives up after limit calls.
func readUntilErr(r *Reader, limit int) ([]ev, error) {
	var out []ev
	for i := 0; i < limit; i++ {
		e, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, copyEvent(e))
	}
	return out, errors.New("too many events")
}

func mustReader(t testing.TB, b []byte) *Reader {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustFileOrder(t testing.TB, b []byte) *Reader {
	t.Helper()
	r, err := NewFileOrderReader(io.MultiReader(bytes.NewReader(b))) // hide ReaderAt
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// n0 formats an integer with thousands separators.
func n0(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// cut20 shortens a value as the baseline dumper does.
func cut20(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}
