package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/multiformats/go-multiaddr"
)

func runInit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("init", "init --dir DIR [--name NAME] [--listen MULTIADDR]... [--api HOST:PORT] [--policy-open]", `
bandit-node init --dir /var/lib/bandit/acme --name acme \
    --listen /ip4/0.0.0.0/tcp/4001 --listen /ip4/0.0.0.0/udp/4001/quic-v1 --api 127.0.0.1:5601`, stderr)
	dir := fs.String("dir", "", "directory to create the node in (required)")
	name := fs.String("name", "", "this organization's name, as peers list it in their address books (default: the directory's name)")
	var listen multiFlag
	fs.Var(&listen, "listen", "a libp2p multiaddr to listen on; repeatable (default: TCP and QUIC on port 4001)")
	api := fs.String("api", config.DefaultAPIListen, "host:port of the local control API (loopback)")
	open := fs.Bool("policy-open", false, "accept every protocol and role from any address-book peer (for test networks; the default enables only the ping diagnostic)")
	if _, err := clikit.ParseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if *dir == "" {
		fs.Usage()
		return clikit.UsageError{Msg: "init: --dir is required"}
	}
	if *name == "" {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return err
		}
		*name = filepath.Base(abs)
	}
	if len(listen) == 0 {
		listen = multiFlag{"/ip4/0.0.0.0/tcp/4001", "/ip4/0.0.0.0/udp/4001/quic-v1"}
	}
	for _, a := range listen {
		if _, err := multiaddr.NewMultiaddr(a); err != nil {
			return clikit.UsageError{Msg: fmt.Sprintf("init: --listen %q: %v", a, err)}
		}
	}
	if err := checkAPIListen(*api); err != nil {
		return err
	}
	// The key and the token go where the config init writes says, which
	// leaves node.identity, node.data_dir and api.token_file at their
	// defaults.
	def := config.DefaultConfig()
	dataDir := filepath.Join(*dir, def.Node.DataDir)
	keyPath := filepath.Join(dataDir, def.Node.Identity)
	tokenPath := filepath.Join(dataDir, def.API.TokenFile)
	cfgPath := filepath.Join(*dir, "config.toml")
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	data := templateData{Name: *name, Listen: listen, API: *api, Open: *open}
	if *open {
		data.Protocols = reg.Names()
	}
	// Check the config as run will load it before writing anything, so that
	// init never leaves a node that run refuses.
	if _, err := renderConfig(cfgPath, data, reg); err != nil {
		return fmt.Errorf("init: the config would not load: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", dataDir, err)
	}
	if _, err := os.Stat(cfgPath); err == nil {
		return fmt.Errorf("%s already exists; init refuses to overwrite a node (remove the directory to start afresh)", cfgPath)
	}
	id, err := node.CreateIdentity(keyPath)
	if err != nil {
		return err
	}
	var tok [32]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return fmt.Errorf("drawing an API token: %w", err)
	}
	if err := writeNew(tokenPath, []byte(hex.EncodeToString(tok[:])+"\n")); err != nil {
		return err
	}
	data.PeerID = id
	cfg, err := renderConfig(cfgPath, data, reg)
	if err != nil {
		return err
	}
	if err := writeNew(cfgPath, cfg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", id)
	fmt.Fprintf(stderr, "created %s (node %q); next: list your peers in %s, then `bandit-node run --config %s`\n", *dir, *name, cfgPath, cfgPath)
	return nil
}

// checkAPIListen applies to init's --api the rule the daemon applies to
// api.listen (config.CheckAPIListen). init cannot set api.allow_remote, so it
// refuses other hosts than loopback ones; an operator who wants a remote API
// sets both keys in config.toml afterwards.
func checkAPIListen(addr string) error {
	if err := config.CheckAPIListen(addr, false); err != nil {
		if config.CheckAPIListen(addr, true) == nil {
			return clikit.UsageError{Msg: fmt.Sprintf("init: --api %v (set both in config.toml after init)", err)}
		}
		return clikit.UsageError{Msg: fmt.Sprintf("init: --api %v", err)}
	}
	return nil
}

// renderConfig writes the config template and parses the result as run
// will (config.ParseConfig), returning the text only if it loads.
func renderConfig(path string, data templateData, reg *protocol.Registry) ([]byte, error) {
	if data.PeerID == "" {
		data.PeerID = "(drawn by init)"
	}
	text, err := executeConfig(data, config.DefaultValues())
	if err != nil {
		return nil, err
	}
	if _, err := config.ParseConfig(path, text, reg); err != nil {
		return nil, err
	}
	return text, nil
}

