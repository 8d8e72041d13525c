package environment

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// The defaults of ExecConfig (DefaultExecConfig).
const (
	// DefaultStartTimeout is StartTimeout's default.
	DefaultStartTimeout = 10 * time.Second
	// DefaultRequestTimeout is RequestTimeout's default.
	DefaultRequestTimeout = 5 * time.Second
	// DefaultMaxRestarts is MaxRestarts' default.
	DefaultMaxRestarts = 3
	// DefaultRestartWindow is RestartWindow's default.
	DefaultRestartWindow = time.Minute
	// DefaultBackoffMin is BackoffMin's default.
	DefaultBackoffMin = 100 * time.Millisecond
	// DefaultBackoffMax is BackoffMax's default.
	DefaultBackoffMax = 5 * time.Second
	// DefaultStopGrace is StopGrace's default.
	DefaultStopGrace = 2 * time.Second
)

// killWait bounds the wait for a process group after SIGKILL, and
// waitDelay the wait for its stderr once it has exited (a grandchild may
// hold it open).
const (
	killWait  = 5 * time.Second
	waitDelay = time.Second
)

// ExecConfig configures an exec environment: the organization's own
// program, started by the daemon, answering one JSON line per request
// (see the package documentation for the protocol).
type ExecConfig struct {
	// Label names the environment in every error, such as
	// "samba data_owner[3] of acme". NewExec uses the session's label
	// when it is empty.
	Label string
	// Command is the program and its arguments; no shell is involved.
	Command []string
	// Dir is the program's working directory; "" is the daemon's.
	Dir string
	// Env holds NAME=value pairs added to the daemon's environment for
	// the program.
	Env []string
	// StartTimeout bounds the program's start: from starting it to its
	// hello line.
	StartTimeout time.Duration
	// RequestTimeout bounds each request: from writing it to reading its
	// answer.
	RequestTimeout time.Duration
	// MaxRestarts is how many times the program may be restarted within
	// RestartWindow after it exited or closed its pipes; one more is an
	// error. 0 never restarts it.
	MaxRestarts int
	// RestartWindow is the window in which restarts are counted.
	RestartWindow time.Duration
	// BackoffMin is the wait before the first restart within the window;
	// it doubles with each further one, up to BackoffMax.
	BackoffMin, BackoffMax time.Duration
	// StopGrace is how long Close waits after SIGTERM before SIGKILL.
	StopGrace time.Duration
	// Logger receives a warning at each restart (how the program ended,
	// the last lines of its stderr); nil logs nothing.
	Logger *slog.Logger
}

// DefaultExecConfig returns an ExecConfig with the default timeouts,
// restarts and backoff, and no command.
func DefaultExecConfig() ExecConfig {
	return ExecConfig{
		StartTimeout:   DefaultStartTimeout,
		RequestTimeout: DefaultRequestTimeout,
		MaxRestarts:    DefaultMaxRestarts,
		RestartWindow:  DefaultRestartWindow,
		BackoffMin:     DefaultBackoffMin,
		BackoffMax:     DefaultBackoffMax,
		StopGrace:      DefaultStopGrace,
	}
}

// Validate says what is wrong with c, if anything.
func (c ExecConfig) Validate() error {
	if len(c.Command) == 0 || c.Command[0] == "" {
		return errors.New("command: want the program and its arguments, such as [\"python3\", \"owner.py\"]")
	}
	for _, kv := range c.Env {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return fmt.Errorf("env: %q is not NAME=value", kv)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"start_timeout", c.StartTimeout}, {"request_timeout", c.RequestTimeout}, {"restart_window", c.RestartWindow}, {"backoff_min", c.BackoffMin}, {"backoff_max", c.BackoffMax}, {"stop_grace", c.StopGrace}} {
		if d.v <= 0 {
			return fmt.Errorf("%s: want a positive duration, got %v", d.name, d.v)
		}
	}
	if c.MaxRestarts < 0 {
		return fmt.Errorf("max_restarts: want a whole number ≥ 0, got %d", c.MaxRestarts)
	}
	if c.BackoffMax < c.BackoffMin {
		return fmt.Errorf("backoff_max (%v) is below backoff_min (%v)", c.BackoffMax, c.BackoffMin)
	}
	return nil
}

