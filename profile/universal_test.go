package profile

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/trace"
	pprof "github.com/google/pprof/profile"
)

// TestUniversalCPU builds the CPU profile of testdata's universal trace
// (nettrace's universalTrace writes it: a machine-wide Linux collection's
// shape): the samples' stacks resolve through its ProcessSymbol and
// ProcessMapping events, each stack weighs its samples' Values, the
// processes are named by ProcessCreate and ExistingProcess, and the
// native frame keeps its file's ELF build ID for pprof to find its
// symbols by.
func TestUniversalCPU(t *testing.T) {
	r, err := trace.Open("../testdata/traces/universal-synthetic.nettrace")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := Build(r, Options{Kind: CPU})
	if err != nil {
		t.Fatal(err)
	}
	var folded bytes.Buffer
	if err := p.WriteFolded(&folded); err != nil {
		t.Fatal(err)
	}
	const want = `other (99);libcoreclr!coreclr_execute_assembly;?!? 1
testhost (1234);App!App.Program::Main(string[]);libcoreclr!? 2
testhost (1234);libcoreclr!coreclr_execute_assembly;App!App.Program::Main(string[]);System.Private.CoreLib!System.String::GetHashCode() 3
`
	if folded.String() != want {
		t.Errorf("folded:\n%s\nwant:\n%s", folded.String(), want)
	}
	if len(p.SampleTypes) != 2 || p.SampleTypes[1] != (ValueType{"cpu", "samples"}) {
		t.Errorf("sample types %v", p.SampleTypes)
	}
	// Six cpu events (the cswitch is not one): samples 3, 1 and 1.
	var n, v int64
	for _, s := range p.Samples {
		n += s.Values[0]
		v += s.Values[1]
	}
	if n != 5 || v != 6 || p.Events != 5 {
		t.Errorf("%d samples of weight %d from %d events, want 5, 6, 5", n, v, p.Events)
	}

	var buf bytes.Buffer
	if err := p.WritePprof(&buf); err != nil {
		t.Fatal(err)
	}
	pp, err := pprof.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.CheckValid(); err != nil {
		t.Fatal(err)
	}
	// The native frame's mapping: the file's range and build ID.
	found := 0
	for _, m := range pp.Mapping {
		if m.BuildID != "" {
			found++
			// It holds a frame no symbol names (libcoreclr!?): pprof
			// is to symbolize it from the file.
			if m.BuildID != "4b60568bc25641b07e93f84f98c77093f3b279f7" || m.Start != 0x7f0000000000 || m.Limit != 0x7f0000100000 || m.Offset != 0x1000 || !strings.HasSuffix(m.File, "/libcoreclr.so") || m.HasFunctions {
				t.Errorf("the native mapping: %+v", m)
			}
		}
	}
	// Every libcoreclr frame (its symbol, and code no symbol names, in
	// either process: mapped at the same base) is in that one mapping.
	if found != 1 {
		t.Errorf("%d mappings with a build ID, want 1 (libcoreclr.so's)", found)
	}
	for _, l := range pp.Location {
		if l.Mapping != nil && strings.HasSuffix(l.Mapping.File, "libcoreclr.so") && l.Mapping.BuildID == "" {
			t.Errorf("location %#x is in a mapping of libcoreclr.so without its build ID", l.Address)
		}
	}
	if pp.PeriodType == nil || pp.PeriodType.Unit != "samples" || pp.PeriodType.Type != "cpu" || pp.SampleType[1].Type != "cpu" {
		t.Errorf("period type %v", pp.PeriodType)
	}

	// One process picked: no process frames.
	r2, err := trace.Open("../testdata/traces/universal-synthetic.nettrace")
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	p2, err := Build(r2, Options{Kind: CPU, PIDs: []int64{1234}})
	if err != nil {
		t.Fatal(err)
	}
	folded.Reset()
	if err := p2.WriteFolded(&folded); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(folded.String(), "(1234)") || strings.Contains(folded.String(), "?!?") {
		t.Errorf("process 1234 alone:\n%s", folded.String())
	}
}

// TestUniversalCPUBadValue: a cpu sample whose Value does not decode is an
// error that names the event.
func TestUniversalCPUBadValue(t *testing.T) {
	b, err := os.ReadFile("../testdata/traces/universal-synthetic.nettrace")
	if err != nil {
		t.Fatal(err)
	}
	// The first cpu sample's payload is one byte, 0x01, the last of its
	// record, which the next event's (compressed headers, no padding)
	// follows; making it 0x80 leaves the varint unended.
	r, err := trace.NewReader(bytes.NewReader(b), trace.WithOrder(trace.FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	var off int64 = -1
	cpu := false
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		if cpu {
			off = e.Offset() - 1
			break
		}
		if e.Provider() == universalEvents && e.Name() == "cpu" {
			if p := e.Payload(); len(p) != 1 || p[0] != 1 {
				t.Fatalf("cpu payload % x", p)
			}
			cpu = true
		}
	}
	r.Close()
	if off < 0 || b[off] != 1 {
		t.Fatalf("the cpu sample's payload is not at %d", off)
	}
	bad := bytes.Clone(b)
	bad[off] = 0x80
	r, err = trace.NewReader(bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = Build(r, Options{Kind: CPU})
	if err == nil || !strings.Contains(err.Error(), "Universal.Events/cpu") || !strings.Contains(err.Error(), "Value") {
		t.Errorf("Build: %v", err)
	}
}
