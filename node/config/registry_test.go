package config

import (
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// testRegistry holds every family, as the daemon's registry does.
func testRegistry(t testing.TB) *protocol.Registry {
	t.Helper()
	reg, err := protocol.NewRegistry(ping.Family{}, bai.Family{}, pfcb.Family{}, samba.Family{}, mpccb.NewFamily())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
