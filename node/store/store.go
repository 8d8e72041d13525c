package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// Record is what the store keeps of one session.
type Record struct {
	Session apitype.Session `json:"session"`
	// Peers are the other organizations of the session, by peer ID: those
	// an ended session still answers (see sessions.Runtime.answerEnded).
	Peers  []string                   `json:"peers,omitempty"`
	Result json.RawMessage            `json:"result,omitempty"`
	Local  map[string]json.RawMessage `json:"local,omitempty"`
}

// Store keeps session records durably under DIR/sessions, one JSON file per
// session, each replaced atomically (write a temporary file, fsync, rename,
// fsync the directory) so a crash leaves either the old or the new record.
type Store struct {
	Dir  string
	lock *os.File // the data directory's lock (lockDataDir), held until close
	// Frozen makes every later write a no-op; tests set it to simulate a
	// crash, after which a dead daemon must not write anything.
	Frozen atomic.Bool

	// FailWrite, when set (by tests only), is called before every write
	// of the store with the path written, and a non-nil error fails the
	// write as the disk would: a data directory that turns read-only or
	// full, on demand.
	FailWrite atomic.Pointer[func(path string) error]

	// The records that could not be written are kept, retried and served
	// from memory until they are (unsaved.go). stripes orders the writes
	// of each session's record (by its ID's hash), so that a retry never
	// writes an older record over a newer one.
	stripes [16]sync.Mutex
	mu      sync.Mutex // guards unsaved, journaled and lastErr
	unsaved map[string]*Record
	// journaled are the sessions with a copy in the journal (journalDir).
	journaled map[string]bool
	// lastErr is the error of the last write of the store, nil once one
	// succeeded again.
	lastErr error
	// wake tells the retry loop (keepRecords) of a new unsaved record.
	wake chan struct{}
	// Failures counts the failed writes, by what was written.
	Failures struct{ Record, Journal atomic.Uint64 }
}

// ErrStorage marks an error of the store's disk: the data directory cannot
// be written (read-only, full, gone).
var ErrStorage = errors.New("the result store cannot be written")

