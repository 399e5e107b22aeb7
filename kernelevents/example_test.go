package kernelevents_test

import (
	"encoding/binary"
	"fmt"

	"github.com/clrgo/clrevents/kernelevents"
)

// Decode a kernel event by its class GUID, its opcode (the event ID here)
// and its version, with its pointer size, and read it through its family.
// The payload is a Thread/DCStart event as a 64-bit kernel logs it.
func Example() {
	payload := make([]byte, 72)
	binary.LittleEndian.PutUint32(payload[0:], 1234) // ProcessID
	binary.LittleEndian.PutUint32(payload[4:], 5678) // ThreadID

	class := kernelevents.MustParseGUID("3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c") // Thread
	p, _ := kernelevents.ProviderByGUID(class)
	d := kernelevents.NewDecoder()
	d.OlderVersions = true // a newer kernel's version decodes with the newest known
	ev, n, err := d.Decode(p, 3, 3, 8, payload)
	if err != nil {
		fmt.Println(err)
		return
	}
	if t, ok := ev.(kernelevents.ThreadEvent); ok {
		f := t.ThreadFields()
		fmt.Println(f.Kind, f.ProcessID, f.ThreadID, n)
	}
	fmt.Println(ev.Descriptor().Provider, ev.Info().DisplayName, string(ev.AppendJSON(nil)))
	// Output:
	// ThreadDCStart 1234 5678 72
	// Windows Kernel Thread/DCStart {"ProcessID":1234,"ThreadID":5678,"StackBase":"0x0","StackLimit":"0x0","UserStackBase":"0x0","UserStackLimit":"0x0","Affinity":"0x0","Win32StartAddr":"0x0","TebBase":"0x0","SubProcessTag":"0x0","BasePriority":0,"PagePriority":0,"IoPriority":0,"ThreadFlags":0}
}
