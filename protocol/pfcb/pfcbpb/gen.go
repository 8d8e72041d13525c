// Package pfcbpb holds the generated wire messages of P-FCB.
package pfcbpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative pfcb.proto
