//go:build !race

// Package racemode tells tests whether they run under the race detector,
// under which sync.Pool drops what is put in it at random, so that
// allocation counts are not the program's.
package racemode

// Enabled reports whether the program runs under the race detector.
const Enabled = false
