// Package apitype holds the JSON types of the daemon's control API, shared by
// the server (package node) and its client (package node/client).
package apitype

import (
	"encoding/json"
	"time"
)

// NodeInfo answers GET /v0/node.
type NodeInfo struct {
	Name      string   `json:"name"`
	PeerID    string   `json:"peer_id"`
	Addrs     []string `json:"addrs"`
	Version   string   `json:"version"`
	Protocols []string `json:"protocols"`
	// Warnings say what the config in force leaves this node unable to
	// do (an empty address book, no protocol enabled); empty if nothing.
	Warnings []string `json:"warnings,omitempty"`
	// LastReload is the outcome of the last config reload tried since the
	// daemon started (SIGHUP or POST /v0/config/reload); nil if none.
	LastReload *ReloadStatus `json:"last_reload,omitempty"`
	// Ready says whether the node is ready to take part in sessions, as
	// the metrics listener's GET /readyz judges it: its libp2p host
	// listens, its data directory takes its writes and at least
	// metrics.min_peers address-book peers are connected. NotReady says
	// why not ("" when ready).
	Ready    bool   `json:"ready"`
	NotReady string `json:"not_ready,omitempty"`
	// StorageProblem says what keeps the data directory from storing
	// session records or logs; "" while it takes them.
	StorageProblem string `json:"storage_problem,omitempty"`
	// Started is when the daemon started; UptimeSeconds how long ago,
	// as the node's clock counts it.
	Started       time.Time `json:"started"`
	UptimeSeconds float64   `json:"uptime_s"`
	// Environments are this organization's own environments that its
	// config sets up (exec programs, http services, replayed files), each
	// with how it fared in the last session that used it. Never sent to
	// a peer.
	Environments []EnvironmentHealth `json:"environments,omitempty"`
}

