//go:build !race

package explore_test

const raceEnabled = false
