package backup

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrDamaged marks an archive that is cut short, altered or not an archive
// of this program: restore writes nothing from it.
var ErrDamaged = errors.New("the archive is damaged")

// entry is a file read from an archive: its header's name and size, and
// the SHA-256 of what it held.
type entry struct {
	name   string
	size   int64
	sha256 string
}

// visitor is called with each entry but the manifest, checked as an entry
// (a regular file, a clean name, a size within MaxEntrySize) but not yet
// against the manifest; it must read body to its end.
type visitor func(name string, size int64, body io.Reader) error

// read reads the archive r whole, calling visit, if not nil, for each file
// but the manifest, and checks it: a gzip stream whose checksum holds, a
// tar stream of regular files under clean names, ending with the manifest,
// which lists each other file, no more and no fewer, with its size and
// SHA-256. Errors of the archive itself wrap ErrDamaged.
func read(r io.Reader, visit visitor) (*Manifest, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: not a gzip file (%v)", ErrDamaged, err)
	}
	gz.Multistream(false)
	tr := tar.NewReader(gz)
	var got []entry
	var manifest []byte
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s", ErrDamaged, describe(err, len(got)))
		}
		if manifest != nil {
			return nil, fmt.Errorf("%w: entry %q follows the manifest, which must be last", ErrDamaged, hdr.Name)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%w: entry %q is not a regular file (tar type %q): an archive holds files only", ErrDamaged, hdr.Name, hdr.Typeflag)
		}
		if hdr.Name == ManifestName {
			if hdr.Size < 0 || hdr.Size > MaxManifestSize {
				return nil, fmt.Errorf("%w: the manifest has %d bytes (at most %d)", ErrDamaged, hdr.Size, MaxManifestSize)
			}
			if manifest, err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("%w: reading the manifest: %s", ErrDamaged, describe(err, len(got)))
			}
			continue
		}
		if err := checkName(hdr.Name); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		if hdr.Size < 0 || hdr.Size > MaxEntrySize {
			return nil, fmt.Errorf("%w: entry %q has %d bytes (at most %d)", ErrDamaged, hdr.Name, hdr.Size, int64(MaxEntrySize))
		}
		if len(got) >= MaxEntries {
			return nil, fmt.Errorf("%w: more than %d entries", ErrDamaged, MaxEntries)
		}
		h := sha256.New()
		body := io.TeeReader(tr, h)
		if visit != nil {
			if err := visit(hdr.Name, hdr.Size, body); err != nil {
				if isStreamErr(err) {
					return nil, fmt.Errorf("%w: reading entry %q: %s", ErrDamaged, hdr.Name, describe(err, len(got)))
				}
				return nil, err
			}
		}
		// Whatever the visitor left (all of it, without one) is hashed too.
		if _, err := io.Copy(io.Discard, body); err != nil {
			return nil, fmt.Errorf("%w: reading entry %q: %s", ErrDamaged, hdr.Name, describe(err, len(got)))
		}
		got = append(got, entry{hdr.Name, hdr.Size, hex.EncodeToString(h.Sum(nil))})
	}
	// The tar stream ends before the gzip stream does: read it to its end,
	// which checks the gzip checksum and length.
	if _, err := io.Copy(io.Discard, gz); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrDamaged, describe(err, len(got)))
	}
	if manifest == nil {
		return nil, fmt.Errorf("%w: it has no manifest (%d files read): it was cut short, or is not a bandit-node backup", ErrDamaged, len(got))
	}
	m, err := parseManifest(manifest)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	listed := map[string]File{}
	for _, f := range m.Files {
		listed[f.Name] = f
	}
	seen := map[string]bool{}
	for _, e := range got {
		f, ok := listed[e.name]
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: entry %q is not in the manifest", ErrDamaged, e.name)
		case seen[e.name]:
			return nil, fmt.Errorf("%w: entry %q is in the archive twice", ErrDamaged, e.name)
		case e.size != f.Size || e.sha256 != f.SHA256:
			return nil, fmt.Errorf("%w: entry %q does not hold what the manifest says (%d bytes, SHA-256 %.12s…; the manifest: %d bytes, %.12s…): it was altered", ErrDamaged, e.name, e.size, e.sha256, f.Size, f.SHA256)
		}
		seen[e.name] = true
	}
	for _, f := range m.Files {
		if !seen[f.Name] {
			return nil, fmt.Errorf("%w: the manifest lists %q, which the archive does not hold", ErrDamaged, f.Name)
		}
	}
	return m, nil
}

// isStreamErr reports whether err came from reading the archive rather than
// from a visitor's own work.
func isStreamErr(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, gzip.ErrHeader) || errors.Is(err, tar.ErrHeader)
}

// describe phrases an error of the gzip or tar stream for the operator.
func describe(err error, files int) string {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("it ends too early, after %d files: it was cut short (an interrupted copy or a full disk?)", files)
	case errors.Is(err, gzip.ErrChecksum):
		return "its gzip checksum does not match: its bytes were altered"
	}
	return err.Error()
}

// Check reads the archive at path whole and checks it as Restore does
// before writing anything, and returns its manifest.
func Check(path string) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := read(f, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
