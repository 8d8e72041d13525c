package node

import (
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
)

// TestOneSidedPeerCardsOnDaemons is an onboarding day on two daemons:
// node1 has added node2's peer card, node2 has not added node1's yet. For
// 10 s node1 keeps trying with backoff (node2's gater refuses a handful of
// connections, not thousands), logs a few lines, and its GET /v0/peers
// says why node2 is not connected. Once node2 adds the card by a config
// reload, the two connect within seconds.
func TestOneSidedPeerCardsOnDaemons(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs for 10 s")
	}
	cfgs := testConfigs(t, 2)
	for _, cfg := range cfgs {
		// The defaults, not testConfigs' short ones.
		cfg.Discovery.DialBackoffMin = config.Duration{Duration: time.Second}
		cfg.Discovery.DialBackoffMax = config.Duration{Duration: time.Minute}
	}
	card := cfgs[1].Peers
	cfgs[1].Peers = nil // node2 does not know node1 yet
	writeConfig(t, cfgs[1].Path, configText(cfgs[1]))
	n1 := startNode(t, cfgs[0])
	n2 := startNode(t, cfgs[1])

	const oneSided = 10 * time.Second
	time.Sleep(oneSided)
	lines := n1.logs.all()
	refused := n2.host.Gater().Refused()
	t.Logf("one-sided for %v: node2 refused %d connections, node1 logged %d lines", oneSided, refused, len(lines))
	if len(lines) >= 50 {
		var b strings.Builder
		for _, r := range lines {
			b.WriteString(r.Msg + "\n")
		}
		t.Errorf("node1 logged %d lines in %v, want fewer than 50:\n%s", len(lines), oneSided, b.String())
	}
	// Backoff from 1 s capped at 4 s: about 4 attempts in 10 s (a dialer
	// without backoff makes hundreds).
	if refused == 0 || refused > 12 {
		t.Errorf("node2 refused %d connections of node1 in %v, want a few (attempts with backoff, no storm)", refused, oneSided)
	}
	peers, err := n1.api.Peers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := "closes our connections at once: it may not have our peer card yet"; len(peers) != 1 || peers[0].Connected || peers[0].Reason != want {
		t.Errorf("node1's peers: %+v\nwant node2 not connected, with reason %q", peers, want)
	}

	withCard := *cfgs[1] // not cfgs[1] itself: node2 holds it
	withCard.Peers = card
	writeConfig(t, withCard.Path, configText(&withCard))
	reloaded := time.Now()
	if got, want := reload(t, n2), "peers added: node1"; got != want {
		t.Fatalf("node2: reload changed %q, want %q", got, want)
	}
	testutil.WaitFor(t, 30*time.Second, "node1 and node2 to connect", func() bool {
		p, err := n1.api.Peers(t.Context())
		return err == nil && len(p) == 1 && p[0].Connected
	})
	took := time.Since(reloaded)
	t.Logf("connected %v after node2's reload", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("connected %v after the card was added, want within 5 s", took)
	}
	var p []apitype.Peer
	if p, err = n1.api.Peers(t.Context()); err != nil || len(p) != 1 || p[0].Reason != "" || p[0].LastError != "" {
		t.Errorf("node1's peers once connected: %+v (%v), want no reason or error", p, err)
	}
}
