package backup

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"
)

// Format is the version of the archive layout this package writes and
// reads.
const Format = 1

// ManifestName is the name of the archive's last entry.
const ManifestName = "manifest.json"

// Limits on what an archive may hold, so that a damaged or hostile one
// cannot fill the memory or the disk of the machine that reads it.
const (
	// MaxManifestSize bounds manifest.json, which is read into memory.
	MaxManifestSize = 16 << 20
	// MaxConfigSize bounds the config entry, which is read into memory.
	MaxConfigSize = 16 << 20
	// MaxEntrySize bounds any one file of an archive.
	MaxEntrySize = 8 << 30
	// MaxEntries bounds the number of files of an archive.
	MaxEntries = 1 << 20
)

// Role is what a file of an archive is to the node.
type Role string

// The roles of an archive's files. Each but RoleData is at most one file,
// named by a key of the config.
const (
	RoleConfig    Role = "config"     // the config file
	RoleIdentity  Role = "identity"   // [node] identity: the libp2p private key
	RoleToken     Role = "token"      // [api] token_file
	RoleReadToken Role = "read-token" // [api] read_token_file
	RoleCert      Role = "tls-cert"   // [api] cert_file
	RoleKey       Role = "tls-key"    // [api] key_file
	RoleCA        Role = "tls-ca"     // [api] ca_file
	RoleData      Role = "data"       // a file under [node] data_dir
)

// roleKey returns the table and key of the config that name the file of
// role r, and false for the config and data files.
func roleKey(r Role) (table, key string, ok bool) {
	switch r {
	case RoleIdentity:
		return "node", "identity", true
	case RoleToken:
		return "api", "token_file", true
	case RoleReadToken:
		return "api", "read_token_file", true
	case RoleCert:
		return "api", "cert_file", true
	case RoleKey:
		return "api", "key_file", true
	case RoleCA:
		return "api", "ca_file", true
	}
	return "", "", false
}

// Manifest describes an archive: the node it is of and its files.
type Manifest struct {
	Format int `json:"format"`
	// Program is the bandit-node that wrote the archive ("bandit-node 1.2.0").
	Program string    `json:"program"`
	Node    string    `json:"node"`
	PeerID  string    `json:"peer_id"`
	Created time.Time `json:"created"`
	Files   []File    `json:"files"`
}

// File is one file of an archive.
type File struct {
	// Name is the entry's name in the archive: the role, then the file's
	// base name (identity/identity.key), or for RoleData its path under
	// the data directory (data/sessions/<ID>.json).
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Source is where the file was on the node backed up.
	Source string `json:"source"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Mode holds the file's permission bits.
	Mode uint32 `json:"mode"`
	// Cut is set on a session log cut at its last complete line.
	Cut bool `json:"cut,omitempty"`
}

// Rel is the file's path under the data directory, for RoleData.
func (f File) Rel() string { return strings.TrimPrefix(f.Name, string(RoleData)+"/") }

// File returns the file of role r, and whether the archive has one. For
// RoleData it returns the first.
func (m *Manifest) File(r Role) (File, bool) {
	for _, f := range m.Files {
		if f.Role == r {
			return f, true
		}
	}
	return File{}, false
}

// checkName reports why name cannot be an entry of an archive: every name
// is a clean, relative, slash-separated path without . or .. elements or
// backslashes, under the directory of one role.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("an entry has no name")
	case len(name) > 4096:
		return fmt.Errorf("an entry's name is %d bytes long", len(name))
	case strings.HasPrefix(name, "/"):
		return fmt.Errorf("entry %q has an absolute name", name)
	case strings.ContainsAny(name, "\\\x00"):
		return fmt.Errorf("entry %q has a backslash or NUL in its name", name)
	case path.Clean(name) != name:
		return fmt.Errorf("entry %q has a name that is not clean", name)
	}
	for _, el := range strings.Split(name, "/") {
		if el == "." || el == ".." {
			return fmt.Errorf("entry %q has a name with %q in it", name, el)
		}
	}
	return nil
}

// checkFile reports why f cannot be a file of an archive.
func checkFile(f File) error {
	if err := checkName(f.Name); err != nil {
		return err
	}
	dir, rest, ok := strings.Cut(f.Name, "/")
	if !ok || rest == "" || Role(dir) != f.Role {
		return fmt.Errorf("entry %q is not under its role's directory %s/", f.Name, f.Role)
	}
	if f.Role == RoleData {
		if f.Rel() == "lock" {
			return fmt.Errorf("entry %q is the data directory's lock, which no archive holds", f.Name)
		}
	} else if f.Role != RoleConfig {
		if _, _, ok := roleKey(f.Role); !ok {
			return fmt.Errorf("entry %q has an unknown role %q", f.Name, f.Role)
		}
	}
	if strings.Contains(rest, "/") && f.Role != RoleData {
		return fmt.Errorf("entry %q of role %s is in a subdirectory", f.Name, f.Role)
	}
	if f.Size < 0 || f.Size > MaxEntrySize {
		return fmt.Errorf("entry %q has size %d (at most %d)", f.Name, f.Size, int64(MaxEntrySize))
	}
	if len(f.SHA256) != 64 {
		return fmt.Errorf("entry %q has no SHA-256 in the manifest", f.Name)
	}
	return nil
}

// parseManifest decodes and checks an archive's manifest.
func parseManifest(data []byte) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("the manifest does not decode: %w", err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("the archive has format %d; this bandit-node reads format %d", m.Format, Format)
	}
	if m.PeerID == "" {
		return nil, fmt.Errorf("the manifest names no peer ID")
	}
	if len(m.Files) > MaxEntries {
		return nil, fmt.Errorf("the manifest lists %d files (at most %d)", len(m.Files), MaxEntries)
	}
	seen := map[string]bool{}
	roles := map[Role]bool{}
	for _, f := range m.Files {
		if err := checkFile(f); err != nil {
			return nil, fmt.Errorf("the manifest: %w", err)
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("the manifest lists %q twice", f.Name)
		}
		seen[f.Name] = true
		if f.Role != RoleData && roles[f.Role] {
			return nil, fmt.Errorf("the manifest lists two files of role %s", f.Role)
		}
		roles[f.Role] = true
	}
	for _, r := range []Role{RoleConfig, RoleIdentity} {
		if !roles[r] {
			return nil, fmt.Errorf("the manifest lists no %s file", r)
		}
	}
	return &m, nil
}
