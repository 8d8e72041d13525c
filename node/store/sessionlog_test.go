package store

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Session IDs as the node makes them (validSessionID).
const (
	logIDA = "0123456789abcdef"
	logIDB = "fedcba9876543210"
)

func newTestSessionLogs(t *testing.T, dir string, limits SessionLogLimits) *SessionLogs {
	t.Helper()
	l, err := NewSessionLogs(dir, limits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// logMessages returns the message of each line ("time level msg k=v ...").
func logMessages(lines []string) []string {
	var out []string
	for _, line := range lines {
		f := strings.SplitN(line, " ", 3)
		if len(f) < 3 {
			out = append(out, line)
			continue
		}
		msg, _, _ := strings.Cut(f[2], "=")
		if i := strings.LastIndex(msg, " "); i >= 0 && strings.Contains(f[2], "=") {
			msg = msg[:i]
		}
		out = append(out, msg)
	}
	return out
}

// TestSessionLogHandler checks which records the handler keeps and how it
// renders them, and that it passes every record on unchanged.
func TestSessionLogHandler(t *testing.T) {
	logs := newTestSessionLogs(t, "", DefaultSessionLogLimits())
	logs.Track(logIDA)
	logs.Track(logIDB)
	var out bytes.Buffer
	log := slog.New(NewSessionLogHandler(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}), logs))

	log.Info("proposed a session", "session", logIDA, "name", "weekly promo", "n", 3)
	log.With("session", logIDA, "party", "agent/1").Warn("party said", "err", errors.New("x=1"))
	log.Info("no session here", "peer", "node2")
	log.Debug("below the level", "session", logIDA)
	log.Info("the other one", "session", logIDB)
	log.WithGroup("g").Info("grouped session is not the session", "session", logIDA)
	log.Info("made-up session", "session", "00000000deadbeef")
	log.Info("nested", "session", logIDA, slog.Group("peer", "name", "node3", "lat", 1.5))

	got, ok := logs.Read(logIDA, 0)
	if !ok {
		t.Fatal("no log of session A")
	}
	wantSuffix := []string{
		` INFO proposed a session name="weekly promo" n=3`,
		` WARN party said party=agent/1 err="x=1"`,
		` INFO nested peer.name=node3 peer.lat=1.5`,
	}
	if len(got.Lines) != len(wantSuffix) {
		t.Fatalf("session A's lines:\n%s\nwant %d", strings.Join(got.Lines, "\n"), len(wantSuffix))
	}
	for i, w := range wantSuffix {
		if !strings.HasSuffix(got.Lines[i], w) {
			t.Errorf("line %d = %q, want it to end %q", i, got.Lines[i], w)
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", strings.Fields(got.Lines[i])[0]); err != nil {
			t.Errorf("line %d does not start with a time: %v", i, err)
		}
	}
	if b, _ := logs.Read(logIDB, 0); !slices.Equal(logMessages(b.Lines), []string{"the other one"}) {
		t.Errorf("session B's lines: %q", b.Lines)
	}
	if _, ok := logs.Read("00000000deadbeef", 0); ok {
		t.Error("a session never tracked has a log")
	}
	// Everything reached the real handler, session attributes included.
	for _, want := range []string{`"proposed a session" session=` + logIDA, "session=" + logIDA + " party=agent/1", "no session here",
		`"the other one" session=` + logIDB, "g.session=" + logIDA, "made-up session", "peer.name=node3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the wrapped handler did not get %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "below the level") {
		t.Error("a record below the level was handled")
	}
}

// TestSessionLogKeepsInfoBelowTheLevel checks that a session's log keeps
// its info lines when the daemon logs only warnings, which the wrapped
// handler then does not get.
func TestSessionLogKeepsInfoBelowTheLevel(t *testing.T) {
	logs := newTestSessionLogs(t, "", DefaultSessionLogLimits())
	logs.Track(logIDA)
	var out bytes.Buffer
	log := slog.New(NewSessionLogHandler(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}), logs))
	log.Info("proposed a session", "session", logIDA)
	log.Debug("too fine", "session", logIDA)
	log.Warn("peer slow", "session", logIDA)
	log.Info("unrelated")
	got, _ := logs.Read(logIDA, 0)
	if !slices.Equal(logMessages(got.Lines), []string{"proposed a session", "peer slow"}) {
		t.Errorf("kept %q", got.Lines)
	}
	if strings.Contains(out.String(), "proposed") || strings.Contains(out.String(), "unrelated") || !strings.Contains(out.String(), "peer slow") {
		t.Errorf("the wrapped handler at warn got:\n%s", out.String())
	}
}

