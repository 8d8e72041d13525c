// Package pattern runs the bare message pattern of one SAMBA step over
// libp2p, without cryptography, protobuf or protocol logic: each of K data
// owners sends the controller one frame, the controller sends comp one batch
// and gets one back, and sends each data owner one frame — 2K+2 frames and
// two sequential round trips a step. It is the baseline a SAMBA session on
// real daemons is measured against: `bandit-node bench pattern` runs it with
// every party in one process or in separate processes, and testnet/samba.sh
// prints the ratio.
//
// The pattern is as lean as libp2p allows: TCP (or QUIC), Noise, yamux; one
// long-lived stream per pair of parties carrying both directions; each frame
// (a uvarint length and the payload) written and flushed in one piece; each
// party reads its streams in the order the pattern needs them, with no
// goroutine between the stream and the loop.
package pattern

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/p2p"
	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	quic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
)

// ProtocolID is the stream protocol of the pattern.
const ProtocolID = "/bandit/pattern/1.0.0"

// Roles of the pattern's parties.
const (
	RoleController = "controller"
	RoleComp       = "comp"
	RoleOwner      = "data_owner"
)

// Transports the pattern can run over.
const (
	TransportTCP  = "tcp"
	TransportQUIC = "quic"
)

// Defaults for the zero values of Config, and a sensible warm-up. The frame
// sizes are a SAMBA step's, byte for byte, at steps 128 to 16,383 (whose
// step number takes two bytes) and with a 16-character session ID, so that
// the pattern carries what SAMBA carries:
//
//   - a data owner's score: a role frame's head (session ID, sender and
//     addressee: 44 bytes from a data owner but the first), the body's tag
//     and length (2) and the body, a Sealed{t, l, box} of 45 bytes whose
//     box is the AES-GCM envelope of an 8-byte score (36): 91;
//   - the controller's bit to a data owner: 44 + 2 + a Sealed of 38 bytes
//     (a 29-byte envelope of one byte): 84;
//   - the controller's batch to comp: a head of 47 bytes (the role frame's
//     36 from the controller to comp, the body's tag and length, the
//     Batch's own tag, length, t and l) and a box field of 38 bytes for
//     every data owner;
//   - comp's batch of bits: the same 47 bytes and 31 a data owner.
//
// TestStepBodySizes (protocol/samba) and TestRoleHeadSizes (node) hold
// the parts to these numbers.
const (
	DefaultWarmup        = 200
	DefaultScoreSize     = 91
	DefaultBitSize       = 84
	DefaultBatchHeadSize = 47
	DefaultScoreItemSize = 38
	DefaultBitItemSize   = 31
	DefaultTransport     = TransportTCP
	// maxFrame bounds a frame the pattern reads.
	maxFrame = 16 << 20
)

// Config is one run of the pattern.
type Config struct {
	// K is the number of data owners (≥ 1).
	K int
	// Steps is the number of timed steps (≥ 1).
	Steps int
	// Warmup steps run before the clock starts (DefaultWarmup is a
	// sensible number).
	Warmup int
	// ScoreSize is the size of a data owner's frame; default
	// DefaultScoreSize.
	ScoreSize int
	// BitSize is the size of the controller's frame to a data owner;
	// default DefaultBitSize.
	BitSize int
	// The controller's batch to comp is BatchHeadSize + K * ScoreItemSize
	// bytes, comp's batch back BatchHeadSize + K * BitItemSize; defaults
	// DefaultBatchHeadSize, DefaultScoreItemSize and DefaultBitItemSize.
	BatchHeadSize, ScoreItemSize, BitItemSize int
	// Transport is "tcp" (default) or "quic".
	Transport string
}

