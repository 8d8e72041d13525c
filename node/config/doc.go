// Package config is a daemon's configuration as read from config.toml: the
// schema and its defaults, strict decoding and validation (every error names
// its key), the local policy that decides which sessions this organization
// joins and the bounds it puts on their parameters, the standing sessions'
// table and their schedules, and the reload classification that says which
// changes a running daemon takes on SIGHUP and which need a restart.
//
// It reads and checks a file; it imports nothing of the daemon's runtime,
// store, network or API (TestDependencies), so a config can be checked
// without building a node.
package config
