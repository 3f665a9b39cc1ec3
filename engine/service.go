package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// A Service is background work the engine runs beside its own parts: the
// maintenance services (a recurring scheduler, an archiver, log retention)
// and any of the application's. The engine starts every service after its
// node is registered and stops them first, with claiming, before it drains.
type Service interface {
	// Name names the service in logs and errors.
	Name() string
	// Run does the service's work until ctx ends, then returns nil. An error
	// (or a panic) before that is logged, and Run is called again after a
	// backoff that doubles from one second to a minute.
	Run(ctx context.Context, h ServiceHost) error
}

// ServiceHost is what a service gets from the engine that runs it.
type ServiceHost struct {
	// NodeID is the engine's node.
	NodeID string
	// Store is the engine's store; Client submits through the engine.
	Store  spi.Store
	Client *ratchet.Client
	// Clock is the engine's clock: a service waits on it, never on the
	// system timer, so that tests drive it on a fake clock.
	Clock clockwork.Clock
	// Logger is tagged with the node and the service.
	Logger *slog.Logger

	// draw is the uniform draw in [0, 1) of the pass services' jitter
	// (passWait); nil is math/rand's.
	draw func() float64
}

// Singleton returns a service that runs svc on one node of the fleet at a
// time: the node that holds the lease named lease (spi.LeaseStore), taken
// for ttl and renewed every ttl/3. A node that cannot renew stops svc
// before the lease runs out; on Stop the lease is released. An engine whose
// store grants no leases refuses a singleton in New.
func Singleton(lease string, ttl time.Duration, svc Service) Service {
	return &singleton{lease: lease, ttl: ttl, svc: svc}
}

type singleton struct {
	lease string
	ttl   time.Duration
	svc   Service
}

func (s *singleton) Name() string { return s.svc.Name() }

func (s *singleton) validate(caps spi.Capabilities) error {
	switch {
	case s.svc == nil:
		return fmt.Errorf("%w: singleton %q wraps a nil service", ratchet.ErrInvalidArgument, s.lease)
	case s.lease == "":
		return fmt.Errorf("%w: singleton service %q has an empty lease name", ratchet.ErrInvalidArgument, s.svc.Name())
	case s.ttl <= 0:
		return fmt.Errorf("%w: singleton service %q has a non-positive lease ttl %s", ratchet.ErrInvalidArgument, s.svc.Name(), s.ttl)
	case caps.Leases == nil:
		return fmt.Errorf("singleton service %q: %w", s.svc.Name(), ErrLeasesUnsupported)
	}
	return nil
}

// Run takes the lease, runs the wrapped service while it holds it, and
// gives it up when ctx ends.
func (s *singleton) Run(ctx context.Context, h ServiceHost) error {
	leases := spi.CapabilitiesOf(h.Store).Leases
	acquire := func(ctx context.Context) (bool, error) {
		return leases.TryAcquireLease(ctx, s.lease, h.NodeID, s.ttl, h.Clock.Now().UTC().Truncate(time.Microsecond))
	}
	t := h.Clock.NewTicker(max(s.ttl/3, time.Millisecond))
	defer t.Stop()
	var cur *child // the wrapped service while this node holds the lease
	defer func() {
		cur.end()
		_ = leases.ReleaseLease(context.WithoutCancel(ctx), s.lease, h.NodeID)
	}()
	for {
		held, err := acquire(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			h.Logger.Warn("lease renewal failed; stopping the singleton service", "lease", s.lease, "err", err)
			cur = cur.end()
		case held && cur == nil:
			h.Logger.Debug("lease taken; running the singleton service", "lease", s.lease)
			cur = startChild(ctx, s.svc, h)
		case !held && cur != nil:
			h.Logger.Warn("lease lost; stopping the singleton service", "lease", s.lease)
			cur = cur.end()
		}
		var done <-chan error
		if cur != nil {
			done = cur.done
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			cur.stop()
			cur = nil
			if err == nil {
				err = errors.New("returned before the engine stopped")
			}
			return err // the lease is released; the engine restarts the service
		case <-t.Chan():
		}
	}
}

// child is a service run on a context of its own.
type child struct {
	stop context.CancelFunc
	done chan error
}

func startChild(ctx context.Context, svc Service, h ServiceHost) *child {
	cctx, stop := context.WithCancel(ctx)
	c := &child{stop: stop, done: make(chan error, 1)}
	go func() { c.done <- runService(cctx, svc, h) }()
	return c
}

// end stops the child and waits for it; it returns nil, the no-child
// value, and does nothing on nil.
func (c *child) end() *child {
	if c != nil {
		c.stop()
		<-c.done
	}
	return nil
}

// runService runs svc once, turning a panic into an error.
func runService(ctx context.Context, svc Service, h ServiceHost) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return svc.Run(ctx, h)
}

// superviseService runs svc until ctx ends, restarting it after an error
// with a backoff on the host's clock.
func superviseService(ctx context.Context, svc Service, h ServiceHost) {
	backoff := time.Second
	for {
		err := runService(ctx, svc, h)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("returned before the engine stopped")
		}
		h.Logger.Error("service failed; restarting it", "err", err, "after", backoff)
		select {
		case <-ctx.Done():
			return
		case <-h.Clock.After(backoff):
		}
		backoff = min(2*backoff, time.Minute)
	}
}

// group runs goroutines that end together: when its context is cancelled,
// stop waits for all of them.
type group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newGroup(parent context.Context) *group {
	g := &group{}
	g.ctx, g.cancel = context.WithCancel(parent)
	return g
}

func (g *group) goFn(fn func(ctx context.Context)) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		fn(g.ctx)
	}()
}

func (g *group) stop() {
	g.cancel()
	g.wg.Wait()
}
