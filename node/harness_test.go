package node

import (
	"context"
	"fmt"
	"log/slog"
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
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"
)

// testNode is one daemon of an in-process test network on 127.0.0.1.
type testNode struct {
	*Node
	cfg    *config.Config
	cancel context.CancelFunc
	done   chan error
	api    *client.Client
	t      testing.TB
	logs   *logRecorder // every record the node logged

	stopOnce sync.Once
}

// testConfigs creates n node directories whose address books list each other,
// with short timeouts, and returns their configs.
func testConfigs(t testing.TB, n int) []*config.Config {
	t.Helper()
	root := t.TempDir()
	cfgs := make([]*config.Config, n)
	ids := make([]peer.ID, n)
	ports := make([]int, n)
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("node%d", i+1))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		_, id, err := p2p.GenerateIdentity(filepath.Join(dir, "identity.key"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "api.token"), []byte(strings.Repeat("t", 32)), 0o600); err != nil {
			t.Fatal(err)
		}
		ids[i], ports[i] = id, testutil.FreePort(t)
		for slices.Contains(ports[:i], ports[i]) {
			ports[i] = testutil.FreePort(t)
		}
		cfg := config.DefaultConfig()
		cfg.Path = filepath.Join(dir, "config.toml")
		cfg.Node.Name = fmt.Sprintf("node%d", i+1)
		cfg.Node.DataDir = dir
		cfg.Node.Identity = filepath.Join(dir, "identity.key")
		cfg.Node.Listen = []string{fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", ports[i])}
		cfg.API.Listen = "127.0.0.1:0"
		cfg.API.TokenFile = filepath.Join(dir, "api.token")
		cfg.Discovery.DialBackoffMin = config.Duration{Duration: 50 * time.Millisecond}
		cfg.Discovery.DialBackoffMax = config.Duration{Duration: 500 * time.Millisecond}
		cfg.Session.ProposeTimeout = config.Duration{Duration: 5 * time.Second}
		cfg.Session.PeerTimeout = config.Duration{Duration: 3 * time.Second}
		cfg.Session.HeartbeatInterval = config.Duration{Duration: 300 * time.Millisecond}
		cfg.Policy = map[string]config.PolicyConfig{"ping": {Roles: []string{"*"}, Initiators: []string{"*"}}}
		cfg.LocalData = map[string]map[string]any{}
		cfgs[i] = cfg
	}
	for i := range n {
		for j := range n {
			if i != j {
				cfgs[i].Peers = append(cfgs[i].Peers, config.PeerConfig{Name: cfgs[j].Node.Name, PeerID: ids[j].String(),
					Addrs: []string{fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", ports[j])}})
			}
		}
	}
	return cfgs
}

// startNode builds and runs one node; it is stopped gracefully at cleanup.
func startNode(t testing.TB, cfg *config.Config, families ...protocol.Family) *testNode {
	t.Helper()
	tn, err := tryStartNode(t, cfg, families...)
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// tryStartNode is startNode returning the error instead of failing the test.
func tryStartNode(t testing.TB, cfg *config.Config, families ...protocol.Family) (*testNode, error) {
	t.Helper()
	logs := &logRecorder{}
	logger := slog.New(logs.wrap(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))).With("node", cfg.Node.Name)
	reg := testRegistry(t)
	if len(families) > 0 {
		var err error
		if reg, err = protocol.NewRegistry(families...); err != nil {
			t.Fatal(err)
		}
	}
	n, err := New(cfg, reg, WithLogger(logger))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	tn := &testNode{Node: n, cfg: cfg, cancel: cancel, done: make(chan error, 1), t: t, logs: logs}
	ready := make(chan struct{})
	go func() { tn.done <- n.Run(ctx, ready) }()
	select {
	case <-ready:
	case err := <-tn.done:
		return nil, fmt.Errorf("%s did not start: %w", cfg.Node.Name, err)
	}
	tn.api = client.New(n.APIAddr(), strings.Repeat("t", 32))
	t.Cleanup(tn.stop)
	return tn, nil
}

// stop shuts the node down gracefully (idempotent).
func (tn *testNode) stop() {
	tn.stopOnce.Do(func() {
		tn.cancel()
		select {
		case <-tn.done:
		case <-time.After(15 * time.Second):
			tn.t.Errorf("%s did not stop within 15s", tn.cfg.Node.Name)
		}
	})
}

// startNetwork starts n nodes and waits until each is connected to all others.
func startNetwork(t testing.TB, n int, tweak func(i int, cfg *config.Config)) []*testNode {
	t.Helper()
	return startNetworkWith(t, n, tweak, nil)
}

// startNetworkWith is startNetwork where node i knows the protocol families
// families(i) (nil: the default registry).
func startNetworkWith(t testing.TB, n int, tweak func(i int, cfg *config.Config), families func(i int) []protocol.Family) []*testNode {
	t.Helper()
	var nodes []*testNode
	// A port freePort found free can be taken by another test process
	// before the node listens on it; then the whole network is rebuilt.
	for attempt := 1; nodes == nil; attempt++ {
		cfgs := testConfigs(t, n)
		started := make([]*testNode, 0, n)
		var err error
		for i, cfg := range cfgs {
			if tweak != nil {
				tweak(i, cfg)
			}
			var fams []protocol.Family
			if families != nil {
				fams = families(i)
			}
			var tn *testNode
			if tn, err = tryStartNode(t, cfg, fams...); err != nil {
				break
			}
			started = append(started, tn)
		}
		if err == nil {
			nodes = started
			break
		}
		for _, tn := range started {
			tn.stop()
		}
		if attempt == 5 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("retrying with other ports: %v", err)
	}
	// Every pair that list each other connects; a peer whose own address
	// book leaves this node out is refused by it (a test's choice).
	lists := map[string]map[string]bool{} // peer ID → the peer IDs its book lists
	for _, tn := range nodes {
		book := map[string]bool{}
		for _, p := range tn.host.Peers() {
			book[p.ID.String()] = true
		}
		lists[tn.ID().String()] = book
	}
	testutil.WaitFor(t, 20*time.Second, "full mesh", func() bool {
		for _, tn := range nodes {
			for _, p := range tn.host.Peers() {
				if theirs, ok := lists[p.ID.String()]; ok && !theirs[tn.ID().String()] {
					continue
				}
				if !p.Connected {
					return false
				}
			}
		}
		return true
	})
	return nodes
}

// waitEnded waits until session id has ended on tn and returns its record.
func waitEnded(t testing.TB, tn *testNode, id string, limit time.Duration) apitype.Session {
	t.Helper()
	var s apitype.Session
	testutil.WaitFor(t, limit, "session "+id+" to end on "+tn.cfg.Node.Name, func() bool {
		rec, err := tn.sessionRecord(id)
		if err != nil {
			return false
		}
		s = rec.Session
		return s.State == stateCompleted || s.State == stateAborted
	})
	return s
}

// completedSession starts spec at tn, waits up to limit for the session to
// end, fails the test unless it completed, and returns its record with its
// result decoded as an R.
func completedSession[R any](t testing.TB, tn *testNode, spec string, limit time.Duration) (apitype.Session, R) {
	t.Helper()
	id, err := tn.StartSession([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	got := waitEnded(t, tn, id, limit)
	if got.State != stateCompleted {
		t.Fatalf("session ended %s: %s", got.State, got.Reason)
	}
	rec, err := tn.sessionRecord(id)
	if err != nil {
		t.Fatal(err)
	}
	return got, testutil.DecodeJSON[R](t, rec.Result)
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// crash simulates a daemon dying: its store stops writing and its host closes
// without telling anyone.
func (tn *testNode) crash() {
	tn.store.Frozen.Store(true)
	tn.host.Close()
	tn.store.Close() // the kernel releases a dead process's lock
}

// roleMessenger returns tn's messenger of family's role streams at its
// current wire version.
func (tn *testNode) roleMessenger(t testing.TB, family string) *p2p.Messenger {
	t.Helper()
	f, err := tn.reg.Lookup(family)
	if err != nil {
		t.Fatal(err)
	}
	m := tn.rt.RoleMessenger(f)
	if m == nil {
		t.Fatalf("%s has no role messenger for %s", tn.cfg.Node.Name, sessions.RoleProtocol(f))
	}
	return m
}

func testRegistry(t testing.TB) *protocol.Registry {
	t.Helper()
	reg, err := protocol.NewRegistry(ping.Family{}, bai.Family{}, pfcb.Family{}, samba.Family{}, mpccb.NewFamily())
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// trafficSeries gathers bandit_messages_total, bandit_bytes_total and
// bandit_writes_total (direction "out") from reg, keyed "NAME DIRECTION
// KIND PROTOCOL", and their sums over the protocols, keyed "NAME DIRECTION
// KIND".
func trafficSeries(t testing.TB, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "bandit_messages_total" && f.GetName() != "bandit_bytes_total" && f.GetName() != "bandit_writes_total" {
			continue
		}
		for _, mt := range f.GetMetric() {
			labels := map[string]string{"direction": "out"}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			key := f.GetName() + " " + labels["direction"] + " " + labels["kind"]
			got[key+" "+labels["protocol"]] = mt.GetCounter().GetValue()
			got[key] += mt.GetCounter().GetValue()
		}
	}
	return got
}

// marshal encodes m, failing the test if it cannot.
func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