// EnvironmentHealth is how an environment of the organization's own fared
// in the last session, of those whose records the node keeps, that used
// it.
type EnvironmentHealth struct {
	// Key is its config table ([local.<protocol>.<role>]); Source "exec",
	// "http" or "replay".
	Key    string `json:"key"`
	Source string `json:"source"`
	// Session is the last session that used it and Finished when that
	// session ended; both absent when no kept session did.
	Session  string     `json:"session,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
	// Restarts, LastError and Warning are that session's (see
	// EnvironmentUse), summed over the parties of the role.
	Restarts  int64  `json:"restarts,omitempty"`
	LastError string `json:"last_error,omitempty"`
	Warning   string `json:"warning,omitempty"`
}

// Scope answers GET /v0/auth/scope: the scope of the token that asked.
type Scope struct {
	// Scope is "read" (the read-only token, api.read_token_file: every
	// GET route but Go's profiles) or "operator" (api.token_file:
	// everything).
	Scope string `json:"scope"`
}

// ReloadStatus is the outcome of a config reload.
type ReloadStatus struct {
	At time.Time `json:"at"`
	// Result is "applied" (the new config is in force) or "refused"
	// (the running config stays in force).
	Result string `json:"result"`
	// Reason is why a refused reload was refused; Change what an applied
	// one changed.
	Reason string `json:"reason,omitempty"`
	Change string `json:"change,omitempty"`
}

// Peer is one address-book entry with its connection state (GET /v0/peers).
type Peer struct {
	Name          string   `json:"name"`
	PeerID        string   `json:"peer_id"`
	Addrs         []string `json:"addrs"`
	Connected     bool     `json:"connected"`
	LatencyMicros float64  `json:"latency_us,omitempty"`
	// LastError is the last failed attempt's error, such as "connection
	// refused at /ip4/192.0.2.7/tcp/4001"; empty while connected.
	LastError string `json:"last_error,omitempty"`
	// Reason says in words why the peer is not connected: "closes our
	// connections at once: it may not have our peer card yet", "refuses
	// connections (nothing listens at …)", "unreachable (no answer at
	// …)"; empty while connected or before an attempt failed.
	Reason string `json:"reason,omitempty"`
	// Agent is the agent string the peer announced on connecting, such as
	// "bandit-node/0.2.0 (3f69a06)": its program, version and revision.
	// Empty if it never connected since this daemon started.
	Agent string `json:"agent,omitempty"`
	// Conn is how the peer is connected: "direct", or "relayed" when every
	// connection goes through a circuit relay; empty while disconnected.
	Conn string `json:"conn,omitempty"`
}

// Session states.
const (
	StateProposed  = "proposed"
	StateRunning   = "running"
	StateCompleted = "completed"
	StateAborted   = "aborted"
)

// Progress is a session's summed progress.
type Progress struct {
	Step  int64 `json:"step"`
	Total int64 `json:"total"`
	// Activity counts work without a known total (BAI: interactions).
	Activity int64 `json:"activity,omitempty"`
}

// Session describes a session as this node knows it (GET /v0/sessions/{id}).
type Session struct {
	ID       string `json:"id"`
	Protocol string `json:"protocol"`
	// Wire is the version of the protocol's role messages the session
	// runs on (/bandit/<protocol>/<wire>): the newest that all its
	// organizations speak.
	Wire string `json:"wire,omitempty"`
	// Name is the standing session this is a run of (the initiator's
	// [[sessions]] name), empty for a session started by hand.
	Name      string `json:"name,omitempty"`
	Initiator string `json:"initiator"`
	// Local is true when this node initiated the session.
	Local bool `json:"initiated_here"`
	// Roles maps role names to the organizations playing them, by this node's
	// address-book names (peer IDs for organizations it does not know).
	Roles map[string][]string `json:"roles"`
	// Parties lists the parties this node plays.
	Parties []string `json:"parties,omitempty"`
	State   string   `json:"state"`
	// Reason is an aborted session's, as every organization of the
	// session records it: it names an organization, a party, a step and a
	// class of failure, never one organization's local detail.
	Reason string `json:"reason,omitempty"`
	// Detail is the local error behind Reason when this organization
	// caused the abort (an exec program's stderr, an answer that did not
	// decode, a panic's value). It is this organization's alone: never
	// sent to a peer (docs/security.md, what a peer learns of a failure).
	Detail   string     `json:"detail,omitempty"`
	Created  time.Time  `json:"created"`
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
	// Updated is when this node's session last stored the record (the
	// record of a session that a crash left open keeps it). While a
	// session runs, its progress is stored at most every 30 s: after a
	// crash the record still tells how far the session got, and about
	// when.
	Updated  *time.Time `json:"updated,omitempty"`
	Progress Progress   `json:"progress"`
	// Spec is the spec as proposed (organizations by peer ID).
	Spec string `json:"spec,omitempty"`
	// Environments says, by party, what each environment of this
	// organization's own (a program, a service, a replayed file) did for
	// the parties it plays, and warns of one that starved its role. This
	// organization's alone: never sent to a peer.
	Environments map[string]EnvironmentUse `json:"environments,omitempty"`
}

// EnvironmentUse is what an environment of the organization's own did
// for one of its parties in a session.
type EnvironmentUse struct {
	// Source is the environment's source: "exec", "http" or "replay".
	Source string `json:"source"`
	// Queries counts the queries it answered; Unanswered those its role
	// asked that it had not answered when the role ended.
	Queries    int64 `json:"queries"`
	Unanswered int64 `json:"unanswered,omitempty"`
	// Seconds is the time its answers took, MaxMillis the longest.
	Seconds   float64 `json:"seconds"`
	MaxMillis float64 `json:"max_ms"`
	// Warning says how it held its role back: one that answered none of
	// its role's queries starved the role, which took no part.
	Warning string `json:"warning,omitempty"`
	// Restarts counts an exec program's restarts (after it exited or
	// closed its pipes); LastError is the last line it wrote to its
	// stderr.
	Restarts  int64  `json:"restarts,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

// Standing is one of the node's standing sessions (its [[sessions]]), as
// GET /v0/standing lists them.
type Standing struct {
	Name     string `json:"name"`
	Protocol string `json:"protocol"`
	// Schedule is as the config writes it: "every = 168h",
	// "at = Mon 02:00", "start = on-boot".
	Schedule string `json:"schedule"`
	// NextDue is when the next regular run is due; none for an on-boot
	// session that has run since the daemon started.
	NextDue *time.Time `json:"next_due,omitempty"`
	// RetryAt is when a run that aborted is tried again, and Retries how
	// many retries were made since the last regular run.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	Retries int        `json:"retries,omitempty"`
	// Active is the ID of the run in progress.
	Active string `json:"active,omitempty"`
	// Last is the last run that ended.
	Last *StandingRun `json:"last,omitempty"`
	// Removed summarizes the runs whose records the retention policy
	// ([session] keep, keep_count) removed.
	Removed *RunSummary `json:"removed,omitempty"`
}

// RunSummary summarizes the removed records of one standing session's runs.
type RunSummary struct {
	Runs      int `json:"runs"`
	Completed int `json:"completed"`
	Aborted   int `json:"aborted"`
	// First and Last are when the first and the last of them ended.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	// LastID is the last one's session ID.
	LastID string `json:"last_id"`
	// LastResult is the SHA-256 (hex) of the combined result of the last
	// of them that had one, as the record stored it; empty if none had.
	LastResult string `json:"last_result_sha256,omitempty"`
}

// StandingRun is one run of a standing session, as its scheduler saw it.
type StandingRun struct {
	// ID is the session's ID; empty for a run that could not be proposed.
	ID       string    `json:"id,omitempty"`
	State    string    `json:"state"`
	Reason   string    `json:"reason,omitempty"`
	Proposed time.Time `json:"proposed"`
	Finished time.Time `json:"finished"`
}

// Result answers GET /v0/sessions/{id}/result: the combined result (on the
// initiator) and the private results of this node's own parties.
type Result struct {
	Session Session                    `json:"session"`
	Result  json.RawMessage            `json:"result,omitempty"`
	Local   map[string]json.RawMessage `json:"local,omitempty"`
}

// Error is the body of every error response: an RFC 9457 problem
// (Content-Type application/problem+json) whose code and field say, for a
// program, what went wrong and where.
type Error struct {
	// Type is "about:blank": the class is Code; Title is the HTTP status's
	// phrase, Status its code.
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	// Detail says what went wrong, in words for the operator.
	Detail string `json:"detail"`
	// Code names the class of the error, stable across releases
	// ("spec.unknown_key", "session.not_found"; docs/api.md lists them).
	Code string `json:"code"`
	// Field is the spec's key at fault ("params.budget"), when one is.
	Field string `json:"field,omitempty"`
	// Error is Detail again, for the clients of the first v0 daemons,
	// which read it.
	Error string `json:"error"`
}

// Policy answers GET /v0/policy: what this node accepts, as the config in
// force says it and as its admission of a proposal enforces it
// (config.Admit, AdmitName): which protocols and roles it plays, for
// which initiators, within which limits, and what each role learns.
type Policy struct {
	// Node is this organization's name.
	Node string `json:"node"`
	// Protocols lists every protocol this build knows, sorted, enabled
	// or not.
	Protocols []ProtocolPolicy `json:"protocols"`
}

// ProtocolPolicy is what a node accepts of one protocol: its
// [policy.<protocol>] table.
type ProtocolPolicy struct {
	Protocol string `json:"protocol"`
	// Enabled is true when the config has [policy.<protocol>]; without
	// it the node declines every session of the protocol, its own too.
	Enabled bool `json:"enabled"`
	// Initiators are the address-book names that may propose its
	// sessions (policy.<protocol>.initiators); "*" is any address-book
	// peer. This node may always propose its own.
	Initiators []string `json:"initiators,omitempty"`
	// AnyStanding is true when the node takes part in any session of the
	// protocol, started by hand or standing; otherwise Standing lists the
	// standing sessions' names it accepts ("" for one started by hand)
	// (policy.<protocol>.sessions).
	AnyStanding bool     `json:"any_session"`
	Standing    []string `json:"sessions,omitempty"`
	// Roles are the protocol's roles, each with whether this node plays
	// it.
	Roles []RolePolicy `json:"roles"`
	// Limits bound what an initiator may choose: the policy's max and
	// min tables and the daemon's own minimums (a key size), sorted by
	// key.
	Limits []PolicyLimit `json:"limits,omitempty"`
}

// RolePolicy is one role of a protocol as a node's policy takes it.
type RolePolicy struct {
	Role string `json:"role"`
	// Doc says what the role does; Learns what a party of it learns of
	// the other organizations' data (docs/security.md's table).
	Doc    string `json:"doc"`
	Learns string `json:"learns"`
	// Accepted is true when policy.<protocol>.roles lists the role (or
	// "*").
	Accepted bool `json:"accepted"`
	// Environment is where the role's outcomes come from on this node:
	// "simulated", "exec", "http" or "replay" (its [local] table's
	// source).
	Environment string `json:"environment"`
	// Missing says why this node could not play an accepted role now:
	// the local data the role needs is not configured. Empty when it
	// can.
	Missing string `json:"missing,omitempty"`
}

// PolicyLimit is one bound on a parameter, or on a public figure computed
// from the parameters (a privacy budget's total), of a proposed session.
type PolicyLimit struct {
	// Key is the parameter's or figure's name (params.<key>).
	Key string `json:"key"`
	// Bound is "max" (the value may not exceed Value) or "min" (it may
	// not be under Value).
	Bound string  `json:"bound"`
	Value float64 `json:"value"`
	// Default is true for a daemon's own minimum, which applies while
	// the policy does not set the key itself (samba's paillier_bits ≥
	// 2048).
	Default bool `json:"default,omitempty"`
	// Figure describes a computed figure; empty for a parameter.
	Figure string `json:"figure,omitempty"`
}

// RefusedPeers answers GET /v0/peers/refused: the peers that tried to
// connect without being in the address book, and the peer card to send
// their operators.
type RefusedPeers struct {
	// PeerCard is this node's own [[peers]] block, as `bandit-node id
	// --peer-card` writes it: what a partner's operator adds to its
	// address book (bandit-node peers add) for the two nodes to connect.
	PeerCard string `json:"peer_card"`
	// Refused lists the peers the connection gater refused on an inbound
	// connection since the daemon started, once each, most recent first;
	// at most the 64 most recent.
	Refused []RefusedPeer `json:"refused"`
}

// RefusedPeer is a peer that tried to connect without being in the address
// book.
type RefusedPeer struct {
	PeerID string `json:"peer_id"`
	// Addr is the remote address of its last attempt.
	Addr string `json:"addr,omitempty"`
	// First and Last are when it first and last tried, Count how many
	// times.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	Count uint64    `json:"count"`
}

// PeerAdded answers POST /v0/peers: the peer whose card was added to the
// config file, and what the reload that followed changed.
type PeerAdded struct {
	Name   string       `json:"name"`
	PeerID string       `json:"peer_id"`
	Change ConfigChange `json:"change"`
}
