//go:build !race

package mpccb

// raceEnabled is true when the tests run under the race detector.
const raceEnabled = false