// Exec is an exec environment: one long-lived program per Exec, started
// at the first query (or by Start), restarted with backoff when it exits.
// Answer writes the request and reads the answer on its caller's
// goroutine. Answer and Start are serialized; Close may be called from
// any goroutine at any time.
type Exec struct {
	cfg    ExecConfig
	hello  []byte // the daemon's hello line
	stderr tail
	// restarted counts the program's restarts since the environment
	// was built; lastErr is the last stderr line it wrote before its last
	// restart or failure (Health).
	restarted atomic.Int64
	lastErr   atomic.Pointer[string]
	closing   chan struct{} // closed by Close

	reqMu    sync.Mutex // serializes Answer and Start; guards the fields up to mu
	req      []byte     // the request line being sent
	ans      answer     // the answer being decoded
	long     []byte     // a line longer than the reader's buffer
	restarts []time.Time
	started  bool   // a process was started before: the next start is a restart
	lastExit string // how the last process ended, for errors

	mu     sync.Mutex // guards proc and closed; never held while waiting
	proc   *process
	closed bool
}

// process is one run of the program.
type process struct {
	cmd      *exec.Cmd
	stdin    *os.File // the daemon's end of the program's stdin
	stdout   *os.File // the daemon's end of the program's stdout
	r        *bufio.Reader
	done     chan struct{} // closed once the process is reaped
	stopOnce sync.Once
	stopErr  error
	ended    string // how it ended, set before done is closed
}

// NewExec returns an exec environment for the session's role s; it starts
// nothing yet (see Start).
func NewExec(cfg ExecConfig, s Session) (*Exec, error) {
	if cfg.Label == "" {
		cfg.Label = s.Label()
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Label, err)
	}
	cfg.Command = append([]string(nil), cfg.Command...)
	cfg.Env = append([]string(nil), cfg.Env...)
	hello := appendHello(nil, s)
	return &Exec{cfg: cfg, hello: append(hello, '\n'), closing: make(chan struct{})}, nil
}

// Label returns the environment's label.
func (e *Exec) Label() string { return e.cfg.Label }

// Start starts the program and exchanges the hello lines, unless it runs
// already. A daemon calls it when the role starts, so that a program that
// cannot start fails the session before its first step; Answer starts the
// program itself otherwise.
func (e *Exec) Start(ctx context.Context) error {
	e.reqMu.Lock()
	defer e.reqMu.Unlock()
	_, err := e.ensure(ctx, nil)
	return err
}

// Answer sends q to the program and returns its answer. A program that
// exited or closed its pipes is restarted (within MaxRestarts) and asked
// again, once; any other failure — a timeout, a malformed or mismatched
// answer, an error answer — stops the program and is returned as an
// *Error.
func (e *Exec) Answer(ctx context.Context, q protocol.Query) (protocol.Outcome, error) {
	if err := checkQuery(q); err != nil {
		return protocol.Outcome{}, queryError(e.cfg.Label, &q, "", fmt.Errorf("cannot ask: %w", err))
	}
	e.reqMu.Lock()
	defer e.reqMu.Unlock()
	e.req = append(appendRequest(e.req[:0], q), '\n')
	retried := false
	for {
		p, err := e.ensure(ctx, &q)
		if err != nil {
			return protocol.Outcome{}, err
		}
		line, err := e.roundTrip(ctx, p, e.req, e.cfg.RequestTimeout, "answer")
		if err == nil {
			if err = decodeAnswer(line, &e.ans); err == nil {
				var o protocol.Outcome
				if o, err = outcome(q, &e.ans); err == nil {
					return o, nil
				}
			}
			if _, ok := err.(*answeredError); !ok {
				err = fmt.Errorf("%s answered %s: %w", e.program(), excerpt(line), err)
			} else {
				err = fmt.Errorf("%s: %w", e.program(), err)
			}
			e.drop(p)
			return protocol.Outcome{}, e.fail(&q, err)
		}
		var died *diedError
		if errors.As(err, &died) && !retried && !e.isClosed() {
			// Restarted by ensure, with backoff, and asked once more.
			e.drop(p)
			retried = true
			continue
		}
		if died != nil && retried {
			err = fmt.Errorf("%w, again after a restart", err)
		}
		e.drop(p)
		return protocol.Outcome{}, e.fail(&q, err)
	}
}

// Close stops the program: EOF on its stdin and SIGTERM to its process
// group, SIGKILL after StopGrace, and reaps it. It waits for an Answer in
// flight to return (it fails with ErrClosed). Close is idempotent.
func (e *Exec) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	close(e.closing)
	p := e.proc
	e.mu.Unlock()
	var err error
	if p != nil {
		err = p.stop(e.cfg.StopGrace)
	}
	// An Answer in flight holds reqMu: taking it waits for it to return.
	e.reqMu.Lock()
	//lint:ignore SA2001 the empty critical section is that wait.
	e.reqMu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: stopping %s: %w", e.cfg.Label, e.program(), err)
	}
	return nil
}

func (e *Exec) program() string { return "program " + strconv.Quote(e.cfg.Command[0]) }

