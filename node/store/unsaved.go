package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// A record the store cannot write — the data directory turned read-only,
// its disk is full — is not lost. It is kept in memory, which the API, the
// answers to late frames and the retention policy read in place of the
// stale stored record, and written again with a backoff (recordRetryMin
// doubling to recordRetryMax) until the disk takes it. Meanwhile a copy
// goes to the journal, <data_dir>/unsaved/<id>.json, so that a daemon
// restarted before the disk recovered finds the session's true end there
// rather than recording an abort over a session that completed: a
// sessions directory that alone turned read-only loses nothing, even
// across a restart. If the journal cannot be written either (the whole
// disk is read-only or full) and the daemon stops before the disk
// recovers, the end is lost with the process (docs/operations.md,
// "Records when the disk fails").

const (
	// recordRetryMin and recordRetryMax bound the wait between two
	// attempts to write the records kept in memory: a disk that takes
	// writes again has them within 20 s.
	recordRetryMin = time.Second
	recordRetryMax = 20 * time.Second
	// journalDir is the journal's directory, in the data directory.
	journalDir = "unsaved"
	// probeFile is the file written to check that the store can be
	// written again after a failed write that left no record to retry
	// (its name is no record's, and tidy removes the temporary file of a
	// probe a crash cut short).
	probeFile = ".probe.json"
)

// stripe returns the mutex that orders the writes of session id's record.
func (s *Store) stripe(id string) *sync.Mutex {
	h := fnv.New32a()
	h.Write([]byte(id))
	return &s.stripes[h.Sum32()%uint32(len(s.stripes))]
}

// setLastErr notes the error of the store's last write, nil for success.
func (s *Store) setLastErr(err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}

// Keep writes rec, the latest record of its session, as put does; if the
// disk fails it, rec is kept in memory (served by get and list), copied to
// the journal and written again by the retry loop until it is. first says
// whether this is the first failed write of the session's record since it
// was last written, for the caller to log once.
func (s *Store) Keep(rec *Record) (first bool, err error) {
	id := rec.Session.ID
	mu := s.stripe(id)
	mu.Lock()
	defer mu.Unlock()
	written, err := s.write(rec)
	switch {
	case written:
		s.Saved(id)
		return false, nil
	case err == nil || !errors.Is(err, ErrStorage):
		return false, err // frozen, or not a record at all
	}
	s.mu.Lock()
	if s.unsaved == nil {
		s.unsaved = map[string]*Record{}
	}
	first = s.unsaved[id] == nil
	s.unsaved[id] = rec
	s.mu.Unlock()
	s.journal(rec)
	s.wakeRetry() // again: the loop may have looked before rec was kept
	return first, err
}

// Saved forgets the record kept of session id and its journal copy, now
// that its latest is stored. The caller holds its stripe.
func (s *Store) Saved(id string) {
	s.mu.Lock()
	delete(s.unsaved, id)
	journaled := s.journaled[id]
	delete(s.journaled, id)
	s.mu.Unlock()
	if journaled {
		if err := os.Remove(s.JournalPath(id)); err == nil || errors.Is(err, fs.ErrNotExist) {
			syncDir(filepath.Dir(s.JournalPath(id)))
		}
	}
}

// JournalPath is the path of session id's copy in the journal.
func (s *Store) JournalPath(id string) string {
	return filepath.Join(filepath.Dir(s.Dir), journalDir, id+".json")
}

// journal copies rec to the journal, if the disk takes it there. The
// caller holds its stripe.
func (s *Store) journal(rec *Record) {
	p := s.JournalPath(rec.Session.ID)
	data, err := json.MarshalIndent(rec, "", "  ")
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
			err = s.writeFile(p, data)
		}
	}
	if err != nil {
		s.Failures.Journal.Add(1)
		return
	}
	s.mu.Lock()
	if s.journaled == nil {
		s.journaled = map[string]bool{}
	}
	s.journaled[rec.Session.ID] = true
	s.mu.Unlock()
}

// unsavedRecord returns a copy of the record kept in memory of session
// id, or nil.
func (s *Store) unsavedRecord(id string) *Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.unsaved[id]
	if rec == nil {
		return nil
	}
	cp := *rec
	cp.Local = maps.Clone(rec.Local)
	return &cp
}

// unsavedRecords returns copies of the records kept in memory, by ID.
func (s *Store) unsavedRecords() map[string]*Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]*Record, len(s.unsaved))
	for id, rec := range s.unsaved {
		cp := *rec
		cp.Local = maps.Clone(rec.Local)
		out[id] = &cp
	}
	return out
}

