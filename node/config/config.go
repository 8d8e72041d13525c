package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
)

// Config is a daemon's configuration, as read from config.toml. Paths in it
// are absolute after LoadConfig (relative ones are taken from the directory of
// the config file).
type Config struct {
	// Path is the file the config was read from.
	Path string `toml:"-"`

	Node      NodeConfig      `toml:"node"`
	API       APIConfig       `toml:"api"`
	Log       LogConfig       `toml:"log"`
	Discovery DiscoveryConfig `toml:"discovery"`
	Session   SessionConfig   `toml:"session"`
	Runtime   RuntimeConfig   `toml:"runtime"`
	Metrics   MetricsConfig   `toml:"metrics"`
	Relay     RelayConfig     `toml:"relay"`
	Peers     []PeerConfig    `toml:"peers"`
	// Sessions are the standing sessions (config_sessions.go).
	Sessions []StandingConfig `toml:"sessions"`
	// Policy maps a protocol family to what this node accepts of it. A family
	// with no entry is not enabled here.
	Policy map[string]PolicyConfig `toml:"policy"`
	// Local holds the raw [local.<family>.<role>] tables; LocalData their
	// decoded values.
	Local     map[string]any            `toml:"local"`
	LocalData map[string]map[string]any `toml:"-"`
	// Environments are the roles' environments as their [local] tables
	// configure them (the source key and its source's keys), by family
	// and role; a role without one takes the family's simulated
	// environment.
	Environments map[string]map[string]environment.Config `toml:"-"`
}

// NodeConfig is the [node] table.
type NodeConfig struct {
	Name     string   `toml:"name"`
	DataDir  string   `toml:"data_dir"`
	Identity string   `toml:"identity"`
	Listen   []string `toml:"listen"`
}

// APIConfig is the [api] table: the local control API.
type APIConfig struct {
	Listen    string `toml:"listen"`
	TokenFile string `toml:"token_file"`
	// ReadTokenFile, if set, holds a second token that may only read:
	// every GET route but Go's profiles (monitoring, a console). The token
	// of TokenFile may do everything.
	ReadTokenFile string `toml:"read_token_file"`
	AllowRemote   bool   `toml:"allow_remote"`
	// CertFile and KeyFile, PEM files, make the API serve HTTPS (TLS 1.2
	// or later) instead of plain HTTP. A listen address that is not
	// loopback requires them: the bearer token must not cross the network
	// in the clear.
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
	// CAFile is the PEM certificate, or certificate authority, the CLI
	// trusts when it reaches the API over TLS; default CertFile (the CLI
	// on the daemon's own machine trusts the daemon's own certificate).
	CAFile string `toml:"ca_file"`
}

// TLS reports whether the API serves HTTPS.
func (a APIConfig) TLS() bool { return a.CertFile != "" }

// TrustFile is the file of the certificates a client of the API trusts
// (ca_file, or else cert_file), or "" for plain HTTP.
func (a APIConfig) TrustFile() string {
	if a.CAFile != "" {
		return a.CAFile
	}
	return a.CertFile
}

// LogConfig is the [log] table.
type LogConfig struct {
	Level  string `toml:"level"`
	Format string `toml:"format"`
}

// DiscoveryConfig is the [discovery] table.
type DiscoveryConfig struct {
	MDNS           bool     `toml:"mdns"`
	DialBackoffMin Duration `toml:"dial_backoff_min"`
	DialBackoffMax Duration `toml:"dial_backoff_max"`
}

// SessionConfig is the [session] table: timeouts and limits of sessions.
type SessionConfig struct {
	ProposeTimeout    Duration `toml:"propose_timeout"`
	PeerTimeout       Duration `toml:"peer_timeout"`
	HeartbeatInterval Duration `toml:"heartbeat_interval"`
	StallTimeout      Duration `toml:"stall_timeout"`
	MaxActive         int      `toml:"max_active"`
	MaxFrameSize      int      `toml:"max_frame_size"`
	// MaxBufferedBytes caps the bytes of frames queued in one session,
	// from all its peers, before its goroutine takes them; beyond it a
	// frame is dropped and the session aborts (see node/sessions/inbound.go).
	MaxBufferedBytes int64 `toml:"max_buffered_bytes"`
	// MaxPeerBufferedBytes caps the bytes of frames queued from one peer,
	// over all its sessions on this node.
	MaxPeerBufferedBytes int64 `toml:"max_peer_buffered_bytes"`
	// Keep and KeepCount are the retention of ended sessions' records
	// (config_retention.go, retention.go): older than Keep, or beyond the
	// newest KeepCount, they are removed; zero keeps them.
	Keep      RetentionAge `toml:"keep"`
	KeepCount int          `toml:"keep_count"`
}

