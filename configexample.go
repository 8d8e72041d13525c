// Package banditnode ships what lies at the module's root to its
// commands: the annotated example configuration, which `bandit-node config
// example` prints, so that an operator who installed only the binary has
// every key explained.
package banditnode

import _ "embed"

// ConfigExample is config.example.toml: every key of a node's config.toml,
// with its default, bounds and what it does.
//
//go:embed config.example.toml
var ConfigExample string
