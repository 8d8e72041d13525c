package families

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/security.md's table of what each role learns")

// The markers around the generated table in docs/security.md.
const (
	learnsBegin = "<!-- begin: what each role learns (generated from protocol.RoleSpec.Learns: go test ./cmd/internal/families -update) -->\n"
	learnsEnd   = "<!-- end: what each role learns -->\n"
)

// learnsTable renders every family's roles and what each learns, as a
// Markdown table: what the console's policy page shows (GET /v0/policy).
func learnsTable(t *testing.T) string {
	reg, err := Registry()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| protocol | role | what a party of the role learns of the others' data |\n| --- | --- | --- |\n")
	for _, name := range reg.Names() {
		f, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Info().Roles {
			if r.Learns == "" {
				t.Errorf("%s: role %s says nothing of what it learns (RoleSpec.Learns)", name, r.Name)
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", name, r.Name, strings.ReplaceAll(r.Learns, "|", `\|`))
		}
	}
	return b.String()
}

// TestSecurityDocSaysWhatEachRoleLearns: docs/security.md's table of what
// each role learns is the families' own RoleSpec.Learns, so that the
// document and the console's policy page cannot drift apart.
func TestSecurityDocSaysWhatEachRoleLearns(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "security.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(learnsBegin)), bytes.Index(doc, []byte(learnsEnd))
	if i < 0 || j < i {
		t.Fatalf("docs/security.md has no generated table of what each role learns (markers %q … %q)", learnsBegin, learnsEnd)
	}
	want := learnsTable(t)
	got := string(doc[i+len(learnsBegin) : j])
	if got == want {
		return
	}
	if !*update {
		t.Fatalf("docs/security.md's table of what each role learns is not the families' RoleSpec.Learns; run go test ./cmd/internal/families -update\ngot:\n%s\nwant:\n%s", got, want)
	}
	out := append(append(append([]byte{}, doc[:i+len(learnsBegin)]...), want...), doc[j:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
