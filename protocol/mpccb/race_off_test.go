//go:build !race

package mpccb

const raceEnabled = false
