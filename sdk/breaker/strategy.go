package breaker

import (
	"context"
	"sync"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Options configure a Strategy. The zero value gives every service the
// default configuration, the spec's retry delay and the system clock.
type Options struct {
	// Configs supplies the configuration of each service's breaker
	// (the profile of a service has Poller false); nil means
	// spi.DefaultCircuitBreakerConfig for all. Its Enabled is not
	// consulted here: whoever builds the Strategy decides.
	Configs spi.CircuitBreakerConfigProvider
	// RetryDelay is the delay before a refused job runs again; zero means
	// spi.DefaultRetryDelay (30 s).
	RetryDelay time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Changed, when not nil, is told of every transition of a service's
	// breaker (the spec's circuitBreakerState metrics callback).
	Changed func(service string, from, to State)
}

// Strategy is the built-in spi.ResilienceStrategy: one Breaker per
// service, made on the service's first call with its configuration.
type Strategy struct {
	o        Options
	mu       sync.RWMutex
	breakers map[string]*Breaker
}

var _ spi.ResilienceStrategy = (*Strategy)(nil)

// NewStrategy returns a Strategy with no breaker yet.
func NewStrategy(o Options) *Strategy {
	if o.RetryDelay <= 0 {
		o.RetryDelay = spi.DefaultRetryDelay
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Strategy{o: o, breakers: map[string]*Breaker{}}
}

// Breaker returns the breaker of service, made with its configuration on
// first use; an invalid configuration is an error naming the service.
func (s *Strategy) Breaker(service string) (*Breaker, error) {
	s.mu.RLock()
	b := s.breakers[service]
	s.mu.RUnlock()
	if b != nil {
		return b, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.breakers[service]; b != nil {
		return b, nil
	}
	cfg := spi.DefaultCircuitBreakerConfig()
	if s.o.Configs != nil {
		cfg = s.o.Configs.ConfigFor(spi.CircuitBreakerProfile{Name: service})
	}
	var changed func(from, to State)
	if s.o.Changed != nil {
		changed = func(from, to State) { s.o.Changed(service, from, to) }
	}
	b, err := New(cfg, changed)
	if err != nil {
		return nil, &ConfigError{Service: service, Err: err}
	}
	s.breakers[service] = b
	return b, nil
}

// ConfigError is a service's invalid breaker configuration.
type ConfigError struct {
	Service string
	Err     error
}

// Error names the service and the problem.
func (e *ConfigError) Error() string { return "breaker of service " + e.Service + ": " + e.Err.Error() }

// Unwrap returns the problem.
func (e *ConfigError) Unwrap() error { return e.Err }

// Execute runs fn through service's breaker: refused while it is open
// (an *spi.CircuitOpenError), else run, its outcome counted by the
// configuration's filter merged with filter. A panic in fn counts as a
// failure and goes on up.
func (s *Strategy) Execute(ctx context.Context, service string, filter spi.ErrorFilter, fn func(context.Context) (any, error)) (any, error) {
	b, err := s.Breaker(service)
	if err != nil {
		return nil, err
	}
	p, ok := b.Allow(s.o.Now())
	if !ok {
		return nil, &spi.CircuitOpenError{Service: service, RetryAfter: s.o.RetryDelay}
	}
	f := b.cfg.Filter
	if len(filter.Record) > 0 || len(filter.Ignore) > 0 || filter.Predicate != nil {
		f = f.Merge(filter)
	}
	counted := false
	defer func() {
		if !counted { // fn panicked
			p.Done(s.o.Now(), spi.CallFailed)
		}
	}()
	res, err := fn(ctx)
	counted = true
	p.Done(s.o.Now(), f.Classify(err))
	return res, err
}

// ServiceAvailable reports whether service's breaker is not open (a
// service never called is available).
func (s *Strategy) ServiceAvailable(service string) bool {
	s.mu.RLock()
	b := s.breakers[service]
	s.mu.RUnlock()
	return b == nil || b.State(s.o.Now()) != Open
}

// RetryDelay returns Options.RetryDelay.
func (s *Strategy) RetryDelay(string) time.Duration { return s.o.RetryDelay }
