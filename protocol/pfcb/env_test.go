package pfcb

import (
	"context"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// envOf is agent a's simulated environment, drawing from crypto/rand.
func envOf(t testing.TB, a *agent) protocol.Environment {
	t.Helper()
	env, err := (Family{}).SimulatedEnvironment(protocol.RoleConfig{Self: a.cfg.Self, Assignment: a.cfg.Assignment,
		Params: a.p, Local: a.local, Rand: cryptoReader{}})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// drive calls f (a tick, an advance) and then, as a driver does, answers
// every query the agent asks from env, in order, until it asks no more.
// The messages and results of the batches are dropped.
func drive(a *agent, env protocol.Environment, f func() error) error {
	if err := f(); err != nil {
		return err
	}
	for rd := a.Ready(); len(rd.Queries) > 0; rd = a.Ready() {
		for _, q := range rd.Queries {
			o, err := env.Answer(context.Background(), q)
			if err != nil {
				return err
			}
			if err := a.Answer(o); err != nil {
				return err
			}
		}
	}
	return nil
}