// Validate reports a field of c that no run accepts (zero fields take the
// defaults), so that a caller can tell a mistake from a failed run.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults returns c with defaults filled in, or an error naming a bad field.
func (c Config) withDefaults() (Config, error) {
	c.ScoreSize = cmp.Or(c.ScoreSize, DefaultScoreSize)
	c.BitSize = cmp.Or(c.BitSize, DefaultBitSize)
	c.BatchHeadSize = cmp.Or(c.BatchHeadSize, DefaultBatchHeadSize)
	c.ScoreItemSize = cmp.Or(c.ScoreItemSize, DefaultScoreItemSize)
	c.BitItemSize = cmp.Or(c.BitItemSize, DefaultBitItemSize)
	c.Transport = cmp.Or(c.Transport, DefaultTransport)
	switch {
	case c.K < 1:
		return c, fmt.Errorf("pattern: K must be at least 1, got %d", c.K)
	case c.Steps < 1:
		return c, fmt.Errorf("pattern: steps must be at least 1, got %d", c.Steps)
	case c.Warmup < 0:
		return c, fmt.Errorf("pattern: negative warm-up %d", c.Warmup)
	case c.ScoreSize < 1 || c.BitSize < 1 || c.BatchHeadSize < 1 || c.ScoreItemSize < 1 || c.BitItemSize < 1 ||
		c.batchSize(max(c.ScoreItemSize, c.BitItemSize)) > maxFrame:
		return c, fmt.Errorf("pattern: frame sizes must be positive and a batch at most %d bytes (score %d, bit %d, batch head %d, items %d and %d, K %d)",
			maxFrame, c.ScoreSize, c.BitSize, c.BatchHeadSize, c.ScoreItemSize, c.BitItemSize, c.K)
	case c.Transport != TransportTCP && c.Transport != TransportQUIC:
		return c, fmt.Errorf("pattern: transport must be %q or %q, got %q", TransportTCP, TransportQUIC, c.Transport)
	}
	return c, nil
}

// batchSize is the size of a batch of K items of itemSize bytes (at most
// maxFrame+1, so that it cannot overflow).
func (c Config) batchSize(itemSize int) int {
	if c.K > (maxFrame-c.BatchHeadSize)/itemSize {
		return maxFrame + 1
	}
	return c.BatchHeadSize + c.K*itemSize
}

// Result is the controller's measurement.
type Result struct {
	K         int     `json:"k"`
	Steps     int     `json:"steps"`
	Transport string  `json:"transport"`
	Seconds   float64 `json:"seconds"`
	MsPerStep float64 `json:"ms_per_step"`
	// FramesPerStep is 2K+2.
	FramesPerStep int `json:"frames_per_step"`
	// CPUSeconds is, when every party ran in its own process, the CPU time
	// (user and system) of the processes of each role, connection setup
	// and warm-up included.
	CPUSeconds map[string]float64 `json:"cpu_seconds,omitempty"`
	// UserCPUSeconds is the user part of CPUSeconds.
	UserCPUSeconds map[string]float64 `json:"user_cpu_seconds,omitempty"`
	// StepsCPUSeconds is the part of CPUSeconds spent while the role's
	// processes played the timed steps (each from its first timed step to
	// its last): without process start, connections and warm-up, so that
	// it compares with a session's CPU time per step.
	StepsCPUSeconds map[string]float64 `json:"steps_cpu_seconds,omitempty"`
	// ContextSwitches counts, likewise, the context switches of each
	// role's processes, voluntary and not.
	ContextSwitches map[string]int64 `json:"context_switches,omitempty"`
}

// Party is one host of the pattern.
type Party struct {
	role  string
	index int
	h     host.Host
	in    chan network.Stream // inbound pattern streams

	// warm and done are this process's resource usage when the party
	// began its first timed step and when it ended its last one; their
	// difference is what the timed steps cost the process (RunProcesses
	// reports it; in one process it would mix all the parties).
	warm, done usage
}

// NewParty starts a host for role (index for a data owner) listening on
// loopback over transport, with identity key.
func NewParty(role string, index int, key crypto.PrivKey, transport string) (*Party, error) {
	return newParty(role, index, key, transport, "")
}

