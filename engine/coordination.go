package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// LocalCoordinator is an in-process spi.ClusterCoordinator: engines that
// share one carry wakeups to each other (several nodes in one process, as in
// tests, or an enqueue-only client beside a worker). Create it with
// NewLocalCoordinator.
type LocalCoordinator struct {
	mu        sync.RWMutex
	listeners []func(spi.WakeupHint)
	closed    bool
}

var _ spi.ClusterCoordinator = (*LocalCoordinator)(nil)

// NewLocalCoordinator returns an empty in-process coordinator.
func NewLocalCoordinator() *LocalCoordinator { return &LocalCoordinator{} }

// NotifyNewWork calls every listener with the hint.
func (c *LocalCoordinator) NotifyNewWork(_ context.Context, p spi.Priority, source string) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return
	}
	for _, fn := range c.listeners {
		fn(spi.WakeupHint{Priority: p, Source: source})
	}
}

// RegisterWakeupListener adds a listener.
func (c *LocalCoordinator) RegisterWakeupListener(fn func(spi.WakeupHint)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listeners = append(c.listeners, fn)
}

// Close stops delivering wakeups.
func (c *LocalCoordinator) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.listeners = nil
	return nil
}

// ErrLeasesUnsupported reports a store without spi.LeaseStore.
var ErrLeasesUnsupported = errors.New("ratchet: the store does not grant leases")

// StartupCoordinator is the spec's lease-based coordinator for destructive
// start-up work and cluster-singleton work: a named lease held by one node
// at a time, for a time-to-live, kept in the store.
type StartupCoordinator struct {
	leases spi.LeaseStore
	owner  string
	now    func() time.Time
}

// StartupCoordinator returns the engine's coordinator, owned by its node.
// It fails with ErrLeasesUnsupported when the store grants no leases.
func (e *Engine) StartupCoordinator() (*StartupCoordinator, error) {
	ls := e.caps.Leases
	if ls == nil {
		return nil, fmt.Errorf("%w (%T)", ErrLeasesUnsupported, e.store)
	}
	return &StartupCoordinator{leases: ls, owner: e.opts.NodeID, now: func() time.Time { return e.opts.clock.Now().UTC().Truncate(time.Microsecond) }}, nil
}

// TryAcquire takes (or renews) the lease for action for ttl and reports
// whether this node holds it.
func (c *StartupCoordinator) TryAcquire(ctx context.Context, action string, ttl time.Duration) (bool, error) {
	return c.leases.TryAcquireLease(ctx, action, c.owner, ttl, c.now())
}

// Release gives up the lease for action if this node holds it.
func (c *StartupCoordinator) Release(ctx context.Context, action string) error {
	return c.leases.ReleaseLease(ctx, action, c.owner)
}
