package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/p2p"
	"github.com/libp2p/go-libp2p/core/peer"
)

// peerID is Options.PeerID as the CLI passes it (node.IdentityPeerID).
func peerID(path string) (string, error) {
	key, err := p2p.LoadIdentity(path)
	if err != nil {
		return "", err
	}
	id, err := peer.IDFromPrivateKey(key)
	return id.String(), err
}

// testNode is a node's files laid out as the systemd layout has them (the
// config in the data directory, relative paths), but for its identity key,
// which lives at an absolute path outside it, and a TLS key beside it.
type testNode struct {
	root, dataDir, config, identity, peerID string
	src                                     Source
}

const sessionID = "0123456789abcdef0123456789abcdef"

func newTestNode(t *testing.T) *testNode {
	t.Helper()
	n := &testNode{root: t.TempDir()}
	n.dataDir = filepath.Join(n.root, "var", "lib", "bandit-node")
	keys := filepath.Join(n.root, "etc", "bandit-node")
	for _, d := range []string{n.dataDir, keys} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	n.identity = filepath.Join(keys, "identity.key")
	_, id, err := p2p.GenerateIdentity(n.identity)
	if err != nil {
		t.Fatal(err)
	}
	n.peerID = id.String()
	n.config = filepath.Join(n.dataDir, "config.toml")
	files := map[string]string{
		"config.toml": "# acme's node\n[node]\nname = \"acme\"\ndata_dir = \".\"   # the state directory\n" +
			"identity = " + tomlString(n.identity) + "\nlisten = [\"/ip4/127.0.0.1/tcp/0\"]\n\n[api]\ntoken_file = \"api.token\"\n",
		"api.token":                       "secret-token\n",
		"sessions/" + sessionID + ".json": `{"session":{"id":"` + sessionID + `"}}`,
		"session-summaries.json":          `{}`,
		"standing.json":                   `{"nightly":{}}`,
		"unsaved/" + sessionID + ".json":  `{"session":{}}`,
		"logs/" + sessionID + ".log":      "first line\nsecond line\na line being writ",
		"lock":                            "pid 42\n",
		"sessions/.x.json.tmp1234":        "half a record",
		"logs/" + sessionID + ".log.tmp":  "a log being rewritten",
		"specs/nightly.toml":              "protocol = \"ping\"\n",
	}
	for name, text := range files {
		p := filepath.Join(n.dataDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(n.dataDir, "link")); err != nil {
		t.Fatal(err)
	}
	n.src = Source{Node: "acme", PeerID: n.peerID, Program: "bandit-node test", Config: n.config, DataDir: n.dataDir,
		Now:   time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC),
		Files: map[Role]string{RoleIdentity: n.identity, RoleToken: filepath.Join(n.dataDir, "api.token")}}
	return n
}

