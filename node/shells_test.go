package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// transcript is what crossed every link of a session: per link
// (from -> to), the messages in the order sent, each as its size and a
// digest of its body.
type transcript struct {
	mu    sync.Mutex
	links map[string][]string
}

func (tr *transcript) add(m protocol.Message, bodies bool) {
	entry := fmt.Sprintf("%d bytes", len(m.Body))
	if bodies {
		h := sha256.Sum256(m.Body)
		entry += " " + hex.EncodeToString(h[:8])
	}
	link := m.From.String() + " -> " + m.To.String()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.links == nil {
		tr.links = map[string][]string{}
	}
	tr.links[link] = append(tr.links[link], entry)
}

// diff says where two transcripts first differ, or "".
func (tr *transcript) diff(other *transcript) string {
	var links []string
	for l := range tr.links {
		links = append(links, l)
	}
	for l := range other.links {
		if _, ok := tr.links[l]; !ok {
			links = append(links, l)
		}
	}
	slices.Sort(links)
	for _, l := range links {
		a, b := tr.links[l], other.links[l]
		for i := range max(len(a), len(b)) {
			if i >= len(a) || i >= len(b) || a[i] != b[i] {
				return fmt.Sprintf("link %s differs first at message %d of %d/%d (daemons: %v, simulator: %v)", l, i+1, len(a), len(b),
					at(a, i), at(b, i))
			}
		}
	}
	return ""
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "none"
}

