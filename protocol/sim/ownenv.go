package sim

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/drive"
)

// An organization tries its own environment — its program, its service,
// its replayed file — in the simulator before it joins a session: the
// spec's [simulation.local.<role>] table names it as the daemon's
// [local.<protocol>.<role>] table would, and the simulator asks it in
// place of the family's simulated one. This package knows no source: the
// caller builds the environment from the table (Options.Environments;
// cmd/bandit-node builds them with package environment, as the daemon
// does).
//
// The simulator answers such an environment inline: the party's call
// waits for the answer, which takes wall time and no virtual time, so a
// slow program slows the simulation but changes no result. The time the
// environment took is counted apart (Result.Environments) and not in its
// role's busy time.

// EnvironmentBuilder builds the environment of one party from its role's
// [simulation.local.<role>] table, whose Key is "simulation.local.<role>"
// and whose Dir is Options.Dir. It returns the environment and its source
// ("exec", "http", "replay"), or an error naming the table's key at fault.
type EnvironmentBuilder func(ctx context.Context, t *protocol.LocalTable, e EnvironmentFor) (env protocol.Environment, source string, err error)

// EnvironmentFor says which party an environment of one's own answers.
type EnvironmentFor struct {
	SessionID, Protocol string
	Party               protocol.Party
	// Rand is the party's seeded environment randomness (a replay that
	// samples its rows draws from it).
	Rand io.Reader
}

// EnvironmentUse is what an environment of one's own did in a
// simulation: drive.Meter's report.
type EnvironmentUse = drive.EnvironmentUse

// ownTables takes the local key out of the [simulation] table rest and
// returns its tables by role, each with the parties it answers: every
// party of the role unless its key parties lists their indices.
func ownTables(rest map[string]any, dir string) (map[string]*ownTable, error) {
	v, ok := rest["local"]
	if !ok {
		return nil, nil
	}
	delete(rest, "local")
	roles, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("simulation.local: want a table of roles, such as [simulation.local.data_owner], got %s", protocol.DescribeValue(v))
	}
	out := map[string]*ownTable{}
	for _, role := range slices.Sorted(maps.Keys(roles)) {
		key := "simulation.local." + role
		raw, ok := roles[role].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want a table, such as source = \"exec\" and its command, got %s", key, protocol.DescribeValue(roles[role]))
		}
		raw = maps.Clone(raw)
		t := &ownTable{table: protocol.LocalTable{Key: key, Raw: raw, Dir: dir}}
		if ps, ok := raw["parties"]; ok {
			delete(raw, "parties")
			list, ok := ps.([]any)
			if !ok || len(list) == 0 {
				return nil, fmt.Errorf("%s.parties: want the indices of the role's parties it answers, such as [0, 2], got %s", key, protocol.DescribeValue(ps))
			}
			t.parties = map[int]bool{}
			for _, x := range list {
				i, ok := x.(int64)
				if !ok || i < 0 {
					return nil, fmt.Errorf("%s.parties: want indices ≥ 0, such as [0, 2], got %s", key, protocol.DescribeValue(x))
				}
				t.parties[int(i)] = true
			}
		}
		out[role] = t
	}
	return out, nil
}

// ownTable is one role's [simulation.local.<role>] table.
type ownTable struct {
	table   protocol.LocalTable
	parties map[int]bool // nil: all the role's parties
}

// answers reports whether the table answers party p's queries.
func (t *ownTable) answers(p protocol.Party) bool { return t.parties == nil || t.parties[p.Index] }

// checkOwnTables checks that each table's role is one of the session's
// and has the parties it names. (Run checks that the role asks an
// environment once it has built its parties.)
func checkOwnTables(tables map[string]*ownTable, assign protocol.Assignment) error {
	for _, role := range slices.Sorted(maps.Keys(tables)) {
		t := tables[role]
		n := assign.Count(role)
		if n == 0 {
			return fmt.Errorf("%s: the session has no role %q; its roles are %v", t.table.Key, role, slices.Sorted(maps.Keys(assign.Roles)))
		}
		for i := range t.parties {
			if i >= n {
				return fmt.Errorf("%s.parties: %s has %d parties, indices 0 to %d; %d is none of them", t.table.Key, role, n, n-1, i)
			}
		}
	}
	return nil
}

// ownEnvironment is an environment of one's own as the simulator asks
// it: metered, and inline (Immediate) whatever its kind.
type ownEnvironment struct{ *drive.Meter }

// Immediate is true: the simulator waits for the answer in the party's
// call, in no virtual time.
func (ownEnvironment) Immediate() bool { return true }

// environmentUses returns what each party's environment of one's own did,
// by party, and those parties, sorted; it takes the time the environments
// took out of their roles' busy time, in which the inline answers fell.
func (d *simDriver) environmentUses(roleSeconds map[string]float64) (map[string]EnvironmentUse, []string) {
	var uses map[string]EnvironmentUse
	var parties []string
	for p, s := range d.slots {
		if s.own.Meter == nil {
			continue
		}
		if uses == nil {
			uses = map[string]EnvironmentUse{}
		}
		u := s.own.Use(0).WithWarning(p)
		uses[p.String()] = u
		parties = append(parties, p.String())
		roleSeconds[p.Role] = max(0, roleSeconds[p.Role]-u.Seconds)
	}
	slices.Sort(parties)
	return uses, parties
}
