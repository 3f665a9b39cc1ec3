package ratchetnats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	natsgo "github.com/nats-io/nats.go"

	"github.com/ratchet-go/ratchet/coordination/internal/hub"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// DefaultCluster is the cluster name when Options.Cluster is empty.
const DefaultCluster = "default"

// SubjectPrefix is the start of every subject; the cluster's name follows
// it.
const SubjectPrefix = "ratchet.wakeup."

// ReconnectWait is the pause between two reconnection attempts of the
// connection New makes (nats.go adds up to 100 ms of jitter).
const ReconnectWait = 250 * time.Millisecond

// Options configure a Coordinator. The zero value is ready to use.
type Options struct {
	// Cluster names the cluster, so that several share one NATS system:
	// the subject is SubjectPrefix + Cluster, so Cluster is one or more
	// tokens (no spaces, no wildcards "*" and ">"). Empty means
	// DefaultCluster.
	Cluster string
	// Logger receives publish failures (one line per outage), losses of
	// the connection and reconnections; nil means slog.Default().
	Logger *slog.Logger
	// PublishTimeout bounds one publish; zero means 1 s. NotifyNewWork
	// never waits for it.
	PublishTimeout time.Duration
}

// Coordinator is a spi.ClusterCoordinator over NATS. Create it with New
// or NewWithConn; it is safe for concurrent use.
type Coordinator struct {
	conn    *natsgo.Conn
	owns    bool // close the connection at Close
	sub     *natsgo.Subscription
	subject string
	hub     *hub.Hub
	log     *slog.Logger
	// publishTimeout bounds PublishWakeup's flush.
	publishTimeout time.Duration

	closeOnce sync.Once
	closeErr  error
}

var (
	_ spi.ClusterCoordinator = (*Coordinator)(nil)
	_ spi.FinishPublisher    = (*Coordinator)(nil)
)

// New connects to the NATS server(s) at url (nats://host:port, several
// comma-separated; see nats.Connect) and subscribes to the cluster's
// subject. It returns once the server has the subscription, or fails when
// the server cannot be reached (or ctx ends first): a node that should
// start without wakeups then runs with no coordinator. The connection
// reconnects for ever; Close closes it.
func New(ctx context.Context, url string, opts Options) (*Coordinator, error) {
	subject, err := subjectOf(opts.Cluster)
	if err != nil {
		return nil, err
	}
	log := logger(opts)
	var c *Coordinator
	ready := make(chan struct{}) // c is set: the handlers may use it
	natsOpts := []natsgo.Option{
		natsgo.Name("ratchet coordinator"),
		natsgo.MaxReconnects(-1),
		natsgo.ReconnectWait(ReconnectWait),
		// Nothing buffered while reconnecting: a late wakeup is useless,
		// and a failed publish is what tells the log of the outage.
		natsgo.ReconnectBufSize(-1),
		natsgo.DisconnectErrHandler(func(_ *natsgo.Conn, err error) {
			if err != nil {
				log.Warn("ratchet: lost the NATS connection; reconnecting", "coordinator", "nats", "error", err)
			}
		}),
		natsgo.ReconnectHandler(func(nc *natsgo.Conn) {
			log.Info("ratchet: NATS connection back", "coordinator", "nats", "server", nc.ConnectedUrlRedacted())
			<-ready
			go c.confirm(context.Background())
		}),
		natsgo.NoCallbacksAfterClientClose(),
	}
	if d, ok := ctx.Deadline(); ok {
		natsOpts = append(natsOpts, natsgo.Timeout(max(time.Until(d), time.Millisecond)))
	}
	nc, err := natsgo.Connect(url, natsOpts...)
	if err != nil {
		return nil, fmt.Errorf("ratchet nats coordinator: connect: %w", err)
	}
	c, err = start(ctx, nc, true, subject, log, opts)
	close(ready)
	return c, err
}

