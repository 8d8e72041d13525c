package node

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/node/config"
)

// TestRefusedPeerAddedByCard: a daemon lists, once, a peer that keeps
// trying to connect without being in its address book; its operator adds
// that peer's card through the control API (POST /v0/peers, the API's
// peers add), which edits the config file and reloads it; the two then
// connect and the peer leaves the list. A card already listed, this
// node's own card and a card that is none are refused with their codes,
// and the file keeps only the card added.
func TestRefusedPeerAddedByCard(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			cfg.Peers = nil // node1 knows nobody; node2 knows node1 and dials it
		}
		writeConfig(t, cfg.Path, configText(cfg))
	})
	ctx := context.Background()
	n1, n2 := nodes[0], nodes[1]
	var refused apitype.RefusedPeers
	testutil.WaitFor(t, 20*time.Second, "node1 to list node2 as refused", func() bool {
		var err error
		refused, err = n1.api.RefusedPeers(ctx)
		return err == nil && len(refused.Refused) == 1 && refused.Refused[0].PeerID == n2.ID().String()
	})
	if r := refused.Refused[0]; r.Count < 1 || r.Last.Before(r.First) || !strings.HasPrefix(r.Addr, "/ip4/127.0.0.1/") {
		t.Errorf("refusal %+v: want a count, first ≤ last and node2's address", r)
	}
	if !strings.Contains(refused.PeerCard, `name = "node1"`) || !strings.Contains(refused.PeerCard, n1.ID().String()) {
		t.Errorf("node1's own card does not name it:\n%s", refused.PeerCard)
	}

	// node2's operator sends node2's card; node1's operator adds it.
	theirs, err := n2.api.RefusedPeers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	added, err := n1.api.AddPeer(ctx, []byte(theirs.PeerCard))
	if err != nil {
		t.Fatal(err)
	}
	if added.Name != "node2" || added.PeerID != n2.ID().String() || strings.Join(added.Change.PeersAdded, ",") != "node2" {
		t.Errorf("added %+v, want node2 with peers added: node2", added)
	}
	testutil.WaitFor(t, 20*time.Second, "node1 to connect to node2", func() bool {
		peers, err := n1.api.Peers(ctx)
		return err == nil && len(peers) == 1 && peers[0].Connected
	})
	if r, err := n1.api.RefusedPeers(ctx); err != nil || len(r.Refused) != 0 {
		t.Errorf("node2, now in the address book, is still listed as refused: %+v %v", r.Refused, err)
	}

	for _, c := range []struct {
		name, card, code string
	}{
		{"again", theirs.PeerCard, "peer.exists"},
		{"its own", refused.PeerCard, "peer.card_invalid"},
		{"not a card", "[node]\nname = \"x\"\n", "peer.card_invalid"},
	} {
		_, err := n1.api.AddPeer(ctx, []byte(c.card))
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code != c.code {
			t.Errorf("%s: %v, want code %s", c.name, err, c.code)
		}
	}
	cfg, err := config.LoadConfig(n1.cfg.Path, n1.reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Peers) != 1 || cfg.Peers[0].Name != "node2" || len(cfg.Peers[0].Addrs) == 0 {
		t.Errorf("node1's config file lists %+v, want node2 alone, with its addresses", cfg.Peers)
	}
}
