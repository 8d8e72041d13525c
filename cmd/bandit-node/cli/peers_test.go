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
