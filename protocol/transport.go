package protocol

import "context"

// Transport carries one party's messages within a session: direct messages to
// another party, and messages published on the session topic to every other
// party. The daemon adapts libp2p streams and gossipsub to it; MemNetwork is the
// in-memory implementation.
type Transport interface {
	// Send delivers m to m.To, or publishes it to every other party when
	// m.Topic is set. m.From must be a party this transport speaks for.
	Send(ctx context.Context, m Message) error
	// Incoming yields the messages addressed to the parties this transport
	// speaks for, direct and topic alike, with From set by the transport.
	Incoming() <-chan Message
}
