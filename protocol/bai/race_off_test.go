//go:build !race

package bai

const raceEnabled = false
