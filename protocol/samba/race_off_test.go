//go:build !race

package samba

const raceEnabled = false
