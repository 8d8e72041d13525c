package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
	"github.com/bandit-node/bandit-node/protocol/samba"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
	"google.golang.org/protobuf/proto"
)

// pullLog is the order in which the data owners of a test network pulled
// their arms. A data owner pulls at step t when it opens the bit of step t,
// and sends its score of step t + 1 after that; the controller needs every
// score of t + 1 before comp selects again, so the pulls of successive
// steps are ordered in time and the log is the sequence of pulled arms
// (after the K initial pulls, one per data owner, in any order).
type pullLog struct {
	mu   sync.Mutex
	arms []int
}

func (l *pullLog) take() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	arms := l.arms
	l.arms = nil
	return arms
}

// loggedArm is data owner i's Bernoulli arm, logging each pull.
type loggedArm struct {
	samba.Bernoulli
	i   int
	log *pullLog
}

func (a loggedArm) Pull(r *randsrc.Source) int {
	a.log.mu.Lock()
	a.log.arms = append(a.log.arms, a.i)
	a.log.mu.Unlock()
	return a.Bernoulli.Pull(r)
}

// TestSAMBAOnTheNetworkTheorem2 runs SAMBA across six daemons — data
// customer, controller, comp and three data owners, each owner's arm in its
// own config — with every role's randomness replaced (test hook) by the
// seeded streams a simulation would use, and checks Theorem 2 over libp2p,
// for every algorithm and two seeds: the data customer's cumulative reward,
// every arm's pulls and the sequence of pulled arms equal the standard
// algorithm's from the same seed.
func TestSAMBAOnTheNetworkTheorem2(t *testing.T) {
	t.Parallel()
	means := []float64{0.6, 0.45, 0.3}
	const budget = 400
	var seed atomic.Int64 // read by the daemons' goroutines when a session starts
	pulls := &pullLog{}
	nodes := startNetwork(t, 6, func(i int, cfg *config.Config) {
		cfg.Policy["samba"] = sambaTestPolicy() // 512-bit keys
		if i >= 3 {
			cfg.LocalData["samba"] = map[string]any{"data_owner": loggedArm{Bernoulli: samba.Bernoulli{Mu: means[i-3]}, i: i - 3, log: pulls}}
		}
	})
	for _, tn := range nodes {
		tn.rt.SetHooks(sessions.Hooks{RoleRand: func(p protocol.Party) io.Reader { return protocol.SeededRand(seed.Load(), p) }})
		tn.rt.SetHooks(sessions.Hooks{EnvRand: func(p protocol.Party) io.Reader { return protocol.SeededEnvironmentRand(seed.Load(), p) }})
	}
	// roleFrames is how many role messages the six daemons' metrics
	// counted, out and in.
	roleFrames := func() (out, in float64) {
		for _, tn := range nodes {
			got := trafficSeries(t, tn.metrics.Registry)
			out += got["bandit_messages_total out role"]
			in += got["bandit_messages_total in role"]
		}
		return out, in
	}
	var cases []struct {
		alg  string
		seed int64
	}
	for _, a := range samba.Algorithms() {
		for _, sd := range []int64{11, 12} {
			cases = append(cases, struct {
				alg  string
				seed int64
			}{a.Name(), sd})
		}
	}
	for _, c := range cases {
		alg := c.alg
		t.Run(fmt.Sprintf("%s/seed=%d", alg, c.seed), func(t *testing.T) {
			seed.Store(c.seed)
			pulls.take()
			out0, in0 := roleFrames()
			spec := fmt.Sprintf("protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\", \"node6\"]\n[params]\nalgorithm = %q\nbudget = %d\npaillier_bits = 512\n", alg, budget)
			got, res := completedSession[samba.Result](t, nodes[0], spec, 60*time.Second)
			id := got.ID
			p, _ := samba.Family{}.ParseParams(map[string]any{"algorithm": alg, "budget": int64(budget), "paillier_bits": int64(512)})
			wantReward, seq, err := samba.Reference(p.(samba.Params), means, c.seed)
			if err != nil {
				t.Fatal(err)
			}
			// The steps' wall time, on the controller's clock: inside the
			// session's, and per step as said.
			if got.Finished == nil {
				t.Errorf("the session record has no end: %+v", got)
			} else if whole := got.Finished.Sub(got.Created).Seconds(); res.StepsSeconds <= 0 || res.StepsSeconds > whole {
				t.Errorf("steps took %v s of a session of %v s", res.StepsSeconds, whole)
			}
			if want := res.StepsSeconds * 1e3 / (budget - 3); res.MsPerStep != want {
				t.Errorf("%v ms per step, want %v (steps_seconds / (N − K))", res.MsPerStep, want)
			}
			if res.CumulativeReward != wantReward {
				t.Errorf("the data customer got %d over libp2p, the standard algorithm %d", res.CumulativeReward, wantReward)
			}
			pulled := pulls.take()
			k := len(means)
			if len(pulled) != len(seq) {
				t.Errorf("the data owners pulled %d times over libp2p, the standard algorithm %d", len(pulled), len(seq))
			} else if initial := slices.Sorted(slices.Values(pulled[:k])); !slices.Equal(initial, seq[:k]) {
				t.Errorf("the data owners' initial pulls were arms %v, want each arm once", pulled[:k])
			} else if !slices.Equal(pulled[k:], seq[k:]) {
				for i := k; i < len(seq); i++ {
					if pulled[i] != seq[i] {
						t.Errorf("the sequences of pulled arms differ first at step %d: arm %d over libp2p, arm %d in the standard algorithm", i+1, pulled[i], seq[i])
						break
					}
				}
			}
			counts := make([]int64, len(means))
			for _, i := range seq {
				counts[i]++
			}
			for i, tn := range nodes[3:] {
				r, err := tn.store.Get(id)
				if err != nil {
					t.Fatal(err)
				}
				var out samba.OwnerOutcome
				for _, raw := range r.Local {
					json.Unmarshal(raw, &out)
				}
				if out.Pulls != counts[i] {
					t.Errorf("data owner %d was pulled %d times, the standard algorithm pulled its arm %d times", i, out.Pulls, counts[i])
				}
			}
			iterations := map[string]int{"pursuit": 2}[alg]
			if iterations == 0 {
				iterations = 1
			}
			if want := int64((budget-3)*(2*3+2)*iterations) + 3 + 1 + 3 + 3 + 3 + 1; res.Messages != want {
				t.Errorf("%d messages, want %d (2K+2 per step and iteration)", res.Messages, want)
			}
			// Figure 8(d) on daemons: every role's time, messages and
			// cryptographic operations, as each daemon measured them.
			steps := int64(budget-3) * int64(iterations)
			for role, want := range map[string]struct{ messages, aes, paillier int64 }{
				samba.RoleOwner:      {3 * (steps + 1), 3 * 2 * steps, 3}, // scores and sums; a score sealed and a bit opened each
				samba.RoleController: {(3+1)*steps + 3 + 1, 0, 2},         // the batch and the bits, seeds, the total; two multiplications
				samba.RoleComp:       {steps + 3, 2 * 3 * steps, 0},       // the batch of bits, AES keys; K opens and K seals
			} {
				c := res.Costs[role]
				if c.BusySeconds <= 0 || c.Messages != want.messages || c.AESOps != want.aes || c.PaillierOps != want.paillier || c.Bytes <= 0 {
					t.Errorf("%s: costs %+v, want %d messages, %d AES and %d Paillier operations and some time", role, c, want.messages, want.aes, want.paillier)
				}
			}
			// Every message went from one daemon to another as a role
			// frame, and each daemon's metrics counted it out and in.
			out, in := roleFrames()
			if out-out0 != float64(res.Messages) || in-in0 != float64(res.Messages) {
				t.Errorf("the daemons' metrics counted %v role messages out and %v in, the roles sent %d", out-out0, in-in0, res.Messages)
			}
		})
	}
}

