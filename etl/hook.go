package etl

// KernelGroup is the event class (hook group) of a kernel logger event:
// the high byte of HookID, but for image loads, which the kernel logs with
// the Process group's hook 0x030A and which belong to the Image class (as
// ProviderGUID, ImageLoadGUID, says). The payloads of the kernel's events
// are package kernelevents' business; a log's container says only which
// class each event is of.
func (e *Event) KernelGroup() uint8 {
	if e.HookID == hookImageLoad {
		return groupImage
	}
	return uint8(e.HookID >> 8)
}

const (
	// hookImageLoad is the hook of an image load: group Process, type 10.
	hookImageLoad = 0x030A
	groupImage    = 0x14
)
