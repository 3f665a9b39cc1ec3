package breaker

import (
	"slices"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Status is a snapshot of one breaker, for a dashboard or a health page.
type Status struct {
	// Service is the protected service's name; for a poller breaker, the
	// node's id.
	Service string
	// Poller is true for a node's poller breaker (the store's claims),
	// false for a service's.
	Poller bool
	// State is the breaker's state at the snapshot's time (an OPEN
	// breaker whose wait is over reads HALF_OPEN; see Breaker.State).
	State State
	// OpenFor is how long the breaker stays OPEN before it lets half-open
	// trial calls through; zero unless it is open (see Breaker.OpenFor).
	OpenFor time.Duration
	// Config is the breaker's configuration, defaults applied.
	Config spi.CircuitBreakerConfig
}

// Status returns the breaker's snapshot at now, named service; poller
// tells whether it is a poller breaker. State and OpenFor are read
// together, under one lock.
func (b *Breaker) Status(service string, poller bool, now time.Time) Status {
	b.mu.Lock()
	st, openFor := b.state, time.Duration(0)
	if st == Open {
		if until := b.openedAt.Add(b.cfg.WaitDuration); now.Before(until) {
			openFor = until.Sub(now)
		} else {
			st = HalfOpen
		}
	}
	b.mu.Unlock()
	return Status{Service: service, Poller: poller, State: st, OpenFor: openFor, Config: b.cfg}
}

// Statuses returns the snapshots at now of the breakers made so far (a
// service not called yet has none), sorted by service. It is safe for
// concurrent use with Execute.
func (s *Strategy) Statuses(now time.Time) []Status {
	s.mu.RLock()
	out := make([]Status, 0, len(s.breakers))
	for svc, b := range s.breakers {
		out = append(out, b.Status(svc, false, now))
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Service, b.Service) })
	return out
}
