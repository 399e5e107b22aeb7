// Package tracetest holds what the tests of several packages do with the
// traces in testdata.
package tracetest

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/clrgo/clrevents/clrevents"
	"github.com/clrgo/clrevents/clrimpl"
)

// Bytes returns the trace at path: the file's bytes, or for a .zip the
// bytes of its one .nettrace, .netperf or .etl member.
func Bytes(tb testing.TB, path string) []byte {
	tb.Helper()
	if !strings.HasSuffix(path, ".zip") {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		switch name := strings.ToLower(f.Name); {
		case strings.HasSuffix(name, ".nettrace"), strings.HasSuffix(name, ".netperf"), strings.HasSuffix(name, ".etl"):
			rc, err := f.Open()
			if err != nil {
				tb.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				tb.Fatalf("%s: %s: %v", path, f.Name, err)
			}
			return b
		}
	}
	tb.Fatalf("%s: no trace in the zip", path)
	return nil
}

// CutCopy writes the first half of the file at path to a temporary file of
// the same name, as a download or copy that stopped leaves it, and returns
// its path.
func CutCopy(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	cut := filepath.Join(tb.TempDir(), filepath.Base(path))
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		tb.Fatal(err)
	}
	return cut
}

// Drain calls next until it returns an error, and returns how many
// events it gave before and that error.
func Drain[E any](next func() (E, error)) (int, error) {
	for n := 0; ; n++ {
		if _, err := next(); err != nil {
			return n, err
		}
	}
}

// Deflate compresses b as a zip member's deflated data.
func Deflate(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestSpeed)
	fw.Write(b)
	if err := fw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// Zip returns an archive of one member, name, holding data stored or
// deflated (method), whose headers give the CRC-32 and uncompressed size
// passed: tests give wrong ones on purpose.
func Zip(tb testing.TB, name string, method uint16, data []byte, crc uint32, usize uint64) []byte {
	tb.Helper()
	raw := data
	if method == zip.Deflate {
		raw = Deflate(tb, data)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: method, CRC32: crc,
		CompressedSize64: uint64(len(raw)), UncompressedSize64: usize})
	if err == nil {
		_, err = w.Write(raw)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// File writes data to a temporary file called name and returns its path.
func File(tb testing.TB, name string, data []byte) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Members returns the names (with their folders) and the bytes of every
// file in the zip at path, in the archive's order: a diagnostics
// session's logs, for one.
func Members(tb testing.TB, path string) (names []string, data [][]byte) {
	tb.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			tb.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			tb.Fatalf("%s: %s: %v", path, f.Name, err)
		}
		names = append(names, f.Name)
		data = append(data, b)
	}
	return names, data
}

// NewerGCStart returns the trace at path, the .NET Core 3.0 trace of
// testdata/traces, with its GCStart events (478) made version 3, a version no table has: the
// metadata record of the runtime's event 1 (its provider's name, the ID,
// an empty name, keywords 1, version 2) says 3 instead.
func NewerGCStart(tb testing.TB, path string) []byte {
	tb.Helper()
	data := bytes.Clone(Bytes(tb, path))
	var pat []byte
	for _, u := range utf16.Encode([]rune("Microsoft-Windows-DotNETRuntime\x00")) {
		pat = binary.LittleEndian.AppendUint16(pat, u)
	}
	pat = binary.LittleEndian.AppendUint32(pat, 1) // event ID
	pat = append(pat, 0, 0)                        // no name
	pat = binary.LittleEndian.AppendUint64(pat, 1) // keywords: GC
	pat = binary.LittleEndian.AppendUint32(pat, 2) // version
	i := bytes.Index(data, pat)
	if i < 0 || bytes.Count(data, pat) != 1 {
		tb.Fatal("GCStart's metadata record is not in the trace once")
	}
	binary.LittleEndian.PutUint32(data[i+len(pat)-4:], 3)
	return data
}

// OwnPackage stands for a generated package of a user's own (one made
// with clrgen from a newer manifest) in a program that links clrevents
// too: a table of clrevents' types that keep holds, under the package's
// names ("pkg:GCStart_V2") and with values of a Go type of its own, which
// the analyses do not know; and, with newer, the runtime's GCStart
// version 3 as NewerGCStart writes it, which clrevents lacks (decoded as
// version 2's fields).
func OwnPackage(pkg string, keep func(*clrevents.EventInfo) bool, newer bool) *clrimpl.Table {
	var types []clrimpl.EventType
	for _, info := range clrevents.Events() {
		if keep(info) {
			types = append(types, ownType(pkg, info, info.Version))
		}
	}
	if newer {
		v2, _ := clrevents.Lookup(clrevents.ProviderRuntime, 1, 2)
		types = append(types, ownType(pkg, v2, 3))
	}
	return clrimpl.NewTable(pkg, clrevents.Providers(), types)
}

func ownType(pkg string, info *clrevents.EventInfo, version uint8) *ownEventType {
	t := &ownEventType{info: info, desc: *info.Descriptor()}
	t.desc.Version = version
	t.desc.Name = fmt.Sprintf("%s:%s", pkg, info.Name)
	if version != info.Version {
		t.desc.Name = fmt.Sprintf("%s:%s_V%d", pkg, strings.TrimSuffix(info.Name, fmt.Sprintf("_V%d", info.Version)), version)
	}
	return t
}

type ownEventType struct {
	info *clrevents.EventInfo
	desc clrimpl.Descriptor
}

func (t *ownEventType) Descriptor() *clrimpl.Descriptor { return &t.desc }

// New returns a value of the type; a stack walk's is a clrimpl.StackWalk,
// as a generated package's are.
func (t *ownEventType) New() clrimpl.Event {
	ev := t.info.New()
	if _, ok := ev.(clrimpl.StackWalk); ok {
		return &ownWalk{ownEvent{Event: ev, typ: t}}
	}
	return &ownEvent{Event: ev, typ: t}
}

type ownEvent struct {
	clrimpl.Event
	typ *ownEventType
}

func (e *ownEvent) Descriptor() *clrimpl.Descriptor { return &e.typ.desc }

type ownWalk struct{ ownEvent }

func (e *ownWalk) AppendStackWalk(dst []uint64) []uint64 {
	return e.Event.(clrimpl.StackWalk).AppendStackWalk(dst)
}

// baselineAttr is an attribute of an EventPipe baseline's event dump.
var baselineAttr = regexp.MustCompile(`(\w+)= *"([^"]*)"`)

// BaselineEvents returns the attributes (MSec, EventName and the
// payload's fields, as written) of each event named name (TraceEvent's
// Task/Opcode: "GC/Start") that an EventPipe trace's baseline at path
// dumps: lines of `Provider/Name, count, <Event MSec="…" … />`, where
// TraceEvent shows the first events of each kind.
func BaselineEvents(tb testing.TB, path, name string) []map[string]string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []map[string]string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, `EventName="`+name+`"`) {
			continue
		}
		attrs := map[string]string{}
		for _, m := range baselineAttr.FindAllStringSubmatch(line, -1) {
			attrs[m[1]] = m[2]
		}
		out = append(out, attrs)
	}
	if len(out) == 0 {
		tb.Fatalf("%s: no %s event", path, name)
	}
	return out
}
