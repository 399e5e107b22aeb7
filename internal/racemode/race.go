//go:build race

package racemode

// Enabled reports whether the program runs under the race detector.
const Enabled = true
