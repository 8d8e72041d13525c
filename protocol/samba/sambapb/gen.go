// Package sambapb holds the generated wire messages of SAMBA.
package sambapb

//go:generate protoc --go_out=. --go_opt=paths=source_relative samba.proto
