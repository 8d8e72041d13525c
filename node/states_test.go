package node

import "github.com/bandit-node/bandit-node/node/apitype"

// The states of a session's record, as the tests compare them.
const (
	stateProposed  = apitype.StateProposed
	stateRunning   = apitype.StateRunning
	stateCompleted = apitype.StateCompleted
	stateAborted   = apitype.StateAborted
)
