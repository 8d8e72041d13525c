// Package nodepb holds the generated wire messages of the session layer.
package nodepb

//go:generate protoc --go_out=. --go_opt=paths=source_relative session.proto
