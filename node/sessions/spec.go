package sessions

import "github.com/bandit-node/bandit-node/protocol"

// parseSpec parses a spec's text, prefixing errors with name. It is the one
// place the daemon parses a spec, once on each organization's path of a
// session: StartSession at the initiator, admitProposal at a participant.
// (A standing session's spec is parsed once, at the config's load.) From
// then on the parsed and checked spec (protocol.CheckedSpec, or its parts)
// is carried; the text stays the wire format and what records keep.
func (n *Runtime) parseSpec(name string, text []byte) (*protocol.Spec, error) {
	n.specParses.Add(1)
	return protocol.ParseSpec(name, text)
}
