package trace

import (
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/kernelevents"
)

// The names TraceEvent gives a kernel event from other events of the
// log: a file operation's file (its FileKey's or FileObject's name from
// the FileIO events that name files), a registry operation's key (its
// KeyHandle's name from the registry events that name keys), a context
// switch's old thread's process. TraceEvent keeps one map of an object's
// address (a FileKey, a FileObject, a registry KCB) to its name over time
// (KernelTraceEventParserState's fileIDToName), which these follow:
//
//   - FileIO/Name, FileCreate, FileDelete and FileRundown name their
//     FileKey (the field kernelevents calls FileObject); FileIO/Create
//     names its FileObject, the file opened, with its path;
//   - a registry event of an opcode that names a key (Create, Open,
//     Delete, EnumerateKey, SetInformation to Close: TraceEvent's
//     NameIsKeyName) names its KeyHandle with its KeyName, or where that
//     is empty with the handle's name so far (so an unnamed handle gets
//     an empty name);
//   - a name holds from its event on, until another names the address
//     again. Nothing removes one: TraceEvent drops names on FileDelete,
//     FileRundown and Cleanup only in a real-time session, never reading
//     a log;
//   - a rundown's name (FileIO/FileRundown and FileDelete, and the
//     registry's KCBCreate, as TraceEvent counts them) of an address that
//     no event before named holds from the log's start: the rundown at
//     the end of a log names the files opened before it began. The Reader
//     reads the log a second time for them, once, on the first lookup
//     that finds no name (see endNames).
//
// The map is made on the first event that names something: a log without
// such events costs only the opcode and class tests of noteKernel.

// The kernel classes whose events name files and registry keys.
var (
	fileIOGUID    = kernelevents.ProviderFileIo.GUID()
	registryGUID  = kernelevents.ProviderRegistry.GUID()
	diskIOGUID    = kernelevents.ProviderDiskIo.GUID()
	pageFaultGUID = kernelevents.ProviderPageFault.GUID()
	imageGUID     = kernelevents.ProviderImage.GUID() // whose FileName userPaths turns
)

// namesFile says whether a FileIO opcode names a file: Name (0),
// FileCreate (32), FileDelete (35), FileRundown (36), Create (64).
func namesFile(op uint8) bool {
	return op == 0 || op == 32 || op == 35 || op == 36 || op == 64
}

// fileRundown says whether a FileIO naming opcode is one TraceEvent
// takes as a rundown: FileDelete (35) and FileRundown (36).
func fileRundown(op uint8) bool { return op == 35 || op == 36 }

// namesKey says whether a registry opcode names its KeyHandle's key
// (TraceEvent's RegistryTraceData.NameIsKeyName): the key operations,
// not the value operations (Query, SetValue, DeleteValue, QueryValue,
// EnumerateValueKey, QueryMultipleValue), whose KeyName is the value's
// name.
func namesKey(op uint8) bool {
	switch op {
	case 13, 14, 15, 16, 18, 19:
		return false
	}
	return true
}

// keyRundown says whether a registry opcode is the one TraceEvent takes
// as a rundown: 22 (KCBCreate).
func keyRundown(op uint8) bool { return op == 22 }

// nameOf is what a naming event says: the address it names and the name,
// ok false for other events (or a payload that does not decode). lookup
// gives the address's name so far, for a registry event that names its
// key with an empty KeyName.
func nameOf(v clrimpl.Event, lookup func(uint64) string) (addr uint64, name string, ok bool) {
	switch v := v.(type) {
	case kernelevents.FileIONameEvent:
		f := v.FileIONameFields()
		return f.FileObject, f.FileName.String(), true
	case kernelevents.FileIOCreateEvent:
		f := v.FileIOCreateFields()
		return f.FileObject, f.FileName.String(), true
	case kernelevents.RegistryEvent:
		f := v.RegistryFields()
		name := f.KeyName.String()
		if name == "" {
			name = lookup(f.KeyHandle)
		}
		return f.KeyHandle, name, true
	}
	return 0, "", false
}

// noteName keeps the name a FileIO or registry event gives an address.
func (r *Reader) noteName(e *Event) {
	x := e.et
	switch {
	case x.ProviderGUID == fileIOGUID && namesFile(x.Opcode):
	case x.ProviderGUID == registryGUID && x.Opcode >= 10 && namesKey(x.Opcode):
	default:
		return
	}
	addr, name, ok := nameOf(e.kernelValue(), func(a uint64) string { return r.objNames[a] })
	if !ok {
		return
	}
	if r.objNames == nil {
		r.objNames = map[uint64]string{}
	}
	r.objNames[addr] = name
}

