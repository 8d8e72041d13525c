package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/buildinfo"
	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/client"
)

func TestUserAgent(t *testing.T) {
	tests := []struct {
		info buildinfo.Info
		want string
	}{
		{buildinfo.Info{Version: "0.2.0", Revision: "3f69a06aa0b1c2d3", GoVersion: "go1.24.4"}, "bandit-node/0.2.0 (3f69a06)"},
		{buildinfo.Info{Version: "0.2.0", Revision: "3f69a06aa0b1c2d3", Modified: true}, "bandit-node/0.2.0 (3f69a06+modified)"},
		{buildinfo.Info{Version: "(devel)", GoVersion: "go1.24.4"}, "bandit-node/(devel)"},
	}
	for _, tt := range tests {
		if got := userAgent(tt.info); got != tt.want {
			t.Errorf("userAgent(%+v) = %q, want %q", tt.info, got, tt.want)
		}
	}
}

// TestPeersShowVersions runs two daemons of different builds: each one's
// GET /v0/peers names the other's version and revision, announced in the
// libp2p agent string, and GET /v0/node reports its own version.
func TestPeersShowVersions(t *testing.T) {
	builds := []buildinfo.Info{
		{Version: "1.4.0", Revision: "aaaaaaa1111", GoVersion: "go1.24.4"},
		{Version: "1.5.0-rc1", Revision: "bbbbbbb2222", Modified: true, GoVersion: "go1.25.0"},
	}
	cfgs := testConfigs(t, 2)
	apis := make([]*client.Client, 2)
	for i, cfg := range cfgs {
		n, err := New(cfg, testRegistry(t), WithBuild(builds[i]))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ready, done := make(chan struct{}), make(chan error, 1)
		go func() { done <- n.Run(ctx, ready) }()
		t.Cleanup(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("%s: %v", cfg.Node.Name, err)
				}
			case <-time.After(15 * time.Second):
				t.Errorf("%s did not stop within 15 s", cfg.Node.Name)
			}
		})
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("%s did not start: %v", cfg.Node.Name, err)
		}
		apis[i] = client.New(n.APIAddr(), strings.Repeat("t", 32))
	}
	wantAgents := []string{"bandit-node/1.5.0-rc1 (bbbbbbb+modified)", "bandit-node/1.4.0 (aaaaaaa)"}
	for i, api := range apis {
		var peers []apitype.Peer
		testutil.WaitFor(t, 20*time.Second, fmt.Sprintf("%s to learn its peer's agent", cfgs[i].Node.Name), func() bool {
			var err error
			peers, err = api.Peers(t.Context())
			return err == nil && len(peers) == 1 && peers[0].Connected && peers[0].Agent != ""
		})
		if peers[0].Agent != wantAgents[i] {
			t.Errorf("%s sees %s as %q, want %q", cfgs[i].Node.Name, peers[0].Name, peers[0].Agent, wantAgents[i])
		}
		info, err := api.Node(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if info.Version != builds[i].Version {
			t.Errorf("%s reports version %q, want %q", cfgs[i].Node.Name, info.Version, builds[i].Version)
		}
	}
}
