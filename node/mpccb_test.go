package node

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// TestMPCContextualBanditOnTheNetwork runs the private contextual bandit
// across five daemons — two feature parties reading their own columns from
// their own files, p′, p″ reading the rewards from its file, and the dealer —
// with every role's randomness replaced (test hook) by a simulation's seeded
// streams, and checks that p′ pulled, step for step, what the plaintext
// reference pulls with the dealer's samples, and that p″'s reward is the
// reference's.
func TestMPCContextualBanditOnTheNetwork(t *testing.T) {
	const (
		steps = 60
		arms  = 4
		dims  = 6
		seed  = 5
	)
	contexts, rewards := linearProblem(steps, arms, dims, 9)
	nodes := startNetwork(t, 5, mpccbLocals(t, contexts, rewards))
	for _, tn := range nodes {
		tn.roleRand = func(p protocol.Party) io.Reader { return protocol.SeededRand(seed, p) }
	}
	spec := fmt.Sprintf("protocol = \"mpccb\"\n[roles]\nfeature_party = [\"node1\", \"node2\"]\narm_puller = \"node3\"\nreward_receiver = \"node4\"\ndealer = \"node5\"\n[params]\nsteps = %d\narms = %d\ndimensions = %d\nepsilon = 0.2\n", steps, arms, dims)
	session, res := completedSession[mpccb.Result](t, nodes[0], spec, 90*time.Second)
	id := session.ID
	// p′ alone reports steps (the other roles Activity only): the summed
	// progress of the five organizations reads steps of steps.
	if pr := session.Progress; pr.Step != steps || pr.Total != steps {
		t.Errorf("the session's progress ends at %d of %d steps; want %d of %d", pr.Step, pr.Total, steps, steps)
	}
	raw, _ := mpccb.NewFamily().ParseParams(map[string]any{"steps": int64(steps), "arms": int64(arms), "dimensions": int64(dims), "epsilon": 0.2})
	params := raw.(mpccb.Params)
	// The dealer's sampler seed, replayed from its seeded stream.
	r := protocol.SeededRand(seed, protocol.Party{Role: mpccb.RoleDealer})
	var skip [2 * mpc.SeedSize]byte
	io.ReadFull(r, skip[:])
	var sampler mpc.Seed
	io.ReadFull(r, sampler[:])
	ref := mpccb.NewReference(params, sampler)
	pulls := make([]int64, arms)
	var total float64
	for s := range steps {
		a, rw := ref.Step(contexts[s], rewards[s])
		pulls[a]++
		total += rw
	}
	if math.Abs(res.AverageReward-total/steps) > 1e-9 {
		t.Errorf("p″'s average reward over libp2p is %g, the reference's %g", res.AverageReward, total/steps)
	}
	prec, err := nodes[2].store.get(id)
	if err != nil {
		t.Fatal(err)
	}
	var pl mpccb.PullerLocal
	for _, raw := range prec.Local {
		json.Unmarshal(raw, &pl)
	}
	for a := range pulls {
		if pl.Pulls[a] != pulls[a] {
			t.Errorf("p′ pulled %v, the reference %v", pl.Pulls, pulls)
			break
		}
	}
	if res.RoundsPerStep < 10 || res.RoundsPerStep > 20 {
		t.Errorf("%g rounds per step", res.RoundsPerStep)
	}
}

// linearProblem returns unit-norm contexts and one-hot reward rows of a
// linear problem.
func linearProblem(n, arms, dim int, seed uint64) ([][]float64, [][]float64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	w := make([][]float64, arms)
	for a := range w {
		w[a] = make([]float64, dim)
		for i := range w[a] {
			w[a][i] = rng.NormFloat64()
		}
	}
	xs, rs := make([][]float64, n), make([][]float64, n)
	for t := range n {
		x := make([]float64, dim)
		var norm float64
		for i := range x {
			x[i] = rng.NormFloat64()
			norm += x[i] * x[i]
		}
		best, bs := 0, math.Inf(-1)
		for a := range arms {
			var s float64
			for i := range x {
				s += w[a][i] * x[i] // the argmax is the same after normalising
			}
			if s > bs {
				best, bs = a, s
			}
		}
		for i := range x {
			x[i] /= math.Sqrt(norm)
		}
		row := make([]float64, arms)
		row[best] = 1
		xs[t], rs[t] = x, row
	}
	return xs, rs
}

// mpccbLocals is the tweak of a five-daemon mpccb network — node1 and
// node2 the feature parties, node3 p′, node4 p″ and node5 the dealer —
// that opens every node's policy to mpccb and gives the feature parties
// their columns of contexts and p″ the rewards, in files of a test
// directory.
func mpccbLocals(t *testing.T, contexts [][]float64, rewards [][]float64) func(i int, cfg *Config) {
	t.Helper()
	dir := t.TempDir()
	split := dataset.Split(len(contexts[0]), 2)
	fam := mpccb.NewFamily()
	local := func(role, key, path string) any {
		v, err := fam.DecodeLocal(role, &protocol.LocalTable{Key: protocol.LocalKey(mpccb.Name, role), Raw: map[string]any{key: path}})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return func(i int, cfg *Config) {
		cfg.Policy["mpccb"] = PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		switch i {
		case 0, 1:
			path := filepath.Join(dir, dataset.PartyFile(i))
			if err := dataset.WriteFeatures(path, dataset.Columns(contexts, split[i][0], split[i][1])); err != nil {
				t.Fatal(err)
			}
			cfg.LocalData["mpccb"] = map[string]any{"feature_party": local("feature_party", "features", path)}
		case 3:
			path := filepath.Join(dir, dataset.RewardsFile)
			if err := dataset.WriteRewards(path, rewards); err != nil {
				t.Fatal(err)
			}
			cfg.LocalData["mpccb"] = map[string]any{"reward_receiver": local("reward_receiver", "rewards", path)}
		}
	}
}