// executeConfig writes the config template with data, taking every
// default value from defaults (config.DefaultValues, so that a default is
// written once, in config.DefaultConfig).
func executeConfig(data templateData, defaults map[string]string) ([]byte, error) {
	t, err := configTemplate.Clone()
	if err != nil {
		return nil, err
	}
	var cfg strings.Builder
	if err := t.Funcs(config.DefaultFuncs(defaults)).Execute(&cfg, data); err != nil {
		return nil, err
	}
	return []byte(cfg.String()), nil
}

// writeNew creates path with mode 0600, refusing to overwrite.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists; init refuses to overwrite it", path)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type templateData struct {
	Name, PeerID, API string
	Listen            []string
	Open              bool
	Protocols         []string
}

// configTemplate is the config init writes. Every default in it is
// written with {{set "table.key"}} (or {{default "table.key"}}), never as
// a literal: TestInitConfigDefaultsFromNode fails on a literal one.
var configTemplate = template.Must(template.New("config").Funcs(config.DefaultFuncs(nil)).Funcs(template.FuncMap{"q": strconv.Quote}).Parse(
	`# bandit-node configuration of {{.Name}} (peer ID {{.PeerID}}).
# Every key, with its default and bounds, is explained in the annotated example that
# "bandit-node config example" prints (and in docs/operations.md, "Configuration").
# Unknown keys are errors. Relative paths are taken from this file's directory.

[node]
name = {{q .Name}}
{{printf "%-29s" (set "node.data_dir")}} # results (sessions/) are written here
{{printf "%-29s" (set "node.identity")}} # Ed25519 key, mode 0600; relative to data_dir
listen = [{{range $i, $a := .Listen}}{{if $i}}, {{end}}{{q $a}}{{end}}]

[api]
listen = {{q .API}}           # the local control API; loopback only unless allow_remote = true
{{printf "%-29s" (set "api.token_file")}} # bearer token of the control API; relative to data_dir

[log]
{{printf "%-29s" (set "log.level")}} # debug, info, warn, error
{{printf "%-29s" (set "log.format")}} # text or json

[discovery]
{{printf "%-29s" (set "discovery.mdns")}} # also find address-book peers on the local network
{{printf "%-29s" (set "discovery.dial_backoff_min")}} # redial a disconnected address-book peer after this ...
{{printf "%-29s" (set "discovery.dial_backoff_max")}} # ... doubling up to this

[session]
{{printf "%-29s" (set "session.propose_timeout")}} # every participant must answer a proposal within this
{{printf "%-29s" (set "session.peer_timeout")}} # a session aborts when a participant is silent this long
{{printf "%-29s" (set "session.heartbeat_interval")}} # at most half of peer_timeout
{{printf "%-29s" (set "session.stall_timeout")}} # the initiator aborts a session whose progress stalls this long
{{printf "%-29s" (set "session.max_active")}} # sessions proposed or running at once
{{printf "%-29s" (set "session.max_frame_size")}} # largest message on a stream, in bytes

[runtime]
{{printf "%-29s" (set "runtime.schedtrace")}} # restart once with GODEBUG=schedtrace=2147483647: saves a wake-up per message

[metrics]
{{printf "%-29s" (set "metrics.listen")}} # e.g. "0.0.0.0:9601": /metrics, /healthz, /readyz with no token, read-only
{{printf "%-29s" (set "metrics.min_peers")}} # /readyz needs this many address-book peers connected (at most [[peers]])

# The address book: the only organizations that may connect to this node.
# [[peers]]
# name = "node2"
# peer_id = "12D3KooW..."
# addrs = ["/ip4/192.0.2.10/tcp/4001"]

# Session policy: which protocols and roles this node accepts, from whom.
{{- if .Open}}
# Open policy (init --policy-open): every protocol, every role, any address-book peer.
# Open does not mean weak: Paillier keys under 2048 bits are still declined unless
# a [policy.samba.min] paillier_bits says otherwise, and [policy.<protocol>.max]
# tables bound what an initiator may choose (docs/operations.md, section "Policy
# bounds on what an initiator chooses", lists them).
{{- range .Protocols}}
[policy.{{.}}]
roles = ["*"]
initiators = ["*"]
{{end}}
{{- else}}
# The ping diagnostic is enabled for every address-book peer.
[policy.ping]
roles = ["participant"]
initiators = ["*"]
[policy.ping.max]
count = 100000
{{- end}}
`))
