//go:build !race

package trace

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
