package cli

import (
	"strings"
	"testing"
)

func TestRemovePeerTable(t *testing.T) {
	const head = "# acme's node\n[node]\nname = \"acme\" # us\n\n"
	const globex = "# Peer card of globex\n# sent 2026-11-01\n[[peers]]\nname = \"globex\"\npeer_id = \"12D3KooA\"\naddrs = [\"/ip4/10.0.0.2/tcp/4001\"]\n\n"
	const initech = "[[peers]]\nname = 'initech'   # a literal string\npeer_id = \"12D3KooB\"\n"
	const after = "\n[session]\nmax_active = 4\n"
	tests := []struct {
		name, text, remove, want, err string
	}{
		{"the last table", head + globex + initech, "initech", head + globex[:len(globex)-1], ""},
		{"a table between others, its card's comments too", head + globex + initech + after, "globex", head + initech + after, ""},
		{"a literal-string name, its trailing blank lines too", head + initech + after, "initech", head + after[1:], ""},
		{"the only content", globex, "globex", "", ""},
		{"no such table", head + globex, "hooli", "", "no [[peers]] table with name = \"hooli\""},
		{"an inline array", head + "peers = [{name = \"globex\", peer_id = \"x\"}]\n", "globex", "", "removed by hand"},
		{"two tables of one name", head + globex + globex, "globex", "", "two [[peers]] tables"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := removePeerTable([]byte(tc.text), tc.remove)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
