package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/node/backup"
	"github.com/bandit-node/bandit-node/node/config"
)

// runRestore restores a backup archive (node/backup) onto a new data
// directory or machine: the node keeps its identity, hence its peer ID,
// its token, config, records and logs. It checks the whole archive before
// writing anything, and the restored key's peer ID after.
func runRestore(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("restore", "restore --config NEWFILE [--data-dir DIR] [--keep-paths] [--force] [--dry-run] ARCHIVE",
		"bandit-node restore --config /var/lib/bandit-node/config.toml /srv/backups/acme-2026-11-29.tar.gz\n"+
			"bandit-node restore --config /srv/acme/config.toml --data-dir /srv/acme --dry-run acme.tar.gz", stderr)
	cfgPath := fs.String("config", "", "write the restored config to `NEWFILE` (required)")
	dataDir := fs.String("data-dir", "", "restore the data directory into `DIR`, which must be new or empty (default: the archived data_dir, relative to NEWFILE's directory if relative); the config's data_dir is rewritten to name it")
	keepPaths := fs.Bool("keep-paths", false, "put files the config names at absolute paths outside its data directory (identity, token_file, TLS files) back at those paths; by default they go into the new data directory and the config is rewritten to name them there")
	force := fs.Bool("force", false, "write into a data directory that is not empty and over existing files (the node's daemon must not be running)")
	dryRun := fs.Bool("dry-run", false, "check the archive and list what would be written where; write nothing")
	pos, err := clikit.ParseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *cfgPath == "" {
		fs.Usage()
		return clikit.UsageError{Msg: "restore: name where the restored config goes with --config NEWFILE"}
	}
	o := backup.Options{Config: *cfgPath, DataDir: *dataDir, KeepPaths: *keepPaths, Force: *force, PeerID: node.IdentityPeerID}
	if *dryRun {
		p, _, err := backup.PlanRestore(pos[0], o)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: a whole backup of node %s (peer ID %s); restore would write:\n", pos[0], p.Manifest.Node, p.Manifest.PeerID)
		printPlan(stdout, p)
		return nil
	}
	p, err := backup.Restore(pos[0], o)
	if err != nil {
		return err
	}
	printPlan(stdout, p)
	fmt.Fprintf(stdout, "restored node %s with its peer ID %s\n", p.Manifest.Node, p.Manifest.PeerID)
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	cfg, err := config.LoadConfig(p.Config, reg)
	if err == nil {
		err = cfg.CheckLocalData()
	}
	if err != nil {
		fmt.Fprintf(stdout, "warning: the restored config does not load yet (%v): copy the files it names that are not in the archive, then check it with `bandit-node config check --config %s`\n", err, p.Config)
	}
	fmt.Fprintf(stdout, "start it with: bandit-node run --config %s\n", p.Config)
	fmt.Fprintln(stdout, "its partners keep its peer ID; only if its addresses changed must they update them in their [[peers]] tables")
	return nil
}

// printPlan lists where restore writes each file and the config keys it
// rewrites.
func printPlan(w io.Writer, p *backup.Plan) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tBYTES\tTO")
	for _, pl := range p.Files {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", pl.File.Role, pl.File.Size, pl.Dest)
	}
	tw.Flush()
	for _, e := range p.Edits {
		fmt.Fprintf(w, "config %s: %s\n", p.Config, e)
	}
}