// ValidSessionID reports whether id has the shape of a session ID: 16 to 64
// lowercase hexadecimal digits. (By hand: it is checked for every message.)
func ValidSessionID[T string | []byte](id T) bool {
	if len(id) < 16 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Open opens the store of data directory dataDir, creating it, and
// takes the directory's lock: one daemon at a time. Where the file system
// has no locks it returns the store and an error wrapping errNoDataDirLock,
// a warning for the operator.
func Open(dataDir string) (*Store, error) {
	dir := SessionsDir(dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the result store: %w", err)
	}
	lock, err := lockDataDir(dataDir)
	if err != nil && !errors.Is(err, ErrNoDataDirLock) {
		return nil, err
	}
	// err, if any, is errNoDataDirLock's warning: the store works unguarded.
	return &Store{Dir: dir, lock: lock, wake: make(chan struct{}, 1)}, err
}

// SessionsDir is where the store of data directory dataDir keeps its records.
func SessionsDir(dataDir string) string { return filepath.Join(dataDir, "sessions") }

// ErrNoDataDirLock marks a data directory that could not be locked because
// its file system has no locks: the daemon runs, but nothing stops a second
// one on the same directory.
var ErrNoDataDirLock = errors.New("the data directory cannot be locked: nothing stops a second daemon from using it")

// Close releases the data directory's lock. The store still reads; writes
// are dropped from now on (another daemon may own the directory next).
func (s *Store) Close() {
	s.Frozen.Store(true)
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

// ErrNotSessionID is the error of a name that cannot be a session's ID (the
// API answers it as a session it does not have).
var ErrNotSessionID = errors.New("not a session ID")

func (s *Store) path(id string) (string, error) {
	if !ValidSessionID(id) {
		return "", fmt.Errorf("%q is %w", id, ErrNotSessionID)
	}
	return filepath.Join(s.Dir, id+".json"), nil
}

// Exists reports whether a record of session id is stored, or kept in
// memory until it can be.
func (s *Store) Exists(id string) bool {
	p, err := s.path(id)
	if err != nil {
		return false
	}
	if s.unsavedRecord(id) != nil {
		return true
	}
	_, err = os.Stat(p)
	return err == nil
}

// Put writes rec atomically. A record it cannot write is not kept: see
// keep for the records of sessions.
func (s *Store) Put(rec *Record) error {
	mu := s.stripe(rec.Session.ID)
	mu.Lock()
	defer mu.Unlock()
	_, err := s.write(rec)
	return err
}

// write writes rec atomically, unless the store is frozen (written is then
// false), and notes how the write went. The caller holds rec's stripe. A
// failure of the disk wraps errStorage.
func (s *Store) write(rec *Record) (written bool, err error) {
	if s.Frozen.Load() {
		return false, nil
	}
	p, err := s.path(rec.Session.ID)
	if err != nil {
		return false, err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return false, fmt.Errorf("encoding session %s: %w", rec.Session.ID, err)
	}
	if err := s.writeFile(p, data); err != nil {
		s.Failures.Record.Add(1)
		s.setLastErr(err)
		s.wakeRetry()
		return false, fmt.Errorf("storing session %s: %w: %w", rec.Session.ID, ErrStorage, err)
	}
	s.setLastErr(nil)
	return true, nil
}

// wakeRetry tells the retry loop (keepRecords) that a write failed.
func (s *Store) wakeRetry() {
	if s.wake == nil {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// writeFile is writeFileAtomic, failed first by failWrite if it is set.
func (s *Store) writeFile(p string, data []byte) error {
	if fail := s.FailWrite.Load(); fail != nil {
		if err := (*fail)(p); err != nil {
			return err
		}
	}
	return WriteFileAtomic(p, data, 0o600)
}

// Get reads the record of session id: the one kept in memory, if its
// latest could not be written yet, else the stored one.
func (s *Store) Get(id string) (*Record, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	if rec := s.unsavedRecord(id); rec != nil {
		return rec, nil
	}
	return ReadRecord(p, id)
}

// ReadRecord reads and checks the record in file p, which must be that of
// session id: valid JSON whose session ID is id and whose state is one a
// session can be in. A record that is not is corrupt (a bad disk, a hand
// edit, a file copied in under another name).
func ReadRecord(p, id string) (*Record, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	switch st := rec.Session.State; {
	case rec.Session.ID != id:
		return nil, fmt.Errorf("reading %s: it holds the record of session %.40q, not of %s", p, rec.Session.ID, id)
	case st != apitype.StateProposed && st != apitype.StateRunning && st != apitype.StateCompleted && st != apitype.StateAborted:
		return nil, fmt.Errorf("reading %s: unknown session state %.40q", p, st)
	case rec.Session.Created.IsZero():
		return nil, fmt.Errorf("reading %s: the record has no creation time", p)
	}
	// The file is indented for the operator who reads it; the result and
	// local outputs read back as the API served them while live, byte for
	// byte (TestStoredResultsAfterStop).
	rec.Result = CompactJSON(rec.Result)
	for k, v := range rec.Local {
		rec.Local[k] = CompactJSON(v)
	}
	return &rec, nil
}

// CompactJSON returns raw without insignificant space; raw is valid JSON,
// as it came out of json.Unmarshal.
func CompactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// List reads every record, newest first: those kept in memory until they
// can be written in place of their stored ones. Unreadable files are
// skipped and reported in the returned error list.
func (s *Store) List() ([]*Record, []error) {
	unsaved := s.unsavedRecords()
	out := slices.Collect(maps.Values(unsaved))
	var errs []error
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		errs = append(errs, err)
	}
	for _, e := range entries {
		id, ok := recordFile(e)
		if !ok || unsaved[id] != nil {
			continue
		}
		rec, err := ReadRecord(filepath.Join(s.Dir, e.Name()), id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session.Created.After(out[j].Session.Created) })
	return out, errs
}

// recordFile reports whether directory entry e is a record's file, and
// the session ID its name gives.
func recordFile(e os.DirEntry) (id string, ok bool) {
	name := e.Name()
	if e.IsDir() || filepath.Ext(name) != ".json" || strings.HasPrefix(name, ".") {
		return "", false
	}
	return strings.TrimSuffix(name, ".json"), true
}

// CorruptDir is where the store moves records it cannot read, under its
// directory.
const CorruptDir = "corrupt"

// Tidy prepares the store for a daemon that starts: every record that
// cannot be read or is not valid is moved to sessions/corrupt/ (so that
// it is reported once, not at every start, and kept for whoever wants to
// look at it), and the temporary files of writes a crash interrupted are
// removed. It returns a line for the operator per file moved.
func (s *Store) Tidy() ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("reading the result store: %w", err)
	}
	var moved []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && strings.HasPrefix(name, ".") && strings.Contains(name, ".json.tmp") {
			os.Remove(filepath.Join(s.Dir, name)) // an interrupted writeFileAtomic
			continue
		}
		id, ok := recordFile(e)
		if !ok {
			continue
		}
		_, readErr := ReadRecord(filepath.Join(s.Dir, name), id)
		if readErr == nil || errors.Is(readErr, fs.ErrNotExist) {
			continue
		}
		to, err := s.moveAside(name)
		if err != nil {
			return moved, fmt.Errorf("moving the unreadable record %s aside: %w", filepath.Join(s.Dir, name), err)
		}
		moved = append(moved, fmt.Sprintf("%v; moved to %s", readErr, to))
	}
	return moved, nil
}

// moveAside moves the file name of the store's directory to corrupt/,
// under a name no earlier file there has, and returns its new path.
func (s *Store) moveAside(name string) (string, error) {
	dir := filepath.Join(s.Dir, CorruptDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	to := filepath.Join(dir, name)
	for i := 1; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			break
		}
		to = filepath.Join(dir, fmt.Sprintf("%s.%d", name, i))
	}
	if err := os.Rename(filepath.Join(s.Dir, name), to); err != nil {
		return "", err
	}
	return to, nil
}

// WriteFileAtomic replaces path with data durably.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes the entries written, renamed or removed in directory dir
// durable. A file system that cannot sync a directory (os.ErrInvalid) has
// nothing more to make durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
