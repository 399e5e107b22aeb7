package baseline

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFormatMSec(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0.000"},
		{0.0004, "0.000"},
		{0.0005, "0.001"},
		{17.046, "17.046"},
		{11607.5885, "11,607.589"},
		{8184.6741, "8,184.674"},
		{999.9995, "1,000.000"},
		{1234567.8915, "1,234,567.892"},
		{-2.5, "-2.500"},
	} {
		if got := FormatMSec(c.in); got != c.want {
			t.Errorf("FormatMSec(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	const text = "EVENT 8,184.674: Microsoft-Windows-DotNETRuntime/Runtime/Start PID=179596; TID=168672; PName=Process(179596); ProceNum=4; DataLen=203; ClrInstanceID=8; Sku=CoreClr; CommandLine=a; b; c; RuntimeDllPath=C:\\Dev\\runtime\\artif...; \n" +
		"EVENT 17.046: Windows Kernel/EventTrace/EndExtension PID=-1; TID=-1; PName=; ProceNum=7; DataLen=36; \n" +
		"COUNT Microsoft-Windows-DotNETRuntime/Runtime/Start:1\n"
	f, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Events) != 2 || f.Counts["Microsoft-Windows-DotNETRuntime/Runtime/Start"] != 1 {
		t.Fatalf("got %+v", f)
	}
	e := f.Events[0]
	if e.MSec != 8184.674 || e.Provider != "Microsoft-Windows-DotNETRuntime" || e.Task != "Runtime" || e.Opcode != "Start" ||
		e.PID != 179596 || e.TID != 168672 || e.ProcNum != 4 || e.DataLen != 203 || e.Line != 1 {
		t.Errorf("event 0: %+v", e)
	}
	if v, _ := e.Field("CommandLine"); v != "a; b; c" {
		t.Errorf("CommandLine %q", v)
	}
	if v, _ := e.Field("RuntimeDllPath"); !Truncated(v) {
		t.Errorf("RuntimeDllPath %q should read as truncated", v)
	}
	if len(e.Fields) != 4 {
		t.Errorf("fields %+v", e.Fields)
	}
	k := f.Events[1]
	if k.Provider != "Windows Kernel" || k.Name != "EventTrace/EndExtension" || k.PID != -1 || k.TID != -1 || k.PName != "" {
		t.Errorf("event 1: %+v", k)
	}
	if _, err := Parse(strings.NewReader("EVENT x: y\n")); err == nil || !strings.HasPrefix(err.Error(), "1: ") {
		t.Errorf("bad line: err %v", err)
	}
}

func TestSameValue(t *testing.T) {
	for _, c := range []struct {
		ours any
		want string
		same bool
	}{
		{json.Number("65536"), "65,536", true},
		{json.Number("-2305843009213693952"), "-2,305,843,009,213,6...", true},
		{json.Number("-2305843009213693952"), "-2,305,843,009,213,7...", false},
		{"0x70", "0x00000070", true},
		{json.Number("112"), "0x00000070", true},
		{"Process|Thread|ImageLoad", "Process|Thread|Image...", true},
		{"ReadWrite|Delete", "ReadWrite, Delete", true},
		{true, "True", true},
		{"2020-07-29T00:06:22.4039008Z", "20/07/29 00:06:22.40...", true},
		{"Microsoft® Windows® Operating System", "Microsoft® Windows® ...", true},
		{json.Number("1"), "2", false},
	} {
		if got := SameValue(c.ours, c.want); got != c.same {
			t.Errorf("SameValue(%v, %q) = %v", c.ours, c.want, got)
		}
	}
}