// copyingFamily is SAMBA whose controller, at one step, copies data owner
// 0's score over another's in the batch it forwards to comp — a
// controller that deviates from the protocol.
type copyingFamily struct{ samba.Family }

func (f copyingFamily) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	r, err := f.Family.NewRole(cfg)
	if err != nil || cfg.Self.Role != samba.RoleController {
		return r, err
	}
	return &copyingController{Role: r}, nil
}

type copyingController struct{ protocol.Role }

func (c *copyingController) Ready() protocol.Ready {
	rd := c.Role.Ready()
	for i, m := range rd.Messages {
		var msg sambapb.Message
		if proto.Unmarshal(m.Body, &msg) != nil {
			continue
		}
		if b := msg.GetScores(); b != nil && b.T == 50 {
			b.Boxes[1] = b.Boxes[0]
			rd.Messages[i].Body, _ = proto.Marshal(&msg)
		}
	}
	return rd
}

// TestSAMBATamperingAbortsOnTheNetwork: on real daemons, a controller that
// puts one data owner's sealed score in another's place is caught by comp,
// and the session aborts on every daemon with a reason that says so.
func TestSAMBATamperingAbortsOnTheNetwork(t *testing.T) {
	nodes := startNetworkWith(t, 6, func(i int, cfg *config.Config) {
		cfg.Policy["samba"] = sambaTestPolicy() // 512-bit keys
		if i >= 3 {
			cfg.LocalData["samba"] = map[string]any{"data_owner": samba.Bernoulli{Mu: 0.5}}
		}
	}, func(i int) []protocol.Family {
		if i == 1 { // node2, the controller
			return []protocol.Family{copyingFamily{}}
		}
		return nil
	})
	spec := "protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\", \"node6\"]\n[params]\nbudget = 400\npaillier_bits = 512\n"
	id, err := nodes[0].StartSession([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes {
		got := waitEnded(t, tn, id, 60*time.Second)
		if got.State != stateAborted || !strings.Contains(got.Reason, "comp[0] (node3): it rejected a message from controller[0] (node2)") {
			t.Errorf("%s: session %s (%q), want aborted with a reason naming comp and the controller", tn.cfg.Node.Name, got.State, got.Reason)
		}
		// comp's own record says why: the copied envelope.
		if tn.cfg.Node.Name == "node3" && !strings.Contains(got.Detail, "same envelope") {
			t.Errorf("node3: the abort's detail %q does not name the copied envelope", got.Detail)
		}
	}
}

// TestSAMBABatchedOnTheNetwork runs batched SAMBA (params.batch = 16; the
// 397 steps after the initial pulls make 24 batches of 16 and one of 13)
// across six daemons, roles' randomness seeded as a simulation's, and
// checks the batched Theorem 2 over libp2p: the data customer's cumulative
// reward and every arm's pulls equal the batched reference's from the same
// seed, and so do the arms pulled in each batch — the data owners pull a
// batch's arms at its end, each its own in step order, all of them before
// the next batch's scores, so the log orders the batches though not the
// data owners within one (the step of each pull is checked in simulation,
// TestTheorem2Batched, by the same role code).
func TestSAMBABatchedOnTheNetwork(t *testing.T) {
	means := []float64{0.6, 0.45, 0.3}
	const budget, batch, k = 400, 16, 3
	var seed atomic.Int64
	pulls := &pullLog{}
	nodes := startNetwork(t, 6, func(i int, cfg *config.Config) {
		cfg.Policy["samba"] = sambaTestPolicy() // 512-bit keys
		if i >= 3 {
			cfg.LocalData["samba"] = map[string]any{"data_owner": loggedArm{Bernoulli: samba.Bernoulli{Mu: means[i-3]}, i: i - 3, log: pulls}}
		}
	})
	for _, tn := range nodes {
		tn.rt.SetHooks(sessions.Hooks{RoleRand: func(p protocol.Party) io.Reader { return protocol.SeededRand(seed.Load(), p) }})
		tn.rt.SetHooks(sessions.Hooks{EnvRand: func(p protocol.Party) io.Reader { return protocol.SeededEnvironmentRand(seed.Load(), p) }})
	}
	for _, alg := range []string{"ucb", "thompson", "pursuit"} {
		t.Run(alg, func(t *testing.T) {
			seed.Store(21)
			pulls.take()
			spec := fmt.Sprintf("protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\", \"node6\"]\n[params]\nalgorithm = %q\nbudget = %d\npaillier_bits = 512\nbatch = %d\n", alg, budget, batch)
			_, res := completedSession[samba.Result](t, nodes[0], spec, 60*time.Second)
			p, err := samba.Family{}.ParseParams(map[string]any{"algorithm": alg, "budget": int64(budget), "paillier_bits": int64(512), "batch": int64(batch)})
			if err != nil {
				t.Fatal(err)
			}
			wantReward, seq, err := samba.Reference(p.(samba.Params), means, 21)
			if err != nil {
				t.Fatal(err)
			}
			if res.CumulativeReward != wantReward || res.Batch != batch {
				t.Errorf("the data customer got %d over libp2p (batch %d), the batched reference %d", res.CumulativeReward, res.Batch, wantReward)
			}
			pulled := pulls.take()
			if len(pulled) != len(seq) {
				t.Fatalf("the data owners pulled %d times over libp2p, the batched reference %d", len(pulled), len(seq))
			}
			for t0 := k; t0 < budget; t0 += batch {
				end := min(t0+batch, budget)
				got, want := slices.Sorted(slices.Values(pulled[t0:end])), slices.Sorted(slices.Values(seq[t0:end]))
				if !slices.Equal(got, want) {
					t.Errorf("the batch at step %d pulled arms %v over libp2p, %v in the batched reference", t0+1, got, want)
				}
			}
			iterations := int64(map[string]int{"pursuit": 2}[alg])
			if iterations == 0 {
				iterations = 1
			}
			batches := int64((budget - k + batch - 1) / batch)
			steps := int64(budget - k)
			lists := steps // of scores to comp: one a step
			if alg == "ucb" {
				lists = batches // UCB: one a batch, and bits back a step
			}
			if want := iterations*(2*k*batches+lists+steps) + k + 1 + k + k + k + 1; res.Messages != want {
				t.Errorf("%d messages, want %d (2K + 2n per batch of n steps and iteration, 2K + 1 + n for UCB)", res.Messages, want)
			}
			// A batch's lists go to comp in one write, and comp's
			// replies to them — one a list, as it steps each, or all
			// of UCB's for its one list — in one write back: comp's
			// messages, and the controller's but for UCB's (its one
			// list a batch, and one message of bits to each data
			// owner), take far fewer writes than messages. The
			// counts are the daemons' since the first subtest.
			for _, tn := range nodes[1:3] {
				got := trafficSeries(t, tn.metrics.Registry)
				msgs, writes := got["bandit_messages_total out role samba"], got["bandit_writes_total out role samba"]
				if tn == nodes[1] && alg == "ucb" {
					if writes != msgs {
						t.Errorf("the controller sent %.0f role messages in %.0f writes under UCB, want a write each (every one to another party)", msgs, writes)
					}
					continue
				}
				if writes == 0 || writes > msgs/2 {
					t.Errorf("%s sent %.0f role messages in %.0f writes, want at most half as many writes", tn.cfg.Node.Name, msgs, writes)
				}
			}
		})
	}
}

// sambaNetworkWithOldOwner starts six daemons for a SAMBA session — data
// owners node4–node6 with Bernoulli arms of the given means, node5's build
// speaking only SAMBA wire version — with every role's randomness seeded
// (seed 5), and waits until node1 has identified node5's protocols.
func sambaNetworkWithOldOwner(t *testing.T, means []float64, version string) []*testNode {
	t.Helper()
	old, ok := protocol.AtWireVersion(samba.Family{}, version)
	if !ok {
		t.Fatalf("samba does not speak wire %s", version)
	}
	nodes := startNetworkWith(t, 6, func(i int, cfg *config.Config) {
		cfg.Policy["samba"] = sambaTestPolicy() // 512-bit keys
		if i >= 3 {
			cfg.LocalData["samba"] = map[string]any{"data_owner": samba.Bernoulli{Mu: means[i-3]}}
		}
	}, func(i int) []protocol.Family {
		if i == 4 { // node5, a data owner, not yet upgraded
			return []protocol.Family{old}
		}
		return nil
	})
	for _, tn := range nodes {
		tn.rt.SetHooks(sessions.Hooks{RoleRand: func(p protocol.Party) io.Reader { return protocol.SeededRand(5, p) }})
		tn.rt.SetHooks(sessions.Hooks{EnvRand: func(p protocol.Party) io.Reader { return protocol.SeededEnvironmentRand(5, p) }})
	}
	ps := nodes[0].host.LibP2P().Peerstore()
	testutil.WaitFor(t, 20*time.Second, "node5's protocols identified", func() bool {
		protos, err := ps.GetProtocols(nodes[4].ID())
		return err == nil && len(protos) > 0
	})
	return nodes
}

// TestSAMBABatchesAcrossWireVersions: a data owner whose build speaks
// SAMBA wire 1.1.0 only (before batches) takes part in a session of
// params.batch = 1, which runs on 1.1.0 with the reward of the sequential
// reference — B = 1 is 1.1.0's protocol byte for byte
// (protocol/samba's TestBatchOneIsTheSequentialProtocol) — while a batched
// session cannot run with it and ends with a reason naming params.batch.
func TestSAMBABatchesAcrossWireVersions(t *testing.T) {
	means := []float64{0.6, 0.45, 0.3}
	nodes := sambaNetworkWithOldOwner(t, means, "1.1.0")
	spec := func(batch int) string {
		return fmt.Sprintf("protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\", \"node6\"]\n[params]\nbudget = 300\npaillier_bits = 512\nbatch = %d\n", batch)
	}
	got, res := completedSession[samba.Result](t, nodes[0], spec(1), 60*time.Second)
	if got.Wire != "1.1.0" {
		t.Errorf("the session of batch 1 ran on wire %q, want 1.1.0", got.Wire)
	}
	p, _ := samba.Family{}.ParseParams(map[string]any{"budget": int64(300), "paillier_bits": int64(512)})
	want, _, err := samba.Reference(p.(samba.Params), means, 5)
	if err != nil {
		t.Fatal(err)
	}
	if res.CumulativeReward != want {
		t.Errorf("cumulative reward %d on wire 1.1.0, the sequential reference %d", res.CumulativeReward, want)
	}
	// node1 knows node5's protocols (identified above): it refuses the
	// batched session itself, naming node5 and the parameter, and proposes
	// nothing.
	id, err := nodes[0].StartSession([]byte(spec(8)))
	const refusal = "node5 speaks no samba wire 1.3.0: params.batch: 8 needs SAMBA wire 1.2.0"
	if err == nil || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("a batched session with a 1.1.0 data owner: session %q, %v; want refused with %q", id, err, refusal)
	}
	var ke *protocol.KeyError
	if !errors.As(err, &ke) || ke.Key != "params.batch" {
		t.Errorf("the refusal %v is not a KeyError of params.batch (the API's field)", err)
	}
}

// TestSAMBABatchedUCBAcrossWireVersions: a data owner whose build speaks
// SAMBA wire 1.2.0 only (batches, but one bit a batch of UCB) takes part
// in a batched Thompson session, which runs on 1.2.0 — its messages are
// the same on 1.2.0 and 1.3.0 — with the batched reference's reward, while
// a batched UCB session, whose data owners take a bit a step since 1.3.0,
// is refused by the initiator, naming node5, the algorithm and both
// versions, before anything is proposed.
func TestSAMBABatchedUCBAcrossWireVersions(t *testing.T) {
	means := []float64{0.6, 0.45, 0.3}
	nodes := sambaNetworkWithOldOwner(t, means, "1.2.0")
	spec := func(alg string) string {
		return fmt.Sprintf("protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\", \"node6\"]\n[params]\nalgorithm = %q\nbudget = 300\npaillier_bits = 512\nbatch = 8\n", alg)
	}
	got, res := completedSession[samba.Result](t, nodes[0], spec("thompson"), 60*time.Second)
	if got.Wire != "1.2.0" {
		t.Errorf("the batched Thompson session ran on wire %q, want 1.2.0", got.Wire)
	}
	p, err := samba.Family{}.ParseParams(map[string]any{"algorithm": "thompson", "budget": int64(300), "paillier_bits": int64(512), "batch": int64(8)})
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := samba.Reference(p.(samba.Params), means, 5)
	if err != nil {
		t.Fatal(err)
	}
	if res.CumulativeReward != want {
		t.Errorf("cumulative reward %d on wire 1.2.0, the batched reference %d", res.CumulativeReward, want)
	}
	id, err := nodes[0].StartSession([]byte(spec("ucb")))
	const refusal = "node5 speaks no samba wire 1.3.0: params.batch: 8 with params.algorithm = ucb needs SAMBA wire 1.3.0 (a bit a step of each batch), and this session runs on 1.2.0"
	if err == nil || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("a batched UCB session with a 1.2.0 data owner: session %q, %v; want refused with %q", id, err, refusal)
	}
	var ke *protocol.KeyError
	if !errors.As(err, &ke) || ke.Key != "params.batch" {
		t.Errorf("the refusal %v is not a KeyError of params.batch (the API's field)", err)
	}
}
