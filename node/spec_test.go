package node

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
)

// TestSpecParsedOncePerOrganization: a session started by hand is parsed
// once by the initiator's daemon and once by the participant's, which
// examines the proposal; the sessions carry the parsed value from then on.
// A standing session's spec, parsed at the config's load, is parsed no
// more by its initiator, whether it schedules the run, starts it or lists
// it to the API; the participant parses the run's proposal once.
func TestSpecParsedOncePerOrganization(t *testing.T) {
	nodes := startNetwork(t, 2, func(i int, cfg *config.Config) {
		if i == 0 {
			// Due once at start, then not for an hour.
			cfg.Sessions = []config.StandingConfig{standingPing("pinger", 2, time.Hour)}
		}
	})
	testutil.WaitFor(t, 60*time.Second, "the run of pinger to complete", func() bool {
		return countState(namedRuns(t, nodes[0], "pinger"), stateCompleted) == 1
	})
	for range 3 {
		if s := standingOf(t, nodes[0], "pinger"); s.Protocol != "ping" {
			t.Fatalf("the standing list names protocol %q, want ping", s.Protocol)
		}
	}
	if got := nodes[0].rt.SpecParses(); got != 0 {
		t.Errorf("the initiator parsed the standing session's spec %d times after the config's load, want 0", got)
	}
	if got := nodes[1].rt.SpecParses(); got != 1 {
		t.Errorf("the participant parsed the standing run's spec %d times, want 1", got)
	}

	id, err := nodes[0].api.StartSession(context.Background(), pingSpec(2, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	if s := waitEnded(t, nodes[0], id.ID, 60*time.Second); s.State != apitype.StateCompleted {
		t.Fatalf("session %s: %s (%s)", id.ID, s.State, s.Reason)
	}
	waitEnded(t, nodes[1], id.ID, 30*time.Second)
	if got := nodes[0].rt.SpecParses(); got != 1 {
		t.Errorf("the initiator parsed the spec of a session started by hand %d times, want 1", got)
	}
	if got := nodes[1].rt.SpecParses() - 1; got != 1 {
		t.Errorf("the participant parsed the spec of a session started by hand %d times, want 1", got)
	}
}

// TestParseSpecCallSites holds the daemon to its two places that parse a
// spec's text: parseSpec (a session's, once per organization) and the
// config's load (a standing session's). Any other call of
// protocol.ParseSpec in node/ or its sub-packages would parse a spec again on some path.
func TestParseSpecCallSites(t *testing.T) {
	var sites []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "ParseSpec" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "protocol" {
					sites = append(sites, filepath.ToSlash(path))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(sites)
	if want := []string{"config/sessions.go", "sessions/spec.go"}; !slices.Equal(sites, want) {
		t.Errorf("protocol.ParseSpec is called in %v, want only in %v", sites, want)
	}
}
