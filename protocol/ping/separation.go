package ping

import (
	"io"

	"github.com/bandit-node/bandit-node/protocol"
)

// separations are the family's separations (protocol.Info): ping carries
// no private data, so no roles are separated.
func separations() []protocol.Separation { return nil }

// NewSchedule is protocol.Simulator's NewSchedule: a ping simulation advances in
// ticks.
func (family) NewSchedule(map[string]any, Params, protocol.Assignment, io.Reader) (protocol.Schedule, error) {
	return nil, nil
}

// Grade is protocol.Simulator's Grade: a ping result has nothing to grade.
func (family) Grade(_ protocol.Grading, _ Params, m Matrix) (any, error) { return m, nil }
