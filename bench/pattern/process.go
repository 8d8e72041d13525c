package pattern

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
)

// The parent and a child process talk in JSON lines over the child's stdin
// and stdout: the parent sends a childHello, the child answers with its
// childAddr, the parent sends the childRun, and the child answers with its
// childDone when its part of the run is over.
type childHello struct {
	Role      string `json:"role"`
	Index     int    `json:"index"`
	Transport string `json:"transport"`
	Listen    string `json:"listen,omitempty"` // a multiaddr; "" is loopback, a free port
}

type childAddr struct {
	ID    string   `json:"id"`
	Addrs []string `json:"addrs"`
}

type childRun struct {
	Config Config   `json:"config"`
	Peers  []string `json:"peers"` // controller, comp, owners: /…/p2p/ID multiaddrs
}

type childDone struct {
	Result     Result  `json:"result"`
	CPUSeconds float64 `json:"cpu_seconds"` // the process's, user and system
	UserCPU    float64 `json:"user_cpu_seconds"`
	StepsCPU   float64 `json:"steps_cpu_seconds"` // during the timed steps
	Switches   int64   `json:"context_switches"`
	Error      string  `json:"error,omitempty"`
}

// ProcessOptions tunes RunProcesses.
type ProcessOptions struct {
	// Command is the argv that starts a child process serving one party
	// with ServeChild on its stdin and stdout.
	Command []string
	// Procs, if positive, is the GOMAXPROCS of every party's process.
	Procs int
	// OwnerProcs, if positive, is the GOMAXPROCS of the data owners'
	// processes, in place of Procs (the measurement used 1 for
	// them and Go's default for the controller and comp).
	OwnerProcs int
	// Stderr receives the children's standard error; nil discards it.
	Stderr io.Writer
	// Listen, if set, is the multiaddr every party process listens on, in
	// place of a free loopback port: with each party in a network namespace
	// of its own (testnet/wan.sh), the same address serves them all.
	Listen string
	// Routes replace the addresses the parties report: Routes[Route{From,
	// To}] is the multiaddr (without /p2p) at which party From reaches party
	// To, e.g. through a link emulator's proxy. Parties are numbered in the
	// order they start: 0 the controller, 1 comp, 2 … K+1 the data owners;
	// each process gets its number in the environment variable PartyEnv.
	Routes map[Route]string
}

// Route is an ordered pair of parties (see ProcessOptions.Routes).
type Route struct{ From, To int }

// PartyEnv is the environment variable that gives each party process its
// number (0 the controller, 1 comp, 2 … the data owners), for a
// --party-wrapper that places it, say in a network namespace.
const PartyEnv = "BANDIT_PATTERN_PARTY"

// RunProcesses runs the pattern with every party in its own process and
// returns the controller's measurement.
func RunProcesses(ctx context.Context, cfg Config, opts ProcessOptions) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if len(opts.Command) == 0 {
		return Result{}, errors.New("pattern: no command to start the party processes")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type child struct {
		cmd *exec.Cmd
		in  io.WriteCloser
		out *bufio.Scanner
	}
	roles := append([]string{RoleController, RoleComp}, slices.Repeat([]string{RoleOwner}, cfg.K)...)
	children := make([]*child, 0, len(roles))
	defer func() {
		for _, c := range children {
			c.in.Close()
			c.cmd.Process.Kill()
			c.cmd.Wait()
		}
	}()
	for i, role := range roles {
		cmd := exec.CommandContext(ctx, opts.Command[0], opts.Command[1:]...)
		cmd.Env = append(os.Environ(), PartyEnv+"="+strconv.Itoa(i))
		procs := opts.Procs
		if role == RoleOwner && opts.OwnerProcs > 0 {
			procs = opts.OwnerProcs
		}
		if procs > 0 {
			cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(procs))
		}
		cmd.Stderr = opts.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return Result{}, fmt.Errorf("pattern: %w", err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return Result{}, fmt.Errorf("pattern: %w", err)
		}
		if err := cmd.Start(); err != nil {
			return Result{}, fmt.Errorf("pattern: starting the %s process (%s): %w", role, strings.Join(opts.Command, " "), err)
		}
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		c := &child{cmd: cmd, in: in, out: sc}
		children = append(children, c)
		if err := json.NewEncoder(in).Encode(childHello{Role: role, Index: max(i-2, 0), Transport: cfg.Transport, Listen: opts.Listen}); err != nil {
			return Result{}, fmt.Errorf("pattern: talking to the %s process: %w", role, err)
		}
	}
	readLine := func(c *child, v any, what string) error {
		if !c.out.Scan() {
			err := c.out.Err()
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("pattern: reading %s from a party process: %w", what, err)
		}
		if err := json.Unmarshal(c.out.Bytes(), v); err != nil {
			return fmt.Errorf("pattern: reading %s from a party process: %w", what, err)
		}
		return nil
	}
	for r := range opts.Routes {
		if r.From < 0 || r.To < 0 || r.From >= len(roles) || r.To >= len(roles) {
			return Result{}, fmt.Errorf("pattern: a route from party %d to party %d, but the parties are 0 … %d", r.From, r.To, len(roles)-1)
		}
	}
	addrs := make([]childAddr, len(children))
	for i, c := range children {
		if err := readLine(c, &addrs[i], "its address"); err != nil {
			return Result{}, err
		}
		if len(addrs[i].Addrs) == 0 {
			return Result{}, errors.New("pattern: a party process listens on no address")
		}
	}
	for i, c := range children {
		run := childRun{Config: cfg}
		for j, a := range addrs {
			addr := a.Addrs[0]
			if r, ok := opts.Routes[Route{i, j}]; ok {
				addr = r
			}
			run.Peers = append(run.Peers, addr+"/p2p/"+a.ID)
		}
		if err := json.NewEncoder(c.in).Encode(run); err != nil {
			return Result{}, fmt.Errorf("pattern: talking to a party process: %w", err)
		}
	}
	// Every child's outcome is read at once: the first failure stops the
	// others (exec.CommandContext kills them), rather than leaving the
	// controller waiting for a data owner that is gone.
	type outcome struct {
		i   int
		d   childDone
		err error
	}
	outcomes := make(chan outcome, len(children))
	for i, c := range children {
		go func() {
			var d childDone
			err := readLine(c, &d, "its result")
			if err == nil && d.Error != "" {
				err = errors.New(d.Error)
			}
			outcomes <- outcome{i, d, err}
		}()
	}
	var res Result
	var errs []error
	cpu := map[string]float64{}
	switches := map[string]int64{}
	user := map[string]float64{}
	steps := map[string]float64{}
	for range children {
		o := <-outcomes
		if o.err != nil {
			if len(errs) == 0 || !errors.Is(ctx.Err(), context.Canceled) {
				errs = append(errs, fmt.Errorf("%s: %w", roles[o.i], o.err))
			}
			cancel()
			continue
		}
		if o.i == 0 {
			res = o.d.Result
		}
		cpu[roles[o.i]] += o.d.CPUSeconds
		switches[roles[o.i]] += o.d.Switches
		user[roles[o.i]] += o.d.UserCPU
		steps[roles[o.i]] += o.d.StepsCPU
	}
	if err := errors.Join(errs...); err != nil {
		return Result{}, err
	}
	if usageMeasured {
		res.CPUSeconds, res.UserCPUSeconds, res.StepsCPUSeconds, res.ContextSwitches = cpu, user, steps, switches
	}
	return res, nil
}

