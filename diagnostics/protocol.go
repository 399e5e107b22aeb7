package diagnostics

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
)

// HeaderSize is the size of a Diagnostics IPC message header: the 14-byte
// magic "DOTNET_IPC_V1\0", a uint16 total size, the command set, the
// command ID and a reserved uint16, little-endian.
const HeaderSize = 20

// Magic is the header magic of every Diagnostics IPC message, NUL included.
const Magic = "DOTNET_IPC_V1\x00"

// AdvertiseMagic opens the advertisement a runtime sends when it connects
// to a reverse-mode diagnostic port (DOTNET_DiagnosticPorts).
const AdvertiseMagic = "ADVR_V1\x00"

// AdvertiseSize is the size of an ADVR_V1 advertisement: magic (8),
// runtime instance cookie (16), process ID (uint64) and a reserved uint16.
const AdvertiseSize = 8 + 16 + 8 + 2

// MaxPayload is the largest payload a message can carry: the header's
// size field is a uint16 and counts the header too.
const MaxPayload = 0xFFFF - HeaderSize

// Command is a Diagnostics IPC command: a command set and an ID within it.
type Command struct {
	Set, ID uint8 // command set (0x02 EventPipe, 0x04 Process, 0xFF server) and ID within it
}

// The commands this package sends, and the server's replies.
var (
	CmdStopTracing     = Command{0x02, 0x01}
	CmdCollectTracing  = Command{0x02, 0x02}
	CmdCollectTracing2 = Command{0x02, 0x03}
	CmdCollectTracing3 = Command{0x02, 0x04}
	CmdCollectTracing4 = Command{0x02, 0x05}
	CmdCollectTracing5 = Command{0x02, 0x06}
	CmdCollectTracing6 = Command{0x02, 0x07}

	CmdProcessInfo            = Command{0x04, 0x00}
	CmdResumeRuntime          = Command{0x04, 0x01}
	CmdSetEnvironmentVariable = Command{0x04, 0x03}
	CmdProcessInfo2           = Command{0x04, 0x04}
	CmdEnablePerfMap          = Command{0x04, 0x05}
	CmdDisablePerfMap         = Command{0x04, 0x06}
	CmdProcessInfo3           = Command{0x04, 0x08}

	// ReplyOK and ReplyError are the server's answers (command set 0xFF).
	ReplyOK    = Command{0xFF, 0x00}
	ReplyError = Command{0xFF, 0xFF}
)

// CollectTracingCommand returns the command of CollectTracing version v
// (1–6).
func CollectTracingCommand(v int) Command { return Command{0x02, uint8(v + 1)} }

var commandNames = map[Command]string{
	CmdStopTracing: "StopTracing", CmdCollectTracing: "CollectTracing",
	CmdCollectTracing2: "CollectTracing2", CmdCollectTracing3: "CollectTracing3",
	CmdCollectTracing4: "CollectTracing4", CmdCollectTracing5: "CollectTracing5",
	CmdCollectTracing6: "CollectTracing6",
	CmdProcessInfo:     "ProcessInfo", CmdResumeRuntime: "ResumeRuntime",
	CmdSetEnvironmentVariable: "SetEnvironmentVariable", CmdProcessInfo2: "ProcessInfo2",
	CmdEnablePerfMap: "EnablePerfMap", CmdDisablePerfMap: "DisablePerfMap",
	CmdProcessInfo3: "ProcessInfo3", ReplyOK: "OK", ReplyError: "Error",
}

// String returns the command's name as the protocol document spells it,
// or "command 0xSSII".
func (c Command) String() string {
	if n, ok := commandNames[c]; ok {
		return n
	}
	return fmt.Sprintf("command 0x%02X%02X", c.Set, c.ID)
}

// HRESULT is an error code a runtime answers with.
type HRESULT uint32

// The HRESULTs the diagnostics server sends (ipc-protocol.md, "Errors").
const (
	EBadEncoding           HRESULT = 0x80131384
	EUnknownCommand        HRESULT = 0x80131385
	EUnknownMagic          HRESULT = 0x80131386
	ENotSupported          HRESULT = 0x80131515
	EFail                  HRESULT = 0x80004005
	ENotYetAvailable       HRESULT = 0x8013135B
	ERuntimeUninitialized  HRESULT = 0x80131371
	EInvalidArg            HRESULT = 0x80070057
	EInsufficientBuffer    HRESULT = 0x8007007A
	EEnvVarNotFound        HRESULT = 0x800000CB
	EProfilerAlreadyActive HRESULT = 0x8013136A
)

var hresultNames = map[HRESULT]string{
	EBadEncoding: "bad encoding", EUnknownCommand: "unknown command",
	EUnknownMagic: "unknown magic", ENotSupported: "not supported", EFail: "failure",
	ENotYetAvailable: "not yet available", ERuntimeUninitialized: "runtime not initialized",
	EInvalidArg: "invalid argument", EInsufficientBuffer: "insufficient buffer",
	EEnvVarNotFound: "environment variable not found", EProfilerAlreadyActive: "a profiler is already active",
}