func (e *Exec) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

func (e *Exec) fail(q *protocol.Query, err error) *Error {
	e.noteError()
	return queryError(e.cfg.Label, q, e.stderr.last(), err)
}

// drop stops p and forgets it, so that the next query starts a new
// process.
func (e *Exec) drop(p *process) {
	p.stop(e.cfg.StopGrace)
	e.mu.Lock()
	if e.proc == p {
		e.proc = nil
	}
	e.mu.Unlock()
}

// ensure returns the running process, or starts one (a restart, with
// backoff, if one ran before) and exchanges the hellos. Called with reqMu
// held.
func (e *Exec) ensure(ctx context.Context, q *protocol.Query) (*process, error) {
	for {
		e.mu.Lock()
		closed, p := e.closed, e.proc
		e.mu.Unlock()
		if closed {
			return nil, e.fail(q, ErrClosed)
		}
		if p != nil {
			return p, nil
		}
		if e.started {
			if err := e.backoff(ctx); err != nil {
				return nil, e.fail(q, err)
			}
		}
		e.started = true
		p, err := e.start()
		if err != nil {
			return nil, e.fail(q, err)
		}
		line, err := e.roundTrip(ctx, p, e.hello, e.cfg.StartTimeout, "hello")
		if err == nil {
			if err = decodeAnswer(line, &e.ans); err == nil {
				err = checkHello(&e.ans)
			}
			if err == nil {
				return p, nil
			}
			err = fmt.Errorf("%s answered the hello with %s: %w", e.program(), excerpt(line), err)
		}
		e.drop(p)
		if _, ok := err.(*diedError); ok && !e.isClosed() {
			continue // restart it
		}
		return nil, e.fail(q, err)
	}
}

// backoff counts a restart and waits before it: BackoffMin, doubled for
// each restart already in the window, at most BackoffMax. One restart too
// many is an error.
func (e *Exec) backoff(ctx context.Context) error {
	now := time.Now()
	kept := e.restarts[:0]
	for _, t := range e.restarts {
		if now.Sub(t) < e.cfg.RestartWindow {
			kept = append(kept, t)
		}
	}
	e.restarts = kept
	if len(e.restarts) >= e.cfg.MaxRestarts {
		return fmt.Errorf("%s; restarted %d times within %v already (max_restarts = %d), giving up",
			e.lastExit, len(e.restarts), e.cfg.RestartWindow, e.cfg.MaxRestarts)
	}
	d := e.cfg.BackoffMin
	for range len(e.restarts) {
		if d *= 2; d >= e.cfg.BackoffMax {
			d = e.cfg.BackoffMax
			break
		}
	}
	e.restarts = append(e.restarts, now)
	e.restarted.Add(1)
	e.noteError()
	if l := e.cfg.Logger; l != nil {
		l.Warn("restarting an environment program", "env", e.cfg.Label, "reason", e.lastExit,
			"restart", len(e.restarts), "max_restarts", e.cfg.MaxRestarts, "backoff", d, "stderr", e.stderr.last())
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-e.closing:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("waiting to restart %s: %w", e.program(), ctx.Err())
	}
}

// start starts a process and registers it as e.proc, so that Close stops
// it even during its hello.
func (e *Exec) start() (*process, error) {
	c := e.cfg
	cmd := exec.Command(c.Command[0], c.Command[1:]...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", e.program(), err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("starting %s: %w", e.program(), err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, &e.stderr
	cmd.WaitDelay = waitDelay
	newProcessGroup(cmd)
	err = cmd.Start()
	inR.Close() // the program's ends
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", e.program(), err)
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, r: bufio.NewReaderSize(outR, 64<<10), done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		switch {
		case err == nil:
			p.ended = "exited with status 0"
		case cmd.ProcessState != nil:
			p.ended = "ended (" + cmd.ProcessState.String() + ")"
		default:
			p.ended = "ended (" + err.Error() + ")"
		}
		close(p.done)
	}()
	e.mu.Lock()
	closed := e.closed
	if !closed {
		e.proc = p
	}
	e.mu.Unlock()
	if closed {
		p.stop(e.cfg.StopGrace)
		return nil, ErrClosed
	}
	return p, nil
}

