package environment

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

const testLabel = "samba data_owner[3] of acme"

func testSession() Session {
	return Session{ID: "s-1", Protocol: "samba", Role: "data_owner", Index: 3, Org: "acme"}
}

// testExecConfig is a config for prog with short timeouts and backoff.
func testExecConfig(prog ...string) ExecConfig {
	c := DefaultExecConfig()
	c.Command = prog
	c.StartTimeout = 5 * time.Second
	c.RequestTimeout = 2 * time.Second
	c.BackoffMin = 10 * time.Millisecond
	c.BackoffMax = 40 * time.Millisecond
	c.StopGrace = time.Second
	return c
}

func newTestExec(t testing.TB, cfg ExecConfig) *Exec {
	t.Helper()
	e, err := NewExec(cfg, testSession())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

func envprog(args ...string) []string { return append([]string{prepared.envprog}, args...) }

func pull(id uint64, step int64, arms ...int) protocol.Query {
	return protocol.Query{ID: id, Kind: protocol.QueryPull, Step: step, Arms: arms}
}

func TestExecAnswers(t *testing.T) {
	e := newTestExec(t, testExecConfig(envprog()...))
	ctx := context.Background()
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		q    protocol.Query
		want protocol.Outcome
	}{
		{pull(1, 12, 4), protocol.Outcome{ID: 1, Rewards: []float64{4.012}}}, // even step: "reward"
		{pull(2, 13, 4), protocol.Outcome{ID: 2, Rewards: []float64{4.013}}}, // odd step: "rewards"
		{pull(3, 3, 0, 2, 5), protocol.Outcome{ID: 3, Rewards: []float64{0.003, 2.003, 5.003}}},
		{protocol.Query{ID: 4, Kind: protocol.QueryContext, Step: 5}, protocol.Outcome{ID: 4, X: []float64{5, 0.5, -1}}},
		{protocol.Query{ID: 5, Kind: protocol.QueryRewards, Step: 5}, protocol.Outcome{ID: 5, Rewards: []float64{0.005, 1.005, 2.005}}},
		{protocol.Query{ID: 6, Kind: protocol.QueryProcure, Step: 2, Producers: []int{0, 3}, Quantities: []float64{10, 5}}, protocol.Outcome{ID: 6, Qualities: []float64{0.01, 0.305}}},
	}
	for _, tt := range tests {
		got, err := e.Answer(ctx, tt.q)
		if err != nil {
			t.Fatalf("%v at step %d: %v", tt.q.Kind, tt.q.Step, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v at step %d: got %+v, want %+v", tt.q.Kind, tt.q.Step, got, tt.want)
		}
	}
}

// TestExecFaults checks that every fault of a program fails the query
// with an error naming the label, the query's kind and step, what went
// wrong and the program's stderr tail.
func TestExecFaults(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		config func(*ExecConfig)
		want   []string // in the error
	}{
		{"garbage", []string{"-mode=garbage"}, nil, []string{`answered "this is not json"`, "malformed answer"}},
		{"late", []string{"-mode=late", "-delay=10s"}, func(c *ExecConfig) { c.RequestTimeout = 200 * time.Millisecond }, []string{"did not send its answer within 200ms"}},
		{"bad hello", []string{"-mode=bad-hello"}, nil, []string{"answered the hello with", "something else", "want the hello line"}},
		{"wrong version", []string{"-mode=wrong-version"}, nil, []string{"speaks version 2 of the protocol; this daemon speaks version 1"}},
		{"no hello", []string{"-mode=no-hello"}, func(c *ExecConfig) { c.StartTimeout = 200 * time.Millisecond }, []string{"did not send its hello within 200ms"}},
		{"mismatched id", []string{"-mode=mismatch"}, nil, []string{"the answer's id is 109, want 9"}},
		{"huge line", []string{"-mode=huge"}, nil, []string{"an answer line is longer than 1048576 bytes"}},
		{"non-finite", []string{"-mode=nonfinite"}, nil, []string{"1e999 is not a finite number"}},
		{"error answer", []string{"-mode=error"}, nil, []string{`it answered with an error: "ratings table is locked"`}},
		{"unknown field", []string{"-mode=unknown-field"}, nil, []string{`unknown field "rewrd"`}},
		{"exits on the request", []string{"-mode=stderr-exit"}, nil, []string{"exit status 2) before its answer, again after a restart", "panic: KeyError: 'movie_9'"}},
		{"exits at start", []string{"-mode=exit-at-start"}, nil, []string{"exit status 3) before its hello; restarted 3 times within 1m0s already (max_restarts = 3), giving up", "fatal: cannot open the ratings database"}},
		{"exits at start, no restarts", []string{"-mode=exit-at-start"}, func(c *ExecConfig) { c.MaxRestarts = 0 }, []string{"restarted 0 times", "fatal: cannot open the ratings database"}},
		{"good answers first", []string{"-mode=garbage", "-after=3"}, nil, []string{`answered "this is not json"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testExecConfig(envprog(tt.args...)...)
			if tt.config != nil {
				tt.config(&cfg)
			}
			e := newTestExec(t, cfg)
			var err error
			for i := int64(0); i < 10 && err == nil; i++ {
				_, err = e.Answer(context.Background(), pull(uint64(i+9), i+9, 1))
			}
			if err == nil {
				t.Fatal("no error after 10 queries")
			}
			var ee *Error
			if !errors.As(err, &ee) {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			msg := err.Error()
			wantStep := "pull at step 9: "
			if tt.name == "good answers first" {
				wantStep = "pull at step 12: "
			}
			for _, w := range append([]string{testLabel + ": " + wantStep, `program "` + prepared.envprog + `"`, "its stderr ended with", "envprog starting"}, tt.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

func TestExecCannotStart(t *testing.T) {
	e := newTestExec(t, testExecConfig(filepath.Join(t.TempDir(), "missing")))
	err := e.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), testLabel+": starting program") || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("got %v", err)
	}
}

// TestExecRestart: a program that exits after 2 answers is restarted and
// the session goes on, the request that found it dead asked again.
func TestExecRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "starts")
	var log bytes.Buffer
	cfg := testExecConfig(envprog("-mode=exit", "-after=2", "-state="+state)...)
	cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
	e := newTestExec(t, cfg)
	for i := int64(0); i < 10; i++ {
		o, err := e.Answer(context.Background(), pull(uint64(i+1), 2*i, 1))
		if err != nil {
			t.Fatalf("step %d: %v", 2*i, err)
		}
		if want := 1 + float64(2*i)/1000; len(o.Rewards) != 1 || o.Rewards[0] != want {
			t.Fatalf("step %d: got %v, want [%v]", 2*i, o.Rewards, want)
		}
	}
	if b, _ := os.ReadFile(state); string(b) != "2" {
		t.Errorf("the program started %s times, want 2", b)
	}
	for _, w := range []string{"level=WARN", "restarting an environment program", `env="` + testLabel + `"`, "exit status 1) before its answer", "restart=1", "max_restarts=3", "backoff=10ms", "exiting after 2 answers"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, log.String())
		}
	}
	// What the console's Node page shows: the restart, and the program's
	// last stderr line.
	if n, last := e.Health(); n != 1 || !strings.Contains(last, "exiting after 2 answers") {
		t.Errorf("Health() = %d, %q; want 1 restart and the program's last stderr line", n, last)
	}
}

// TestExecRestartsExhausted: a program that exits after every answer is
// restarted MaxRestarts times within the window, then the query fails
// with its stderr tail.
func TestExecRestartsExhausted(t *testing.T) {
	e := newTestExec(t, testExecConfig(envprog("-mode=exit", "-after=1")...))
	var err error
	n := 0
	for ; n < 10 && err == nil; n++ {
		_, err = e.Answer(context.Background(), pull(uint64(n+1), int64(n), 0))
	}
	// One answer from the first process and from each of 3 restarts.
	if n != 5 {
		t.Errorf("failed at query %d, want 5", n)
	}
	for _, w := range []string{testLabel + ": pull at step 4: ", "exit status 1) before its answer; restarted 3 times within 1m0s already", "exiting after 1 answers"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
}

func TestExecShell(t *testing.T) {
	script := `read hello
echo '{"hello":"bandit-node/environment","version":1}'
while read line; do
  id=${line#*\"id\":}; id=${id%%,*}
  echo "{\"id\":$id,\"reward\":0.5}"
done`
	e := newTestExec(t, testExecConfig("/bin/sh", "-c", script))
	for i := int64(0); i < 3; i++ {
		o, err := e.Answer(context.Background(), pull(uint64(i+1), i, 2))
		if err != nil || !reflect.DeepEqual(o.Rewards, []float64{0.5}) {
			t.Fatalf("step %d: %v, %v", i, o, err)
		}
	}
}

func TestExecShellStderr(t *testing.T) {
	e := newTestExec(t, testExecConfig("/bin/sh", "-c", `echo "line 1" >&2; echo "no database at /var/db/x" >&2; exit 7`))
	err := e.Start(context.Background())
	for _, w := range []string{testLabel + ": ", "exit status 7) before its hello", `line 1\nno database at /var/db/x"`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
}

func TestExecContext(t *testing.T) {
	e := newTestExec(t, testExecConfig(envprog("-mode=late", "-delay=10s")...))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Answer(ctx, pull(1, 0, 0))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Answer returned after %v", d)
	}
}

// TestExecCloseDuringAnswer: Close interrupts an Answer in flight, which
// fails with ErrClosed, and waits for it.
func TestExecCloseDuringAnswer(t *testing.T) {
	cfg := testExecConfig(envprog("-mode=late", "-delay=30s")...)
	cfg.RequestTimeout = time.Minute
	e := newTestExec(t, cfg)
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := e.Answer(context.Background(), pull(1, 0, 0))
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("got %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Answer did not return after Close")
	}
	if _, err := e.Answer(context.Background(), pull(2, 1, 0)); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: got %v, want ErrClosed", err)
	}
}

// TestExecCloseKills: a program that ignores SIGTERM is killed after the
// grace period.
func TestExecCloseKills(t *testing.T) {
	cfg := testExecConfig(envprog("-mode=ignore-term")...)
	cfg.StopGrace = 200 * time.Millisecond
	e := newTestExec(t, cfg)
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := e.proc
	start := time.Now()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	select {
	case <-p.done:
	default:
		t.Fatal("the process was not reaped")
	}
	if !strings.Contains(p.ended, "killed") {
		t.Errorf("the process %s, want killed", p.ended)
	}
}

// TestExecNoLeak: after Close, no goroutine of the environment is left.
func TestExecNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, args := range [][]string{{}, {"-mode=garbage"}, {"-mode=exit", "-after=1"}, {"-mode=late", "-delay=10s"}} {
		cfg := testExecConfig(envprog(args...)...)
		cfg.RequestTimeout = 200 * time.Millisecond
		e, err := NewExec(cfg, testSession())
		if err != nil {
			t.Fatal(err)
		}
		for i := int64(0); i < 3; i++ {
			e.Answer(context.Background(), pull(uint64(i+1), i, 0))
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var after int
	for i := 0; i < 50; i++ {
		if after = runtime.NumGoroutine(); after <= before {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	t.Errorf("%d goroutines before, %d after Close:\n%s", before, after, buf[:runtime.Stack(buf, true)])
}

func TestExecConfigValidate(t *testing.T) {
	tests := []struct {
		mod  func(*ExecConfig)
		want string
	}{
		{func(c *ExecConfig) { c.Command = nil }, "command: want the program"},
		{func(c *ExecConfig) { c.Env = []string{"NOEQUALS"} }, `env: "NOEQUALS" is not NAME=value`},
		{func(c *ExecConfig) { c.RequestTimeout = 0 }, "request_timeout: want a positive duration"},
		{func(c *ExecConfig) { c.StartTimeout = -1 }, "start_timeout: want a positive duration"},
		{func(c *ExecConfig) { c.MaxRestarts = -1 }, "max_restarts: want a whole number ≥ 0"},
		{func(c *ExecConfig) { c.BackoffMax = time.Millisecond }, "backoff_max (1ms) is below backoff_min (100ms)"},
	}
	for _, tt := range tests {
		c := DefaultExecConfig()
		c.Command = []string{"prog"}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		tt.mod(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
}

func TestExecEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	cfg := testExecConfig("/bin/sh", "-c", `read hello; echo '{"hello":"bandit-node/environment","version":1}'; read line; echo "{\"id\":1,\"x\":[$VALUE,$(cat here)]}"`)
	cfg.Env = []string{"VALUE=42"}
	cfg.Dir = dir
	if err := os.WriteFile(filepath.Join(dir, "here"), []byte("7"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newTestExec(t, cfg)
	o, err := e.Answer(context.Background(), protocol.Query{ID: 1, Kind: protocol.QueryContext})
	if err != nil || !reflect.DeepEqual(o.X, []float64{42, 7}) {
		t.Fatalf("got %v, %v", o, err)
	}
}

// BenchmarkExecPull measures one exec round trip: a single-arm pull
// answered by envprog, as a SAMBA data owner asks once per step; with a
// context that cannot end, and with one that can (as the daemon's).
func BenchmarkExecPull(b *testing.B) {
	cancelable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, bb := range []struct {
		name string
		ctx  context.Context
	}{{"background", context.Background()}, {"cancelable", cancelable}} {
		b.Run(bb.name, func(b *testing.B) { benchmarkExecPull(b, bb.ctx) })
	}
}

func benchmarkExecPull(b *testing.B, ctx context.Context) {
	e := newTestExec(b, testExecConfig(envprog()...))
	if err := e.Start(ctx); err != nil {
		b.Fatal(err)
	}
	q := pull(0, 0, 4)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.ID++
		q.Step = int64(i)
		if _, err := e.Answer(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}

const shellHello = `read hello; echo '{"hello":"bandit-node/environment","version":1}'; `

// TestExecStuckPipes: a program that stops reading its stdin, and one
// that exits while something it started holds its stdout, fail the query
// within the request timeout, each with its own reason.
func TestExecStuckPipes(t *testing.T) {
	arms := make([]int, 100000) // a request larger than a pipe's buffer
	tests := []struct {
		name, script string
		q            protocol.Query
		want         string
	}{
		{"not reading", shellHello + `sleep 100`, pull(1, 0, arms...), "did not read its request within 3s"},
		{"child holds stdout", shellHello + `sleep 100 & exit 0`, pull(1, 0, 0), "ended (exit status 0) without its answer, and something it started kept its stdout open for 3s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testExecConfig("/bin/sh", "-c", tt.script)
			cfg.RequestTimeout = 3 * time.Second
			e := newTestExec(t, cfg)
			start := time.Now()
			_, err := e.Answer(context.Background(), tt.q)
			if err == nil || !strings.Contains(err.Error(), testLabel+": pull at step 0: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("failed after %v", d)
			}
		})
	}
}

// TestExecConcurrentAnswers: Answer is serialized, so concurrent callers
// each get their own answer.
func TestExecConcurrentAnswers(t *testing.T) {
	e := newTestExec(t, testExecConfig(envprog()...))
	errc := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 20; i++ {
				id := uint64(g*100 + i + 1)
				o, err := e.Answer(context.Background(), pull(id, int64(id), g, g+1))
				if err == nil && (o.ID != id || len(o.Rewards) != 2 || o.Rewards[0] != float64(g)+float64(id)/1000) {
					err = errors.New("mixed up answers")
				}
				if err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}
}

// TestExecCloseDuringBackoff: Close ends the wait before a restart.
func TestExecCloseDuringBackoff(t *testing.T) {
	cfg := testExecConfig(envprog("-mode=exit-at-start")...)
	cfg.BackoffMin, cfg.BackoffMax = time.Minute, time.Minute
	e := newTestExec(t, cfg)
	errc := make(chan error, 1)
	go func() { errc <- e.Start(context.Background()) }()
	time.Sleep(200 * time.Millisecond)
	e.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("got %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after Close")
	}
}