// TestBackupRestore backs a node up and restores it into a new data
// directory: every file comes back but the lock, temporary files and the
// symbolic link; the log is cut at its last complete line; the identity,
// outside the data directory, comes into the new one and the config names
// it there; the peer ID is the node's.
func TestBackupRestore(t *testing.T) {
	n := newTestNode(t)
	archive := filepath.Join(n.root, "acme.tar.gz")
	m, skipped, err := Write(n.src, archive)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(archive); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("archive: %v, mode %v, want 0600", err, st.Mode().Perm())
	}
	if len(skipped) != 1 || !strings.HasPrefix(skipped[0], "link") {
		t.Errorf("skipped %q, want the symbolic link only", skipped)
	}
	if m.PeerID != n.peerID {
		t.Errorf("manifest peer ID %s, want %s", m.PeerID, n.peerID)
	}
	if _, err := Check(archive); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name      string
		keepPaths bool
	}{{"into the data directory", false}, {"keeping paths", true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.keepPaths {
				// A new machine: the key's directory exists, empty.
				if err := os.Remove(n.identity); err != nil {
					t.Fatal(err)
				}
				defer os.Rename(n.identity+".moved", n.identity)
			}
			dest := t.TempDir()
			newCfg := filepath.Join(dest, "etc", "node.toml")
			newData := filepath.Join(dest, "data")
			p, err := Restore(archive, Options{Config: newCfg, DataDir: newData, KeepPaths: tc.keepPaths, PeerID: peerID})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				"api.token":                       "secret-token\n",
				"sessions/" + sessionID + ".json": `{"session":{"id":"` + sessionID + `"}}`,
				"session-summaries.json":          `{}`,
				"standing.json":                   `{"nightly":{}}`,
				"unsaved/" + sessionID + ".json":  `{"session":{}}`,
				"logs/" + sessionID + ".log":      "first line\nsecond line\n",
				"specs/nightly.toml":              "protocol = \"ping\"\n",
			}
			wantKey := filepath.Join(newData, "identity.key")
			if tc.keepPaths {
				wantKey = n.identity
			}
			got := map[string]string{}
			filepath.WalkDir(dest, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(path)
					rel, _ := filepath.Rel(newData, path)
					got[filepath.ToSlash(rel)] = string(b)
				}
				return nil
			})
			cfgText := got["../etc/node.toml"]
			delete(got, "../etc/node.toml")
			if !tc.keepPaths {
				delete(got, "identity.key")
			}
			if len(got) != len(want) {
				t.Errorf("restored %d files, want %d: %v", len(got), len(want), keys(got))
			}
			for name, text := range want {
				if got[name] != text {
					t.Errorf("%s: %q, want %q", name, got[name], text)
				}
			}
			if id, err := peerID(wantKey); err != nil || id != n.peerID {
				t.Errorf("the restored key %s: %s, %v; want %s", wantKey, id, err, n.peerID)
			}
			if st, err := os.Stat(wantKey); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("the restored key: %v, mode %v", err, st.Mode().Perm())
			}
			raw, err := decodePaths([]byte(cfgText))
			if err != nil {
				t.Fatal(err)
			}
			if raw.Node.DataDir != newData || !strings.Contains(cfgText, "# acme's node\n") {
				t.Errorf("restored config:\n%s", cfgText)
			}
			if key := absUnder(raw.Node.DataDir, raw.Node.Identity); key != wantKey {
				t.Errorf("restored config names identity %s, want %s", key, wantKey)
			}
			if p.DataDir != newData {
				t.Errorf("plan's data directory %s, want %s", p.DataDir, newData)
			}
			if tc.keepPaths {
				os.Rename(n.identity, n.identity+".moved") // moved back by the deferred rename
			}
		})
	}
}

func absUnder(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestRestoreRefuses: restore writes nothing over an existing node, into a
// data directory that is not empty, nor into the data directory backed up.
func TestRestoreRefuses(t *testing.T) {
	n := newTestNode(t)
	archive := filepath.Join(n.root, "acme.tar.gz")
	if _, _, err := Write(n.src, filepath.Join(n.dataDir, "backup.tar.gz")); err == nil || !strings.Contains(err.Error(), "inside the data directory") {
		t.Errorf("an archive inside the data directory: %v", err)
	}
	if _, _, err := Write(n.src, archive); err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "something"), nil, 0o600)
	existing := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(existing, []byte("mine"), 0o600)
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"a data directory that is not empty", Options{Config: filepath.Join(t.TempDir(), "c.toml"), DataDir: full}, "is not empty"},
		{"the original node", Options{Config: n.config}, "is not empty"},
		{"an existing config", Options{Config: existing, DataDir: t.TempDir()}, "will not overwrite"},
		{"no config", Options{DataDir: t.TempDir()}, "no destination for the config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.PeerID = peerID
			if _, err := Restore(archive, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("restore: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "mine" {
		t.Error("an existing config was overwritten")
	}
	// --force writes over them.
	if _, err := Restore(archive, Options{Config: existing, DataDir: full, Force: true, PeerID: peerID}); err != nil {
		t.Errorf("restore --force: %v", err)
	}
}

// tarEntry is one entry of a hand-made archive.
type tarEntry struct {
	hdr  tar.Header
	body string
}

// file is a regular file entry.
func file(name, body string) tarEntry {
	return tarEntry{tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(body)), Mode: 0o600}, body}
}

// listed is name's line in a manifest.
func listed(role Role, name, body string) File {
	sum := sha256.Sum256([]byte(body))
	return File{Name: name, Role: role, Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:]), Mode: 0o600}
}

