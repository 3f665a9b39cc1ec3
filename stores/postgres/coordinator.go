package postgres

import (
	"context"
	"strconv"
	"sync"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Coordinator is an spi.ClusterCoordinator over PostgreSQL LISTEN/NOTIFY on
// the store's wakeup channel: NotifyNewWork publishes a wakeup naming its
// source node (NotifyWatching and NotifyFinished, Client.WaitJob's
// notices, too), and the listeners receive every wakeup of the schema — those
// of other coordinators and those the store publishes itself when inserts
// (including transactional ones) commit. Engines ignore their own by Source.
// Create it with Store.Coordinator; Close it before the store.
type Coordinator struct {
	s      *Store
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.RWMutex
	listeners []func(spi.WakeupHint)
	listening bool
	done      chan struct{}
}

var (
	_ spi.ClusterCoordinator = (*Coordinator)(nil)
	_ spi.FinishPublisher    = (*Coordinator)(nil)
)

// Coordinator returns a new coordinator on the store's wakeup channel.
func (s *Store) Coordinator() *Coordinator {
	ctx, cancel := context.WithCancel(context.Background())
	return &Coordinator{s: s, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// NotifyNewWork publishes a best-effort wakeup; errors are dropped (polling
// covers a lost wakeup).
func (c *Coordinator) NotifyNewWork(ctx context.Context, p spi.Priority, source string) {
	payload := strconv.Itoa(int(min(max(p, 0), 4)))
	if source != "" {
		payload += "|" + source
	}
	_, _ = c.s.pool.Exec(ctx, c.s.sql.notify, c.s.channel, payload)
}

// NotifyWatching publishes that a process waits for the end of the jobs
// of ids (Client.WaitJob), in notifications of at most spi.MaxNoticeIDs
// ids; errors are dropped (the waiter polls). It implements
// [spi.FinishPublisher].
func (c *Coordinator) NotifyWatching(ctx context.Context, ids []uuid.UUID, source string) {
	c.s.NotifyWatching(ctx, ids, source)
}

// NotifyFinished publishes that a node finished the watched jobs of ids.
// It implements [spi.FinishPublisher].
func (c *Coordinator) NotifyFinished(ctx context.Context, ids []uuid.UUID, source string) {
	c.s.NotifyFinished(ctx, ids, source)
}

// RegisterWakeupListener adds a listener. The first one starts the LISTEN
// connection, which reconnects with backoff until Close.
func (c *Coordinator) RegisterWakeupListener(fn func(spi.WakeupHint)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listeners = append(c.listeners, fn)
	if c.listening || c.ctx.Err() != nil {
		return
	}
	c.listening = true
	go func() {
		defer close(c.done)
		_ = c.s.ListenWakeups(c.ctx, func(h spi.WakeupHint) {
			c.mu.RLock()
			defer c.mu.RUnlock()
			for _, l := range c.listeners {
				l(h)
			}
		})
	}()
}

// Close stops listening; calling it twice is harmless.
func (c *Coordinator) Close() error {
	c.cancel()
	c.mu.Lock()
	listening := c.listening
	c.listeners = nil
	c.mu.Unlock()
	if listening {
		<-c.done
	}
	return nil
}