// objectName is the name of the address a at the current event, as
// TraceEvent's fileIDToName gives it (see the top of this file): the
// last name given so far, else the name a rundown later in the log gives
// an address no event named before it.
func (r *Reader) objectName(a uint64) (string, bool) {
	if name, ok := r.objNames[a]; ok {
		return name, true
	}
	if n := r.ends(); n != nil {
		name, ok := n.rundownNames[a]
		return name, ok
	}
	return "", false
}

// fileName is the name of a file operation's file: its FileKey's, else
// its FileObject's (key 0 is not looked up: a single-key event's).
func (r *Reader) fileName(key, object uint64) string {
	if name, ok := r.objectName(key); ok {
		return name
	}
	if object != 0 {
		name, _ := r.objectName(object)
		return name
	}
	return ""
}

// FileName is the name of the file a kernel file system operation, disk
// I/O or hard fault of an ETW log is on, as TraceEvent gives it (its
// FileName, or for FileIO/DirEnum and DirNotify, whose payload's
// FileName is the pattern, its DirectoryName): the payload's for
// FileIO/Create and the FileIO events that name files; for the others
// (Cleanup, Close, Flush, Read, Write, SetInfo, Delete, Rename,
// QueryInfo, FSControl, DirEnum, DirNotify) the name the log gave the
// operation's FileKey, else its FileObject, before it; for a DiskIO Read
// or Write and a hard fault (Memory/HardFault) the name of its
// FileObject (TraceEvent's FileKey). The map of names is described in
// names.go: a name holds from the event that gives it on; an address
// that only a rundown names (FileIO/FileRundown, as at a log's end)
// has that name from the log's start. The kernel's path
// (\Device\HarddiskVolume3\…) is turned into a drive letter (C:\…) as
// TraceEvent turns it, by the log's VolumeMapping events (Reader.UserPath;
// a log without them keeps the kernel's paths). It is "" when no event
// names the file; ok is false for events of other kinds
// (FileIO/OperationEnd among them).
func (e *Event) FileName() (name string, ok bool) {
	name, ok = e.kernelFileName()
	if name != "" {
		name = e.r.UserPath(name)
	}
	return name, ok
}

// kernelFileName is FileName's name as the kernel gives it.
func (e *Event) kernelFileName() (name string, ok bool) {
	if e.et == nil || e.r == nil {
		return "", false
	}
	switch g := e.et.ProviderGUID; {
	case g == fileIOGUID, g == diskIOGUID && (e.et.Opcode == 10 || e.et.Opcode == 11), g == pageFaultGUID && e.et.Opcode == 32:
	default:
		return "", false
	}
	switch v := e.kernelValue().(type) {
	case kernelevents.FileIONameEvent:
		return v.FileIONameFields().FileName.String(), true
	case kernelevents.FileIOCreateEvent:
		return v.FileIOCreateFields().FileName.String(), true
	case kernelevents.FileIOSimpleOpEvent:
		f := v.FileIOSimpleOpFields()
		return e.r.fileName(f.FileKey, f.FileObject), true
	case kernelevents.FileIOReadWriteEvent:
		f := v.FileIOReadWriteFields()
		return e.r.fileName(f.FileKey, f.FileObject), true
	case kernelevents.FileIOInfoEvent:
		f := v.FileIOInfoFields()
		return e.r.fileName(f.FileKey, f.FileObject), true
	case kernelevents.FileIODirEnumEvent:
		f := v.FileIODirEnumFields()
		return e.r.fileName(f.FileKey, f.FileObject), true
	case kernelevents.DiskIOEvent:
		return e.r.fileName(v.DiskIOFields().FileObject, 0), true
	case *kernelevents.MemoryHardFaultV2:
		return e.r.fileName(v.FileObject, 0), true
	}
	return "", false
}