// RuntimeConfig is the [runtime] table: how the Go runtime under the daemon
// is set up.
type RuntimeConfig struct {
	// Schedtrace keeps the runtime's monitor thread (sysmon) out of its
	// deep sleep, which a daemon trading many small messages would
	// otherwise leave and re-enter at every message: `run` restarts itself
	// once with GODEBUG=schedtrace=2147483647 (one trace line every 24.8
	// days) unless GODEBUG already sets schedtrace. On by default.
	Schedtrace bool `toml:"schedtrace"`
}

// PeerConfig is one [[peers]] entry of the address book.
type PeerConfig struct {
	Name   string   `toml:"name"`
	PeerID string   `toml:"peer_id"`
	Addrs  []string `toml:"addrs"`
	// Relay is the name of the [[peers]] entry through whose relay
	// service this peer is reachable (it is behind a NAT); "" for none.
	Relay string `toml:"relay"`
}

// PolicyConfig is a [policy.<family>] table.
type PolicyConfig struct {
	// Roles this node accepts to play; "*" for any.
	Roles []string `toml:"roles"`
	// Initiators are the address-book names allowed to propose sessions of this
	// family to this node; "*" for any address-book peer. This node itself may
	// always initiate.
	Initiators []string `toml:"initiators"`
	// Max bounds numeric parameters: a proposal whose params.<key> exceeds
	// Max[key] is declined.
	Max map[string]float64 `toml:"max"`
	// Min bounds them from below: a proposal whose params.<key> is under
	// Min[key] is declined (e.g. [policy.samba.min] paillier_bits = 2048,
	// so that no session encrypts this node's data under a test-sized key).
	Min map[string]float64 `toml:"min"`
	// Sessions are the names of the standing sessions accepted
	// (policy.go: AdmitName).
	Sessions []string `toml:"sessions"`
}

// Duration is a time.Duration written as a string ("30s") in TOML.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"30s\" or \"2m\"", b)
	}
	d.Duration = v
	return nil
}

// MarshalText formats the duration.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Defaults of the [session] and [discovery] tables.
const (
	DefaultProposeTimeout    = 30 * time.Second
	DefaultPeerTimeout       = 30 * time.Second
	DefaultHeartbeatInterval = 5 * time.Second
	DefaultStallTimeout      = 10 * time.Minute
	DefaultMaxActive         = 16
	DefaultMaxFrameSize      = 4 << 20
	// DefaultMaxBufferedBytes is 16 frames of the default maximum size.
	DefaultMaxBufferedBytes     = 64 << 20
	DefaultMaxPeerBufferedBytes = 256 << 20
	DefaultAPIListen            = "127.0.0.1:5601"
)

// DefaultConfig returns a config with every default filled in and no
// peers. It has no node name and no listen addresses: a config must state
// them (see requireNode), so that no daemon starts under a made-up name or
// on every interface of its machine because a file was empty or cut short.
//
// It is where each default of config.toml is written, once (here or in the
// typed defaults it uses): DefaultValues (config_defaults.go) hands them
// to the config `init` writes and to the generated config.example.toml.
func DefaultConfig() *Config {
	return &Config{
		Node: NodeConfig{DataDir: ".", Identity: "identity.key"},
		API:  APIConfig{Listen: DefaultAPIListen, TokenFile: "api.token"}, Metrics: DefaultMetricsConfig(),
		Log: LogConfig{Level: "info", Format: "text"},
		Discovery: DiscoveryConfig{DialBackoffMin: Duration{time.Second},
			DialBackoffMax: Duration{time.Minute}},
		Session: SessionConfig{
			ProposeTimeout:       Duration{DefaultProposeTimeout},
			PeerTimeout:          Duration{DefaultPeerTimeout},
			HeartbeatInterval:    Duration{DefaultHeartbeatInterval},
			StallTimeout:         Duration{DefaultStallTimeout},
			MaxActive:            DefaultMaxActive,
			MaxFrameSize:         DefaultMaxFrameSize,
			MaxBufferedBytes:     DefaultMaxBufferedBytes,
			MaxPeerBufferedBytes: DefaultMaxPeerBufferedBytes,
			Keep:                 RetentionAge{DefaultKeep},
			KeepCount:            DefaultKeepCount,
		},
		Runtime: RuntimeConfig{Schedtrace: true},
		Relay:   DefaultRelayConfig(),
		Policy:  map[string]PolicyConfig{},
	}
}

