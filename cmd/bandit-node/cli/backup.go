package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/node/backup"
	"github.com/bandit-node/bandit-node/node/config"
)

// runBackup writes a backup archive of a node (node/backup): its identity
// key, API tokens, TLS files, config, and its data directory's records,
// run summaries, standing sessions' state and session logs. The daemon may
// be running. With --check it reads an archive whole and lists it instead.
func runBackup(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("backup", "backup --config FILE --out ARCHIVE | backup --check ARCHIVE",
		"bandit-node backup --config /var/lib/bandit-node/config.toml --out /srv/backups/acme-$(date +%F).tar.gz\n"+
			"bandit-node backup --check /srv/backups/acme-2026-11-29.tar.gz", stderr)
	out := fs.String("out", "", "write the archive to `ARCHIVE` (a .tar.gz; replaced atomically; mode 0600: it holds the node's private key, keep it as you keep that key)")
	check := fs.String("check", "", "read the archive `ARCHIVE` whole, check every file against its manifest and list it; write nothing")
	if _, err := clikit.ParseArgs(fs.FlagSet, args, 0, 0); err != nil {
		return err
	}
	switch {
	case *check != "" && *out != "":
		return clikit.UsageError{Msg: "backup: --out and --check exclude each other"}
	case *check != "":
		m, err := backup.Check(*check)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: a whole backup of node %s (peer ID %s), written %s by %s\n",
			*check, m.Node, m.PeerID, m.Created.Format(time.RFC3339), m.Program)
		printManifest(stdout, m)
		return nil
	case *out == "":
		fs.Usage()
		return clikit.UsageError{Msg: "backup: name the archive to write with --out ARCHIVE (or one to check with --check ARCHIVE)"}
	}
	cfg, err := loadConfig(fs.FlagSet, *fs.path)
	if err != nil {
		return err
	}
	id, err := node.IdentityPeerID(cfg.Node.Identity)
	if err != nil {
		return err
	}
	m, skipped, err := backup.Write(sourceOf(cfg, id), *out)
	if err != nil {
		return err
	}
	var size int64
	for _, f := range m.Files {
		size += f.Size
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "bandit-node: backup: left out %s\n", s)
	}
	fmt.Fprintf(stdout, "backed up node %s (peer ID %s): %d files, %d bytes, to %s\n", m.Node, m.PeerID, len(m.Files), size, *out)
	fmt.Fprintln(stdout, "the archive holds the node's private key and API token: keep it as safe as the node itself")
	return nil
}

// sourceOf is what backup.Write reads of the node that cfg configures.
func sourceOf(cfg *config.Config, peerID string) backup.Source {
	return backup.Source{
		Node: cfg.Node.Name, PeerID: peerID, Program: program + " " + Version,
		Config: cfg.Path, DataDir: cfg.Node.DataDir, Now: time.Now(),
		Files: map[backup.Role]string{
			backup.RoleIdentity:  cfg.Node.Identity,
			backup.RoleToken:     cfg.API.TokenFile,
			backup.RoleReadToken: cfg.API.ReadTokenFile,
			backup.RoleCert:      cfg.API.CertFile,
			backup.RoleKey:       cfg.API.KeyFile,
			backup.RoleCA:        cfg.API.CAFile,
		},
	}
}

// printManifest lists an archive's files: their roles, sizes and names.
func printManifest(w io.Writer, m *backup.Manifest) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tBYTES\tFILE\tFROM")
	for _, f := range m.Files {
		note := ""
		if f.Cut {
			note = " (cut at its last complete line)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s%s\n", f.Role, f.Size, f.Name, f.Source, note)
	}
	tw.Flush()
}