// unsavedIDs returns the sessions whose records are kept in memory,
// sorted.
func (s *Store) unsavedIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.unsaved))
	for id := range s.unsaved {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// retry writes the records kept in memory; when none is kept but the
// last write failed, it checks with a probe file whether the disk takes
// writes again. It returns the error that is left, nil once the store
// writes again.
func (s *Store) retry() error {
	for _, id := range s.unsavedIDs() {
		mu := s.stripe(id)
		mu.Lock()
		s.mu.Lock()
		rec := s.unsaved[id]
		s.mu.Unlock()
		if rec != nil {
			if written, _ := s.write(rec); written {
				s.Saved(id)
			}
		}
		mu.Unlock()
	}
	s.mu.Lock()
	err, left := s.lastErr, len(s.unsaved)
	s.mu.Unlock()
	if err != nil && left == 0 && !s.Frozen.Load() {
		p := filepath.Join(s.Dir, probeFile)
		if err = s.writeFile(p, []byte("{}\n")); err == nil {
			os.Remove(p)
			s.setLastErr(nil)
		} else {
			s.Failures.Record.Add(1)
			s.setLastErr(err)
		}
	}
	if err == nil && left > 0 {
		err = fmt.Errorf("%d session records not yet written", left)
	}
	return err
}

// Problem says what is wrong with the store's disk, "" if nothing.
func (s *Store) Problem() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.lastErr != nil:
		return fmt.Sprintf("cannot write session records: %v", s.lastErr)
	case len(s.unsaved) > 0:
		return fmt.Sprintf("%d session records not yet written", len(s.unsaved))
	}
	return ""
}

// UnsavedCount is the number of records kept in memory.
func (s *Store) UnsavedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.unsaved)
}

// ReadJournal reads the records of the journal, which a previous run could
// not store. Unreadable files are reported in the error list and left.
func (s *Store) ReadJournal() ([]*Record, []error) {
	dir := filepath.Dir(s.JournalPath("x"))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("reading the journal of unsaved records: %w", err)}
	}
	var recs []*Record
	var errs []error
	for _, e := range entries {
		if name := e.Name(); !e.IsDir() && strings.HasPrefix(name, ".") && strings.Contains(name, ".json.tmp") {
			if !s.Frozen.Load() { // a reader's store (storeAt) changes nothing
				os.Remove(filepath.Join(dir, name)) // an interrupted writeFileAtomic
			}
			continue
		}
		id, ok := recordFile(e)
		if !ok || !ValidSessionID(id) {
			continue
		}
		rec, err := ReadRecord(filepath.Join(dir, e.Name()), id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.mu.Lock()
		if s.journaled == nil {
			s.journaled = map[string]bool{}
		}
		s.journaled[id] = true
		s.mu.Unlock()
		recs = append(recs, rec)
	}
	return recs, errs
}

// NewerThan reports whether record a, from the journal, is a later state
// of its session than b, the stored record (nil if none): b is open and a
// ended, or a was stored later.
func (a *Record) NewerThan(b *Record) bool {
	if b == nil {
		return true
	}
	open := func(st string) bool { return st == apitype.StateProposed || st == apitype.StateRunning }
	if open(b.Session.State) != open(a.Session.State) {
		return !open(a.Session.State)
	}
	return a.Session.Updated != nil && (b.Session.Updated == nil || a.Session.Updated.After(*b.Session.Updated))
}

// KeepRecords writes the records the store could not, until ctx ends:
// at once, then after recordRetryMin, doubling up to recordRetryMax while
// the disk refuses them. It logs to log when the store writes again.
func (s *Store) KeepRecords(ctx context.Context, log *slog.Logger) {
	wait := recordRetryMin
	failing := false
	for {
		err := s.retry()
		if err == nil {
			if failing {
				failing, wait = false, recordRetryMin
				log.Info("the result store writes again; every session record is stored")
			}
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			}
			continue
		}
		if !failing {
			log.Warn("the result store cannot be written; retrying until it can", "err", err, "unsaved", s.UnsavedCount())
		} else {
			log.Debug("the result store still cannot be written", "err", err, "unsaved", s.UnsavedCount(), "next", wait.String())
		}
		failing = true
		// A record that fails meanwhile waits for the backoff too.
		t := time.NewTimer(wait)
		wait = min(2*wait, recordRetryMax)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// FlushRecords makes a last attempt, at shutdown, to write the records the
// store could not, and logs to log those that are left: the next start
// stores those the journal has, and records the others as the crash of an
// open session would be.
func (s *Store) FlushRecords(log *slog.Logger) {
	if s.UnsavedCount() == 0 {
		return
	}
	s.retry()
	ids := s.unsavedIDs()
	if len(ids) == 0 {
		return
	}
	var journaled, lost []string
	s.mu.Lock()
	for _, id := range ids {
		if s.journaled[id] {
			journaled = append(journaled, id)
		} else {
			lost = append(lost, id)
		}
	}
	s.mu.Unlock()
	log.Error("stopping with session records the data directory did not take; the next start stores those in the journal",
		"sessions", strings.Join(ids, ","), "in_journal", strings.Join(journaled, ","), "lost", strings.Join(lost, ","),
		"journal", filepath.Dir(s.JournalPath("x")), "err", s.Problem())
}
