package main

import "os"

// isTerminal reports whether f is a character device (a terminal), where a
// progress line helps; redirected output gets none.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
