package profile

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/tracetest"
	"github.com/clrgo/clrevents/trace"
)

const coreclr30 = "../testdata/traces/eventpipe-dotnetcore3.0-win-x64-objver4.nettrace.zip"

// TestBuildTruncated: the first 2 MB of the .NET Core 3.0 trace give a CPU
// profile of the samples in them, with an error that says the trace was
// cut short; the whole trace's profile has more.
func TestBuildTruncated(t *testing.T) {
	data := tracetest.Bytes(t, coreclr30)
	whole := buildBytes(t, data, CPU)
	cut := data[:2<<20]
	r, err := trace.NewReader(bytes.NewReader(cut), trace.WithName("cut.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(r, Options{Kind: CPU})
	if p == nil || len(p.Samples) == 0 {
		t.Fatalf("no profile from the first 2 MB: %v", err)
	}
	if !errors.Is(err, trace.ErrDamaged) || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), "cut.nettrace: ") {
		t.Errorf("error %v: want the cut named", err)
	}
	if p.Events >= whole.Events || p.Events < whole.Events/4 {
		t.Errorf("%d samples from the first 2 MB, %d from the whole trace", p.Events, whole.Events)
	}
}

// TestBuildUndecoded: a method event whose last string lost its
// terminator does not decode; the profile is built without it, and the
// error names the event and its offset.
func TestBuildUndecoded(t *testing.T) {
	data := tracetest.Bytes(t, coreclr30)
	r, err := trace.NewReader(bytes.NewReader(data), trace.WithOrder(trace.FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	var at int64 = -1
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal("no MethodLoadVerbose event")
		}
		if strings.HasPrefix(e.Name(), "MethodLoadVerbose") {
			// The payload ends with MethodSignature's terminator, then
			// ClrInstanceID (V1): overwrite the terminator.
			p := e.Payload()
			i := bytes.Index(data[e.Offset():], p)
			if i < 0 {
				t.Fatal("payload not found")
			}
			end := int(e.Offset()) + i + len(p) - 2 // ClrInstanceID
			data[end-2], data[end-1] = 'x', 0
			at = e.Offset()
			break
		}
	}
	r, _ = trace.NewReader(bytes.NewReader(data), trace.WithName("bad.nettrace"))
	p, err := Build(r, Options{Kind: CPU})
	if p == nil || len(p.Samples) == 0 {
		t.Fatalf("no profile: %v", err)
	}
	if !errors.Is(err, trace.ErrUndecoded) || !strings.Contains(err.Error(), "bad.nettrace: event at offset "+strconv.FormatInt(at, 10)) ||
		!strings.Contains(err.Error(), "MethodLoadVerbose") {
		t.Errorf("error %v: want the event at %d named", err, at)
	}
}

func buildBytes(t *testing.T, data []byte, k Kind) *Profile {
	t.Helper()
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(r, Options{Kind: k})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