// newParty is NewParty listening on listen instead, if it is not empty.
func newParty(role string, index int, key crypto.PrivKey, transport, listen string) (*Party, error) {
	var loopback string
	var tpt libp2p.Option
	switch transport {
	case TransportTCP, "":
		loopback, tpt = "/ip4/127.0.0.1/tcp/0", libp2p.Transport(tcp.NewTCPTransport, tcp.DisableReuseport())
	case TransportQUIC:
		loopback, tpt = "/ip4/127.0.0.1/udp/0/quic-v1", libp2p.Transport(quic.NewTransport)
	default:
		return nil, fmt.Errorf("pattern: unknown transport %q", transport)
	}
	if listen == "" {
		listen = loopback
	}
	switch role {
	case RoleController, RoleComp, RoleOwner:
	default:
		return nil, fmt.Errorf("pattern: unknown role %q", role)
	}
	h, err := libp2p.New(
		libp2p.Identity(key),
		libp2p.ListenAddrStrings(listen),
		tpt,
		libp2p.Security(noise.ID, noise.New),
		libp2p.Muxer(yamux.ID, p2p.NewYamuxTransport()), // the daemon's yamux settings
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(),
		// A benchmark among its own hosts: no resource limits (the
		// defaults refuse K = 100 data owners connecting at once).
		libp2p.ResourceManager(&network.NullResourceManager{}),
	)
	if err != nil {
		return nil, fmt.Errorf("pattern: starting the %s host: %w", role, err)
	}
	p := &Party{role: role, index: index, h: h, in: make(chan network.Stream, 1024)}
	h.SetStreamHandler(ProtocolID, func(s network.Stream) {
		select {
		case p.in <- s:
		default:
			s.Reset()
		}
	})
	return p, nil
}

// Info is the party's identity and addresses, to hand to the others.
func (p *Party) Info() peer.AddrInfo { return peer.AddrInfo{ID: p.h.ID(), Addrs: p.h.Addrs()} }

// Close stops the party's host.
func (p *Party) Close() error { return p.h.Close() }

// Peers is where the parties are.
type Peers struct {
	Controller peer.AddrInfo
	Comp       peer.AddrInfo
	Owners     []peer.AddrInfo
}

// Run plays the party's role for cfg.Warmup + cfg.Steps steps. Only the
// controller's Result is meaningful.
func (p *Party) Run(ctx context.Context, cfg Config, peers Peers) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if len(peers.Owners) != cfg.K {
		return Result{}, fmt.Errorf("pattern: %d data owner addresses for K = %d", len(peers.Owners), cfg.K)
	}
	switch p.role {
	case RoleOwner:
		return Result{}, p.runOwner(ctx, cfg, peers)
	case RoleComp:
		return Result{}, p.runComp(ctx, cfg)
	default:
		return p.runController(ctx, cfg, peers)
	}
}

// stream is a pattern stream with its buffers.
type stream struct {
	s       network.Stream
	r       *bufio.Reader
	w       *bufio.Writer
	pending int // bytes of the last frame read, still in r's buffer
}

func newStream(s network.Stream) *stream {
	return &stream{s: s, r: bufio.NewReaderSize(s, 16<<10), w: bufio.NewWriterSize(s, 16<<10)}
}

// write writes one frame (p2p's framing, as the messenger's) and flushes
// it: one write to the stream.
func (s *stream) write(payload []byte) error {
	if err := p2p.WriteFrame(s.w, payload, maxFrame); err != nil {
		return err
	}
	return s.w.Flush()
}

// read reads one frame, valid until the next read: one that fits the
// stream's buffer stays in it (p2p.BorrowFrame), as a daemon's role frames
// do, so that reading allocates and copies nothing.
func (s *stream) read() ([]byte, error) {
	s.discardPending()
	f, borrowed, err := p2p.BorrowFrame(s.r, maxFrame)
	if borrowed {
		s.pending = len(f)
	}
	return f, err
}

// discardPending consumes the frame the last read left in the buffer.
func (s *stream) discardPending() {
	if s.pending > 0 {
		s.r.Discard(s.pending)
		s.pending = 0
	}
}