// makeArchive writes entries, then a manifest listing files (unless
// files is nil and raw is given), as a .tar.gz.
func makeArchive(t testing.TB, entries []tarEntry, files []File, raw string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		if err := tw.WriteHeader(&e.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	var man []byte
	if raw != "" {
		man = []byte(raw)
	}
	if files != nil {
		var err error
		man, err = json.Marshal(Manifest{Format: Format, Node: "acme", PeerID: "12D3KooWtest", Files: files})
		if err != nil {
			t.Fatal(err)
		}
	}
	if man != nil {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Size: int64(len(man)), Mode: 0o600})
		tw.Write(man)
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

const goodConfig = "[node]\nname = \"acme\"\nlisten = [\"/ip4/127.0.0.1/tcp/0\"]\n"

// TestHostileArchives: an archive that is damaged or made to harm is
// refused before anything is written — names that climb out (../, absolute),
// links, devices, directories, sizes that lie, files the manifest does not
// list or lists otherwise, an archive cut short or with altered bytes — and
// restore writes nothing anywhere.
func TestHostileArchives(t *testing.T) {
	cfg := file("config/config.toml", goodConfig)
	key := file("identity/identity.key", "key")
	tok := file("token/api.token", "token")
	base := []File{listed(RoleConfig, "config/config.toml", goodConfig), listed(RoleIdentity, "identity/identity.key", "key"), listed(RoleToken, "token/api.token", "token")}
	with := func(extra ...File) []File { return append(append([]File{}, base...), extra...) }
	good := makeArchive(t, []tarEntry{cfg, key, tok, file("data/sessions/a.json", "{}")}, with(listed(RoleData, "data/sessions/a.json", "{}")), "")
	huge := file("data/big", "x")
	huge.hdr.Size = 1 << 40
	link := func(typ byte, name, target string) tarEntry {
		return tarEntry{hdr: tar.Header{Typeflag: typ, Name: name, Linkname: target, Mode: 0o777}}
	}
	for _, tc := range []struct {
		name    string
		archive []byte
		want    string
	}{
		{"parent in a name", makeArchive(t, []tarEntry{cfg, key, tok, file("data/../../evil", "x")}, with(listed(RoleData, "data/../../evil", "x")), ""), "not clean"},
		{"parent, clean", makeArchive(t, []tarEntry{cfg, key, tok, file("../evil", "x")}, with(listed(RoleData, "../evil", "x")), ""), `".."`},
		{"absolute name", makeArchive(t, []tarEntry{cfg, key, tok, file("/etc/evil", "x")}, with(listed(RoleData, "/etc/evil", "x")), ""), "absolute name"},
		{"backslash", makeArchive(t, []tarEntry{cfg, key, tok, file(`data\..\evil`, "x")}, with(), ""), "backslash"},
		{"symbolic link", makeArchive(t, []tarEntry{cfg, key, tok, link(tar.TypeSymlink, "data/link", "/etc")}, with(), ""), "not a regular file"},
		{"hard link", makeArchive(t, []tarEntry{cfg, key, tok, link(tar.TypeLink, "data/link", "identity/identity.key")}, with(), ""), "not a regular file"},
		{"directory", makeArchive(t, []tarEntry{cfg, key, tok, {hdr: tar.Header{Typeflag: tar.TypeDir, Name: "data/sessions/", Mode: 0o700}}}, with(), ""), "not a regular file"},
		{"device", makeArchive(t, []tarEntry{cfg, key, tok, {hdr: tar.Header{Typeflag: tar.TypeChar, Name: "data/null", Mode: 0o600}}}, with(), ""), "not a regular file"},
		{"huge size", makeArchive(t, []tarEntry{cfg, key, tok, huge}, nil, ""), "at most"},
		{"not listed", makeArchive(t, []tarEntry{cfg, key, tok, file("data/extra", "x")}, with(), ""), `"data/extra" is not in the manifest`},
		{"listed, missing", makeArchive(t, []tarEntry{cfg, key, tok}, with(listed(RoleData, "data/gone", "x")), ""), "does not hold"},
		{"altered body", makeArchive(t, []tarEntry{cfg, key, tok, file("data/a", "evil")}, with(listed(RoleData, "data/a", "good")), ""), "altered"},
		{"twice", makeArchive(t, []tarEntry{cfg, key, tok, file("data/a", "x"), file("data/a", "x")}, with(listed(RoleData, "data/a", "x")), ""), "twice"},
		{"no manifest", makeArchive(t, []tarEntry{cfg, key, tok}, nil, ""), "no manifest"},
		{"after the manifest", append(makeArchive(t, []tarEntry{cfg, key, tok}, with(), "")[:0:0], makeArchiveAfter(t, cfg, key, tok, with())...), "follows the manifest"},
		{"manifest not JSON", makeArchive(t, []tarEntry{cfg, key, tok}, nil, "{"), "does not decode"},
		{"unknown format", makeArchive(t, []tarEntry{cfg, key, tok}, nil, `{"format":99,"peer_id":"x"}`), "format 99"},
		{"wrong role directory", makeArchive(t, []tarEntry{cfg, key, tok, file("identity/other", "x")}, with(listed(RoleData, "identity/other", "x")), ""), "not under its role's directory"},
		{"two identities", makeArchive(t, []tarEntry{cfg, key, tok, file("identity/two", "x")}, with(listed(RoleIdentity, "identity/two", "x")), ""), "two files of role identity"},
		{"the lock", makeArchive(t, []tarEntry{cfg, key, tok, file("data/lock", "x")}, with(listed(RoleData, "data/lock", "x")), ""), "lock"},
		{"no identity", makeArchive(t, []tarEntry{cfg, tok}, []File{base[0], base[2]}, ""), "no identity file"},
		{"not gzip", []byte("PK\x03\x04 a zip file"), "not a gzip file"},
		{"empty", nil, "not a gzip file"},
		{"cut short, in a file", good[:len(good)/2], "cut short"},
		{"cut short, at the end", good[:len(good)-4], "cut short"},
		{"altered byte", flip(good, len(good)-10), "altered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			archive := filepath.Join(dir, "a.tar.gz")
			if err := os.WriteFile(archive, tc.archive, 0o600); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(dir, "target")
			_, err := Restore(archive, Options{Config: filepath.Join(target, "config.toml"), DataDir: filepath.Join(target, "data"), PeerID: peerID})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("restore: %v, want an error containing %q", err, tc.want)
			}
			if !errors.Is(err, ErrDamaged) {
				t.Errorf("restore: %v does not wrap ErrDamaged", err)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("restore of a damaged archive wrote %d entries beside it", len(ents)-1)
			}
		})
	}
	// The good archive restores (the cases above fail for their own reason).
	dir := t.TempDir()
	archive := filepath.Join(dir, "a.tar.gz")
	os.WriteFile(archive, good, 0o600)
	if _, err := Check(archive); err != nil {
		t.Fatalf("the good archive: %v", err)
	}
}

