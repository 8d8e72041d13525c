package node

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// TestMPCContextualBanditOnTheNetwork runs the private contextual bandit
// across five daemons — two feature parties taking their own columns from
// their environments, p′, p″ taking the rewards from its environment, and
// the dealer — with every role's randomness replaced (test hook) by a
// simulation's seeded streams, and checks that p′ pulled, step for step,
// what the plaintext reference pulls with the dealer's samples, that p″'s
// reward is the reference's, and that the session's progress ends at steps
// of steps. The environments are the family's simulated one (the files of
// [local.mpccb.*], answered inline) or replay files (answered by the
// environments' goroutines), over more steps than a daemon queues queries
// a party and with a window wider than p″ asks rows ahead.
func TestMPCContextualBanditOnTheNetwork(t *testing.T) {
	t.Parallel()
	const (
		arms = 4
		dims = 6
		seed = 5
	)
	cases := []struct {
		name          string
		steps, window int
		locals        func(t *testing.T, contexts, rewards [][]float64) func(i int, cfg *config.Config)
		families      func(i int) []protocol.Family // nil: every node's default
		wire          string                        // the session's wire version
		rounds        float64                       // a step's, at P = 2
		batch         int                           // params.batch
	}{
		{"files", 60, 8, mpccbLocals, nil, "1.3.0", 11, 1},
		{"replay", 300, 100, mpccbReplays, nil, "1.3.0", 11, 1},
		// A dealer not yet upgraded: everybody runs 1.1.0's step with it.
		{"files, the dealer at wire 1.1.0", 60, 8, mpccbLocals, func(i int) []protocol.Family {
			if i == 4 {
				return []protocol.Family{mpccbV110{mpccb.NewFamily()}}
			}
			return nil
		}, "1.1.0", 18, 1}, // 20 for 10 arms: its AND tree has log₂(|A|−1) levels
		// Batches of 40 (the last of 20): 16 + 4·9 rounds a batch, each
		// batch's 40 rows more than p″ asks its environment at once.
		{"files, batches of 40", 100, 2, mpccbLocals, nil, "1.3.0", 3 * 52.0 / 100, 40},
		// Batches of 200 (the last of 50): their argmaxes meet in a
		// tournament, 10 + 8·2 + 4·11 rounds a batch.
		{"files, batches of 200", 250, 2, mpccbLocals, nil, "1.3.0", 2 * 70.0 / 250, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			steps := c.steps
			contexts, rewards := linearProblem(steps, arms, dims, 9)
			nodes := startNetworkWith(t, 5, c.locals(t, contexts, rewards), c.families)
			if c.families != nil {
				// The initiator learns the versions its peers speak from
				// libp2p identify, which follows the connection.
				ps := nodes[0].host.LibP2P().Peerstore()
				testutil.WaitFor(t, 20*time.Second, "node5's protocols identified", func() bool {
					protos, err := ps.GetProtocols(nodes[4].ID())
					return err == nil && len(protos) > 0
				})
			}
			for _, tn := range nodes {
				tn.rt.SetHooks(sessions.Hooks{RoleRand: func(p protocol.Party) io.Reader { return protocol.SeededRand(seed, p) }})
			}
			spec := fmt.Sprintf("protocol = \"mpccb\"\n[roles]\nfeature_party = [\"node1\", \"node2\"]\narm_puller = \"node3\"\nreward_receiver = \"node4\"\ndealer = \"node5\"\n[params]\nsteps = %d\narms = %d\ndimensions = %d\nepsilon = 0.2\nwindow = %d\nbatch = %d\n", steps, arms, dims, c.window, c.batch)
			session, res := completedSession[mpccb.Result](t, nodes[0], spec, 90*time.Second)
			id := session.ID
			// p′ alone reports steps (the other roles Activity only): the
			// summed progress of the five organizations reads steps of steps.
			if pr := session.Progress; pr.Step != int64(steps) || pr.Total != int64(steps) {
				t.Errorf("the session's progress ends at %d of %d steps; want %d of %d", pr.Step, pr.Total, steps, steps)
			}
			raw, _ := mpccb.NewFamily().ParseParams(map[string]any{"steps": int64(steps), "arms": int64(arms), "dimensions": int64(dims), "epsilon": 0.2, "batch": int64(c.batch)})
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
			// The batched algorithm in batches of B (with B = 1, Step).
			for lo := 0; lo < steps; lo += c.batch {
				hi := min(lo+c.batch, steps)
				arms, got := ref.StepBatch(contexts[lo:hi], rewards[lo:hi])
				for j, a := range arms {
					pulls[a]++
					total += got[j]
				}
			}
			if math.Abs(res.AverageReward-total/float64(steps)) > 1e-9 {
				t.Errorf("p″'s average reward over libp2p is %g, the reference's %g", res.AverageReward, total/float64(steps))
			}
			prec, err := nodes[2].store.Get(id)
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
			if res.RoundsPerStep != c.rounds {
				t.Errorf("%g rounds per step at wire %s, want %g (issue 25: at most 12 at 1.2.0)", res.RoundsPerStep, session.Wire, c.rounds)
			}
			if session.Wire != c.wire {
				t.Errorf("the session ran on wire %q, want %q", session.Wire, c.wire)
			}
			if res.Batch != c.batch {
				t.Errorf("the result says batch %d, want %d", res.Batch, c.batch)
			}
			if c.wire == "1.1.0" {
				// node1 knows node5's protocols (identified above): it
				// refuses a batched session itself, naming node5 and the
				// parameter, and proposes nothing.
				id, err := nodes[0].StartSession([]byte(strings.Replace(spec, "batch = 1\n", "batch = 8\n", 1)))
				const refusal = "params.batch: 8 needs the contextual bandit's wire 1.3.0"
				if err == nil || !strings.Contains(err.Error(), refusal) || !strings.Contains(err.Error(), "node5") {
					t.Errorf("a batched session with a 1.1.0 dealer: session %q, %v; want refused naming node5 with %q", id, err, refusal)
				}
			}
		})
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
func mpccbLocals(t *testing.T, contexts [][]float64, rewards [][]float64) func(i int, cfg *config.Config) {
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
	return func(i int, cfg *config.Config) {
		cfg.Policy["mpccb"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
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

// mpccbReplays is mpccbLocals with the feature parties' and p″'s files as
// replay environments (source = "replay", order = "sequential") instead of
// the family's simulated environment.
func mpccbReplays(t *testing.T, contexts [][]float64, rewards [][]float64) func(i int, cfg *config.Config) {
	t.Helper()
	dir := t.TempDir()
	split := dataset.Split(len(contexts[0]), 2)
	replay := func(cfg *config.Config, role, path string) {
		if cfg.Environments == nil {
			cfg.Environments = map[string]map[string]environment.Config{}
		}
		cfg.LocalData["mpccb"] = map[string]any{role: nil}
		cfg.Environments["mpccb"] = map[string]environment.Config{role: {Source: environment.SourceReplay,
			Replay: environment.ReplayConfig{Label: protocol.LocalKey(mpccb.Name, role), File: path, Order: environment.OrderSequential}}}
	}
	return func(i int, cfg *config.Config) {
		cfg.Policy["mpccb"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		switch i {
		case 0, 1:
			path := filepath.Join(dir, dataset.PartyFile(i))
			if err := dataset.WriteFeatures(path, dataset.Columns(contexts, split[i][0], split[i][1])); err != nil {
				t.Fatal(err)
			}
			replay(cfg, mpccb.RoleFeature, path)
		case 3:
			path := filepath.Join(dir, dataset.RewardsFile)
			if err := dataset.WriteRewards(path, rewards); err != nil {
				t.Fatal(err)
			}
			replay(cfg, mpccb.RoleReceiver, path)
		}
	}
}

// mpccbV110 is mpccb as a daemon built before wire 1.2.0 speaks it: 1.1.0
// only.
type mpccbV110 struct{ mpccb.Family }

func (f mpccbV110) Info() protocol.Info {
	info := f.Family.Info()
	info.WireVersions, info.AtWireVersion = []string{"1.1.0"}, nil
	return info
}

func (f mpccbV110) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	old, ok := protocol.AtWireVersion(f.Family, "1.1.0")
	if !ok {
		return nil, fmt.Errorf("mpccb no longer speaks 1.1.0")
	}
	return old.NewRole(cfg)
}
