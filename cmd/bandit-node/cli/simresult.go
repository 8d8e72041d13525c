package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// simulatedResult is what `simulate --json` prints: the shape of
// `session result --json` (apitype.Result: the session, its combined
// result under "result", each party's private result under "local"), so a
// program reads a simulated and a real session alike, and beside it what
// only a simulation knows, under "simulation".
type simulatedResult struct {
	apitype.Result
	Simulation simulationFacts `json:"simulation"`
}

// simulationFacts is what the simulator measured of a session.
type simulationFacts struct {
	// Seed is the seed every party's randomness came from.
	Seed int64 `json:"seed"`
	// Messages and Bytes count what crossed the simulated network.
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
	// Steps counts the global steps of a scheduled simulation; the others
	// ran for VirtualSeconds of simulated time.
	Steps          int64   `json:"steps,omitempty"`
	VirtualSeconds float64 `json:"virtual_seconds,omitempty"`
	// ElapsedSeconds is the wall time of the whole simulation and
	// RoleSeconds the part of it spent inside each role's code.
	ElapsedSeconds float64            `json:"elapsed_seconds"`
	RoleSeconds    map[string]float64 `json:"role_seconds"`
	// Environments says what each environment of one's own
	// ([simulation.local.<role>]) did, by party.
	Environments map[string]sim.EnvironmentUse `json:"environments,omitempty"`
}

// newSimulatedResult gives res, a simulation of spec text that started at
// start and took elapsed, the shape of a session's result. The simulator
// plays every organization, so every party is this "node"'s and the
// session has no initiator; it completed, or Run would have failed.
func newSimulatedResult(res *sim.Result, text []byte, start time.Time, elapsed time.Duration) (simulatedResult, error) {
	raw, err := json.Marshal(res.Result)
	if err != nil {
		return simulatedResult{}, fmt.Errorf("encoding the result: %w", err)
	}
	finished := start.Add(elapsed)
	parties := []string{}
	for _, p := range res.Assignment.Parties() {
		parties = append(parties, p.String())
	}
	var local map[string]json.RawMessage
	for _, p := range slices.Sorted(maps.Keys(res.Local)) {
		b, err := json.Marshal(res.Local[p])
		if err != nil {
			return simulatedResult{}, fmt.Errorf("encoding %s's local result: %w", p, err)
		}
		if local == nil {
			local = map[string]json.RawMessage{}
		}
		local[p] = b
	}
	progress := apitype.Progress{Step: res.Progress.Step, Total: res.Progress.Total, Activity: res.Progress.Activity}
	out := simulatedResult{
		Result: apitype.Result{
			Session: apitype.Session{
				ID:       res.SessionID,
				Protocol: res.Protocol,
				Local:    true,
				Roles:    res.Assignment.Roles,
				Parties:  parties,
				State:    "completed",
				Created:  start.UTC(),
				Started:  new(start.UTC()),
				Finished: new(finished.UTC()),
				Progress: progress,
				Spec:     string(text),
			},
			Result: raw,
			Local:  local,
		},
		Simulation: simulationFacts{
			Seed:           res.Seed,
			Messages:       res.Messages,
			Bytes:          res.Bytes,
			Steps:          res.Steps,
			ElapsedSeconds: elapsed.Seconds(),
			RoleSeconds:    res.RoleSeconds,
			Environments:   res.Environments,
		},
	}
	if res.Steps == 0 {
		out.Simulation.VirtualSeconds = res.VirtualTime.Seconds()
	}
	return out, nil
}
