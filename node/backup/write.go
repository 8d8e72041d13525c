package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Source is what Write backs up: a node's files where its config puts
// them, as the daemon resolves them (absolute paths).
type Source struct {
	// Node is the node's name and PeerID its peer ID (of Identity).
	Node, PeerID string
	// Program names the bandit-node writing the archive.
	Program string
	// Config is the config file; DataDir the data directory.
	Config, DataDir string
	// Files are the config's files by role (RoleIdentity, RoleToken, ...);
	// an empty path is a role the config does not use.
	Files map[Role]string
	// Now is the time the manifest records.
	Now time.Time
}

// Write writes a backup archive of src to out, atomically (a temporary
// file in out's directory, fsynced, then renamed over out) and with mode
// 0600: it holds the node's private key. The daemon may be running.
// Skipped are the data directory's lock, temporary files (*.tmp,
// .*.tmp*) and what is not a regular file (symbolic links, sockets);
// skipped lists them. out must not be in the data directory.
func Write(src Source, out string) (m *Manifest, skipped []string, err error) {
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return nil, nil, err
	}
	if within(src.DataDir, outAbs) {
		return nil, nil, fmt.Errorf("the archive %s would be inside the data directory %s, and so in every later backup: write it elsewhere", out, src.DataDir)
	}
	for _, p := range []*string{&src.Config, &src.DataDir} {
		if *p, err = filepath.Abs(*p); err != nil {
			return nil, nil, err
		}
	}
	m = &Manifest{Format: Format, Program: src.Program, Node: src.Node, PeerID: src.PeerID, Created: src.Now.UTC().Truncate(time.Second)}
	tmp, err := os.CreateTemp(filepath.Dir(outAbs), "."+filepath.Base(outAbs)+".tmp*")
	if err != nil {
		return nil, nil, fmt.Errorf("writing the archive: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return nil, nil, fmt.Errorf("writing the archive: %w", err)
	}
	gz := gzip.NewWriter(tmp)
	tw := tar.NewWriter(gz)
	w := &writer{tw: tw, m: m}

	taken := map[string]bool{} // files archived under a role, not as data
	if err := w.add(RoleConfig, src.Config, false); err != nil {
		return nil, nil, err
	}
	taken[filepath.Clean(src.Config)] = true
	for _, r := range []Role{RoleIdentity, RoleToken, RoleReadToken, RoleCert, RoleKey, RoleCA} {
		p := src.Files[r]
		if p == "" {
			continue
		}
		if p, err = filepath.Abs(p); err != nil {
			return nil, nil, err
		}
		if err := w.add(r, p, false); err != nil {
			return nil, nil, err
		}
		taken[filepath.Clean(p)] = true
	}
	if _, ok := m.File(RoleIdentity); !ok {
		return nil, nil, errors.New("the config names no identity key file")
	}
	walkErr := filepath.WalkDir(src.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != src.DataDir {
				return nil // removed while we walked (retention, a log rotated)
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(src.DataDir, p)
		if err != nil {
			return err
		}
		if taken[filepath.Clean(p)] || skippedName(rel) {
			return nil
		}
		if !d.Type().IsRegular() {
			skipped = append(skipped, rel+" (not a regular file)")
			return nil
		}
		isLog := filepath.Dir(rel) == "logs" && strings.HasSuffix(rel, ".log")
		err = w.addData(p, filepath.ToSlash(rel), isLog)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	})
	if walkErr != nil {
		return nil, nil, fmt.Errorf("reading the data directory %s: %w", src.DataDir, walkErr)
	}
	man, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: ManifestName, Size: int64(len(man)), Mode: 0o600, ModTime: m.Created, Format: tar.FormatPAX}); err != nil {
		return nil, nil, fmt.Errorf("writing the archive: %w", err)
	}
	if _, err := tw.Write(man); err != nil {
		return nil, nil, fmt.Errorf("writing the archive: %w", err)
	}
	for _, c := range []io.Closer{tw, gz} {
		if err := c.Close(); err != nil {
			return nil, nil, fmt.Errorf("writing the archive: %w", err)
		}
	}
	if err := tmp.Sync(); err != nil {
		return nil, nil, fmt.Errorf("writing the archive: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, nil, fmt.Errorf("writing the archive: %w", err)
	}
	if err := os.Rename(tmp.Name(), outAbs); err != nil {
		return nil, nil, fmt.Errorf("writing the archive: %w", err)
	}
	done = true
	if d, err := os.Open(filepath.Dir(outAbs)); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("writing the archive: syncing its directory: %w", err)
		}
	}
	return m, skipped, nil
}

// skippedName reports whether the data directory's file rel is left out
// of every archive: the daemon's lock, and the temporary files of writes
// in progress (store.WriteFileAtomic's .NAME.tmpXXX, a session log's
// NAME.tmp).
func skippedName(rel string) bool {
	base := filepath.Base(rel)
	return rel == "lock" || strings.HasSuffix(base, ".tmp") ||
		(strings.HasPrefix(base, ".") && strings.Contains(base, ".tmp"))
}

// within reports whether p is dir or under it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(rel)
}

// writer adds files to an archive and lists them in its manifest.
type writer struct {
	tw *tar.Writer
	m  *Manifest
}

// add archives the file of a role at path p.
func (w *writer) add(r Role, p string, cut bool) error {
	name := string(r) + "/" + filepath.Base(p)
	if err := w.addFile(r, p, name, cut); err != nil {
		return fmt.Errorf("backing up the %s file: %w", r, err)
	}
	return nil
}

// addData archives the data directory's file at p, rel under it.
func (w *writer) addData(p, rel string, cut bool) error {
	return w.addFile(RoleData, p, string(RoleData)+"/"+rel, cut)
}

// addFile reads the file at p whole, as it is when opened (a file the
// daemon replaces by rename keeps the version opened), cuts it at its last
// newline if cut, and adds it to the archive as name.
func (w *writer) addFile(r Role, p, name string, cut bool) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", p)
	}
	if st.Size() > MaxEntrySize {
		return fmt.Errorf("%s has %d bytes, more than an archive takes (%d)", p, st.Size(), int64(MaxEntrySize))
	}
	// Read what the file holds now, up to its size when opened: a log
	// that grows meanwhile is read as it was.
	data, err := io.ReadAll(io.LimitReader(f, st.Size()))
	if err != nil {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	isCut := false
	if cut {
		if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
			data, isCut = data[:i+1], true
		}
	}
	if err := checkName(name); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if slices.ContainsFunc(w.m.Files, func(f File) bool { return f.Name == name }) {
		return fmt.Errorf("two files would be archived as %s (%s is one): give them different names", name, p)
	}
	sum := sha256.Sum256(data)
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: int64(st.Mode().Perm()),
		ModTime: st.ModTime().Truncate(time.Second), Format: tar.FormatPAX}
	if err := w.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("writing the archive: %w", err)
	}
	if _, err := w.tw.Write(data); err != nil {
		return fmt.Errorf("writing the archive: %w", err)
	}
	w.m.Files = append(w.m.Files, File{Name: name, Role: r, Source: p, Size: int64(len(data)),
		SHA256: hex.EncodeToString(sum[:]), Mode: uint32(st.Mode().Perm()), Cut: isCut})
	return nil
}
