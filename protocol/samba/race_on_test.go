//go:build race

package samba

// raceEnabled is true when the tests run under the race detector.
const raceEnabled = true