// NewWithConn is New over a connection the caller made (credentials, TLS,
// servers of its own); Close leaves the connection open, unsubscribing
// only. Give it nats.MaxReconnects(-1): by default nats.go gives up after
// 60 attempts, and the coordinator would then stay silent.
func NewWithConn(ctx context.Context, nc *natsgo.Conn, opts Options) (*Coordinator, error) {
	if nc == nil {
		return nil, errors.New("ratchet nats coordinator: nil connection")
	}
	subject, err := subjectOf(opts.Cluster)
	if err != nil {
		return nil, err
	}
	return start(ctx, nc, false, subject, logger(opts), opts)
}

func logger(opts Options) *slog.Logger {
	if opts.Logger != nil {
		return opts.Logger
	}
	return slog.Default()
}

func subjectOf(cluster string) (string, error) {
	if cluster == "" {
		cluster = DefaultCluster
	}
	for _, tok := range strings.Split(cluster, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n") {
			return "", fmt.Errorf("ratchet nats coordinator: cluster %q is not a subject's tokens (no spaces, empty tokens or wildcards)", cluster)
		}
	}
	return SubjectPrefix + cluster, nil
}

func start(ctx context.Context, nc *natsgo.Conn, owns bool, subject string, log *slog.Logger, opts Options) (*Coordinator, error) {
	c := &Coordinator{conn: nc, owns: owns, subject: subject, log: log, publishTimeout: opts.PublishTimeout}
	if c.publishTimeout <= 0 {
		c.publishTimeout = hub.DefaultPublishTimeout
	}
	c.hub = hub.New(func(_ context.Context, msg []byte) error {
		// A core publish only buffers (flushed at once by nats.go's
		// flusher): it never waits for the server.
		return nc.Publish(subject, msg)
	}, hub.Options{Name: "nats", Logger: log, PublishTimeout: opts.PublishTimeout})
	sub, err := nc.Subscribe(subject, func(m *natsgo.Msg) { c.hub.Deliver(m.Data) })
	if err == nil {
		c.sub = sub
		// The default pending limits (65,536 messages) are plenty: Deliver
		// never blocks.
		err = c.confirm(ctx)
	}
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("ratchet nats coordinator: subscribe to %s: %w", subject, err)
	}
	return c, nil
}

// confirm waits for the server to have processed the subscription (a
// PING answered after the SUB) and records it.
func (c *Coordinator) confirm(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	if err := c.conn.FlushWithContext(ctx); err != nil {
		return err
	}
	c.hub.Subscribed()
	return nil
}

// Subject returns the NATS subject the coordinator publishes to and
// listens on.
func (c *Coordinator) Subject() string { return c.subject }

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

// PublishWakeup publishes w at once and returns when the server has
// taken it (a flush), or the error (within Options.PublishTimeout): for a
// process that exits right after, such as the ratchet command's cancel,
// where NotifyClaimsChanged would queue the notice and Close drop it.
func (c *Coordinator) PublishWakeup(ctx context.Context, w spi.WakeupHint) error {
	if err := c.hub.PublishNow(ctx, w); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.publishTimeout)
		defer cancel()
	}
	if err := c.conn.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("ratchet nats coordinator: flush: %w", err)
	}
	return nil
}

// RegisterWakeupListener adds a listener, called from a goroutine of its
// own for every wakeup received, the node's own included (the engine
// ignores those by Source).
func (c *Coordinator) RegisterWakeupListener(fn func(spi.WakeupHint)) { c.hub.Register(fn) }

// Close stops publishing and listening and closes the connection (only
// the subscription, with NewWithConn). Calling it twice is harmless.
func (c *Coordinator) Close() error {
	c.closeOnce.Do(func() {
		c.hub.Close()
		var err error
		if c.owns {
			c.conn.Close()
		} else if c.sub != nil {
			if err = c.sub.Unsubscribe(); errors.Is(err, natsgo.ErrConnectionClosed) {
				err = nil
			}
		}
		if err != nil {
			c.closeErr = fmt.Errorf("ratchet nats coordinator: close: %w", err)
		}
	})
	return c.closeErr
}
