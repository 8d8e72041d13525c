// Command generate writes docs/schema/config.schema.json and
// session.schema.json (package schemagen) into the directory it is given.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/cmd/internal/schemagen"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: generate DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	cfg, err := schemagen.Config()
	if err != nil {
		return err
	}
	sess, err := schemagen.Session(reg.Names())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.schema.json"), cfg, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "session.schema.json"), sess, 0o644)
}
