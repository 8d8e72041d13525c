package backup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/bandit-node/bandit-node/node/config"
)

// Options say where Restore puts a node's files.
type Options struct {
	// Config is where the restored config file goes.
	Config string
	// DataDir is the new data directory; "" keeps the archived config's
	// data_dir (relative to Config's directory, if it is relative).
	DataDir string
	// KeepPaths puts a file the config names outside its data directory
	// (an absolute identity or token_file path) back at that path; without
	// it, such a file goes into the new data directory and its key in the
	// config names it there.
	KeepPaths bool
	// Force lets Restore write into a data directory that is not empty
	// and over existing files.
	Force bool
	// PeerID returns the peer ID of the identity key file at path (with
	// the checks a starting node makes).
	PeerID func(path string) (string, error)
}

// Plan is what Restore writes, and where.
type Plan struct {
	Manifest *Manifest
	// Config is where the config goes; DataDir the new data directory.
	Config, DataDir string
	// Files are the archive's files, each with its destination.
	Files []Placement
	// Edits are the config's keys that Restore rewrites, so that the
	// config names the files where they are now.
	Edits []Edit
}

// Placement is where Restore writes one file of the archive.
type Placement struct {
	File File
	Dest string
}

// Edit is a key of the config set to a new value.
type Edit struct{ Table, Key, Value string }

func (e Edit) String() string {
	return fmt.Sprintf("[%s] %s = %s", e.Table, e.Key, tomlString(e.Value))
}

// paths are the config's keys that name files, as the config writes them
// (defaults filled in).
type paths struct {
	Node config.NodeConfig `toml:"node"`
	API  config.APIConfig  `toml:"api"`
}

func (p *paths) value(r Role) string {
	switch r {
	case RoleIdentity:
		return p.Node.Identity
	case RoleToken:
		return p.API.TokenFile
	case RoleReadToken:
		return p.API.ReadTokenFile
	case RoleCert:
		return p.API.CertFile
	case RoleKey:
		return p.API.KeyFile
	case RoleCA:
		return p.API.CAFile
	}
	return ""
}

// decodePaths reads the file-naming keys of config text, with the daemon's
// defaults for those it does not set.
func decodePaths(text []byte) (*paths, error) {
	def := config.DefaultConfig()
	p := &paths{Node: def.Node, API: def.API}
	if _, err := toml.Decode(string(text), p); err != nil {
		return nil, fmt.Errorf("the archived config does not decode: %w", err)
	}
	return p, nil
}