// LoadConfig reads and validates the config file at path. Decoding is strict:
// an unknown key is an error naming it. reg decodes the [local] tables.
func LoadConfig(path string, reg *protocol.Registry) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cfg, err := ParseConfig(path, data, reg)
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// ParseConfig is LoadConfig on the contents of a file; path names the file in
// errors and anchors relative paths.
func ParseConfig(path string, data []byte, reg *protocol.Registry) (*Config, error) {
	cfg := DefaultConfig()
	cfg.Path = path
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	base := filepath.Dir(abs)
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := cfg.decodeLocal(reg, base); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var unknown []string
	for _, k := range md.Undecoded() {
		// The [local] tables are decoded, strictly, by the environment and
		// the family (decodeLocal); the TOML decoder, which left them
		// raw, lists their keys.
		if len(k) > 1 && k[0] == "local" {
			continue
		}
		unknown = append(unknown, k.String())
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%s: unknown key %s", path, strings.Join(unknown, ", "))
	}
	if err := requireNode(md); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := cfg.validate(reg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := cfg.loadSessions(reg, base); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !filepath.IsAbs(cfg.Node.DataDir) {
		cfg.Node.DataDir = filepath.Join(base, cfg.Node.DataDir)
	}
	cfg.Node.Identity = absUnder(cfg.Node.DataDir, cfg.Node.Identity)
	cfg.API.TokenFile = absUnder(cfg.Node.DataDir, cfg.API.TokenFile)
	if cfg.API.ReadTokenFile != "" {
		cfg.API.ReadTokenFile = absUnder(cfg.Node.DataDir, cfg.API.ReadTokenFile)
	}
	for _, f := range []*string{&cfg.API.CertFile, &cfg.API.KeyFile, &cfg.API.CAFile} {
		if *f != "" {
			*f = absUnder(cfg.Node.DataDir, *f)
		}
	}
	return cfg, nil
}

func absUnder(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// CheckLocalData checks what the [local] tables name outside the config,
// such as data files (protocol.LocalChecker). A daemon calls it when it
// starts; a command that only reaches the daemon does not need to.
func (c *Config) CheckLocalData() error {
	for _, fam := range slices.Sorted(maps.Keys(c.LocalData)) {
		for _, role := range slices.Sorted(maps.Keys(c.LocalData[fam])) {
			if lc, ok := c.LocalData[fam][role].(protocol.LocalChecker); ok {
				if err := lc.CheckLocal(); err != nil {
					return fmt.Errorf("%s: %w", c.Path, err)
				}
			}
			// An environment's program or file must exist now too; its
			// shape is checked per session, at admission.
			if env, ok := c.Environments[fam][role]; ok && !env.Simulated() {
				if err := env.Check(0, 0); err != nil {
					return fmt.Errorf("%s: %s: %w", c.Path, protocol.LocalKey(fam, role), err)
				}
			}
		}
	}
	return nil
}

// decodeLocal decodes the [local] tables, each once, into the values
// sessions use (LocalData, Environments); relative file paths in them are
// taken from dir, the config file's directory. A reload decodes them again.
func (c *Config) decodeLocal(reg *protocol.Registry, dir string) error {
	c.LocalData = map[string]map[string]any{}
	c.Environments = map[string]map[string]environment.Config{}
	for _, fam := range slices.Sorted(maps.Keys(c.Local)) {
		f, err := reg.Lookup(fam)
		if err != nil {
			return fmt.Errorf("local.%s: %w", fam, err)
		}
		roles, ok := c.Local[fam].(map[string]any)
		if !ok {
			return fmt.Errorf("local.%s: want a table of roles ([local.%s.ROLE]), got %s", fam, fam, protocol.DescribeValue(c.Local[fam]))
		}
		c.LocalData[fam] = map[string]any{}
		c.Environments[fam] = map[string]environment.Config{}
		for _, role := range slices.Sorted(maps.Keys(roles)) {
			if _, err := protocol.RoleSpecOf(f, role); err != nil {
				return fmt.Errorf("local.%s.%s: %w", fam, role, err)
			}
			key := protocol.LocalKey(fam, role)
			raw, ok := roles[role].(map[string]any)
			if !ok {
				return fmt.Errorf("%s: want a table ([%s]), got %s", key, key, protocol.DescribeValue(roles[role]))
			}
			// The environment's keys first (source and its keys); the
			// family decodes the rest. Errors name their key
			// (local.samba.data_owner.ratings).
			env, rest, err := environment.DecodeConfig(&protocol.LocalTable{Key: key, Raw: raw, Dir: dir})
			if err != nil {
				return err
			}
			if _, ok := f.(protocol.Environmental); !ok && !env.Simulated() {
				return fmt.Errorf("%s.source: no role of %s asks an environment; remove source", key, fam)
			}
			v, err := f.DecodeLocal(role, &protocol.LocalTable{Key: key, Raw: rest, Dir: dir, Source: string(env.Source)})
			if err != nil {
				return err
			}
			c.LocalData[fam][role] = v
			c.Environments[fam][role] = env
		}
	}
	return nil
}

func (c *Config) validate(reg *protocol.Registry) error {
	if c.Node.Name == "" {
		return errors.New("node.name: must not be empty; give this organization's name, as its peers list it in their address books")
	}
	if len(c.Node.Listen) == 0 {
		return errors.New("node.listen: give at least one multiaddr, such as \"/ip4/192.0.2.10/tcp/4001\" (one interface) or \"/ip4/0.0.0.0/tcp/4001\" (every interface)")
	}
	for i, a := range c.Node.Listen {
		if _, err := multiaddr.NewMultiaddr(a); err != nil {
			return fmt.Errorf("node.listen[%d]: %q: %w", i, a, err)
		}
	}
	if err := CheckAPIListen(c.API.Listen, c.API.AllowRemote); err != nil {
		return fmt.Errorf("api.listen: %w", err)
	}
	if (c.API.CertFile == "") != (c.API.KeyFile == "") {
		return errors.New("api.cert_file and api.key_file: give both (to serve the control API over TLS) or neither")
	}
	if c.API.CAFile != "" && c.API.CertFile == "" {
		return errors.New("api.ca_file: the control API serves TLS only with api.cert_file and api.key_file")
	}
	if !c.API.TLS() && !loopbackHost(c.API.Listen) {
		return fmt.Errorf("api.listen: %q is not a loopback address, and a remote control API must use TLS "+
			"(its bearer token would cross the network in the clear): set api.cert_file and api.key_file", c.API.Listen)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log.level: %q is not one of debug, info, warn, error", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		return fmt.Errorf("log.format: %q is not one of text, json", c.Log.Format)
	}
	if d := c.Discovery; d.DialBackoffMin.Duration <= 0 || d.DialBackoffMax.Duration < d.DialBackoffMin.Duration {
		return fmt.Errorf("discovery: dial_backoff_min (%v) must be positive and at most dial_backoff_max (%v)", d.DialBackoffMin, d.DialBackoffMax)
	}
	s := c.Session
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"propose_timeout", s.ProposeTimeout.Duration}, {"peer_timeout", s.PeerTimeout.Duration}, {"heartbeat_interval", s.HeartbeatInterval.Duration}, {"stall_timeout", s.StallTimeout.Duration}} {
		if d.v <= 0 {
			return fmt.Errorf("session.%s: must be positive, got %v", d.key, d.v)
		}
	}
	if s.HeartbeatInterval.Duration*2 > s.PeerTimeout.Duration {
		return fmt.Errorf("session.heartbeat_interval (%v) must be at most half of session.peer_timeout (%v)", s.HeartbeatInterval, s.PeerTimeout)
	}
	if s.MaxActive < 1 {
		return fmt.Errorf("session.max_active: must be at least 1, got %d", s.MaxActive)
	}
	if s.MaxFrameSize < 1024 || s.MaxFrameSize > 64<<20 {
		return fmt.Errorf("session.max_frame_size: %d is out of range [1024, %d]", s.MaxFrameSize, 64<<20)
	}
	// A frame of the largest size must fit in a session's queue, and in
	// a peer's, or a legitimate one would abort its session.
	if s.MaxBufferedBytes < int64(s.MaxFrameSize)+QueuedOverhead || s.MaxBufferedBytes > 1<<40 {
		return fmt.Errorf("session.max_buffered_bytes: %d is out of range [session.max_frame_size + %d = %d, 2^40]",
			s.MaxBufferedBytes, QueuedOverhead, int64(s.MaxFrameSize)+QueuedOverhead)
	}
	if s.MaxPeerBufferedBytes < s.MaxBufferedBytes || s.MaxPeerBufferedBytes > 1<<40 {
		return fmt.Errorf("session.max_peer_buffered_bytes: %d is out of range [session.max_buffered_bytes = %d, 2^40]",
			s.MaxPeerBufferedBytes, s.MaxBufferedBytes)
	}
	names := map[string]bool{c.Node.Name: true}
	ids := map[string]bool{}
	for i, p := range c.Peers {
		where := fmt.Sprintf("peers[%d]", i)
		if p.Name == "" {
			return fmt.Errorf("%s.name: must not be empty", where)
		}
		where = fmt.Sprintf("peers[%d] (%s)", i, p.Name)
		if names[p.Name] {
			return fmt.Errorf("%s.name: %q is used twice (or is this node's own name)", where, p.Name)
		}
		names[p.Name] = true
		if p.Name == "*" {
			return fmt.Errorf("%s.name: \"*\" is reserved", where)
		}
		id, err := peer.Decode(p.PeerID)
		if err != nil {
			return fmt.Errorf("%s.peer_id: %q is not a peer ID: %w", where, p.PeerID, err)
		}
		if ids[id.String()] {
			return fmt.Errorf("%s.peer_id: %s is listed twice", where, id)
		}
		ids[id.String()] = true
		for j, a := range p.Addrs {
			if _, err := multiaddr.NewMultiaddr(a); err != nil {
				return fmt.Errorf("%s.addrs[%d]: %q: %w", where, j, a, err)
			}
		}
	}
	if err := c.Session.validateRetention(); err != nil {
		return err
	}
	if err := c.Metrics.validate(len(c.Peers)); err != nil {
		return err
	}
	if err := c.Relay.validate(c.Peers); err != nil {
		return err
	}
	for _, fam := range slices.Sorted(maps.Keys(c.Policy)) {
		f, err := reg.Lookup(fam)
		if err != nil {
			return fmt.Errorf("policy.%s: %w", fam, err)
		}
		pol := c.Policy[fam]
		for _, r := range pol.Roles {
			if r == "*" {
				continue
			}
			if _, err := protocol.RoleSpecOf(f, r); err != nil {
				return fmt.Errorf("policy.%s.roles: %w", fam, err)
			}
		}
		defaults, derr := f.ParseParams(map[string]any{})
		for _, b := range pol.limitTables() {
			for _, key := range slices.Sorted(maps.Keys(b.limits)) {
				if derr != nil {
					return fmt.Errorf("policy.%s.%s.%s: cannot be checked: %s's default parameters do not parse: %w", fam, b.name, key, fam, derr)
				}
				if _, ok := numericParam(defaults, key); !ok {
					return fmt.Errorf("policy.%s.%s.%s: %s has no numeric parameter or figure %s", fam, b.name, key, fam, key)
				}
				if math.IsNaN(b.limits[key]) {
					return fmt.Errorf("policy.%s.%s.%s: NaN is not a limit", fam, b.name, key)
				}
			}
		}
		for _, key := range slices.Sorted(maps.Keys(pol.Min)) {
			if hi, ok := pol.Max[key]; ok && pol.Min[key] > hi {
				return fmt.Errorf("policy.%s: min.%s = %v is above max.%s = %v, which would decline every proposal", fam, key, pol.Min[key], key, hi)
			}
		}
		if err := checkPolicySessions(fam, pol.Sessions); err != nil {
			return err
		}
		for _, in := range pol.Initiators {
			if in != "*" && !names[in] {
				return fmt.Errorf("policy.%s.initiators: %q is not in the address book", fam, in)
			}
		}
	}
	return nil
}

