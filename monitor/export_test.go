package monitor

// SetRemovedHook sets the hook remove calls once it has let go of the
// monitor's lock (nil: none).
func SetRemovedHook(f func(pid int)) { testHookRemoved = f }
