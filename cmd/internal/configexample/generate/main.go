// Command generate writes config.example.toml from its template and the
// daemon's defaults (configexample.Render). `go generate` at the
// repository's root runs it:
//
//	go run ./cmd/internal/configexample/generate config.example.toml
package main

import (
	"fmt"
	"os"

	"github.com/bandit-node/bandit-node/cmd/internal/configexample"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: generate FILE (config.example.toml)")
		os.Exit(2)
	}
	text, err := configexample.Render(configexample.Defaults())
	if err == nil {
		err = os.WriteFile(os.Args[1], text, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "generate: %v\n", err)
		os.Exit(1)
	}
}
