package protocol_test

import (
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

func registry(t *testing.T, fams ...protocol.Family) *protocol.Registry {
	t.Helper()
	reg, err := protocol.NewRegistry(fams...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func mustSpec(t *testing.T, text string) *protocol.Spec {
	t.Helper()
	s, err := protocol.ParseSpec("spec.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
