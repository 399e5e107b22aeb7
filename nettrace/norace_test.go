//go:build !race

package nettrace

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
