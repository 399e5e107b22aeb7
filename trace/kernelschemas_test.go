package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/clrgo/clrevents/etl"
	"github.com/clrgo/clrevents/internal/baseline"
)

// TestKernelSchemasBaseline: the kernel and merge events that package etl
// decodes by layout (etl.KernelSchema: disk and file I/O, TCP and UDP,
// hard faults, process counters, system configuration, image identity)
// give the values TraceEvent's baseline prints for every field both name.
func TestKernelSchemasBaseline(t *testing.T) {
	const dir = "../../shared/fixtures/traces/perfview/"
	if _, err := os.Stat(dir + "net.4.5.2.x86.etl.zip"); err != nil {
		t.Skip("shared traces absent (../shared beside the checkout)")
	}
	bl, err := baseline.ParseFile(dir + "net.4.5.2.x86.baseline.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir + "net.4.5.2.x86.etl.zip")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type key struct {
		ms, name string
		len      int
	}
	got := map[key][]map[string]any{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		x := e.ETL()
		if etl.KernelSchema(x) == nil {
			continue
		}
		out, ok := x.AppendKernelFields(nil, true)
		if !ok {
			t.Errorf("%s/%s at offset %d: no fields", e.Provider(), e.Name(), e.Offset())
			continue
		}
		d := json.NewDecoder(bytes.NewReader(out))
		d.UseNumber()
		var fields map[string]any
		if err := d.Decode(&fields); err != nil {
			t.Fatalf("%s: invalid JSON %s", e.Name(), out)
		}
		k := key{baseline.FormatMSec(r.ETL().RelativeMSec(e.Timestamp())), e.Provider() + "/" + e.Name(), len(e.Payload())}
		got[k] = append(got[k], fields)
	}
	// Fields TraceEvent shows other than as the payload holds them.
	differ := map[string]bool{
		// Flag names, with the priority bits (0x60000) taken out.
		"Windows Kernel/DiskIO/Read IrpFlags": true, "Windows Kernel/DiskIO/Write IrpFlags": true,
		"Windows Kernel/DiskIO/FlushBuffers IrpFlags": true,
		// The name of the process ProcessID names, from TraceEvent's
		// process table (without ".exe"); the payload's is often empty.
		"Windows Kernel/SystemConfig/Services ProcessName": true,
		// TraceEvent reads it at offset 12, inside the 64-bit ImageSize;
		// the payload's ProcessID at offset 16 is the image's process.
		"KernelTraceControl/ImageID ProcessID": true,
	}
	lines, values := 0, 0
	for _, b := range bl.Events {
		cands, ok := got[key{b.MSecText, b.FullName(), b.DataLen}]
		if !ok {
			continue
		}
		lines++
		for _, f := range b.Fields {
			if _, ours := cands[0][f.Name]; !ours || differ[b.FullName()+" "+f.Name] {
				continue
			}
			match := false
			for _, c := range cands {
				match = match || baseline.SameValue(c[f.Name], f.Value)
			}
			if !match {
				t.Errorf("line %d: %s %s = %v, baseline %s", b.Line, b.FullName(), f.Name, cands[0][f.Name], f.Value)
			}
			values++
		}
	}
	if lines < 80 || values < 400 {
		t.Fatalf("only %d baseline lines, %d values compared", lines, values)
	}
	t.Logf("%d baseline lines, %d values compared", lines, values)
}
