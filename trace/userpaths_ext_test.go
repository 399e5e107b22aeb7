package trace_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clrgo/clrevents/internal/etltest"
	"github.com/clrgo/clrevents/kernelevents"
	"github.com/clrgo/clrevents/trace"
)

// TestPayloadPaths: in a log that names its volumes (SysConfig
// VolumeMapping and SystemPaths), the FileName of an image's events and
// of FileIO's naming and Create events decodes with the drive letter, as
// TraceEvent's properties give it, in Decode's value, AppendText and
// AppendJSON alike; a value held from Decode keeps it when the Reader
// reads the event's payload for its own ends (Event.FileName); decoding
// allocates nothing.
func TestPayloadPaths(t *testing.T) {
	const (
		fileIO, load = 0x04, 0x03
		none         = 0xFFFFFFFF
		pid, tid     = 20, 55
	)
	kernel := func(group, op, version uint8, ts int64, ev kernelevents.Event) []byte {
		return etltest.System(group, op, version, tid, pid, ts, ev.Encode(nil, 8))
	}
	// The SysConfig events a merge adds, with a header that names their
	// class's GUID, as the merge writes them.
	sysConfig := func(op uint8, ts int64, ev kernelevents.Event) []byte {
		return etltest.Classic(kernelevents.ProviderSysConfig.GUID(), op, 0, none, none, ts, ev.Encode(nil, 8))
	}
	u := kernelevents.UTF16Of
	events := [][]byte{
		sysConfig(33, 1, &kernelevents.SystemPathsV0{SystemDirectory: u(`C:\Windows\system32`), SystemWindowsDirectory: u(`C:\Windows\`)}),
		sysConfig(35, 2, &kernelevents.VolumeMappingV0{NtPath: u(`\Device\HarddiskVolume2\`), DosPath: u(`C:\`)}),
		kernel(load, 10, 2, 10, &kernelevents.ImageLoadV2{ImageBase: 0x7ff800000000, ImageSize: 4096, ProcessID: pid,
			FileName: u(`\Device\HarddiskVolume2\Program Files\app\app.dll`)}),
		kernel(fileIO, 36, 2, 20, &kernelevents.FileIOFileRundownV2{FileObject: 0xffffa00000002000, FileName: u(`\Device\HarddiskVolume2\$Mft`)}),
		kernel(fileIO, 64, 3, 30, &kernelevents.FileIOCreateV3{IrpPtr: 0xffffa00000001000, FileObject: 0xffffa00000003000, IssuingThreadId: tid,
			FileName: u(`\Device\HarddiskVolume3\elsewhere.txt`)}), // no mapping names volume 3
	}
	wants := map[string]string{
		"Image/Load":         `C:\Program Files\app\app.dll`,
		"FileIO/FileRundown": `C:\$Mft`,
		"FileIO/Create":      `\Device\HarddiskVolume3\elsewhere.txt`,
	}
	seen := 0
	feedStacks(t, events, func(e *trace.Event, _ bool) {
		want, ok := wants[e.DisplayName()]
		if !ok {
			return
		}
		seen++
		ev, err := e.Decode()
		if err != nil {
			t.Fatalf("%s: %v", e.DisplayName(), err)
		}
		got := fileNameOf(t, ev)
		if got != want {
			t.Errorf("%s: Decode's FileName %q, want %q", e.DisplayName(), got, want)
		}
		if name, ok := e.FileName(); ok && name != want {
			t.Errorf("%s: Event.FileName %q, want %q", e.DisplayName(), name, want)
		}
		if again := fileNameOf(t, ev); again != want {
			t.Errorf("%s: Decode's value changed to %q after Event.FileName", e.DisplayName(), again)
		}
		text, err := e.AppendText(nil)
		if err != nil || !strings.Contains(string(text), `FileName=`+quote(want)) {
			t.Errorf("%s: AppendText %s (%v), want FileName %q", e.DisplayName(), text, err, want)
		}
		js, err := e.AppendJSON(nil)
		var fields struct{ FileName string }
		if err == nil {
			err = json.Unmarshal(js, &fields)
		}
		if err != nil || fields.FileName != want {
			t.Errorf("%s: AppendJSON %s (%v), want FileName %q", e.DisplayName(), js, err, want)
		}
		if n := testing.AllocsPerRun(50, func() { e.Decode() }); n != 0 {
			t.Errorf("%s: Decode allocates %v times", e.DisplayName(), n)
		}
	})
	if seen != len(wants) {
		t.Errorf("%d of the %d events seen", seen, len(wants))
	}
}

func fileNameOf(t *testing.T, ev any) string {
	t.Helper()
	switch v := ev.(type) {
	case kernelevents.ImageEvent:
		return v.ImageFields().FileName.String()
	case kernelevents.FileIONameEvent:
		return v.FileIONameFields().FileName.String()
	case kernelevents.FileIOCreateEvent:
		return v.FileIOCreateFields().FileName.String()
	}
	t.Fatalf("%T has no FileName", ev)
	return ""
}

// quote is s as AppendText writes a string: a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
