//go:build race

package dataset

// raceEnabled is true when the tests run under the race detector.
const raceEnabled = true
