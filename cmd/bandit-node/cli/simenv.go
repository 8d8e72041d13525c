package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// simEnvironments builds the environments of one's own that a spec's
// [simulation.local.<role>] tables name — a program, a service, a
// replayed file — as the daemon builds those of its [local.<protocol>.<role>]
// tables (package environment), so an organization tries its program with
// the simulator before it joins a session. A program's restarts are
// logged to stderr.
func simEnvironments(stderr io.Writer) sim.EnvironmentBuilder {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return func(ctx context.Context, t *protocol.LocalTable, e sim.EnvironmentFor) (protocol.Environment, string, error) {
		cfg, rest, err := environment.DecodeConfig(t)
		if err != nil {
			return nil, "", err
		}
		if len(rest) > 0 {
			keys := slices.Sorted(maps.Keys(rest))
			for i, k := range keys {
				keys[i] = t.Key + "." + k
			}
			return nil, "", &protocol.KeyError{Code: protocol.KeyUnknown, Key: keys[0],
				Err: fmt.Errorf("%s: unknown key; a table of [simulation.local] names an environment of your own: source, and its keys (docs/environments.md)", strings.Join(keys, ", "))}
		}
		if cfg.Simulated() {
			return nil, "", fmt.Errorf("%s.source: want \"exec\", \"http\" or \"replay\"; the family's simulated environment needs no table", t.Key)
		}
		if err := cfg.Check(0, 0); err != nil {
			return nil, "", fmt.Errorf("%s.%w", t.Key, err)
		}
		cfg.Exec.Logger = logger.With("party", e.Party.String())
		env, err := cfg.New(environment.Session{ID: e.SessionID, Protocol: e.Protocol, Role: e.Party.Role, Index: e.Party.Index,
			Org: "the simulation"}, e.Rand)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", t.Key, err)
		}
		return env, string(cfg.Source), nil
	}
}
