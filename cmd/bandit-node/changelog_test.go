package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/protocol"
)

// TestChangelogWireVersions: the newest entry of CHANGELOG.md names the
// wire versions this build speaks — the session-control protocol's and
// every family's — and no other, so an operator planning an upgrade reads
// the truth. A build that adds or drops a version fails here until the
// changelog says so.
func TestChangelogWireVersions(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The newest entry: from its "## [" heading to the next.
	entries := regexp.MustCompile(`(?m)^## \[`).FindAllIndex(text, -1)
	if len(entries) == 0 {
		t.Fatal("CHANGELOG.md has no entry (## [VERSION])")
	}
	newest := string(text[entries[0][0]:])
	if len(entries) > 1 {
		newest = string(text[entries[0][0]:entries[1][0]])
	}
	_, wire, ok := strings.Cut(newest, "\n### Wire versions\n")
	if !ok {
		t.Fatalf("the newest entry of CHANGELOG.md has no \"### Wire versions\" section:\n%s", newest)
	}
	wire, _, _ = strings.Cut(wire, "\n### ")
	if want := "`" + string(node.ControlProtocol) + "`"; !strings.Contains(wire, "session control: "+want) {
		t.Errorf("the changelog's wire versions do not name the session-control protocol %s:\n%s", want, wire)
	}
	reg, err := families.Registry()
	if err != nil {
		t.Fatal(err)
	}
	named := map[string][]string{} // family -> the versions the changelog names
	for _, m := range regexp.MustCompile("([a-z]+) ((?:`[0-9.]+`(?:,? and |, )?)+)").FindAllStringSubmatch(wire, -1) {
		for _, v := range regexp.MustCompile("`([0-9.]+)`").FindAllStringSubmatch(m[2], -1) {
			named[m[1]] = append(named[m[1]], v[1])
		}
	}
	for _, name := range reg.Names() {
		f, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		speaks := slices.Sorted(slices.Values(protocol.WireVersions(f)))
		got := slices.Sorted(slices.Values(named[name]))
		if !slices.Equal(got, speaks) {
			t.Errorf("CHANGELOG.md says %s speaks %v; this build speaks %v", name, got, speaks)
		}
		delete(named, name)
	}
	delete(named, "control") // "session control: `/bandit/session/…`" is checked above
	for name, vs := range named {
		t.Errorf("CHANGELOG.md names wire versions %v of %q, which this build has no family of", vs, name)
	}
}
