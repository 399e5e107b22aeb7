//go:build race

package metrics_test

// raceEnabled: the tests run under the race detector.
const raceEnabled = true
