package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestProgressNotATerminal follows a session through progress bars written
// to a buffer, as to a log file: plain lines without \r or ESC, at most one
// per progressPlainEvery besides the changes of state, and the last one.
func TestProgressNotATerminal(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{start}
	var buf bytes.Buffer
	bar := newProgressBar(&buf)
	bar.line.now = clock.now
	if bar.line.tty {
		t.Fatal("a bytes.Buffer taken for a terminal")
	}
	bar.update(apitype.Session{ID: "x", State: apitype.StateProposed})
	clock.t = clock.t.Add(500 * time.Millisecond)
	started := clock.t
	// 60 s of polls every 500 ms: 120 updates, then the end.
	for step := range 120 {
		bar.update(apitype.Session{ID: "x", State: apitype.StateRunning, Started: &started, Progress: apitype.Progress{Step: int64(step), Total: 200}})
		clock.t = clock.t.Add(500 * time.Millisecond)
	}
	finished := clock.t
	bar.update(apitype.Session{ID: "x", State: apitype.StateCompleted, Started: &started, Finished: &finished, Progress: apitype.Progress{Step: 200, Total: 200}})
	bar.done()

	out := buf.String()
	if strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("control characters in non-terminal progress: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// proposed, running at 0 s, then one every 5 s of the 60 s, completed.
	if len(lines) < 3 || len(lines) > 2+60/5+1 {
		t.Errorf("%d lines, want about one per %v:\n%s", len(lines), progressPlainEvery, out)
	}
	if lines[0] != "x proposed" {
		t.Errorf("first line %q, want the proposed state", lines[0])
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "200/200 100.0%") || !strings.HasSuffix(last, "completed") {
		t.Errorf("last line %q, want the completed session", last)
	}
	if strings.Contains(out, "[#") {
		t.Errorf("a bar in plain progress lines:\n%s", out)
	}
}

// TestProgressLine checks the rate of plain lines, that the line held back
// is written by done, and the redrawn line of a terminal.
func TestProgressLine(t *testing.T) {
	clock := &fakeClock{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	p := &progressLine{w: &buf, now: clock.now}
	for i := range 100 { // 0 … 9.9 s
		p.show(strconv.Itoa(i), false)
		clock.t = clock.t.Add(100 * time.Millisecond)
	}
	p.show("99/100", false)
	p.done()
	want := "0\n50\n99/100\n" // at 0 s, at 5 s, then the last, by done
	if got := buf.String(); got != want {
		t.Errorf("plain lines %q, want %q", got, want)
	}

	buf.Reset()
	p = &progressLine{w: &buf, tty: true, now: clock.now}
	p.show("1/2", false)
	p.show("2/2", true)
	p.done()
	if got, want := buf.String(), "\r1/2\x1b[K\r2/2\x1b[K\n"; got != want {
		t.Errorf("terminal %q, want %q", got, want)
	}

	buf.Reset()
	(&progressLine{w: &buf, now: clock.now}).done()
	if buf.Len() != 0 {
		t.Errorf("done with nothing shown wrote %q", buf.String())
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || isTerminal(&bytes.Buffer{}) {
		t.Error("a regular file or a buffer taken for a terminal")
	}
}

// TestSimulateProgressToFile runs simulate --progress with stderr a buffer:
// plain lines, ending with the last step.
func TestSimulateProgressToFile(t *testing.T) {
	_, stderr, err := run(t, "simulate", filepath.Join(repoRoot, "examples", "ping.toml"), "--progress")
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(stderr, "\r\x1b") || stderr == "" {
		t.Errorf("simulate --progress to a buffer wrote %q", stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if step, total, ok := strings.Cut(lines[len(lines)-1], "/"); !ok || step != total {
		t.Errorf("last progress line %q, want step = total", lines[len(lines)-1])
	}
}
