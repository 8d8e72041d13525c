// Package backup writes and restores a backup archive of one node: its
// identity key, API tokens, TLS files, config and everything the daemon
// keeps in its data directory (session records, run summaries, the
// standing sessions' state, session logs).
//
// An archive is a gzip-compressed tar file. Each entry is a regular file
// named after its role (config/, identity/, token/, read-token/, tls-cert/,
// tls-key/, tls-ca/, data/); the last entry, manifest.json, lists every
// other one with its role, where it was, its size and its SHA-256, and
// names the node and its peer ID. Reading an archive checks all of it
// before anything is written: an entry that is not a plain file under a
// clean relative name, that the manifest does not list, whose size or hash
// differs from the manifest's, or an archive cut short, is refused with
// the reason.
//
// Write reads a running daemon's files without its lock: records, the
// summaries and the standing state are replaced whole by the daemon
// (temporary file, then rename), so each is read as one whole version;
// session logs grow by appending, and are cut at their last complete line.
// Restore writes into a new data directory (through an os.Root, so no
// entry reaches outside it), puts the config where it is told, rewrites
// the config's paths when they must change, and checks that the restored
// identity gives the node its old peer ID.
//
// It imports the config schema only; nothing of the daemon, the network or
// the control API (TestDependencies).
package backup
