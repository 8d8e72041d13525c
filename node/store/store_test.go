package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

func TestStoreRoundTripAndAtomicity(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := &Record{}
	rec.Session.ID = "0123456789abcdef"
	rec.Session.State = apitype.StateCompleted
	rec.Session.Created = time.Now().UTC()
	rec.Result = []byte(`{"x":1}`)
	if err := s.Put(rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(rec.Session.ID)
	var compact bytes.Buffer
	if err == nil {
		err = json.Compact(&compact, got.Result)
	}
	if err != nil || got.Session.State != apitype.StateCompleted || compact.String() != `{"x":1}` {
		t.Fatalf("get = %+v, %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sessions"))
	if len(entries) != 1 {
		t.Fatalf("store left %d files, want 1 (no temporaries)", len(entries))
	}
	st, _ := os.Stat(filepath.Join(dir, "sessions", rec.Session.ID+".json"))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("record mode %v, want 0600", st.Mode().Perm())
	}
	if _, err := s.Get("../../etc/passwd"); err == nil {
		t.Fatal("store accepted a path as a session ID")
	}
}