// PeerByName returns the address-book entry called name.
func (c *Config) PeerByName(name string) (PeerConfig, bool) {
	for _, p := range c.Peers {
		if p.Name == name {
			return p, true
		}
	}
	return PeerConfig{}, false
}

// CheckAPIListen checks a listen address of the control API as the daemon
// does when it loads its config (api.listen): HOST:PORT with a port in
// 0..65535, on "localhost" or a loopback IP address unless allowRemote.
// The error quotes addr and names no key: callers add theirs.
func CheckAPIListen(addr string, allowRemote bool) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		msg := err.Error()
		var ae *net.AddrError
		if errors.As(err, &ae) {
			msg = ae.Err
		}
		return fmt.Errorf("%q: %s; give HOST:PORT, such as %s", addr, msg, DefaultAPIListen)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: the port %q is not a number in 0..65535", addr, port)
	}
	if !loopbackHost(addr) && !allowRemote {
		return fmt.Errorf("%q is not a loopback address; the control API is local only unless api.allow_remote = true", addr)
	}
	return nil
}

// loopbackHost reports whether the HOST:PORT addr is on "localhost" or a
// loopback IP address.
func loopbackHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// QueuedOverhead is counted for every queued frame besides its bytes, so
// that a flood of empty frames is bounded too.
const QueuedOverhead = 64
