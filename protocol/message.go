package protocol

import "fmt"

// Message is one protocol message between parties of a session. Its Body is the
// protocol family's own encoding (protobuf); drivers never look inside it.
type Message struct {
	// From is the sending party. Drivers set it from the authenticated sender and
	// never trust a value claimed inside a body.
	From Party
	// To is the recipient of a direct message; it is ignored when Topic is set.
	To Party
	// Topic marks a message published on the session topic: every other party of
	// the session receives it.
	Topic bool
	// Body is the encoded protocol message.
	Body []byte
}

// String describes the message for logs without its body.
func (m Message) String() string {
	if m.Topic {
		return fmt.Sprintf("%s -> topic (%d bytes)", m.From, len(m.Body))
	}
	return fmt.Sprintf("%s -> %s (%d bytes)", m.From, m.To, len(m.Body))
}
