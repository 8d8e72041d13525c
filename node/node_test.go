package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/ping"
)

func pingSpec(count int, names ...string) []byte {
	return []byte("protocol = \"ping\"\n[roles]\nparticipant = [\"" + strings.Join(names, "\", \"") +
		"\"]\n[params]\ncount = " + itoa(count) + "\n")
}

func itoa(i int) string { return jsonInt(i) }

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestSessionLifecycle runs a ping session among three daemons through the
// control API and checks the latency matrix and every node's record.
func TestSessionLifecycle(t *testing.T) {
	nodes := startNetwork(t, 3, nil)
	ctx := context.Background()
	s, err := nodes[0].api.StartSession(ctx, pingSpec(20, "node1", "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	final, err := nodes[0].api.Wait(ctx, s.ID, 50*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if final.State != stateCompleted {
		t.Fatalf("session ended %s: %s", final.State, final.Reason)
	}
	if final.Progress.Step != final.Progress.Total || final.Progress.Total != 3*2*20 {
		t.Errorf("progress = %+v, want %d/%d", final.Progress, 120, 120)
	}
	res, err := nodes[0].api.Result(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var m ping.Matrix
	if err := json.Unmarshal(res.Result, &m); err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.Participants, ",") != "node1,node2,node3" {
		t.Errorf("participants = %v", m.Participants)
	}
	for i := range 3 {
		for j := range 3 {
			if (i == j) != (m.MedianMicros[i][j] == 0) || m.P99Micros[i][j] < m.MedianMicros[i][j] {
				t.Errorf("rtt[%d][%d] median %v p99 %v", i, j, m.MedianMicros[i][j], m.P99Micros[i][j])
			}
		}
	}
	for _, tn := range nodes[1:] {
		got := waitEnded(t, tn, s.ID, 10*time.Second)
		if got.State != stateCompleted || got.Initiator != "node1" {
			t.Errorf("%s recorded %+v", tn.cfg.Node.Name, got)
		}
	}
	list, err := nodes[0].api.Sessions(ctx)
	if err != nil || len(list) != 1 || list[0].ID != s.ID {
		t.Errorf("sessions = %v, %v", list, err)
	}
}

// TestDeclineAbortsEverywhere: a participant whose policy does not enable the
// protocol declines, and every node records the abort with its reason.
func TestDeclineAbortsEverywhere(t *testing.T) {
	nodes := startNetwork(t, 3, func(i int, cfg *config.Config) {
		if i == 2 {
			cfg.Policy = map[string]config.PolicyConfig{}
		}
	})
	id, err := nodes[0].StartSession(pingSpec(5, "node1", "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes[:2] {
		got := waitEnded(t, tn, id, 15*time.Second)
		if got.State != stateAborted || !strings.Contains(got.Reason, "node3 declined") || !strings.Contains(got.Reason, "not enabled") {
			t.Errorf("%s: state %s reason %q, want aborted because node3 declined", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
}

// TestBadSpecRejectedBeforeSending: the API answers 400 naming the key, and
// no session is created anywhere.
func TestBadSpecRejectedBeforeSending(t *testing.T) {
	nodes := startNetwork(t, 2, nil)
	tests := []struct{ spec, want string }{
		{"protocol = \"pong\"\n", "unknown protocol \"pong\""},
		{"protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node9\"]\n", "roles.participant[1]: \"node9\""},
		{"protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n[params]\ncount = -1\n", "params.count"},
		{"protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\nobserver = \"node2\"\n", "roles.observer"},
	}
	for _, tt := range tests {
		_, err := nodes[0].api.StartSession(context.Background(), []byte(tt.spec))
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 400 || !strings.Contains(ce.Message, tt.want) {
			t.Errorf("spec %q: err = %v, want a 400 naming %q", tt.spec, err, tt.want)
		}
	}
	for _, tn := range nodes {
		if recs, _ := tn.store.List(); len(recs) != 0 {
			t.Errorf("%s has %d session records after bad specs", tn.cfg.Node.Name, len(recs))
		}
	}
}

// TestConcurrentSessions: two sessions on the same daemons both complete,
// each with its own matrix.
func TestConcurrentSessions(t *testing.T) {
	nodes := startNetwork(t, 3, nil)
	a, err := nodes[0].StartSession(pingSpec(200, "node1", "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := nodes[1].StartSession(pingSpec(150, "node3", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tn    *testNode
		id    string
		n     int
		count int
	}{{nodes[0], a, 3, 200}, {nodes[1], b, 2, 150}} {
		got := waitEnded(t, c.tn, c.id, 30*time.Second)
		if got.State != stateCompleted {
			t.Fatalf("session %s ended %s: %s", c.id, got.State, got.Reason)
		}
		rec, _ := c.tn.sessionRecord(c.id)
		var m ping.Matrix
		if err := json.Unmarshal(rec.Result, &m); err != nil || len(m.Participants) != c.n || m.Count != c.count {
			t.Errorf("session %s result %+v, %v", c.id, m, err)
		}
	}
}

// TestCancelAbortsEverywhere: an operator's cancel at a participant reaches
// every node with one reason.
func TestCancelAbortsEverywhere(t *testing.T) {
	nodes := startNetwork(t, 3, nil)
	id, err := nodes[0].StartSession(pingSpec(ping.MaxCount, "node1", "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "node2 to run the session", func() bool {
		rec, err := nodes[1].sessionRecord(id)
		return err == nil && rec.Session.State == stateRunning
	})
	if err := nodes[1].api.Cancel(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes {
		got := waitEnded(t, tn, id, 15*time.Second)
		if got.State != stateAborted || got.Reason != "cancelled by the operator of node2" {
			t.Errorf("%s: state %s reason %q", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
}

// TestShutdownAndRestart: a participant shut down gracefully aborts the
// session everywhere; after a restart it has the same identity and its past
// results; a session left open by a crash shows as aborted.
func TestShutdownAndRestart(t *testing.T) {
	nodes := startNetwork(t, 3, nil)
	done, err := nodes[0].StartSession(pingSpec(3, "node1", "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	waitEnded(t, nodes[2], done, 15*time.Second)
	id, err := nodes[0].StartSession(pingSpec(ping.MaxCount, "node1", "node2", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "node2 to run the session", func() bool {
		rec, err := nodes[1].sessionRecord(id)
		return err == nil && rec.Session.State == stateRunning
	})
	oldID := nodes[1].ID()
	nodes[1].stop()
	for _, tn := range []*testNode{nodes[0], nodes[2]} {
		got := waitEnded(t, tn, id, 15*time.Second)
		if got.State != stateAborted || !strings.Contains(got.Reason, "node2 is shutting down") {
			t.Errorf("%s: state %s reason %q", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
	if rec, err := nodes[1].store.Get(id); err != nil || rec.Session.State != stateAborted {
		t.Fatalf("the stopped node recorded %+v, %v", rec, err)
	}

	// A crash: node3 dies with a session open; on restart it is aborted.
	// Its record, stored with its progress, tells how far the session got
	// and when it last ran; the time it was down is not its duration.
	nodes[2].rt.SetHooks(sessions.Hooks{ProgressSave: new(time.Duration)}) // every progress report is stored
	id3, err := nodes[0].StartSession(pingSpec(ping.MaxCount, "node1", "node3"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "node3 to store some progress", func() bool {
		rec, err := nodes[2].store.Get(id3)
		return err == nil && rec.Session.State == stateRunning && rec.Session.Progress.Step > 0
	})
	nodes[2].crash()
	stored, err := nodes[2].store.Get(id3)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the daemon is down for a while
	restarted := startNode(t, nodes[2].cfg)
	got, err := restarted.store.Get(id3)
	if err != nil {
		t.Fatal(err)
	}
	p := stored.Session.Progress
	reason := fmt.Sprintf("node3 restarted while the session was open; its record, last stored at %s, showed step %d of %d",
		stored.Session.Updated.UTC().Format(time.DateTime+" UTC"), p.Step, p.Total)
	if got.Session.State != stateAborted || got.Session.Reason != reason {
		t.Errorf("after restart: %s, %q; want aborted, %q", got.Session.State, got.Session.Reason, reason)
	}
	if got.Session.Finished == nil || !got.Session.Finished.Equal(*stored.Session.Updated) {
		t.Errorf("after restart: finished %v, want the last stored record's time %v", got.Session.Finished, stored.Session.Updated)
	}
	if got, err := restarted.store.Get(done); err != nil || got.Session.State != stateCompleted {
		t.Errorf("past result lost over a restart: %+v, %v", got, err)
	}
	again := startNode(t, nodes[1].cfg)
	if again.ID() != oldID {
		t.Errorf("identity changed over a restart: %s, was %s", again.ID(), oldID)
	}

	// A second daemon on a data directory in use does not start, and
	// says why, whatever else of its config differs.
	twin := *again.cfg
	twin.Node.Listen = []string{"/ip4/127.0.0.1/tcp/0"}
	twin.API.Listen = "127.0.0.1:0"
	if _, err := tryStartNode(t, &twin); err == nil || !strings.Contains(err.Error(), "in use by another bandit-node (pid ") {
		t.Errorf("a second daemon on node2's data directory: %v", err)
	}
	if got, err := again.store.Get(done); err != nil || got.Session.State != stateCompleted {
		t.Errorf("node2's records after a second daemon tried its data directory: %+v, %v", got, err)
	}
}

// TestPeerGoneAbortsWithinSeconds: when a daemon dies without a word (its
// connections close and no redial reaches it), every survivor records the
// abort within seconds, naming it and the cause — not after
// session.peer_timeout, set here far beyond the test's limit — and the
// survivors go on serving new sessions. For a participant and for the
// initiator.
func TestPeerGoneAbortsWithinSeconds(t *testing.T) {
	tests := []struct {
		name   string
		killed int
	}{
		{"participant", 2},
		{"initiator", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := startNetwork(t, 3, func(_ int, cfg *config.Config) {
				cfg.Session.PeerTimeout = config.Duration{Duration: time.Minute}
			})
			id, err := nodes[0].StartSession(pingSpec(ping.MaxCount, "node1", "node2", "node3"))
			if err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 10*time.Second, "the session to run", func() bool {
				rec, err := nodes[0].sessionRecord(id)
				return err == nil && rec.Session.Progress.Step > 0
			})
			dead := nodes[tt.killed]
			killed := time.Now()
			dead.crash() // no abort is sent
			name := dead.cfg.Node.Name
			for i, tn := range nodes {
				if i == tt.killed {
					continue
				}
				got := waitEnded(t, tn, id, 5*time.Second)
				// The first symptom is the cause: the connection watcher's
				// failed redial, or a role's failed send (ping sends all
				// the time), whose error says the same.
				if got.State != stateAborted || !strings.Contains(got.Reason, name) ||
					!strings.Contains(got.Reason, "connection to "+name+" closed; redial failed") &&
						!strings.Contains(got.Reason, "could not send to") {
					t.Errorf("%s: state %s reason %q, want aborted naming %s and why it cannot be reached", tn.cfg.Node.Name, got.State, got.Reason, name)
				}
				t.Logf("%s recorded the abort %v after the kill", tn.cfg.Node.Name, time.Since(killed).Round(time.Millisecond))
			}
			// The survivors go on.
			survivors := slices.Delete(slices.Clone(nodes), tt.killed, tt.killed+1)
			id2, err := survivors[0].StartSession(pingSpec(5, survivors[0].cfg.Node.Name, survivors[1].cfg.Node.Name))
			if err != nil {
				t.Fatal(err)
			}
			if got := waitEnded(t, survivors[1], id2, 15*time.Second); got.State != stateCompleted {
				t.Fatalf("a new session after the abort ended %s: %s", got.State, got.Reason)
			}
		})
	}
}

// TestQuietPeerGoneAbortsWithinSeconds: a peer that dies while no role
// message is on its way to it (here both roles wait) is found by the
// connection watcher alone: its last connection closes, a redial fails, and
// the session aborts within seconds naming it.
func TestQuietPeerGoneAbortsWithinSeconds(t *testing.T) {
	fam := stall{release: make(chan struct{})}
	nodes := startNetworkWith(t, 2, func(i int, cfg *config.Config) {
		openPolicy("stall")(i, cfg)
		cfg.Session.PeerTimeout = config.Duration{Duration: time.Minute}
	}, func(int) []protocol.Family { return []protocol.Family{ping.Family{}, fam} })
	// Released before the nodes stop (cleanups run last first), so that
	// the crashed node's stalled session ends within its shutdown and logs
	// nothing after the test.
	t.Cleanup(func() { close(fam.release) })
	id, err := nodes[0].StartSession([]byte("protocol = \"stall\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "node2 to start the session", func() bool {
		rec, err := nodes[1].sessionRecord(id)
		return err == nil && rec.Session.State == stateRunning
	})
	nodes[1].crash()
	got := waitEnded(t, nodes[0], id, 5*time.Second)
	// The redial finds node2's port closed ("connection refused"), or —
	// when it comes while the host is still closing its listener, which a
	// killed process's kernel would close at once — a connection reset in
	// the handshake ("cannot connect"). Either way it is named, at once.
	refused := "connection to node2 closed; redial failed: connection refused"
	reset := "connection to node2 closed; redial failed: cannot connect"
	if got.State != stateAborted || (got.Reason != refused && got.Reason != reset) {
		t.Errorf("node1: state %s reason %q, want aborted with %q (or %q)", got.State, got.Reason, refused, reset)
	}
	// The addresses tried are node1's detail; the reason, which crosses,
	// names none, nor the QUIC address the dial policy held back.
	if !strings.Contains(got.Detail, " at /ip4/127.0.0.1/tcp/") || strings.Contains(got.Detail, "quic") {
		t.Errorf("node1: the abort's detail %q does not name the TCP address tried alone", got.Detail)
	}
	if got.Reason == refused && !strings.Contains(got.Detail, "connection refused at /ip4/127.0.0.1/tcp/") {
		t.Errorf("node1: the abort's detail %q does not name the refused address", got.Detail)
	}
}

// TestLocalDataFileMissing: a data file named in [local] that is not there
// stops the daemon at start (Config.CheckLocalData, which New calls), with
// the key and the path it looked for; the config itself still loads, so
// that the CLI reaches a running daemon while a file is being replaced.
func TestLocalDataFileMissing(t *testing.T) {
	for _, c := range []struct{ table, want string }{
		{"[local.mpccb.feature_party]\nfeatures = \"party0.csv\"\n", "local.mpccb.feature_party.features: stat /etc/bandit/party0.csv"},
		{"[local.mpccb.reward_receiver]\nrewards = \"r.csv\"\n", "local.mpccb.reward_receiver.rewards: stat /etc/bandit/r.csv"},
		{"[local.samba.data_owner]\nratings = \"item.csv\"\n", "local.samba.data_owner.ratings: ratings file: open /etc/bandit/item.csv"},
	} {
		cfg, err := config.ParseConfig("/etc/bandit/config.toml", []byte("[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"+c.table), testRegistry(t))
		if err != nil {
			t.Errorf("%q: loading: %v", c.table, err)
			continue
		}
		err = cfg.CheckLocalData()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "config.toml") || strings.Count(err.Error(), "local.") != 1 {
			t.Errorf("err = %v, want one naming the file and %q once", err, c.want)
		}
	}
	// The daemon itself does not start.
	cfg := testConfigs(t, 1)[0]
	cfg.LocalData["mpccb"] = map[string]any{}
	table := &protocol.LocalTable{Key: "local.mpccb.feature_party", Raw: map[string]any{"features": "missing.csv"}, Dir: t.TempDir()}
	v, err := mpccb.NewFamily().DecodeLocal(mpccb.RoleFeature, table)
	if err != nil {
		t.Fatal(err)
	}
	cfg.LocalData["mpccb"][mpccb.RoleFeature] = v
	if _, err := New(cfg, testRegistry(t)); err == nil || !strings.Contains(err.Error(), "missing.csv: no such file") {
		t.Errorf("New with a missing features file: %v", err)
	}
}

// TestPeerThatClosesAtOnceAbortsItsSessions: a peer whose gater starts
// refusing this node (it dropped our card) closes every connection at
// once; a session running with it aborts within seconds with that class.
// One fresh connection closed early, by contrast, is no verdict: the
// sessions of TestPFCBSurvivesLostConnections live through hundreds.
func TestPeerThatClosesAtOnceAbortsItsSessions(t *testing.T) {
	fam := stall{release: make(chan struct{})}
	nodes := startNetworkWith(t, 2, func(i int, cfg *config.Config) {
		openPolicy("stall")(i, cfg)
		cfg.Session.PeerTimeout = config.Duration{Duration: time.Minute}
	}, func(int) []protocol.Family { return []protocol.Family{ping.Family{}, fam} })
	t.Cleanup(func() { close(fam.release) })
	id, err := nodes[0].StartSession([]byte("protocol = \"stall\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "node2 to start the session", func() bool {
		rec, err := nodes[1].sessionRecord(id)
		return err == nil && rec.Session.State == stateRunning
	})
	nodes[1].host.Gater().SetAllowed(nil) // node2 forgets node1
	nodes[1].host.LibP2P().Network().ClosePeer(nodes[0].ID())
	start := time.Now()
	got := waitEnded(t, nodes[0], id, 15*time.Second)
	if want := "connection to node2 closed; redial failed: it closes our connections at once"; got.State != stateAborted || got.Reason != want {
		t.Errorf("node1: state %s reason %q after %v, want aborted with %q", got.State, got.Reason, time.Since(start), want)
	}
}