// PlanRestore reads and checks the archive at path, and returns what
// Restore would write where, and the archived config's text. It refuses, writing nothing, a damaged
// archive, a data directory that is not empty and any file that exists
// (unless o.Force), and two files of the archive that would land on one
// path.
func PlanRestore(archive string, o Options) (*Plan, []byte, error) {
	if o.Config == "" {
		return nil, nil, errors.New("no destination for the config file")
	}
	f, err := os.Open(archive)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var text []byte
	m, err := read(f, func(name string, size int64, body io.Reader) error {
		if !strings.HasPrefix(name, string(RoleConfig)+"/") {
			return nil
		}
		if size > MaxConfigSize {
			return fmt.Errorf("%w: the config entry has %d bytes (at most %d)", ErrDamaged, size, MaxConfigSize)
		}
		var err error
		text, err = io.ReadAll(body)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", archive, err)
	}
	p, err := plan(m, text, o)
	if err != nil {
		return nil, nil, err
	}
	return p, text, nil
}

// plan places the files of manifest m, whose config is text.
func plan(m *Manifest, text []byte, o Options) (*Plan, error) {
	cfgPath, err := filepath.Abs(o.Config)
	if err != nil {
		return nil, err
	}
	raw, err := decodePaths(text)
	if err != nil {
		return nil, err
	}
	p := &Plan{Manifest: m, Config: cfgPath}
	archived := raw.Node.DataDir
	if !filepath.IsAbs(archived) {
		archived = filepath.Join(filepath.Dir(cfgPath), archived)
	}
	p.DataDir = archived
	if o.DataDir != "" {
		if p.DataDir, err = filepath.Abs(o.DataDir); err != nil {
			return nil, err
		}
		if p.DataDir != filepath.Clean(archived) {
			p.Edits = append(p.Edits, Edit{"node", "data_dir", p.DataDir})
		}
	}
	p.DataDir = filepath.Clean(p.DataDir)
	for _, f := range m.Files {
		var dest string
		switch {
		case f.Role == RoleConfig:
			dest = cfgPath
		case f.Role == RoleData:
			dest = filepath.Join(p.DataDir, filepath.FromSlash(f.Rel()))
		default:
			table, key, _ := roleKey(f.Role)
			v := raw.value(f.Role)
			switch {
			case v == "":
				return nil, fmt.Errorf("%w: it holds a %s file, but its config sets no [%s] %s", ErrDamaged, f.Role, table, key)
			case !filepath.IsAbs(v) && filepath.IsLocal(v):
				dest = filepath.Join(p.DataDir, v)
			case o.KeepPaths:
				dest = filepath.Clean(v)
				if !filepath.IsAbs(v) {
					dest = filepath.Join(p.DataDir, v)
				}
			default:
				base := filepath.Base(filepath.FromSlash(f.Name))
				dest = filepath.Join(p.DataDir, base)
				p.Edits = append(p.Edits, Edit{table, key, base})
			}
		}
		p.Files = append(p.Files, Placement{f, dest})
	}
	for _, r := range []Role{RoleIdentity, RoleToken, RoleReadToken, RoleCert, RoleKey, RoleCA} {
		if _, ok := m.File(r); !ok && raw.value(r) != "" {
			table, key, _ := roleKey(r)
			return nil, fmt.Errorf("%w: its config sets [%s] %s, but it holds no such file", ErrDamaged, table, key)
		}
	}
	// Two files on one path, or a file on the path of the config.
	byDest := map[string]string{}
	for _, pl := range p.Files {
		if other, ok := byDest[pl.Dest]; ok {
			return nil, fmt.Errorf("%s and %s of the archive would both be restored to %s", other, pl.File.Name, pl.Dest)
		}
		byDest[pl.Dest] = pl.File.Name
	}
	if o.Force {
		return p, nil
	}
	if ents, err := os.ReadDir(p.DataDir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("the data directory %s is not empty: restore into a new or empty one (or pass --force to write over what is there)", p.DataDir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the data directory: %w", err)
	}
	for _, pl := range p.Files {
		if _, err := os.Lstat(pl.Dest); err == nil {
			return nil, fmt.Errorf("%s exists: restore will not overwrite it (pass --force to)", pl.Dest)
		}
	}
	return p, nil
}

// Restore restores the archive at path as o says: it checks the whole
// archive and plans (PlanRestore) before it writes anything, then writes
// each file (the data directory's through an os.Root, so no entry reaches
// outside it), checks that the restored identity key gives the archived
// peer ID, and writes the config last, atomically, with the keys of
// Plan.Edits rewritten. On an error after the first write, what was
// written stays: restore again into a new directory.
func Restore(archive string, o Options) (*Plan, error) {
	if o.PeerID == nil {
		return nil, errors.New("restore: no way to read a peer ID")
	}
	p, text, err := PlanRestore(archive, o)
	if err != nil {
		return nil, err
	}
	newText, err := applyEdits(text, p.Edits)
	if err != nil {
		return nil, fmt.Errorf("the config's paths cannot be rewritten, so nothing was restored: %w", err)
	}
	if err := os.MkdirAll(p.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the data directory: %w", err)
	}
	root, err := os.OpenRoot(p.DataDir)
	if err != nil {
		return nil, fmt.Errorf("opening the data directory: %w", err)
	}
	defer root.Close()
	dests := map[string]Placement{}
	for _, pl := range p.Files {
		dests[pl.File.Name] = pl
	}
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	_, err = read(f, func(name string, _ int64, body io.Reader) error {
		pl, ok := dests[name]
		if !ok {
			return fmt.Errorf("%w: entry %q is not in the manifest", ErrDamaged, name)
		}
		if pl.File.Role == RoleConfig {
			return nil // written last
		}
		return writeFile(root, p.DataDir, pl, body, o.Force)
	})
	if err != nil {
		return nil, fmt.Errorf("restoring %s: %w", archive, err)
	}
	var identity string
	for _, pl := range p.Files {
		if pl.File.Role == RoleIdentity {
			identity = pl.Dest
		}
	}
	id, err := o.PeerID(identity)
	if err != nil {
		return nil, fmt.Errorf("the restored identity key: %w", err)
	}
	if id != p.Manifest.PeerID {
		return nil, fmt.Errorf("the restored identity key %s gives peer ID %s, not the archived node's %s: the config was not written", identity, id, p.Manifest.PeerID)
	}
	if err := os.MkdirAll(filepath.Dir(p.Config), 0o700); err != nil {
		return nil, fmt.Errorf("writing the config: %w", err)
	}
	cfg, _ := p.Manifest.File(RoleConfig)
	if err := writeAtomic(p.Config, newText, secretMode(cfg)); err != nil {
		return nil, err
	}
	return p, nil
}

// secretMode is the mode a restored file gets: its archived permissions,
// never more than 0600 for the private key, the tokens and the TLS key.
func secretMode(f File) os.FileMode {
	mode := os.FileMode(f.Mode) & 0o777
	switch f.Role {
	case RoleIdentity, RoleToken, RoleReadToken, RoleKey:
		mode &= 0o600
	}
	if mode&0o600 != 0o600 {
		mode |= 0o600 // the owner reads and rewrites it
	}
	return mode
}

// writeFile writes one file of the archive to its destination: under the
// data directory through root, elsewhere (Options.KeepPaths) through a
// root opened at its directory.
func writeFile(root *os.Root, dataDir string, pl Placement, body io.Reader, force bool) error {
	r, rel := root, ""
	if within(dataDir, pl.Dest) {
		rel, _ = filepath.Rel(dataDir, pl.Dest)
	} else {
		dir := filepath.Dir(pl.Dest)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("restoring %s: %w", pl.Dest, err)
		}
		other, err := os.OpenRoot(dir)
		if err != nil {
			return fmt.Errorf("restoring %s: %w", pl.Dest, err)
		}
		defer other.Close()
		r, rel = other, filepath.Base(pl.Dest)
	}
	if d := filepath.Dir(rel); d != "." {
		if err := r.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("restoring %s: %w", pl.Dest, err)
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	out, err := r.OpenFile(rel, flags, secretMode(pl.File))
	if err != nil {
		return fmt.Errorf("restoring %s: %w", pl.Dest, err)
	}
	if _, err := io.Copy(out, body); err != nil {
		out.Close()
		return err // the archive's error, or the disk's
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("restoring %s: %w", pl.Dest, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("restoring %s: %w", pl.Dest, err)
	}
	return nil
}

// writeAtomic writes data to path through a temporary file in its
// directory, fsynced and renamed over path.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	ok = true
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// applyEdits returns config text with each edit's key set to its value:
// the key's line in its table replaced, or added under the table's header,
// or the table added at the end. Every other line is kept as it is. The
// result must decode to the same config but for the edited keys, or it is
// an error (a key written another way, such as a dotted key, is to be
// edited by hand).
func applyEdits(text []byte, edits []Edit) ([]byte, error) {
	if len(edits) == 0 {
		return text, nil
	}
	out := slices.Clone(text)
	for _, e := range edits {
		out = setKey(out, e)
	}
	var before, after map[string]any
	if _, err := toml.Decode(string(text), &before); err != nil {
		return nil, err
	}
	if _, err := toml.Decode(string(out), &after); err != nil {
		return nil, fmt.Errorf("the rewritten config does not decode: %w", err)
	}
	for _, e := range edits {
		t, ok := before[e.Table].(map[string]any)
		if !ok {
			t = map[string]any{}
			before[e.Table] = t
		}
		t[e.Key] = e.Value
	}
	if !equalTOML(before, after) {
		return nil, errors.New("rewriting the config's paths would change other keys too: edit data_dir, identity and the [api] files by hand")
	}
	return out, nil
}

// equalTOML compares two decoded TOML documents through their encoding.
func equalTOML(a, b map[string]any) bool {
	var ba, bb bytes.Buffer
	if toml.NewEncoder(&ba).Encode(a) != nil || toml.NewEncoder(&bb).Encode(b) != nil {
		return false
	}
	return bytes.Equal(ba.Bytes(), bb.Bytes())
}

// setKey sets one key of a table in config text (see applyEdits).
func setKey(text []byte, e Edit) []byte {
	line := []byte(e.Key + " = " + tomlString(e.Value) + "  # set by bandit-node restore\n")
	lines := bytes.SplitAfter(text, []byte("\n"))
	header := -1
	for i, l := range lines {
		t := bytes.TrimSpace(l)
		if j := bytes.IndexByte(t, '#'); j >= 0 {
			t = bytes.TrimSpace(t[:j])
		}
		if header < 0 {
			if string(t) == "["+e.Table+"]" {
				header = i
			}
			continue
		}
		if bytes.HasPrefix(t, []byte("[")) {
			break // the next table: the key is not set in ours
		}
		if k, _, ok := bytes.Cut(t, []byte("=")); ok && string(bytes.TrimSpace(k)) == e.Key {
			lines[i] = line
			return bytes.Join(lines, nil)
		}
	}
	if header < 0 {
		out := slices.Clone(text)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		return append(append(out, "\n["+e.Table+"]\n"...), line...)
	}
	if !bytes.HasSuffix(lines[header], []byte("\n")) {
		lines[header] = append(lines[header], '\n')
	}
	lines = slices.Insert(lines, header+1, line)
	return bytes.Join(lines, nil)
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
