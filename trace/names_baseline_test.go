package trace

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/baseline"
	"github.com/clrgo/clrevents/kernelevents"
)

// TestKernelFileNamesBaseline: the 4.5.2 trace's disk I/Os and hard
// faults have the FileName TraceEvent's baseline prints, from the names
// its FileIO events (FileCreate, FileDelete, FileRundown) give their
// FileObjects, most of them in the rundown at the log's end (which
// holds from its start), with the kernel's device paths turned into
// drive letters by the log's SysConfig/VolumeMapping events, as
// TraceEvent turns them.
func TestKernelFileNamesBaseline(t *testing.T) {
	fileNamesBaseline(t, 15, func(_ *Reader, e *Event) (string, bool) { return e.FileName() })
}

// TestUserPathBaseline: Reader.UserPath turns the kernel's paths of the
// 4.5.2 trace's Image events (\Device\HarddiskVolume2\…, \SystemRoot\…)
// into the FileName TraceEvent's baseline prints, by the log's
// SysConfig/VolumeMapping and SystemPaths events.
func TestUserPathBaseline(t *testing.T) {
	kernel := 0
	fileNamesBaseline(t, 20, func(r *Reader, e *Event) (string, bool) {
		v, ok := e.kernelValue().(kernelevents.ImageEvent)
		if !ok {
			return "", false
		}
		p := v.ImageFields().FileName.String()
		if strings.HasPrefix(p, `\Device\`) || strings.HasPrefix(p, `\SystemRoot\`) {
			kernel++
		}
		return r.UserPath(p), true
	})
	if kernel == 0 {
		t.Error("no image of the log has a kernel path")
	}
}

// TestPayloadPathsBaseline: the FileName that Decode gives the 4.5.2
// trace's Image events is the one TraceEvent's baseline prints, with
// drive letters. (The baseline prints none of the log's FileIO naming
// events; TestPayloadPaths has them.)
func TestPayloadPathsBaseline(t *testing.T) {
	kinds := map[string]bool{}
	fileNamesBaseline(t, 20, func(r *Reader, e *Event) (string, bool) {
		ev, err := e.Decode()
		if err != nil {
			return "", false
		}
		f := pathField(ev)
		if f == nil {
			return "", false
		}
		kinds[e.DisplayName()] = true
		return f.String(), true
	})
	if !kinds["Image/DCStart"] || !kinds["Image/Load"] {
		t.Errorf("events compared: %v; want Image/DCStart and Image/Load among them", kinds)
	}
}

// fileNamesBaseline compares the FileName of the 4.5.2 log's baseline
// lines with what name gives their events (ok false: none), at least
// min lines.
func fileNamesBaseline(t *testing.T, min int, name func(*Reader, *Event) (string, bool)) {
	t.Helper()
	r, bl := openNet452(t)
	got := map[lineKey][]string{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n, ok := name(r, e)
		if !ok {
			continue
		}
		k := lineKey{baseline.FormatMSec(r.et.RelativeMSec(e.Timestamp())), e.Provider() + "/" + e.DisplayName(), len(e.Payload())}
		got[k] = append(got[k], n)
	}
	lines := 0
	for i := range bl.Events {
		b := &bl.Events[i]
		want, ok := b.Field("FileName")
		cands, ours := got[lineKey{b.MSecText, b.FullName(), b.DataLen}]
		if !ok || !ours {
			continue
		}
		lines++
		if !slices.ContainsFunc(cands, func(c string) bool { return baseline.SameValue(c, want) }) {
			t.Errorf("line %d: %s FileName %q, baseline %s", b.Line, b.FullName(), cands[0], want)
		}
	}
	if lines < min {
		t.Fatalf("only %d baseline lines compared", lines)
	}
	t.Logf("%d baseline lines compared", lines)
}

// TestUserPath: the rules of TraceEvent's KernelToUserDriveMapping, on
// mappings a test gives.
func TestUserPath(t *testing.T) {
	r := &Reader{}
	if got := r.UserPath(`\Device\HarddiskVolume2\x`); got != `\Device\HarddiskVolume2\x` {
		t.Errorf("no mappings: %q", got)
	}
	r.drives = &drives{system: "C:", prefixes: []drivePrefix{
		{`\Windows\`, `C:\Windows\`}, {`\??\`, ""}, {`\Device\HarddiskVolume2\`, `C:\`},
		{`\Device\HarddiskVolume20\`, `E:\`}, {`\Device\Mup\`, `\\`},
	}}
	for _, c := range []struct{ in, want string }{
		{`\Device\HarddiskVolume2\Users\a.txt`, `C:\Users\a.txt`},
		{`\device\harddiskvolume2\Users\a.txt`, `C:\Users\a.txt`}, // any case
		{`\Device\HarddiskVolume20\b`, `E:\b`},                    // the whole prefix, to its backslash
		{`\??\D:\c`, `D:\c`},
		{`\Device\Mup\server\share\f`, `\\server\share\f`},
		{`\Windows\System32\x.dll`, `C:\Windows\System32\x.dll`},
		{`\Device\HarddiskVolume3\d`, `\Device\HarddiskVolume3\d`}, // unmapped
		{`\Device\HarddiskVolume2`, `\Device\HarddiskVolume2`},     // shorter than a prefix
		{`\Device\VhdHardDisk{1}\OS\Windows\System32\y.dll`, `C:\Windows\System32\y.dll`},
		{`\Device\X\Files\windows\z`, `C:\windows\z`},
		{"", ""},
	} {
		if got := r.UserPath(c.in); got != c.want {
			t.Errorf("UserPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