// makeArchiveAfter is an archive with an entry after its manifest.
func makeArchiveAfter(t *testing.T, entries ...any) []byte {
	t.Helper()
	files := entries[len(entries)-1].([]File)
	var es []tarEntry
	for _, e := range entries[:len(entries)-1] {
		es = append(es, e.(tarEntry))
	}
	man, _ := json.Marshal(Manifest{Format: Format, PeerID: "x", Files: files})
	es = append(es, file(ManifestName, string(man)), file("data/late", "x"))
	return makeArchive(t, es, nil, "")
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x40
	return c
}

// TestRestoreKeepsWritesInside: an archive whose config names its files
// at absolute paths, or paths that climb out of the data directory, has
// them restored into the new data directory (the config rewritten to
// name them there); only KeepPaths writes outside it.
func TestRestoreKeepsWritesInside(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	keyPath := filepath.Join(dir, "identity.key")
	if _, _, err := p2p.GenerateIdentity(keyPath); err != nil {
		t.Fatal(err)
	}
	keyText, _ := os.ReadFile(keyPath)
	id, _ := peerID(keyPath)
	for _, tc := range []struct{ name, identity, token string }{
		{"absolute", filepath.Join(outside, "identity.key"), filepath.Join(outside, "api.token")},
		{"climbing", "../outside/identity.key", "../../outside/api.token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := goodConfig + "identity = " + tomlString(tc.identity) + "\n[api]\ntoken_file = " + tomlString(tc.token) + "\n"
			files := []File{listed(RoleConfig, "config/c.toml", text), listed(RoleIdentity, "identity/identity.key", string(keyText)), listed(RoleToken, "token/api.token", "t")}
			b := makeArchive(t, []tarEntry{file("config/c.toml", text), file("identity/identity.key", string(keyText)), file("token/api.token", "t")}, files, "")
			archive := filepath.Join(t.TempDir(), "a.tar.gz")
			os.WriteFile(archive, rewritePeerID(t, b, id), 0o600)
			target := t.TempDir()
			data := filepath.Join(target, "data")
			p, err := Restore(archive, Options{Config: filepath.Join(target, "config.toml"), DataDir: data, PeerID: peerID})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(outside); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("restore wrote outside its target: %v", err)
			}
			filepath.WalkDir(target, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && !within(data, path) && path != filepath.Join(target, "config.toml") {
					t.Errorf("restore wrote %s, outside the data directory", path)
				}
				return nil
			})
			for _, pl := range p.Files {
				if !within(target, pl.Dest) {
					t.Errorf("%s restored to %s, outside %s", pl.File.Name, pl.Dest, target)
				}
			}
			cfg, _ := os.ReadFile(filepath.Join(target, "config.toml"))
			raw, err := decodePaths(cfg)
			if err != nil || raw.Node.Identity != "identity.key" || raw.API.TokenFile != "api.token" || raw.Node.DataDir != data {
				t.Errorf("restored config: %v\n%s", err, cfg)
			}
		})
	}
}

