// Package baipb holds the generated wire messages of multi-agent best-arm
// identification.
package baipb

//go:generate protoc --go_out=. --go_opt=paths=source_relative bai.proto
