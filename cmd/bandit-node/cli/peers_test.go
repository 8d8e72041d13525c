package cli

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// TestPrintPeersConnKind: the CONN column says direct, relayed, or - while
// disconnected.
func TestPrintPeersConnKind(t *testing.T) {
	var b strings.Builder
	err := printPeers(&b, []apitype.Peer{
		{Name: "globex", PeerID: "12D3KooWA", Connected: true, Conn: "direct"},
		{Name: "initech", PeerID: "12D3KooWB", Connected: true, Conn: "relayed"},
		{Name: "hooli", PeerID: "12D3KooWC"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "CONN") {
		t.Fatalf("peers table:\n%s", b.String())
	}
	for i, want := range []string{"connected  direct", "connected  relayed", "disconnected  -"} {
		if f := strings.Join(strings.Fields(lines[i+1])[1:3], "  "); f != want {
			t.Errorf("line %d: state and conn %q, want %q\n%s", i+1, f, want, b.String())
		}
	}
}

// TestPrintPeersReason: the LAST ERROR column says why a peer is not
// connected in words, on one line, and falls back to the error.
func TestPrintPeersReason(t *testing.T) {
	tests := []struct {
		name string
		peer apitype.Peer
		want string
	}{
		{"reason", apitype.Peer{Name: "globex", PeerID: "12D3KooWA", LastError: "the peer closes our connections at once",
			Reason: "closes our connections at once: it may not have our peer card yet"},
			"closes our connections at once: it may not have our peer card yet"},
		{"error only", apitype.Peer{Name: "hooli", PeerID: "12D3KooWC", LastError: "failed:\n  * [/ip4/192.0.2.7/tcp/4001] connection refused"},
			"failed: * [/ip4/192.0.2.7/tcp/4001] connection refused"},
		{"connected", apitype.Peer{Name: "initech", PeerID: "12D3KooWB", Connected: true, Conn: "direct"}, "12D3KooWB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := printPeers(&b, []apitype.Peer{tt.peer}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(b.String()), "\n")
			if len(lines) != 2 || !strings.HasSuffix(lines[1], tt.want) {
				t.Errorf("peers table:\n%s\nwant one line for the peer ending in %q", b.String(), tt.want)
			}
		})
	}
}