// rewritePeerID rebuilds archive b with its manifest's peer ID set to id.
func rewritePeerID(t *testing.T, b []byte, id string) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var es []tarEntry
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		body := new(bytes.Buffer)
		body.ReadFrom(tr)
		text := body.String()
		if hdr.Name == ManifestName {
			text = strings.Replace(text, "12D3KooWtest", id, 1)
		}
		es = append(es, file(hdr.Name, text))
	}
	return makeArchive(t, es, nil, "")
}

// TestApplyEdits: the config's keys are set in place, added under their
// table, or in a table added at the end; every other line is kept; a key
// written another way is refused.
func TestApplyEdits(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		edits      []Edit
		want       string // a line of the result, or the error
	}{
		{"in place", "# top\n[node]\nname = \"a\"\ndata_dir = \".\" # here\n[api]\nlisten = \"x\"\n", []Edit{{"node", "data_dir", "/new"}}, "data_dir = \"/new\"  # set by bandit-node restore\n[api]"},
		{"added", "[node]\nname = \"a\"\n\n[api]\n", []Edit{{"node", "data_dir", "/new"}}, "[node]\ndata_dir = \"/new\""},
		{"new table", "[node]\nname = \"a\"", []Edit{{"api", "token_file", "api.token"}}, "name = \"a\"\n\n[api]\ntoken_file = \"api.token\""},
		{"quoted", "[node]\n", []Edit{{"node", "data_dir", `/a "b" \c`}}, `data_dir = "/a \"b\" \\c"`},
		{"key of another table", "[node]\nname = \"a\"\n[api]\ndata_dir = 1\n", []Edit{{"node", "data_dir", "/x"}}, "[node]\ndata_dir = \"/x\""},
		{"dotted key", "node.data_dir = \".\"\nnode.name = \"a\"\n", []Edit{{"node", "data_dir", "/x"}}, "error: does not decode"},
		{"inline table", "node = { name = \"a\", data_dir = \".\" }\n", []Edit{{"node", "data_dir", "/x"}}, "error: does not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := applyEdits([]byte(tc.text), tc.edits)
			if want, ok := strings.CutPrefix(tc.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("applyEdits: %v\n%s\nwant an error containing %q", err, out, want)
				}
				return
			}
			if err != nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("applyEdits: %v\n%s\nwant it to contain %q", err, out, tc.want)
			}
		})
	}
}

// FuzzRead: reading any bytes as an archive never panics, and restoring
// one that reads writes only inside its target.
func FuzzRead(f *testing.F) {
	f.Add(makeArchive(f, []tarEntry{file("config/c.toml", goodConfig), file("identity/k", "k")},
		[]File{listed(RoleConfig, "config/c.toml", goodConfig), listed(RoleIdentity, "identity/k", "k")}, ""))
	f.Add(makeArchive(f, []tarEntry{file("data/../x", "x")}, nil, `{"format":1}`))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := read(bytes.NewReader(b), nil)
		if err != nil {
			return
		}
		target := t.TempDir()
		p, err := plan(m, []byte(goodConfig), Options{Config: filepath.Join(target, "c.toml"), DataDir: filepath.Join(target, "d")})
		if err != nil {
			return
		}
		for _, pl := range p.Files {
			if !within(target, pl.Dest) {
				t.Fatalf("%s would be restored to %s, outside %s", pl.File.Name, pl.Dest, target)
			}
		}
	})
}