// TestSessionLogBounds checks the bounds: lines and bytes per session
// (oldest dropped, counted), sessions in memory (least recently written
// forgotten), the size of a file and the number of files.
func TestSessionLogBounds(t *testing.T) {
	t.Run("lines", func(t *testing.T) {
		logs := newTestSessionLogs(t, "", SessionLogLimits{lines: 5, bytes: 1 << 20, sessions: 4, files: 4})
		logs.Track(logIDA)
		for i := range 12 {
			logs.add(logIDA, fmt.Sprint("line ", i))
		}
		got, _ := logs.Read(logIDA, 0)
		if !slices.Equal(got.Lines, []string{"line 7", "line 8", "line 9", "line 10", "line 11"}) || got.First != 7 || got.Next != 12 || got.Dropped != 7 {
			t.Errorf("got %+v", got)
		}
		got, _ = logs.Read(logIDA, 10)
		if !slices.Equal(got.Lines, []string{"line 10", "line 11"}) || got.Dropped != 0 || got.First != 10 {
			t.Errorf("since 10: %+v", got)
		}
		got, _ = logs.Read(logIDA, 99)
		if len(got.Lines) != 0 || got.Next != 12 {
			t.Errorf("since 99: %+v", got)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		logs := newTestSessionLogs(t, "", SessionLogLimits{lines: 1000, bytes: 100, sessions: 4, files: 4})
		logs.Track(logIDA)
		for range 10 {
			logs.add(logIDA, strings.Repeat("x", 29)) // 30 bytes with its newline
		}
		got, _ := logs.Read(logIDA, 0)
		if len(got.Lines) != 3 || got.Dropped != 7 {
			t.Errorf("kept %d lines, dropped %d; want 3 and 7", len(got.Lines), got.Dropped)
		}
		logs.add(logIDA, strings.Repeat("y", 500))
		got, _ = logs.Read(logIDA, 0)
		if last := got.Lines[len(got.Lines)-1]; len(last) >= 100 || !strings.HasSuffix(last, "…(cut)") {
			t.Errorf("an overlong line is kept as %q", last)
		}
	})
	t.Run("sessions", func(t *testing.T) {
		logs := newTestSessionLogs(t, "", SessionLogLimits{lines: 10, bytes: 1 << 20, sessions: 3, files: 3})
		ids := []string{"0000000000000001", "0000000000000002", "0000000000000003", "0000000000000004"}
		for _, id := range ids[:3] {
			logs.Track(id)
			logs.add(id, "hello "+id)
		}
		logs.add(ids[0], "written again") // ids[1] is now the least recently written
		logs.Track(ids[3])
		for i, id := range ids {
			_, ok := logs.Read(id, 0)
			if ok != (i != 1) {
				t.Errorf("session %s kept: %v", id, ok)
			}
		}
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		logs := newTestSessionLogs(t, dir, SessionLogLimits{lines: 10, bytes: 100, sessions: 2, files: 2})
		ids := []string{"0000000000000001", "0000000000000002", "0000000000000003"}
		for i, id := range ids {
			logs.Track(id)
			logs.add(id, "hello "+id)
			// Distinct modification times order the files.
			when := time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)
			if err := os.Chtimes(filepath.Join(dir, id+".log"), when, when); err != nil {
				t.Fatal(err)
			}
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		if len(files) != 2 || slices.Contains(files, filepath.Join(dir, ids[0]+".log")) {
			t.Errorf("files %q, want the 2 newest", files)
		}
		// A file over twice the byte bound is rewritten from memory.
		for i := range 40 {
			logs.add(ids[2], fmt.Sprintf("line %02d", i))
		}
		st, err := os.Stat(filepath.Join(dir, ids[2]+".log"))
		if err != nil || st.Size() > 200 {
			t.Fatalf("file of %s: %v, %d bytes, want at most 200", ids[2], err, st.Size())
		}
		data, _ := os.ReadFile(filepath.Join(dir, ids[2]+".log"))
		if !strings.HasPrefix(string(data), "(") || !strings.Contains(string(data), "earlier lines dropped)") || !strings.HasSuffix(string(data), "line 39\n") {
			t.Errorf("rewritten file:\n%s", data)
		}
	})
}

// TestSessionLogsSurviveReopen checks that a session's log is read back
// from disk by the next run, and kept growing after it.
func TestSessionLogsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	first := newTestSessionLogs(t, dir, DefaultSessionLogLimits())
	first.Track(logIDA)
	first.add(logIDA, "before")
	first.Close()

	second := newTestSessionLogs(t, dir, DefaultSessionLogLimits())
	if got, ok := second.Read(logIDA, 0); !ok || !slices.Equal(got.Lines, []string{"before"}) {
		t.Fatalf("after reopening, untracked: %+v, %v", got, ok)
	}
	second.Track(logIDA)
	second.add(logIDA, "after")
	second.Close()
	third := newTestSessionLogs(t, dir, DefaultSessionLogLimits())
	if got, _ := third.Read(logIDA, 0); !slices.Equal(got.Lines, []string{"before", "after"}) {
		t.Fatalf("after a second reopening: %+v", got)
	}
}