// stop ends p: EOF on its stdin, SIGTERM to its group, SIGKILL after
// grace, and waits until it is reaped (at most killWait after SIGKILL).
// Concurrent and repeated calls wait for the first.
func (p *process) stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		select {
		case <-p.done:
			killGroup(p.cmd) // what it left behind
		default:
			if err := terminateGroup(p.cmd); err != nil {
				killGroup(p.cmd)
			}
			t := time.NewTimer(grace)
			select {
			case <-p.done:
				killGroup(p.cmd)
			case <-t.C:
				killGroup(p.cmd)
				t.Reset(killWait)
				select {
				case <-p.done:
				case <-t.C:
					p.stopErr = fmt.Errorf("process %d did not end %v after SIGKILL", p.cmd.Process.Pid, killWait)
				}
			}
			t.Stop()
		}
		p.stdout.Close()
	})
	return p.stopErr
}

// diedError says the program exited or closed its pipes: a reason to
// restart it.
type diedError struct{ how string }

func (e *diedError) Error() string { return e.how }

// aLongTimeAgo is a deadline in the past: it interrupts a read or write.
var aLongTimeAgo = time.Unix(1, 0)

// roundTrip writes line to p and reads its answer line, within timeout
// and ctx. The returned line is valid until the next call. what names
// the answer awaited, for errors.
func (e *Exec) roundTrip(ctx context.Context, p *process, line []byte, timeout time.Duration, what string) ([]byte, error) {
	deadline := time.Now().Add(timeout)
	p.stdin.SetWriteDeadline(deadline)
	p.stdout.SetReadDeadline(deadline)
	var stop func() bool
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		stop = context.AfterFunc(ctx, func() {
			p.stdin.SetWriteDeadline(aLongTimeAgo)
			p.stdout.SetReadDeadline(aLongTimeAgo)
		})
	}
	_, err := p.stdin.Write(line)
	writing := err != nil
	var ans []byte
	if err == nil {
		ans, err = e.readLine(p)
	}
	if stop != nil && !stop() {
		// ctx ended meanwhile: the deadlines may have been cut short; the
		// process is dropped by the caller.
		return nil, fmt.Errorf("%s: %w", e.program(), ctx.Err())
	}
	if err == nil {
		return ans, nil
	}
	return nil, e.ioError(p, err, timeout, what, writing)
}

// errLineTooLong is a read of an answer line above MaxAnswerBytes.
var errLineTooLong = fmt.Errorf("an answer line is longer than %d bytes", MaxAnswerBytes)

// readLine reads one line of p's stdout, newline included.
func (e *Exec) readLine(p *process) ([]byte, error) {
	line, err := p.r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	e.long = append(e.long[:0], line...)
	for {
		line, err = p.r.ReadSlice('\n')
		if len(e.long)+len(line) > MaxAnswerBytes+1 {
			return nil, errLineTooLong
		}
		e.long = append(e.long, line...)
		if err != bufio.ErrBufferFull {
			return e.long, err
		}
	}
}

// ioError explains a failed write (writing) or read of p.
func (e *Exec) ioError(p *process, err error, timeout time.Duration, what string, writing bool) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		select {
		case <-p.done:
			// It exited, but something it started holds its stdout open.
			return fmt.Errorf("%s %s without its %s, and something it started kept its stdout open for %v", e.program(), p.ended, what, timeout)
		default:
		}
		if writing {
			return fmt.Errorf("%s did not read its request within %v", e.program(), timeout)
		}
		return fmt.Errorf("%s did not send its %s within %v", e.program(), what, timeout)
	case errors.Is(err, errLineTooLong):
		return fmt.Errorf("%s: %w", e.program(), err)
	case e.isClosed():
		return ErrClosed
	}
	// EOF, a broken pipe, a closed file: it exited or is exiting.
	p.stop(e.cfg.StopGrace)
	how := p.how()
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.EPIPE) {
		how += " (" + err.Error() + ")"
	}
	e.lastExit = fmt.Sprintf("%s %s before its %s", e.program(), how, what)
	return &diedError{e.lastExit}
}

// how says how p ended, once stopped.
func (p *process) how() string {
	select {
	case <-p.done:
		return p.ended
	default:
		return "did not end"
	}
}

// Immediate implements protocol.Environment: a program answers after a
// round trip, on the environment's own goroutine.
func (e *Exec) Immediate() bool { return false }

// Health says how the program fared for its operator: how many times it
// was restarted (after it exited or closed its pipes) and the last line
// it wrote to its stderr before its last restart or failure ("" if none).
// Both are this organization's own and never sent to a peer. Safe to call
// while a query runs.
func (e *Exec) Health() (restarts int64, lastError string) {
	if p := e.lastErr.Load(); p != nil {
		lastError = *p
	}
	return e.restarted.Load(), lastError
}

// noteError keeps the last line the program wrote to its stderr, for
// Health.
func (e *Exec) noteError() {
	s := strings.TrimRight(e.stderr.String(), "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s = strings.TrimSpace(s); s != "" {
		e.lastErr.Store(&s)
	}
}
