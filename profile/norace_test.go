//go:build !race

package profile

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
