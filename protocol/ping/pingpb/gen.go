// Package pingpb holds the generated wire messages of the ping protocol.
package pingpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative ping.proto
