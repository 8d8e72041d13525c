package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bandit-node/bandit-node/node/store"
)

// TestWriteWhileTheDaemonWrites backs a node up again and again while
// records are replaced the store's way (store.WriteFileAtomic: a
// temporary file, then a rename) and a session log is appended to, as a
// running daemon does. Every archived record is one whole version, no
// temporary file is archived, and every archived log ends with a whole
// line.
func TestWriteWhileTheDaemonWrites(t *testing.T) {
	n := newTestNode(t)
	record := filepath.Join(n.dataDir, "sessions", sessionID+".json")
	logPath := filepath.Join(n.dataDir, "logs", sessionID+".log")
	os.WriteFile(logPath, nil, 0o600)
	pad := strings.Repeat("x", 64<<10) // big enough that a torn read would show
	if err := store.WriteFileAtomic(record, fmt.Appendf(nil, `{"v":-1,"pad":%q}`, pad), 0o600); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for v := 0; ; v++ {
			select {
			case <-stop:
				return
			default:
			}
			data, _ := json.Marshal(map[string]any{"v": v, "pad": pad})
			if err := store.WriteFileAtomic(record, data, 0o600); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		var f *os.File
		defer func() { f.Close() }()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// Every 10,000 lines the log is rewritten shorter, as the
			// session logs' limits do (NAME.tmp, then a rename).
			if i%10000 == 0 {
				f.Close()
				if err := os.WriteFile(logPath+".tmp", []byte("2026-11-29T03:00:00.000Z INFO kept of the session\n"), 0o600); err != nil {
					t.Error(err)
					return
				}
				if err := os.Rename(logPath+".tmp", logPath); err != nil {
					t.Error(err)
					return
				}
				var err error
				if f, err = os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
					t.Error(err)
					return
				}
			}
			// A line in two writes: a backup may fall between them.
			fmt.Fprintf(f, "2026-11-29T03:00:00.000Z INFO line %d", i)
			fmt.Fprintf(f, " of the session\n")
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	for i := range 20 {
		archive := filepath.Join(n.root, fmt.Sprintf("b%d.tar.gz", i))
		if _, _, err := Write(n.src, archive); err != nil {
			t.Fatal(err)
		}
		if _, err := Check(archive); err != nil {
			t.Fatal(err)
		}
		for name, body := range entries(t, archive) {
			switch {
			case strings.Contains(name, ".tmp"):
				t.Errorf("backup %d archived the temporary file %s", i, name)
			case name == "data/sessions/"+sessionID+".json":
				var rec struct {
					V   int    `json:"v"`
					Pad string `json:"pad"`
				}
				if err := json.Unmarshal(body, &rec); err != nil || rec.Pad != pad {
					t.Errorf("backup %d archived a torn record (%d bytes): %v", i, len(body), err)
				}
			case name == "data/logs/"+sessionID+".log":
				if len(body) > 0 && !bytes.HasSuffix(body, []byte(" of the session\n")) {
					t.Errorf("backup %d archived a log that ends in a partial line: %q", i, body[max(0, len(body)-60):])
				}
			}
		}
	}
}

// entries returns an archive's files by name.
func entries(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[hdr.Name] = b
	}
}