// String returns "0x80131385 (unknown command)".
func (h HRESULT) String() string {
	if n, ok := hresultNames[h]; ok {
		return fmt.Sprintf("0x%08X (%s)", uint32(h), n)
	}
	return fmt.Sprintf("0x%08X", uint32(h))
}

// AppendHeader appends a message header for cmd with a payload of
// payloadLen bytes.
func AppendHeader(dst []byte, cmd Command, payloadLen int) ([]byte, error) {
	if payloadLen < 0 || payloadLen > MaxPayload {
		return dst, fmt.Errorf("%v: payload of %d bytes exceeds the protocol's %d", cmd, payloadLen, MaxPayload)
	}
	dst = append(dst, Magic...)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(HeaderSize+payloadLen))
	return append(dst, cmd.Set, cmd.ID, 0, 0), nil
}

// EncodeMessage returns the bytes of a message: header and payload.
func EncodeMessage(cmd Command, payload []byte) ([]byte, error) {
	b, err := AppendHeader(make([]byte, 0, HeaderSize+len(payload)), cmd, len(payload))
	if err != nil {
		return nil, err
	}
	return append(b, payload...), nil
}

// Header is a decoded message header.
type Header struct {
	Size     uint16  // header and payload
	Command  Command // the command, or ReplyOK / ReplyError
	Reserved uint16  // 0 in DOTNET_IPC_V1
}

// ErrProtocol is wrapped by errors about malformed messages.
var ErrProtocol = errors.New("malformed diagnostics IPC message")

// ParseHeader decodes a 20-byte header and checks its magic and size.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: header of %d bytes, want %d", ErrProtocol, len(b), HeaderSize)
	}
	if string(b[:14]) != Magic {
		return Header{}, fmt.Errorf("%w: header magic %q at byte 0, want %q", ErrProtocol, b[:14], Magic)
	}
	h := Header{
		Size:     binary.LittleEndian.Uint16(b[14:]),
		Command:  Command{b[16], b[17]},
		Reserved: binary.LittleEndian.Uint16(b[18:]),
	}
	if h.Size < HeaderSize {
		return h, fmt.Errorf("%w: size %d at byte 14 is less than the header's %d", ErrProtocol, h.Size, HeaderSize)
	}
	return h, nil
}

// ReadMessage reads one message: header and payload. The payload is at
// most MaxPayload bytes, so the allocation is bounded.
func ReadMessage(r io.Reader) (Header, []byte, error) {
	var hb [HeaderSize]byte
	if n, err := io.ReadFull(r, hb[:]); err != nil {
		if err == io.ErrUnexpectedEOF || (err == io.EOF && n > 0) {
			return Header{}, nil, fmt.Errorf("%w: connection closed after %d of the header's %d bytes", ErrProtocol, n, HeaderSize)
		}
		return Header{}, nil, err
	}
	h, err := ParseHeader(hb[:])
	if err != nil {
		return h, nil, err
	}
	p := make([]byte, int(h.Size)-HeaderSize)
	if n, err := io.ReadFull(r, p); err != nil {
		return h, nil, fmt.Errorf("%w: connection closed after %d of the payload's %d bytes (at byte %d)", ErrProtocol, n, len(p), HeaderSize+n)
	}
	return h, p, nil
}

// AppendString appends a protocol string: a uint32 count of UTF-16 code
// units including the terminating NUL, then the units little-endian. The
// empty string is written as count 1 and a NUL, as the .NET client does.
func AppendString(dst []byte, s string) []byte {
	u := utf16.Encode([]rune(s))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(u)+1))
	for _, c := range u {
		dst = binary.LittleEndian.AppendUint16(dst, c)
	}
	return append(dst, 0, 0)
}

// decoder reads a payload and remembers the first problem with its offset.
type decoder struct {
	b   []byte
	i   int
	err error
}

func (d *decoder) fail(what string, need int) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at payload byte %d needs %d bytes, %d left", ErrProtocol, what, d.i, need, len(d.b)-d.i)
	}
}

func (d *decoder) take(what string, n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.i {
		d.fail(what, n)
		return nil
	}
	p := d.b[d.i : d.i+n]
	d.i += n
	return p
}

func (d *decoder) u32(what string) uint32 {
	if p := d.take(what, 4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (d *decoder) u64(what string) uint64 {
	if p := d.take(what, 8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// str reads a protocol string. The count is checked against the bytes
// left before anything is allocated.
func (d *decoder) str(what string) string {
	n := d.u32(what + " length")
	if d.err != nil || n == 0 {
		return ""
	}
	at := d.i
	if uint64(n)*2 > uint64(len(d.b)-d.i) {
		d.fail(what, int(min(uint64(n)*2, 1<<31-1)))
		return ""
	}
	p := d.take(what, int(n)*2)
	u := make([]uint16, n)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(p[2*i:])
	}
	if u[n-1] != 0 {
		if d.err == nil {
			d.err = fmt.Errorf("%w: %s at payload byte %d does not end in NUL", ErrProtocol, what, at)
		}
		return ""
	}
	return string(utf16.Decode(u[:n-1]))
}