// KeyName is the registry key a kernel registry event of an ETW log is
// about, as TraceEvent gives it (its KeyName): for an event that names a
// key (see namesKey) the payload's KeyName where it is not empty, else,
// and for the value operations (whose payload KeyName is the value's
// name, TraceEvent's ValueName), the name the log gave its KeyHandle
// before it (names.go). TraceEvent does not join a relative name to its
// handle's key: neither does KeyName, so a key opened relative to another
// has the relative name its event gives. "" when nothing names the key;
// ok is false for other events.
func (e *Event) KeyName() (name string, ok bool) {
	if e.et == nil || e.r == nil || e.et.ProviderGUID != registryGUID {
		return "", false
	}
	v, isReg := e.kernelValue().(kernelevents.RegistryEvent)
	if !isReg {
		return "", false
	}
	f := v.RegistryFields()
	if namesKey(e.et.Opcode) {
		if name := f.KeyName.String(); name != "" {
			return name, true
		}
	}
	name, _ = e.r.objectName(f.KeyHandle)
	return name, true
}

// OldProcess is the process of the thread a context switch (Thread/
// CSwitch) of an ETW log switched from, as TraceEvent gives it
// (OldProcessID, OldProcessName): the process the log's Thread events
// give its OldThreadID (as ProcessID finds a thread's process), -1 when
// none does, and that process's executable's name (as ProcessName finds
// it), "" when none names it. ok is false for other events.
func (e *Event) OldProcess() (pid int64, name string, ok bool) {
	if e.et == nil || e.r == nil || e.et.ProviderGUID != threadGUID || e.et.Opcode != 36 {
		return -1, "", false
	}
	v, isCS := e.kernelValue().(*kernelevents.ThreadCSwitchV2)
	if !isCS {
		return -1, "", false
	}
	pid, _, _ = e.threadsProcess(v.OldThreadID)
	return pid, e.r.processName(pid, e.et.Timestamp), true
}

// A Derived value is one TraceEvent shows among a kernel event's fields
// that its payload does not hold, computed from the log's other events:
// a file operation's, disk I/O's or hard fault's FileName (DirectoryName
// for FileIO/DirEnum and DirNotify), a context switch's OldProcessID and
// OldProcessName, a ready thread's AwakenedProcessID (the process the
// log's Thread events give its AwakenedThreadID, -1 when none does), and
// a registry event's KeyName (Event.KeyName) as
// KeyHandleName: the payload's field is KeyName already, and holds what
// TraceEvent shows as KeyName for a key operation that names one and as
// ValueName for a value operation. An event type has the same Derived
// values, by name and kind, in every event of it. clrdump prints them
// after the payload's fields.
type Derived struct {
	Name  string // TraceEvent's name of the field
	Str   string // a string's value
	Int   int64  // an integer's value (IsInt)
	IsInt bool
}

// AppendDerived appends the event's Derived values to dst (none for most
// events): FileName's, KeyName's, OldProcess's and a ready thread's
// AwakenedProcessID, under TraceEvent's
// names, where the payload's fields do not already show them (the
// FileName of FileIO/Create and of the events that name files is the
// payload's).
func (e *Event) AppendDerived(dst []Derived) []Derived {
	if e.et == nil || e.r == nil || !e.r.kernelSeen {
		return dst
	}
	switch g := e.et.ProviderGUID; {
	case g == fileIOGUID:
		if namesFile(e.et.Opcode) {
			return dst
		}
		if name, ok := e.FileName(); ok {
			field := "FileName"
			if e.et.Opcode == 72 || e.et.Opcode == 77 {
				field = "DirectoryName"
			}
			dst = append(dst, Derived{Name: field, Str: name})
		}
	case g == diskIOGUID, g == pageFaultGUID:
		if name, ok := e.FileName(); ok {
			dst = append(dst, Derived{Name: "FileName", Str: name})
		}
	case g == registryGUID:
		// TraceEvent's KeyName, under a name of its own: the payload's
		// field is KeyName.
		if name, ok := e.KeyName(); ok {
			dst = append(dst, Derived{Name: "KeyHandleName", Str: name})
		}
	case g == threadGUID && e.et.Opcode == 50: // Dispatcher/ReadyThread
		if v, ok := e.kernelValue().(*kernelevents.DispatcherReadyThreadV2); ok {
			pid, _, _ := e.threadsProcess(v.AwakenedThreadID)
			dst = append(dst, Derived{Name: "AwakenedProcessID", Int: pid, IsInt: true})
		}
	case g == threadGUID:
		if pid, name, ok := e.OldProcess(); ok {
			dst = append(dst, Derived{Name: "OldProcessID", Int: pid, IsInt: true}, Derived{Name: "OldProcessName", Str: name})
		}
	}
	return dst
}
