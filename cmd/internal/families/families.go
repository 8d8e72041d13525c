// Package families names every protocol family the programs of this module
// know, so that bandit-node and bandit-lab build the same registry.
package families

import (
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// Registry builds the registry of every protocol family this build knows.
func Registry() (*protocol.Registry, error) {
	return protocol.NewRegistry(ping.Family{}, bai.Family{}, pfcb.Family{}, samba.Family{}, mpccb.NewFamily())
}