// waitClosed waits for the other side to close the stream (or its whole
// connection: a QUIC host closing may overtake its streams' ends) after it
// has read its last frame.
func (s *stream) waitClosed() error {
	s.discardPending()
	if _, err := s.r.ReadByte(); err == nil {
		return errors.New("a frame after the last step")
	}
	return nil
}

// dialAttempts bounds the connection attempts of a party: a hundred data
// owners connecting to the controller at once can overflow its listen
// backlog.
const dialAttempts = 5

// dial connects to to and opens a pattern stream.
func (p *Party) dial(ctx context.Context, to peer.AddrInfo) (*stream, error) {
	var err error
	for attempt := range dialAttempts {
		if err = p.h.Connect(ctx, to); err == nil {
			break
		}
		if sw, ok := p.h.Network().(*swarm.Swarm); ok {
			sw.Backoff().Clear(to.ID) // libp2p would refuse the next dial for a while
		}
		select {
		case <-time.After(time.Duration(attempt+1) * 100 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("pattern: %s connecting to %s: %w", p.role, to.ID, ctx.Err())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("pattern: %s connecting to %s: %w", p.role, to.ID, err)
	}
	s, err := p.h.NewStream(ctx, to.ID, ProtocolID)
	if err != nil {
		return nil, fmt.Errorf("pattern: %s opening a stream to %s: %w", p.role, to.ID, err)
	}
	return newStream(s), nil
}

// accept waits for an inbound pattern stream.
func (p *Party) accept(ctx context.Context) (*stream, error) {
	select {
	case s := <-p.in:
		return newStream(s), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("pattern: %s waiting for a stream: %w", p.role, ctx.Err())
	}
}

func (p *Party) runOwner(ctx context.Context, cfg Config, peers Peers) error {
	s, err := p.dial(ctx, peers.Controller)
	if err != nil {
		return err
	}
	defer s.s.Close()
	score := make([]byte, cfg.ScoreSize)
	stop := context.AfterFunc(ctx, func() { s.s.Reset() })
	defer stop()
	for t := range cfg.Warmup + cfg.Steps {
		if t == cfg.Warmup {
			p.warm = processUsage()
		}
		score[0] = byte(t)
		if err := s.write(score); err != nil {
			return fmt.Errorf("pattern: data owner %d sending step %d: %w", p.index, t, err)
		}
		if _, err := s.read(); err != nil {
			return fmt.Errorf("pattern: data owner %d reading step %d: %w", p.index, t, err)
		}
	}
	p.done = processUsage()
	return nil
}

func (p *Party) runComp(ctx context.Context, cfg Config) error {
	s, err := p.accept(ctx)
	if err != nil {
		return err
	}
	defer s.s.Close()
	stop := context.AfterFunc(ctx, func() { s.s.Reset() })
	defer stop()
	reply := make([]byte, cfg.batchSize(cfg.BitItemSize))
	for t := range cfg.Warmup + cfg.Steps {
		if t == cfg.Warmup {
			p.warm = processUsage()
		}
		if _, err := s.read(); err != nil {
			return fmt.Errorf("pattern: comp reading step %d: %w", t, err)
		}
		if err := s.write(reply); err != nil {
			return fmt.Errorf("pattern: comp replying at step %d: %w", t, err)
		}
	}
	p.done = processUsage()
	if err := s.waitClosed(); err != nil {
		return fmt.Errorf("pattern: comp waiting for the controller to finish: %w", err)
	}
	return nil
}

func (p *Party) runController(ctx context.Context, cfg Config, peers Peers) (Result, error) {
	comp, err := p.dial(ctx, peers.Comp)
	if err != nil {
		return Result{}, err
	}
	defer comp.s.Close()
	defer comp.s.CloseWrite()
	index := make(map[peer.ID]int, cfg.K)
	for i, o := range peers.Owners {
		index[o.ID] = i
	}
	owners := make([]*stream, cfg.K)
	for range cfg.K {
		s, err := p.accept(ctx)
		if err != nil {
			return Result{}, err
		}
		i, ok := index[s.s.Conn().RemotePeer()]
		if !ok || owners[i] != nil {
			s.s.Reset()
			return Result{}, fmt.Errorf("pattern: a stream from %s, not a data owner of the run", s.s.Conn().RemotePeer())
		}
		owners[i] = s
		defer s.s.Close()
	}
	stop := context.AfterFunc(ctx, func() {
		comp.s.Reset()
		for _, s := range owners {
			s.s.Reset()
		}
	})
	defer stop()
	batch := make([]byte, cfg.batchSize(cfg.ScoreItemSize))
	bit := make([]byte, cfg.BitSize)
	var start time.Time
	for t := range cfg.Warmup + cfg.Steps {
		if t == cfg.Warmup {
			start = time.Now()
			p.warm = processUsage()
		}
		for i, s := range owners {
			f, err := s.read()
			if err != nil {
				return Result{}, fmt.Errorf("pattern: controller reading data owner %d at step %d: %w", i, t, err)
			}
			// As SAMBA's controller puts each score's box into the batch.
			copy(batch[cfg.BatchHeadSize+i*cfg.ScoreItemSize:][:cfg.ScoreItemSize], f)
		}
		if err := comp.write(batch); err != nil {
			return Result{}, fmt.Errorf("pattern: controller sending the batch at step %d: %w", t, err)
		}
		if _, err := comp.read(); err != nil {
			return Result{}, fmt.Errorf("pattern: controller reading comp's batch at step %d: %w", t, err)
		}
		for i, s := range owners {
			bit[0] = byte(t)
			if err := s.write(bit); err != nil {
				return Result{}, fmt.Errorf("pattern: controller sending data owner %d at step %d: %w", i, t, err)
			}
		}
	}
	elapsed := time.Since(start)
	p.done = processUsage()
	// Returning closes the host, which may drop frames not yet delivered
	// (QUIC does): wait for every data owner to close its side first.
	for i, s := range owners {
		if err := s.waitClosed(); err != nil {
			return Result{}, fmt.Errorf("pattern: controller waiting for data owner %d to finish: %w", i, err)
		}
	}
	return Result{K: cfg.K, Steps: cfg.Steps, Transport: cfg.Transport, Seconds: elapsed.Seconds(),
		MsPerStep: 1000 * elapsed.Seconds() / float64(cfg.Steps), FramesPerStep: 2*cfg.K + 2}, nil
}

// RunInProcess runs the whole pattern with every party's host in this
// process and returns the controller's measurement.
func RunInProcess(ctx context.Context, cfg Config) (Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	parties := make([]*Party, 0, cfg.K+2)
	defer func() {
		for _, p := range parties {
			p.Close()
		}
	}()
	roles := append([]string{RoleController, RoleComp}, slices.Repeat([]string{RoleOwner}, cfg.K)...)
	for i, role := range roles {
		key, _, err := crypto.GenerateEd25519Key(nil)
		if err != nil {
			return Result{}, fmt.Errorf("pattern: generating a key: %w", err)
		}
		p, err := NewParty(role, max(i-2, 0), key, cfg.Transport)
		if err != nil {
			return Result{}, err
		}
		parties = append(parties, p)
	}
	peers := Peers{Controller: parties[0].Info(), Comp: parties[1].Info()}
	for _, p := range parties[2:] {
		peers.Owners = append(peers.Owners, p.Info())
	}
	ctx, cancel := context.WithTimeout(ctx, runTimeout(cfg))
	defer cancel()
	errc := make(chan error, len(parties))
	for _, p := range parties[1:] {
		go func() {
			_, err := p.Run(ctx, cfg, peers)
			if err != nil {
				cancel()
			}
			errc <- err
		}()
	}
	res, err := parties[0].Run(ctx, cfg, peers)
	if err != nil {
		cancel()
	}
	errs := []error{err}
	for range parties[1:] {
		errs = append(errs, <-errc)
	}
	if err := errors.Join(errs...); err != nil {
		return Result{}, err
	}
	return res, nil
}
