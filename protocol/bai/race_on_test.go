//go:build race

package bai

// raceEnabled is true when the tests run under the race detector.
const raceEnabled = true
