package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// id of a node whose daemon is not running answers from its files, with
// what the config leaves the node unable to do: a fresh node has no peers.
func TestIDWarnsOfAnEmptyAddressBook(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "acme")
	if _, _, err := run(t, "init", "--dir", dir, "--listen", "/ip4/127.0.0.1/tcp/0", "--api", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, "id", "--config", filepath.Join(dir, "config.toml"))
	if err != nil {
		t.Fatalf("id: %v\n%s", err, stderr)
	}
	want := "warning: no [[peers]]: this node can connect to no organization until peers are added (bandit-node peers add)\n"
	if !strings.Contains(out, want) || strings.Contains(out, "no [policy.*]") {
		t.Errorf("id printed\n%s\nwant the empty address book's warning alone (init enables ping)", out)
	}
}

func TestPrintNodeStatus(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		info apitype.NodeInfo
		want string
	}{
		{"nothing to say", apitype.NodeInfo{}, ""},
		{"refused", apitype.NodeInfo{LastReload: &apitype.ReloadStatus{At: at, Result: "refused", Reason: "config.toml: node.listen: missing"}},
			"last reload: refused at 2026-11-28T12:00:00Z: config.toml: node.listen: missing\n"},
		{"applied, with a warning", apitype.NodeInfo{Warnings: []string{"no [[peers]]: …"},
			LastReload: &apitype.ReloadStatus{At: at, Result: "applied", Change: "nothing changed"}},
			"warning: no [[peers]]: …\nlast reload: applied at 2026-11-28T12:00:00Z (nothing changed)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			printNodeStatus(&b, tt.info)
			if b.String() != tt.want {
				t.Errorf("printed %q, want %q", b.String(), tt.want)
			}
		})
	}
}