// TestDaemonsAndSimulatorAgree runs sessions across real daemons over
// libp2p, every role's randomness the seeded stream a simulation uses,
// and the same spec in the simulator with the daemons' session ID: both
// shells drive the parties through the party driver (protocol/drive), so
// every link carries the same messages in the same order. For SAMBA,
// whose roles draw everything from their streams, the bodies are equal
// byte for byte; for ping, whose bodies carry clock readings, and the
// contextual bandit (see its case), their sizes. BAI is not compared: its
// daemons activate an agent at its rate, its simulation one agent a global
// step drawn by the schedule (protocol.Simulator.NewSchedule), so their
// transcripts differ by design; P-FCB's rounds follow the clock in both,
// but its agents publish on the session topic, which the simulator hands
// every party at once and gossipsub in any order.
func TestDaemonsAndSimulatorAgree(t *testing.T) {
	t.Parallel()
	const seed = 21
	means := []float64{0.6, 0.45, 0.3}
	const steps, mpccbArms, dims = 12, 4, 20 // the synthetic contexts have 20 features
	contexts, rewards := linearProblem(steps, mpccbArms, dims, 9)
	mpccbTweak := mpccbLocals(t, contexts, rewards)
	mpccbTable := contextTable(t, contexts, rewards)
	nodes := startNetworkWith(t, 6, func(i int, cfg *config.Config) {
		cfg.Policy["samba"] = sambaTestPolicy()
		if i >= 3 {
			cfg.LocalData["samba"] = map[string]any{"data_owner": samba.Bernoulli{Mu: means[i-3]}}
		}
		if i < 5 {
			mpccbTweak(i, cfg)
		}
	}, nil)
	daemons := &transcript{}
	var sessionMu sync.Mutex
	var session string
	for _, tn := range nodes {
		tn.rt.SetHooks(sessions.Hooks{RoleRand: func(p protocol.Party) io.Reader { return protocol.SeededRand(seed, p) }})
		tn.rt.SetHooks(sessions.Hooks{EnvRand: func(p protocol.Party) io.Reader { return protocol.SeededEnvironmentRand(seed, p) }})
		tn.rt.SetHooks(sessions.Hooks{TraceOut: func(id string, m protocol.Message) {
			sessionMu.Lock()
			ok := id == session
			sessionMu.Unlock()
			if ok {
				daemons.add(m, true)
			}
		}})
	}
	reg, err := protocol.NewRegistry(ping.Family{}, samba.Family{}, mpccb.NewFamily())
	if err != nil {
		t.Fatal(err)
	}
	arms := make([]any, len(means))
	for i, m := range means {
		arms[i] = m
	}
	tests := []struct {
		name   string
		spec   string
		sim    *protocol.Spec
		bodies bool
	}{
		{"samba", "protocol = \"samba\"\n[roles]\ndata_customer = \"node1\"\ncontroller = \"node2\"\ncomp = \"node3\"\ndata_owner = [\"node4\", \"node5\", \"node6\"]\n[params]\nalgorithm = \"ucb\"\nbudget = 200\npaillier_bits = 512\n",
			&protocol.Spec{Protocol: samba.Name, Params: map[string]any{"algorithm": "ucb", "budget": int64(200), "paillier_bits": int64(512)},
				Simulation: map[string]any{"arms": arms}}, true},
		// The contextual bandit's roles draw their DP noise from the
		// secure sampler in a daemon, from their seeded streams in a
		// simulation (protocol.RoleConfig.Simulated); its simulation reads
		// the daemons' contexts from a table (dataset "csv"): the bodies
		// differ, and every link's sequence of sizes is the same.
		{"mpccb", fmt.Sprintf("protocol = \"mpccb\"\n[roles]\nfeature_party = [\"node1\", \"node2\"]\narm_puller = \"node3\"\nreward_receiver = \"node4\"\ndealer = \"node5\"\n[params]\nsteps = %d\narms = %d\ndimensions = %d\nepsilon = 0.2\n", steps, mpccbArms, dims),
			&protocol.Spec{Protocol: mpccb.Name, Params: map[string]any{"steps": int64(steps), "arms": int64(mpccbArms), "dimensions": int64(dims), "epsilon": 0.2},
				Simulation: map[string]any{"dataset": "csv", "csv": mpccbTable, "label": "label", "normalize": true}}, false},
		{"ping", "protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\", \"node3\"]\n[params]\ncount = 20\n",
			&protocol.Spec{Protocol: "ping", Roles: protocol.Assignment{Roles: map[string][]string{"participant": {"a", "b", "c"}}},
				Params: map[string]any{"count": int64(20)}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			*daemons = transcript{}
			// The session's ID is known once it is proposed; its first
			// messages are sent after every organization accepted.
			id, err := nodes[0].StartSession([]byte(tt.spec))
			if err != nil {
				t.Fatal(err)
			}
			sessionMu.Lock()
			session = id
			sessionMu.Unlock()
			if got := waitEnded(t, nodes[0], id, 60*time.Second); got.State != stateCompleted {
				t.Fatalf("the daemons' session ended %s: %s", got.State, got.Reason)
			}
			// Every daemon has sent all it will once the initiator's
			// session completed; wait for the last frames' traces.
			time.Sleep(100 * time.Millisecond)
			daemons.mu.Lock()
			got := &transcript{links: daemons.links}
			daemons.mu.Unlock()
			if !tt.bodies {
				got = sizesOnly(got)
			}
			s := int64(seed)
			simulated := &transcript{}
			_, err = sim.Run(context.Background(), reg, tt.sim, sim.Options{Seed: &s, SessionID: id,
				OnMessage: func(m protocol.Message) { simulated.add(m, tt.bodies) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.links) == 0 {
				t.Fatal("no message traced on the daemons")
			}
			if d := got.diff(simulated); d != "" {
				t.Fatal(d)
			}
			n := 0
			for _, l := range got.links {
				n += len(l)
			}
			t.Logf("%d messages on %d links agree", n, len(got.links))
		})
	}
}

// sizesOnly keeps the sizes of a transcript's entries.
func sizesOnly(tr *transcript) *transcript {
	out := &transcript{links: map[string][]string{}}
	for l, es := range tr.links {
		for _, e := range es {
			var n int
			fmt.Sscanf(e, "%d bytes", &n)
			out.links[l] = append(out.links[l], fmt.Sprintf("%d bytes", n))
		}
	}
	return out
}

// contextTable writes contexts as a CSV table (columns f0, f1, …) with
// each row's label, the arm whose reward is 1, for a simulation of
// dataset "csv", and returns its path.
func contextTable(t *testing.T, contexts, rewards [][]float64) string {
	t.Helper()
	var b strings.Builder
	for i := range contexts[0] {
		fmt.Fprintf(&b, "f%d,", i)
	}
	b.WriteString("label\n")
	for i, x := range contexts {
		for _, v := range x {
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + ",")
		}
		b.WriteString(strconv.Itoa(slices.Index(rewards[i], 1)) + "\n")
	}
	path := filepath.Join(t.TempDir(), "contexts.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
