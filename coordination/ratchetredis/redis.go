package ratchetredis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	goredis "github.com/redis/go-redis/v9"

	"github.com/ratchet-go/ratchet/coordination/internal/hub"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// DefaultCluster is the cluster name when Options.Cluster is empty.
const DefaultCluster = "default"

// ChannelPrefix is the start of every channel name; the cluster's name
// follows it.
const ChannelPrefix = "ratchet:wakeup:"

// Options configure a Coordinator. The zero value is ready to use.
type Options struct {
	// Cluster names the cluster, so that several share one Redis server:
	// the channel is ChannelPrefix + Cluster. Empty means DefaultCluster.
	Cluster string
	// Logger receives publish failures (one line per outage) and
	// reconnections; nil means slog.Default().
	Logger *slog.Logger
	// PublishTimeout bounds one publish; zero means 1 s. NotifyNewWork
	// never waits for it.
	PublishTimeout time.Duration
}

// Coordinator is a spi.ClusterCoordinator over Redis pub/sub. Create it
// with New or NewWithClient; it is safe for concurrent use.
type Coordinator struct {
	client  goredis.UniversalClient
	owns    bool // close the client at Close
	pubsub  *goredis.PubSub
	channel string
	hub     *hub.Hub
	done    chan struct{} // the receiving goroutine has ended

	closeOnce sync.Once
	closeErr  error
}

var (
	_ spi.ClusterCoordinator = (*Coordinator)(nil)
	_ spi.FinishPublisher    = (*Coordinator)(nil)
)

// New connects to the Redis server at url (redis://[user:password@]host:port[/db],
// rediss:// for TLS, unix://; see go-redis's ParseURL) and subscribes to
// the cluster's channel. It returns once the server has confirmed the
// subscription, or fails when ctx ends first (the server unreachable):
// a node that should start without wakeups then runs with no coordinator.
// Close closes the connection.
func New(ctx context.Context, url string, opts Options) (*Coordinator, error) {
	o, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("ratchet redis coordinator: %w", err)
	}
	c, err := start(ctx, goredis.NewClient(o), true, opts)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// NewWithClient is New over a client the caller built (Sentinel, Cluster,
// TLS settings of its own); Close leaves the client open.
func NewWithClient(ctx context.Context, client goredis.UniversalClient, opts Options) (*Coordinator, error) {
	if client == nil {
		return nil, errors.New("ratchet redis coordinator: nil client")
	}
	return start(ctx, client, false, opts)
}

func start(ctx context.Context, client goredis.UniversalClient, owns bool, opts Options) (*Coordinator, error) {
	if opts.Cluster == "" {
		opts.Cluster = DefaultCluster
	}
	c := &Coordinator{client: client, owns: owns, channel: ChannelPrefix + opts.Cluster, done: make(chan struct{})}
	c.hub = hub.New(func(ctx context.Context, msg []byte) error {
		return c.client.Publish(ctx, c.channel, msg).Err()
	}, hub.Options{Name: "redis", Logger: opts.Logger, PublishTimeout: opts.PublishTimeout})
	// Subscribe sends SUBSCRIBE; the confirmation comes through the
	// channel, as does the one after each reconnection.
	c.pubsub = client.Subscribe(ctx, c.channel)
	msgs := c.pubsub.ChannelWithSubscriptions(goredis.WithChannelSize(1024))
	go c.receive(msgs)
	if err := c.hub.WaitSubscriptions(ctx, 1); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ratchet redis coordinator: subscribe to %s: %w", c.channel, err)
	}
	return c, nil
}

// receive hands every message to the hub until the PubSub is closed.
func (c *Coordinator) receive(msgs <-chan any) {
	defer close(c.done)
	for m := range msgs {
		switch m := m.(type) {
		case *goredis.Message:
			c.hub.Deliver([]byte(m.Payload))
		case *goredis.Subscription:
			if m.Kind == "subscribe" {
				c.hub.Subscribed()
			}
		}
	}
}

// Channel returns the Redis channel the coordinator publishes to and
// listens on.
func (c *Coordinator) Channel() string { return c.channel }

// NotifyNewWork publishes a wakeup from source, without waiting for it:
// see the package documentation. ctx is not used (the publish outlives the
// submission that caused it).
func (c *Coordinator) NotifyNewWork(_ context.Context, p spi.Priority, source string) {
	c.hub.Notify(p, source)
}

// NotifyClaimsChanged publishes that a cancel took claims of RUNNING jobs
// away: every node's listener hears a wakeup with CheckClaims and checks
// its running claims at once. It implements [spi.ClaimsPublisher].
func (c *Coordinator) NotifyClaimsChanged(_ context.Context, source string) {
	c.hub.NotifyClaims(source)
}

// NotifyWatching publishes, without waiting, that a process waits for the
// end of the jobs of ids (Client.WaitJob): the nodes that finish one of
// them publish its end. It implements [spi.FinishPublisher].
func (c *Coordinator) NotifyWatching(_ context.Context, ids []uuid.UUID, source string) {
	c.hub.NotifyWatching(ids, source)
}

// NotifyFinished publishes, without waiting, that a node finished the
// watched jobs of ids. It implements [spi.FinishPublisher].
func (c *Coordinator) NotifyFinished(_ context.Context, ids []uuid.UUID, source string) {
	c.hub.NotifyFinished(ids, source)
}

// PublishWakeup publishes w at once and returns when Redis has taken it,
// or the error (within Options.PublishTimeout): for a process that exits
// right after, such as the ratchet command's cancel, where
// NotifyClaimsChanged would queue the notice and Close drop it.
func (c *Coordinator) PublishWakeup(ctx context.Context, w spi.WakeupHint) error {
	return c.hub.PublishNow(ctx, w)
}

// RegisterWakeupListener adds a listener, called from a goroutine of its
// own for every wakeup received, the node's own included (the engine
// ignores those by Source).
func (c *Coordinator) RegisterWakeupListener(fn func(spi.WakeupHint)) { c.hub.Register(fn) }

// Close stops publishing and listening and closes the connection (only
// the subscription's, with NewWithClient). Calling it twice is harmless.
func (c *Coordinator) Close() error {
	c.closeOnce.Do(func() {
		c.hub.Close()
		err := c.pubsub.Close()
		<-c.done
		if c.owns {
			err = errors.Join(err, c.client.Close())
		}
		if err != nil {
			c.closeErr = fmt.Errorf("ratchet redis coordinator: close: %w", err)
		}
	})
	return c.closeErr
}
