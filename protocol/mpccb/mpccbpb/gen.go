// Package mpccbpb holds the generated wire messages of the private contextual bandit (mpccb).
package mpccbpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative mpccb.proto
