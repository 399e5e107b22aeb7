package etl

import (
	"github.com/clrgo/clrevents/clrimpl"
	"github.com/clrgo/clrevents/dynamic"
)

// The payload layouts of kernel logger events that have no parser of
// their own here (disk and file I/O, TCP/IP and UDP/IP, hard faults,
// process counters, system configuration, the log's extensions) and of
// the system and image descriptions a merge adds. The layouts are the
// kernel's MOF classes (DiskIo_TypeGroup1, TcpIp_TypeGroup1, …), with the
// field names TraceEvent shows where it shows the payload's field as it
// is, as package dynamic's descriptions (KernelSchema), which its
// interpreter decodes.

// kernelDef is the layout of some opcodes of a class from a version on.
type kernelDef struct {
	class      clrimpl.GUID
	opcodes    []uint8
	minVersion uint8
	schema     *dynamic.Description
}

// layoutField is a field of a kernel layout: package dynamic's.
type layoutField = dynamic.Field

func kFld(name string, k dynamic.Kind) layoutField { return layoutField{Name: name, Kind: k} }

func kU8(name string) layoutField    { return kFld(name, dynamic.Uint8) }
func kU16(name string) layoutField   { return kFld(name, dynamic.Uint16) }
func kI16(name string) layoutField   { return kFld(name, dynamic.Int16) }
func kU32(name string) layoutField   { return kFld(name, dynamic.Uint32) }
func kI32(name string) layoutField   { return kFld(name, dynamic.Int32) }
func kU64(name string) layoutField   { return kFld(name, dynamic.Uint64) }
func kI64(name string) layoutField   { return kFld(name, dynamic.Int64) }
func kPtr(name string) layoutField   { return kFld(name, dynamic.Pointer) }
func kSizeT(name string) layoutField { return kFld(name, dynamic.SizeT) }

// kHexPtr is a pointer-sized value shown in hex.
func kHexPtr(name string) layoutField {
	return layoutField{Name: name, Kind: dynamic.SizeT, Format: dynamic.FormatHex}
}
func kStr(name string) layoutField { return kFld(name, dynamic.String16) }
func kHex32(name string) layoutField {
	return layoutField{Name: name, Kind: dynamic.Uint32, Format: dynamic.FormatHex}
}
func kPort(name string) layoutField {
	return layoutField{Name: name, Kind: dynamic.Uint16, Format: dynamic.FormatPort}
}
func kIpv4(name string) layoutField {
	return layoutField{Name: name, Kind: dynamic.Uint32, Format: dynamic.FormatIPv4}
}

func kIpv6(name string) layoutField {
	return layoutField{Name: name, Kind: dynamic.Binary, Format: dynamic.FormatIPv6, Length: 16}
}

// kChars is a fixed array of n UTF-16 characters, NUL-padded.
func kChars(name string, n int) layoutField {
	return layoutField{Name: name, Kind: dynamic.Array, Count: n, Format: dynamic.FormatPadded,
		Elem: &layoutField{Kind: dynamic.Char16}}
}

func kFields(fs ...layoutField) []layoutField { return fs }

// The TCP/IP and UDP/IP layouts, for IPv4 (ip = kIpv4) and IPv6.
func tcpBasic(ip func(string) layoutField) []layoutField {
	return kFields(kU32("PID"), kU32("size"), ip("daddr"), ip("saddr"), kPort("dport"), kPort("sport"), kU32("seqnum"), kPtr("connid"))
}

func tcpSend(ip func(string) layoutField) []layoutField {
	return kFields(kU32("PID"), kU32("size"), ip("daddr"), ip("saddr"), kPort("dport"), kPort("sport"),
		kU32("startime"), kU32("endtime"), kU32("seqnum"), kPtr("connid"))
}

func tcpConnect(ip func(string) layoutField) []layoutField {
	return kFields(kU32("PID"), kU32("size"), ip("daddr"), ip("saddr"), kPort("dport"), kPort("sport"),
		kU16("mss"), kU16("sackopt"), kU16("tsopt"), kU16("wsopt"), kU32("rcvwin"), kI16("rcvwinscale"), kI16("sndwinscale"),
		kU32("seqnum"), kPtr("connid"))
}