// ServeChild serves one party of RunProcesses: it reads its role from r,
// starts the party's host, writes its address to w, reads the run, plays it
// and writes the outcome.
func ServeChild(ctx context.Context, r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(r)
	enc := json.NewEncoder(w)
	var hello childHello
	if err := dec.Decode(&hello); err != nil {
		return fmt.Errorf("pattern: reading the role: %w", err)
	}
	key, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		return fmt.Errorf("pattern: generating a key: %w", err)
	}
	p, err := newParty(hello.Role, hello.Index, key, hello.Transport, hello.Listen)
	if err != nil {
		return err
	}
	defer p.Close()
	info := p.Info()
	a := childAddr{ID: info.ID.String()}
	for _, m := range info.Addrs {
		a.Addrs = append(a.Addrs, m.String())
	}
	if err := enc.Encode(a); err != nil {
		return fmt.Errorf("pattern: writing the address: %w", err)
	}
	var run childRun
	if err := dec.Decode(&run); err != nil {
		return fmt.Errorf("pattern: reading the run: %w", err)
	}
	infos := make([]peer.AddrInfo, 0, len(run.Peers))
	addrs, err := parseAddrs(run.Peers)
	if err != nil {
		return err
	}
	for _, m := range addrs {
		ai, err := peer.AddrInfoFromP2pAddr(m)
		if err != nil {
			return fmt.Errorf("pattern: address %s: %w", m, err)
		}
		infos = append(infos, *ai)
	}
	if len(infos) < 2 {
		return fmt.Errorf("pattern: %d party addresses, want at least 3", len(infos))
	}
	ctx, cancel := context.WithTimeout(ctx, runTimeout(run.Config))
	defer cancel()
	res, err := p.Run(ctx, run.Config, Peers{Controller: infos[0], Comp: infos[1], Owners: infos[2:]})
	d := childDone{Result: res}
	u := processUsage()
	d.CPUSeconds, d.UserCPU, d.Switches = u.cpu, u.user, u.switches
	d.StepsCPU = p.done.cpu - p.warm.cpu
	if err != nil {
		d.Error = err.Error()
	}
	if err := enc.Encode(d); err != nil {
		return fmt.Errorf("pattern: writing the result: %w", err)
	}
	return err
}

// runTimeout bounds a run: a generous 1 ms per data owner and step (the
// pattern takes ≈ 0.1 ms), and two minutes for the connections.
func runTimeout(cfg Config) time.Duration {
	return 2*time.Minute + time.Duration(cfg.K*(cfg.Steps+cfg.Warmup))*time.Millisecond
}

// parseAddrs parses multiaddr strings.
func parseAddrs(ss []string) ([]multiaddr.Multiaddr, error) {
	out := make([]multiaddr.Multiaddr, 0, len(ss))
	for _, s := range ss {
		a, err := multiaddr.NewMultiaddr(s)
		if err != nil {
			return nil, fmt.Errorf("pattern: address %q: %w", s, err)
		}
		out = append(out, a)
	}
	return out, nil
}
