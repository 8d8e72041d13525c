// Package banditnode ships what lies at the module's root to its
// commands: the annotated example configuration, which `bandit-node config
// example` prints, so that an operator who installed only the binary has
// every key explained.
package banditnode

import _ "embed"

// config.example.toml is generated: its text is
// cmd/internal/configexample/config.example.toml.tmpl, its defaults are the
// daemon's own (config.DefaultValues). Edit the template, then run
// `go generate .` here.
//go:generate go run ./cmd/internal/configexample/generate config.example.toml
//go:generate go run ./cmd/internal/schemagen/generate docs/schema

// ConfigExample is config.example.toml: every key of a node's config.toml,
// with its default, bounds and what it does.
//
//go:embed config.example.toml
var ConfigExample string