func processCounters() []layoutField {
	fs := kFields(kU32("ProcessID"), kU32("PageFaultCount"), kU32("HandleCount"), kU32("Reserved"))
	for _, n := range []string{"PeakVirtualSize", "PeakWorkingSetSize", "PeakPagefileUsage", "QuotaPeakPagedPoolUsage",
		"QuotaPeakNonPagedPoolUsage", "VirtualSize", "WorkingSetSize", "PagefileUsage", "QuotaPagedPoolUsage",
		"QuotaNonPagedPoolUsage", "PrivatePageCount"} {
		fs = append(fs, kSizeT(n))
	}
	return fs
}

func groupMasks() []layoutField {
	var fs []layoutField
	for _, n := range []string{"1", "2", "3", "4", "5", "6", "7", "8"} {
		fs = append(fs, kU32("GroupMask"+n))
	}
	return append(fs, kU32("KernelEventVersion"))
}

// SysConfigGUID is the classic event class of the system paths, volumes
// and build information a merge adds (TraceEvent's "SysConfig" events of
// the kernel: BuildInfo, SystemPaths, UnknownVolume, VolumeMapping).
var SysConfigGUID = clrimpl.MustParseGUID("9b79ee91-b5fd-41c0-a243-4248e266e9d0")

var kernelDefs = []kernelDef{
	// DiskIo_TypeGroup1..3; version 3 adds the issuing thread.
	{class: KernelGroupGUID(GroupDiskIO), opcodes: []uint8{10, 11}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kU32("DiskNumber"), kHex32("IrpFlags"), kU32("TransferSize"), kU32("Reserved"), kI64("ByteOffset"),
		kPtr("FileObject"), kPtr("Irp"), kU64("HighResResponseTime"))}},
	{class: KernelGroupGUID(GroupDiskIO), opcodes: []uint8{10, 11}, minVersion: 3, schema: &dynamic.Description{Fields: kFields(
		kU32("DiskNumber"), kHex32("IrpFlags"), kU32("TransferSize"), kU32("Reserved"), kI64("ByteOffset"),
		kPtr("FileObject"), kPtr("Irp"), kU64("HighResResponseTime"), kU32("IssuingThreadId"))}},
	{class: KernelGroupGUID(GroupDiskIO), opcodes: []uint8{12, 13, 15}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(kPtr("Irp"))}},
	{class: KernelGroupGUID(GroupDiskIO), opcodes: []uint8{12, 13, 15}, minVersion: 3, schema: &dynamic.Description{Fields: kFields(kPtr("Irp"), kU32("IssuingThreadId"))}},
	{class: KernelGroupGUID(GroupDiskIO), opcodes: []uint8{14}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kU32("DiskNumber"), kHex32("IrpFlags"), kU64("HighResResponseTime"), kPtr("Irp"))}},
	{class: KernelGroupGUID(GroupDiskIO), opcodes: []uint8{14}, minVersion: 3, schema: &dynamic.Description{Fields: kFields(
		kU32("DiskNumber"), kHex32("IrpFlags"), kU64("HighResResponseTime"), kPtr("Irp"), kU32("IssuingThreadId"))}},
	// PageFault_HardFault.
	{class: KernelGroupGUID(GroupPageFault), opcodes: []uint8{32}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kI64("InitialTime"), kU64("ReadOffset"), kPtr("VirtualAddress"), kPtr("FileObject"), kU32("TThreadId"), kU32("ByteCount"))}},
	// FileIo_Name: name, create, delete and rundown of a file object's name.
	{class: KernelGroupGUID(GroupFileIO), opcodes: []uint8{0, 32, 35, 36}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kPtr("FileObject"), kStr("FileName"))}},
	// TcpIp_SendIPV4, _TypeGroup1, _TypeGroup2, _Fail and their IPv6 forms.
	{class: KernelGroupGUID(GroupTcpIP), opcodes: []uint8{10}, minVersion: 2, schema: &dynamic.Description{Fields: tcpSend(kIpv4)}},
	{class: KernelGroupGUID(GroupTcpIP), opcodes: []uint8{11, 13, 14, 16, 18}, minVersion: 2, schema: &dynamic.Description{Fields: tcpBasic(kIpv4)}},
	{class: KernelGroupGUID(GroupTcpIP), opcodes: []uint8{12, 15}, minVersion: 2, schema: &dynamic.Description{Fields: tcpConnect(kIpv4)}},
	{class: KernelGroupGUID(GroupTcpIP), opcodes: []uint8{17}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(kU16("Proto"), kU16("FailureCode"))}},
	{class: KernelGroupGUID(GroupTcpIP), opcodes: []uint8{26}, minVersion: 2, schema: &dynamic.Description{Fields: tcpSend(kIpv6)}},
	{class: KernelGroupGUID(GroupTcpIP), opcodes: []uint8{27, 29, 30, 32, 34}, minVersion: 2, schema: &dynamic.Description{Fields: tcpBasic(kIpv6)}},
	{class: KernelGroupGUID(GroupTcpIP), opcodes: []uint8{28, 31}, minVersion: 2, schema: &dynamic.Description{Fields: tcpConnect(kIpv6)}},
	// UdpIp_TypeGroup1 and its IPv6 form.
	{class: KernelGroupGUID(GroupUdpIP), opcodes: []uint8{10, 11}, minVersion: 2, schema: &dynamic.Description{Fields: tcpBasic(kIpv4)}},
	{class: KernelGroupGUID(GroupUdpIP), opcodes: []uint8{26, 27}, minVersion: 2, schema: &dynamic.Description{Fields: tcpBasic(kIpv6)}},
	// Process_V2_TypeGroup2: a process's counters.
	{class: KernelGroupGUID(GroupProcess), opcodes: []uint8{32, 33}, minVersion: 2, schema: &dynamic.Description{Fields: processCounters()}},
	// PerfInfo CollectionEnd (CollectionStart has a parser).
	{class: KernelGroupGUID(GroupPerfInfo), opcodes: []uint8{74}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kU32("SampleSource"), kU32("NewInterval"), kU32("OldInterval"))}},
	{class: KernelGroupGUID(GroupPerfInfo), opcodes: []uint8{74}, minVersion: 3, schema: &dynamic.Description{Fields: kFields(
		kU32("SampleSource"), kU32("NewInterval"), kU32("OldInterval"), kStr("SourceName"))}},
	// EventTrace Extension, EndExtension and RundownComplete.
	{class: KernelGroupGUID(GroupEventTrace), opcodes: []uint8{5, 32}, minVersion: 2, schema: &dynamic.Description{Fields: groupMasks()}},
	{class: KernelGroupGUID(GroupEventTrace), opcodes: []uint8{8}, minVersion: 0, schema: &dynamic.Description{}},
	// SystemConfig: disks, services, power, network, IDE channels and the
	// platform.
	{class: KernelGroupGUID(GroupSystemConfig), opcodes: []uint8{10}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kU32("MHz"), kU32("NumberOfProcessors"), kU32("MemSize"), kU32("PageSize"), kU32("AllocationGranularity"),
		kChars("ComputerName", 256), kChars("DomainName", 134), kHexPtr("HyperThreadingFlag"))}},
	{class: KernelGroupGUID(GroupSystemConfig), opcodes: []uint8{13}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kI64("PhysicalAddr"), kU32("PhysicalAddrLen"), kU32("Ipv4Index"), kU32("Ipv6Index"),
		kStr("NICDescription"), kStr("IpAddresses"), kStr("DnsServerAddresses"))}},
	{class: KernelGroupGUID(GroupSystemConfig), opcodes: []uint8{11}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kU32("DiskNumber"), kU32("BytesPerSector"), kU32("SectorsPerTrack"), kU32("TracksPerCylinder"), kU64("Cylinders"),
		kU32("SCSIPort"), kU32("SCSIPath"), kU32("SCSITarget"), kU32("SCSILun"), kChars("Manufacturer", 256),
		kU32("PartitionCount"), kU8("WriteCacheEnabled"), kU8("Pad"), kChars("BootDriveLetter", 3), kChars("Spare", 2))}},
	{class: KernelGroupGUID(GroupSystemConfig), opcodes: []uint8{12}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kU64("StartOffset"), kU64("PartitionSize"), kU32("DiskNumber"), kU32("Size"), kU32("DriveType"),
		kChars("DriveLetterString", 4), kU32("Pad1"), kU32("PartitionNumber"), kU32("SectorsPerCluster"), kU32("BytesPerSector"),
		kU32("Pad2"), kI64("NumberOfFreeClusters"), kI64("TotalNumberOfClusters"), kChars("FileSystem", 16), kU32("VolumeExt"))}},
	{class: KernelGroupGUID(GroupSystemConfig), opcodes: []uint8{15}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kU32("ProcessID"), kU32("ServiceState"), kU32("SubProcessTag"), kStr("ServiceName"), kStr("DisplayName"), kStr("ProcessName"))}},
	{class: KernelGroupGUID(GroupSystemConfig), opcodes: []uint8{16}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kU8("S1"), kU8("S2"), kU8("S3"), kU8("S4"), kU8("S5"))}},
	{class: KernelGroupGUID(GroupSystemConfig), opcodes: []uint8{17}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kU32("TcbTablePartitions"), kI32("MaxHashTableSize"), kU32("MaxUserPort"), kU32("TcpTimedWaitDelay"))}},
	{class: KernelGroupGUID(GroupSystemConfig), opcodes: []uint8{23}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kU32("TargetID"), kU32("DeviceType"), kU32("DeviceTimingMode"), kU32("LocationInformationLen"), kStr("LocationInformation"))}},
	{class: KernelGroupGUID(GroupSystemConfig), opcodes: []uint8{22}, minVersion: 4, schema: &dynamic.Description{Fields: kFields(
		kFld("ClassGuid", dynamic.GUID), kU32("UpperFilterCount"), kU32("LowerFilterCount"), kStr("DeviceID"),
		kStr("DeviceDescription"), kStr("FriendlyName"), kStr("PdoName"), kStr("ServiceName"))}},
	{class: KernelGroupGUID(GroupSystemConfig), opcodes: []uint8{25}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(
		kStr("SystemManufacturer"), kStr("SystemProductName"), kStr("BiosDate"), kStr("BiosVersion"))}},
	// The merge's system description.
	{class: SysConfigGUID, opcodes: []uint8{32}, schema: &dynamic.Description{Fields: kFields(
		kFld("InstallDate", dynamic.FileTime), kStr("BuildLab"), kStr("ProductName"))}},
	{class: SysConfigGUID, opcodes: []uint8{33}, schema: &dynamic.Description{Fields: kFields(kStr("SystemDirectory"), kStr("SystemWindowsDirectory"))}},
	{class: SysConfigGUID, opcodes: []uint8{34}, schema: &dynamic.Description{Fields: kFields(kStr("Value"))}},
	{class: SysConfigGUID, opcodes: []uint8{35}, schema: &dynamic.Description{Fields: kFields(kStr("NtPath"), kStr("DosPath"))}},
	// The kernel's own image base.
	{class: KernelGroupGUID(GroupImage), opcodes: []uint8{33}, minVersion: 2, schema: &dynamic.Description{Fields: kFields(kPtr("ImageBase"))}},
	// KernelTraceControl's image identity (DbgID events have a parser)
	// and the image's version resource.
	{class: ImageIDGUID, opcodes: []uint8{OpImageID}, schema: &dynamic.Description{Fields: kFields(
		kPtr("ImageBase"), kSizeT("ImageSize"), kU32("ProcessID"), kU32("TimeDateStamp"), kStr("OriginalFileName"))}},
	{class: ImageIDGUID, opcodes: []uint8{OpFileVersion}, schema: &dynamic.Description{Fields: kFields(
		kU32("ImageSize"), kU32("TimeDateStamp"), kStr("OrigFileName"), kStr("FileDescription"), kStr("FileVersion"),
		kStr("BinFileVersion"), kStr("VerLanguage"), kStr("ProductName"), kStr("CompanyName"), kStr("ProductVersion"),
		kStr("FileId"), kStr("ProgramId"))}},
}

type kernelKey struct {
	class  clrimpl.GUID
	opcode uint8
}

// kernelSchemas indexes kernelDefs: each (class, opcode)'s layouts by
// ascending minimum version.
var kernelSchemas = func() map[kernelKey][]*kernelDef {
	m := map[kernelKey][]*kernelDef{}
	for i := range kernelDefs {
		d := &kernelDefs[i]
		d.schema.Descriptor() // fixed here, before any reader shares it
		for _, op := range d.opcodes {
			k := kernelKey{d.class, op}
			m[k] = append(m[k], d)
		}
	}
	return m
}()

// KernelSchema returns the layout of a kernel logger or merge event that
// this package knows but has no parser for, or nil. Its version picks the
// layout: the newest that is not newer than the event.
func KernelSchema(e *Event) *dynamic.Description {
	class := e.ProviderGUID
	switch e.HeaderKind {
	case SystemHeader, CompactSystemHeader, PerfInfoHeader:
		class = KernelGroupGUID(e.KernelGroup())
	}
	defs := kernelSchemas[kernelKey{class, e.Opcode}]
	var best *dynamic.Description
	for _, d := range defs {
		if d.minVersion <= e.Version {
			best = d.schema
		}
	}
	return best
}
