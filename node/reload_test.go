package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/metrics"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
	dto "github.com/prometheus/client_model/go"
)

// configText renders a test config (testConfigs) as the TOML file a daemon
// reads: the keys testConfigs sets, the policies and the peers.
func configText(cfg *config.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[node]\nname = %q\ndata_dir = %q\nidentity = %q\nlisten = [", cfg.Node.Name, cfg.Node.DataDir, cfg.Node.Identity)
	for i, a := range cfg.Node.Listen {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", a)
	}
	fmt.Fprintf(&b, "]\n\n[api]\nlisten = %q\ntoken_file = %q\n", cfg.API.Listen, cfg.API.TokenFile)
	if cfg.API.ReadTokenFile != "" {
		fmt.Fprintf(&b, "read_token_file = %q\n", cfg.API.ReadTokenFile)
	}
	fmt.Fprintf(&b, "\n[discovery]\ndial_backoff_min = %q\ndial_backoff_max = %q\n", cfg.Discovery.DialBackoffMin, cfg.Discovery.DialBackoffMax)
	s := cfg.Session
	fmt.Fprintf(&b, "\n[session]\npropose_timeout = %q\npeer_timeout = %q\nheartbeat_interval = %q\n", s.ProposeTimeout, s.PeerTimeout, s.HeartbeatInterval)
	for _, fam := range slices.Sorted(maps.Keys(cfg.Policy)) {
		p := cfg.Policy[fam]
		fmt.Fprintf(&b, "\n[policy.%s]\nroles = %s\ninitiators = %s\n", fam, tomlStrings(p.Roles), tomlStrings(p.Initiators))
	}
	for _, p := range cfg.Peers {
		b.WriteString(peerText(p))
	}
	return b.String()
}

// peerText is p as a [[peers]] block.
func peerText(p config.PeerConfig) string {
	return fmt.Sprintf("\n[[peers]]\nname = %q\npeer_id = %q\naddrs = %s\n", p.Name, p.PeerID, tomlStrings(p.Addrs))
}

func tomlStrings(v []string) string {
	q := make([]string, len(v))
	for i, s := range v {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// writeConfig writes text to tn's config file.
func writeConfig(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// reload has tn re-read its config file through the control API.
func reload(t testing.TB, tn *testNode) string {
	t.Helper()
	ch, err := tn.api.Reload(context.Background())
	if err != nil {
		t.Fatalf("%s: reload: %v", tn.cfg.Node.Name, err)
	}
	return ch.String()
}

// TestReloadMembership grows a running 3-node network to four without a
// restart: the 4th node, with its own identity, is added to the three
// address books and given theirs by config reloads, and takes part in a
// session. A session running across a reload keeps the config it started
// with; an invalid config is refused with its reason and the old one keeps
// working; a peer removed by a reload is disconnected and refused.
func TestReloadMembership(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	open := config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
	nodes := startNetworkWith(t, 4, func(i int, cfg *config.Config) {
		cfg.Policy["stall"] = open
		// The stalled participant sends no heartbeat while it waits.
		cfg.Session.PeerTimeout = config.Duration{Duration: 20 * time.Second}
		if i == 3 {
			cfg.Peers = nil // the newcomer knows nobody yet
		} else {
			cfg.Peers = slices.DeleteFunc(cfg.Peers, func(p config.PeerConfig) bool { return p.Name == "node4" })
		}
		writeConfig(t, cfg.Path, configText(cfg))
	}, func(int) []protocol.Family { return []protocol.Family{ping.Family{}, stall{release: release}} })
	ctx := context.Background()
	n1, n2, n4 := nodes[0], nodes[1], nodes[3]

	// A session that runs across the reloads: node2 plays its stalled
	// participant until release.
	running, err := n1.StartSession([]byte("protocol = \"stall\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the stall session to run on node2", func() bool { return n2.rt.Active(running) })
	before := n2.config()

	// The newcomer's card, as `id --peer-card` prints it, goes into the
	// three address books; node2 also stops taking stall sessions from
	// node1.
	card := peerText(config.PeerConfig{Name: "node4", PeerID: n4.ID().String(), Addrs: n4.cfg.Node.Listen})
	for _, tn := range nodes[:3] {
		text := configText(tn.cfg) + card
		want := "peers added: node4"
		if tn == n2 {
			text = strings.Replace(text, "[policy.stall]\nroles = [\"*\"]\ninitiators = [\"*\"]", "[policy.stall]\nroles = [\"*\"]\ninitiators = [\"node3\"]", 1)
			want += "; policy changed: policy.stall"
		}
		writeConfig(t, tn.cfg.Path, text)
		if got := reload(t, tn); got != want {
			t.Errorf("%s: reload changed %q, want %q", tn.cfg.Node.Name, got, want)
		}
	}
	var book []config.PeerConfig
	for _, tn := range nodes[:3] {
		book = append(book, config.PeerConfig{Name: tn.cfg.Node.Name, PeerID: tn.ID().String(), Addrs: tn.cfg.Node.Listen})
	}
	n4text := configText(n4.cfg)
	for _, p := range book {
		n4text += peerText(p)
	}
	writeConfig(t, n4.cfg.Path, n4text)
	if got, want := reload(t, n4), "peers added: node1, node2, node3"; got != want {
		t.Errorf("node4: reload changed %q, want %q", got, want)
	}
	testutil.WaitFor(t, 20*time.Second, "node4 to connect to the three", func() bool {
		peers, err := n4.api.Peers(ctx)
		if err != nil || len(peers) != 3 {
			return false
		}
		for _, p := range peers {
			if !p.Connected {
				return false
			}
		}
		return true
	})

	// The running session kept its config, and completes under it.
	if cfg, ok := n2.rt.SessionConfig(running); !ok || cfg != before || n2.config() == before {
		t.Error("node2's running session does not hold the config it started with, or the reload did not replace the node's")
	}
	unblock()
	for _, tn := range nodes[:2] {
		if got := waitEnded(t, tn, running, 20*time.Second); got.State != stateCompleted {
			t.Fatalf("%s: the session running across the reload: %s: %s", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
	// A new one meets node2's new policy.
	declined, err := n1.StartSession([]byte("protocol = \"stall\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := waitEnded(t, n1, declined, 20*time.Second); got.State != stateAborted || !strings.Contains(got.Reason, "policy.stall.initiators") {
		t.Errorf("a stall session proposed after node2's reload: %s: %q, want declined by policy.stall.initiators", got.State, got.Reason)
	}

	// The newcomer takes part in sessions, as initiator and participant.
	completedSession[map[string]any](t, n4, string(pingSpec(5, "node1", "node2", "node3", "node4")), 30*time.Second)
	completedSession[map[string]any](t, n1, string(pingSpec(5, "node4", "node1")), 30*time.Second)

	// An invalid config is refused whole, with the reason; the old one
	// stays in force.
	good := configText(n1.cfg) + card
	for _, tc := range []struct{ name, text, want string }{
		{"listen changed", strings.Replace(good, n1.cfg.Node.Listen[0], "/ip4/127.0.0.1/tcp/1", 1), "node.listen changed: restart the daemon to apply it"},
		{"unknown key", good + "\n[[peers]]\nname = \"node9\"\npeer_id = \"" + n4.ID().String() + "\"\ncolour = \"red\"\n", "unknown key peers.colour"},
		{"duplicate peer", good + card, "is used twice"},
	} {
		writeConfig(t, n1.cfg.Path, tc.text)
		_, err := n1.api.Reload(ctx)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 400 || !strings.Contains(ce.Message, tc.want) || !strings.Contains(ce.Message, "refused") {
			t.Errorf("%s: reload answered %v, want 400 refusing it with %q", tc.name, err, tc.want)
		}
	}
	last, _ := completedSession[map[string]any](t, n1, string(pingSpec(5, "node1", "node2", "node4")), 30*time.Second)
	waitEnded(t, n2, last.ID, 20*time.Second)
	// A participant ends a moment after the initiator: node2 is idle
	// before node4 leaves its book (or its sessions with node4 abort).
	testutil.WaitFor(t, 20*time.Second, "node2 to end its sessions", func() bool {
		return n2.rt.ActiveCount() == 0
	})

	// node2 removes node4: disconnected at once and refused at its
	// next dial.
	writeConfig(t, n2.cfg.Path, configText(n2.cfg))
	refused := n2.host.Gater().Refused()
	if got, want := reload(t, n2), "peers removed: node4; policy changed: policy.stall"; got != want {
		t.Errorf("node2: reload changed %q, want %q", got, want)
	}
	testutil.WaitFor(t, 20*time.Second, "node4 to be disconnected from node2 and refused at its redial", func() bool {
		return !n2.host.Connected(n4.ID()) && n2.host.Gater().Refused() > refused
	})
	if _, err := n2.StartSession(pingSpec(1, "node2", "node4")); err == nil || !strings.Contains(err.Error(), "address book") {
		t.Errorf("node2 started a session with the removed node4: %v", err)
	}
	if n2.host.Connected(n4.ID()) {
		t.Error("node4 is connected to node2 again")
	}
}

// TestReloadAbortsSessionsOfARemovedPeer: a session running with a peer
// that a reload removes from the address book aborts at once, saying why,
// on both sides; the reload names it.
func TestReloadAbortsSessionsOfARemovedPeer(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	nodes := startNetworkWith(t, 2, func(_ int, cfg *config.Config) {
		cfg.Policy["stall"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		cfg.Session.PeerTimeout = config.Duration{Duration: 20 * time.Second}
		writeConfig(t, cfg.Path, configText(cfg))
	}, func(int) []protocol.Family { return []protocol.Family{ping.Family{}, stall{release: release}} })
	n1, n2 := nodes[0], nodes[1]
	id, err := n1.StartSession([]byte("protocol = \"stall\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the session to run on node2", func() bool { return n2.rt.Active(id) })
	cfg := *n1.cfg
	cfg.Peers = nil
	writeConfig(t, cfg.Path, configText(&cfg))
	ch, err := n1.api.Reload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ch.PeersRemoved, []string{"node2"}) || !slices.Equal(ch.Aborted, []string{id}) {
		t.Errorf("reload change = %+v, want node2 removed and session %s aborted", ch, id)
	}
	got := waitEnded(t, n1, id, 20*time.Second)
	if got.State != stateAborted || !strings.Contains(got.Reason, "[node2] removed from the address book of node1 by a config reload") {
		t.Errorf("node1: %s: %q, want aborted because node2 was removed", got.State, got.Reason)
	}
	// node2's stalled role holds its session until it is released; then
	// the session finds node1 gone (it refuses node2 now).
	unblock()
	if got := waitEnded(t, n2, id, 20*time.Second); got.State != stateAborted {
		t.Errorf("node2: %s: %s, want aborted", got.State, got.Reason)
	}
}

// TestReloadSchedulesStandingSessions: a standing session added to the
// config by a reload runs without a restart, and one removed by a reload
// is no longer scheduled.
func TestReloadSchedulesStandingSessions(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) { writeConfig(t, cfg.Path, configText(cfg)) })
	n1 := nodes[0]
	spec := filepath.Join(filepath.Dir(n1.cfg.Path), "pinger.toml")
	if err := os.WriteFile(spec, pingSpec(2, "node1", "node2"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := configText(n1.cfg)
	writeConfig(t, n1.cfg.Path, base+"\n[[sessions]]\nname = \"pinger\"\nspec = \"pinger.toml\"\nevery = \"1s\"\n")
	if got, want := reload(t, n1), "standing sessions changed: sessions.pinger"; got != want {
		t.Errorf("reload changed %q, want %q", got, want)
	}
	testutil.WaitFor(t, 30*time.Second, "a completed run of the standing session added by the reload", func() bool {
		return countState(namedRuns(t, n1, "pinger"), apitype.StateCompleted) >= 1
	})
	writeConfig(t, n1.cfg.Path, base)
	if got, want := reload(t, n1), "standing sessions changed: sessions.pinger"; got != want {
		t.Errorf("reload changed %q, want %q", got, want)
	}
	list, err := n1.api.Standing(context.Background())
	if err != nil || len(list) != 0 {
		t.Errorf("standing sessions after their removal: %+v, %v; want none", list, err)
	}
}

// TestTruncatedConfigAndRefusedReload: a daemon started from its config
// cut short after [node], [api], [discovery] and [session] — the address
// book and the policies lost — starts, and says at WARN, and in GET
// /v0/node, what it cannot do. A refused reload (the file emptied, as a
// truncation to nothing leaves it) is counted, shown in GET /v0/node with
// its reason, and leaves the running config in force; the next good reload
// is counted as applied and clears the warnings.
func TestTruncatedConfigAndRefusedReload(t *testing.T) {
	ctx := context.Background()
	cfg := testConfigs(t, 2)[0]
	full := configText(cfg)
	cut := full[:strings.Index(full, "\n[policy.")+1]
	writeConfig(t, cfg.Path, cut)
	loaded, err := config.LoadConfig(cfg.Path, testRegistry(t))
	if err != nil {
		t.Fatalf("the config cut before [policy.*] and [[peers]] is refused: %v", err)
	}
	tn := startNode(t, loaded)
	warnings := []string{
		"no [[peers]]: this node can connect to no organization until peers are added (bandit-node peers add)",
		"no [policy.*]: this node declines every proposal, and cannot initiate a session either, since every protocol is disabled here; enable one with a [policy.<protocol>] table",
	}
	for _, w := range warnings {
		if len(tn.logs.find(w, "config", cfg.Path)) != 1 {
			t.Errorf("the daemon did not log %q once at start", w)
		}
	}
	info, err := tn.api.Node(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Warnings, warnings) || info.LastReload != nil {
		t.Errorf("GET /v0/node: warnings %q, last reload %+v; want the two warnings and no reload", info.Warnings, info.LastReload)
	}
	counts := func() (applied, refused, successful float64) {
		return counterValue(t, tn.reloads.Total.WithLabelValues(metrics.ReloadApplied)), counterValue(t, tn.reloads.Total.WithLabelValues(metrics.ReloadRefused)),
			gaugeValue(t, tn.reloads.Successful)
	}
	if a, r, s := counts(); a != 0 || r != 0 || s != 1 {
		t.Errorf("at start: %v applied, %v refused, last successful %v; want 0, 0, 1", a, r, s)
	}

	// Refused: through the API, then as SIGHUP does (Node.Reload).
	writeConfig(t, cfg.Path, "")
	if _, err := tn.api.Reload(ctx); err == nil || !strings.Contains(err.Error(), "the config is empty") {
		t.Errorf("reloading an empty config: %v, want it refused as empty", err)
	}
	writeConfig(t, cfg.Path, strings.Replace(cut, "listen = [", "# listen = [", 1))
	if _, err := tn.Reload(ctx); err == nil || !strings.Contains(err.Error(), "node.listen: missing") {
		t.Errorf("reloading a config without node.listen: %v, want it refused naming node.listen", err)
	}
	if a, r, s := counts(); a != 0 || r != 2 || s != 0 {
		t.Errorf("after two refused reloads: %v applied, %v refused, last successful %v; want 0, 2, 0", a, r, s)
	}
	if info, err = tn.api.Node(ctx); err != nil {
		t.Fatal(err)
	}
	if lr := info.LastReload; lr == nil || lr.Result != metrics.ReloadRefused || !strings.Contains(lr.Reason, "node.listen: missing") ||
		!strings.Contains(lr.Reason, "the running one stays in force") || time.Since(lr.At) > time.Minute {
		t.Errorf("GET /v0/node: last reload %+v, want refused for node.listen, just now", lr)
	}
	if tn.config().Node.Name != cfg.Node.Name || len(info.Warnings) != 2 {
		t.Errorf("after refused reloads: running config %q, warnings %q; want the one started with", tn.config().Node.Name, info.Warnings)
	}

	// Applied: the whole file back.
	writeConfig(t, cfg.Path, full)
	if got := reload(t, tn); !strings.Contains(got, "peers added: node2") || !strings.Contains(got, "policy changed: policy.ping") {
		t.Errorf("reload changed %q, want node2 and policy.ping added", got)
	}
	if a, r, s := counts(); a != 1 || r != 2 || s != 1 {
		t.Errorf("after an applied reload: %v applied, %v refused, last successful %v; want 1, 2, 1", a, r, s)
	}
	if info, err = tn.api.Node(ctx); err != nil {
		t.Fatal(err)
	}
	if lr := info.LastReload; len(info.Warnings) != 0 || lr == nil || lr.Result != metrics.ReloadApplied || !strings.Contains(lr.Change, "peers added: node2") {
		t.Errorf("GET /v0/node after the applied reload: warnings %q, last reload %+v", info.Warnings, lr)
	}
}

// gaugeValue reads a Prometheus gauge.
func gaugeValue(t *testing.T, g interface{ Write(*dto.Metric) error }) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
