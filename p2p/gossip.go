package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
)

const (
	// gossipMaxMessageSize bounds one gossip message (pubsub's default).
	gossipMaxMessageSize = 1 << 20
	// gossipSubscriptionBuffer is how many accepted messages may wait for a
	// topic's handler; pubsub drops messages for a subscriber this far behind.
	gossipSubscriptionBuffer = 1024
)

// Gossip is gossipsub over a Host: strict message signing, flood publishing
// (so a message published before the mesh forms still reaches every
// subscribed peer), and only address-book peers as pubsub peers.
type Gossip struct {
	h      *Host
	ps     *pubsub.PubSub
	logger *slog.Logger
}

// NewGossip starts gossipsub on h. It runs until ctx ends.
func NewGossip(ctx context.Context, h *Host) (*Gossip, error) {
	ps, err := pubsub.NewGossipSub(ctx, h.h,
		pubsub.WithFloodPublish(true),
		pubsub.WithMessageSignaturePolicy(pubsub.StrictSign),
		pubsub.WithPeerFilter(func(id peer.ID, _ string) bool { return h.Known(id) }),
		pubsub.WithMaxMessageSize(gossipMaxMessageSize),
		pubsub.WithLogger(h.logger.With("component", "pubsub")),
	)
	if err != nil {
		return nil, fmt.Errorf("starting gossipsub: %w", err)
	}
	return &Gossip{h: h, ps: ps, logger: h.logger}, nil
}

// TopicStats are a Topic's validation and delivery counters.
type TopicStats struct {
	// Accepted counts messages that passed validation, including our own.
	Accepted uint64
	// Rejected counts messages rejected for a non-participant author or a
	// validate error, including our own refused publications.
	Rejected uint64
	// Delivered counts messages handed to the handler.
	Delivered uint64
}

// Topic is a joined gossipsub topic with a participant-only validator.
type Topic struct {
	g       *Gossip
	name    string
	topic   *pubsub.Topic
	sub     *pubsub.Subscription
	cancel  context.CancelFunc
	done    chan struct{} // closed when the handler goroutine ends
	logger  *slog.Logger
	allowed map[peer.ID]struct{} // immutable

	accepted, rejected, delivered atomic.Uint64

	closeOnce sync.Once
	closeErr  error
}

// Join subscribes to topic. Its validator accepts a message only if its
// author (the signer, msg.GetFrom()) is in allowed and validate(author, data)
// returns nil; anything else is rejected, and a validate error is logged with
// its reason. validate runs inline in pubsub's validation pipeline and must be
// cheap (decode and check; no heavy crypto). handler is called, from a
// goroutine owned by the Topic and one message at a time, for every accepted
// message authored by another peer; our own messages are skipped. Messages
// reach handler in the order the subscription delivers them; gossipsub does
// not promise a publisher's order. Only one Join per topic name at a time.
func (g *Gossip) Join(topic string, allowed []peer.ID, validate func(from peer.ID, data []byte) error, handler func(from peer.ID, data []byte)) (*Topic, error) {
	if validate == nil || handler == nil {
		return nil, fmt.Errorf("joining topic %q: validate and handler are required", topic)
	}
	t := &Topic{
		g:       g,
		name:    topic,
		done:    make(chan struct{}),
		logger:  g.logger.With("topic", topic),
		allowed: make(map[peer.ID]struct{}, len(allowed)),
	}
	for _, id := range allowed {
		t.allowed[id] = struct{}{}
	}
	validator := func(_ context.Context, _ peer.ID, msg *pubsub.Message) pubsub.ValidationResult {
		return t.validate(msg, validate)
	}
	if err := g.ps.RegisterTopicValidator(topic, pubsub.ValidatorEx(validator), pubsub.WithValidatorInline(true)); err != nil {
		return nil, fmt.Errorf("joining topic %q: registering its validator: %w", topic, err)
	}
	pt, err := g.ps.Join(topic)
	if err != nil {
		g.ps.UnregisterTopicValidator(topic)
		return nil, fmt.Errorf("joining topic %q: %w", topic, err)
	}
	sub, err := pt.Subscribe(pubsub.WithBufferSize(gossipSubscriptionBuffer))
	if err != nil {
		pt.Close()
		g.ps.UnregisterTopicValidator(topic)
		return nil, fmt.Errorf("subscribing to topic %q: %w", topic, err)
	}
	t.topic, t.sub = pt, sub
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	go t.deliver(ctx, handler)
	return t, nil
}

// validate is the topic validator.
func (t *Topic) validate(msg *pubsub.Message, validate func(peer.ID, []byte) error) pubsub.ValidationResult {
	author := msg.GetFrom()
	if _, ok := t.allowed[author]; !ok {
		t.rejected.Add(1)
		t.logger.Warn("rejecting a gossip message from a non-participant", "author", t.g.h.describe(author), "forwarded_by", t.g.h.describe(msg.ReceivedFrom))
		return pubsub.ValidationReject
	}
	if err := validate(author, msg.Data); err != nil {
		t.rejected.Add(1)
		t.logger.Warn("rejecting an invalid gossip message", "author", t.g.h.describe(author), "reason", err)
		return pubsub.ValidationReject
	}
	t.accepted.Add(1)
	return pubsub.ValidationAccept
}

// deliver hands accepted messages to handler until the topic is closed.
func (t *Topic) deliver(ctx context.Context, handler func(peer.ID, []byte)) {
	defer close(t.done)
	self := t.g.h.ID()
	for {
		msg, err := t.sub.Next(ctx)
		if err != nil {
			return
		}
		from := msg.GetFrom()
		if from == self {
			continue
		}
		t.delivered.Add(1)
		handler(from, msg.Data)
	}
}

// Publish signs and publishes data to the topic. Our own validator runs
// first, so Publish fails if this host is not among the topic's participants
// or validate rejects data.
func (t *Topic) Publish(ctx context.Context, data []byte) error {
	if err := t.topic.Publish(ctx, data); err != nil {
		return fmt.Errorf("publishing %d bytes to topic %q: %w", len(data), t.name, err)
	}
	return nil
}

// ListPeers returns the peers known to be subscribed to the topic. A message
// published now reaches these peers directly.
func (t *Topic) ListPeers() []peer.ID { return t.topic.ListPeers() }

// Stats returns the topic's counters.
func (t *Topic) Stats() TopicStats {
	return TopicStats{Accepted: t.accepted.Load(), Rejected: t.rejected.Load(), Delivered: t.delivered.Load()}
}

// Close cancels the subscription, waits for the handler goroutine to end,
// unregisters the validator and leaves the topic. It must not be called from
// the handler. It is safe to call more than once.
func (t *Topic) Close() error {
	t.closeOnce.Do(func() {
		t.cancel()
		t.sub.Cancel()
		<-t.done
		var errs []error
		if err := t.g.ps.UnregisterTopicValidator(t.name); err != nil {
			errs = append(errs, fmt.Errorf("unregistering the validator of topic %q: %w", t.name, err))
		}
		if err := t.topic.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing topic %q: %w", t.name, err))
		}
		t.closeErr = errors.Join(errs...)
	})
	return t.closeErr
}
