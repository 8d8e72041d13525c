package node

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCorruptRecordsMovedAside: a daemon always starts, whatever its
// sessions/ holds. A record that does not parse or is not valid (a session
// ID that is not the file's, none at all, an unknown state) is moved to
// sessions/corrupt/ with one warning naming the file, so that the next
// start is quiet; a valid record and an open session's are kept, and the
// temporary file of an interrupted write is removed.
func TestCorruptRecordsMovedAside(t *testing.T) {
	cfg := testConfigs(t, 1)[0]
	dir := sessionsDir(cfg.Node.DataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const (
		good    = "00000000000000a1"
		running = "00000000000000a2"
	)
	created := `"created":"2026-11-26T10:00:00Z"`
	corrupt := []struct {
		name, text, why string
	}{
		{"empty object", `{}`, `not of 00000000000000b1`},
		{"null", `null`, `not of 00000000000000b2`},
		{"short ID", `{"session":{"id":"zz","state":"completed",` + created + `}}`, `"zz", not of`},
		{"another session's", `{"session":{"id":"00000000000000a1","state":"completed",` + created + `}}`, `holds the record of session "00000000000000a1"`},
		{"unknown state", `{"session":{"id":"00000000000000b5","state":"exploded",` + created + `}}`, `unknown session state "exploded"`},
		{"no creation time", `{"session":{"id":"00000000000000b6","state":"completed"}}`, `no creation time`},
		{"garbage", "\x00\xffnot json", `invalid character`},
		{"truncated", `{"session":{"id":"00000000000000b8"`, `unexpected end of JSON input`},
	}
	files := map[string]string{
		good + ".json":                 `{"session":{"id":"` + good + `","state":"completed",` + created + `}}`,
		running + ".json":              `{"session":{"id":"` + running + `","state":"running",` + created + `}}`,
		"." + good + ".json.tmp123456": `{"session":`, // a write a crash cut short
		"notes.txt":                    "the operator's own file",
	}
	names := make([]string, len(corrupt))
	for i, c := range corrupt {
		names[i] = "00000000000000b" + string(rune('1'+i)) + ".json"
		files[names[i]] = c.text
	}
	// A file of that name moved aside by an earlier start is kept too.
	if err := os.MkdirAll(filepath.Join(dir, corruptDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, corruptDir, names[0]), []byte("earlier"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	tn := startNode(t, cfg)
	warned := tn.logs.all()
	for i, c := range corrupt {
		t.Run(c.name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, names[i])); err == nil {
				t.Errorf("%s is still in sessions/", names[i])
			}
			var found int
			for _, rec := range warned {
				if rec.Msg == "an unreadable session record was moved aside" &&
					strings.Contains(rec.Attrs["record"], filepath.Join(dir, names[i])) {
					found++
					if !strings.Contains(rec.Attrs["record"], c.why) {
						t.Errorf("warning %q does not say %q", rec.Attrs["record"], c.why)
					}
				}
			}
			if found != 1 {
				t.Errorf("%d warnings name %s, want 1", found, names[i])
			}
		})
	}
	moved, err := os.ReadDir(filepath.Join(dir, corruptDir))
	if err != nil || len(moved) != len(corrupt)+1 {
		t.Fatalf("sessions/corrupt holds %d files (%v), want %d", len(moved), err, len(corrupt)+1)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, corruptDir, names[0])); string(b) != "earlier" {
		t.Errorf("the file moved aside earlier was overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, corruptDir, names[0]+".1")); string(b) != `{}` {
		t.Errorf("the second %s was not moved aside beside the first: %q", names[0], b)
	}
	if _, err := os.Stat(filepath.Join(dir, "."+good+".json.tmp123456")); err == nil {
		t.Error("the interrupted write's temporary file was kept")
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("a file that is not a record was touched: %v", err)
	}
	if rec, err := tn.store.get(good); err != nil || rec.Session.State != stateCompleted {
		t.Errorf("the valid record: %+v, %v", rec, err)
	}
	if rec, err := tn.store.get(running); err != nil || rec.Session.State != stateAborted {
		t.Errorf("the open session's record: %+v, %v; want it aborted", rec, err)
	}

	// The next start has nothing to say.
	tn.stop()
	again := startNode(t, cfg)
	for _, rec := range again.logs.all() {
		if strings.Contains(rec.Msg, "unreadable") {
			t.Errorf("the second start warned again: %s %v", rec.Msg, rec.Attrs)
		}
	}
	if list, err := again.api.Sessions(t.Context()); err != nil || len(list) != 2 {
		t.Errorf("the API lists %d sessions (%v), want 2", len(list), err)
	}
}

func TestStoreRoundTripAndAtomicity(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := &record{}
	rec.Session.ID = "0123456789abcdef"
	rec.Session.State = stateCompleted
	rec.Session.Created = time.Now().UTC()
	rec.Result = []byte(`{"x":1}`)
	if err := s.put(rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.get(rec.Session.ID)
	var compact bytes.Buffer
	if err == nil {
		err = json.Compact(&compact, got.Result)
	}
	if err != nil || got.Session.State != stateCompleted || compact.String() != `{"x":1}` {
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
	if _, err := s.get("../../etc/passwd"); err == nil {
		t.Fatal("store accepted a path as a session ID")
	}
}
