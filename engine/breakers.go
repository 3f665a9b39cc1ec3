package engine

import (
	"context"
	"fmt"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// BreakerOptions configure the circuit breakers of the services that tasks
// call (a task opts in with Task.ProtectedBy), and the poller breaker.
// While a service's breaker is open, the jobs of its tasks do not run:
// each goes back to PENDING after the retry delay, not charged an
// attempt. While the poller breaker is open (the store failed the node's
// claims often enough), the node claims nothing; it asks again with
// trial claims once the wait is over. Breakers are per node: each node
// counts the calls it makes. The zero value is the built-in count-based
// breaker (package breaker) with the default configuration for every
// service and for the poller; it costs nothing to tasks that are not
// protected.
type BreakerOptions struct {
	// Disabled runs protected tasks directly, as if they were not
	// (RATCHET_CIRCUIT_BREAKER_ENABLED=false): no breaker at all.
	Disabled bool
	// Strategy replaces the built-in breaker (the spec's
	// ResilienceStrategy: another library's breaker, say); Configs,
	// Config and RetryDelay then do not apply.
	Strategy spi.ResilienceStrategy
	// Configs supplies the configuration per service and for the poller
	// (profile Poller true, Name the node; the spec's
	// CircuitBreakerConfigProvider; its Enabled false disables breaking);
	// nil gives every service and the poller Config.
	Configs spi.CircuitBreakerConfigProvider
	// Config is every service's configuration when Configs is nil; zero
	// fields take spi.DefaultCircuitBreakerConfig's (the
	// RATCHET_CIRCUIT_BREAKER_* settings).
	Config spi.CircuitBreakerConfig
	// RetryDelay is how long a refused job waits; zero means
	// spi.DefaultRetryDelay, 30 s (RATCHET_CIRCUIT_BREAKER_RETRY_DELAY_SECONDS).
	RetryDelay time.Duration
}

// pollerBreaker returns the node's poller breaker, nil when breaking is
// off: its configuration is the provider's for the profile {node, Poller}
// or Config.
func pollerBreaker(o Options) (*breaker.Breaker, error) {
	b := o.Breakers
	if b.Disabled || (b.Configs != nil && !b.Configs.Enabled()) {
		return nil, nil
	}
	cfg := b.Config
	if b.Configs != nil {
		cfg = b.Configs.ConfigFor(spi.CircuitBreakerProfile{Name: o.NodeID, Poller: true})
	}
	return breaker.New(cfg, func(_, to breaker.State) {
		o.Client.Metrics.PollerBreakerState(context.Background(), o.NodeID, to.String())
		o.Client.Logger.Warn("poller breaker changed state: claims stop while it is open", "node", o.NodeID, "state", to.String())
	})
}

// protection is a protected task's service and error filter.
type protection struct {
	service string
	filter  spi.ErrorFilter
}

// staticConfigs gives every service one configuration.
type staticConfigs spi.CircuitBreakerConfig

func (staticConfigs) Enabled() bool { return true }
func (c staticConfigs) ConfigFor(spi.CircuitBreakerProfile) spi.CircuitBreakerConfig {
	return spi.CircuitBreakerConfig(c)
}

// resilience returns the strategy of the engine's protected tasks, and
// their protections by task name; nil, nil when no task is protected or
// breaking is off.
func resilience(o Options, tasks map[string]ratchet.Definition) (spi.ResilienceStrategy, map[string]protection, error) {
	if _, err := o.Breakers.Config.WithDefaults(); err != nil {
		return nil, nil, fmt.Errorf("%w: Breakers.Config: %w", ratchet.ErrInvalidArgument, err)
	}
	b := o.Breakers
	if b.Disabled || (b.Configs != nil && !b.Configs.Enabled()) {
		return nil, nil, nil
	}
	var protected map[string]protection
	for name, t := range tasks {
		p, ok := t.(interface {
			Protection() (string, spi.ErrorFilter)
		})
		if !ok {
			continue
		}
		if svc, f := p.Protection(); svc != "" {
			if protected == nil {
				protected = map[string]protection{}
			}
			protected[name] = protection{service: svc, filter: f}
		}
	}
	if protected == nil {
		return nil, nil, nil
	}
	if b.Strategy != nil {
		return b.Strategy, protected, nil
	}
	configs := b.Configs
	if configs == nil {
		configs = staticConfigs(b.Config)
	}
	return breaker.NewStrategy(breaker.Options{Configs: configs, RetryDelay: b.RetryDelay, Now: o.clock.Now,
		Changed: func(service string, _, to breaker.State) {
			o.Client.Metrics.CircuitBreakerState(context.Background(), o.NodeID, service, to.String())
			o.Client.Logger.Warn("circuit breaker changed state", "node", o.NodeID, "service", service, "state", to.String())
		}}), protected, nil
}

// Breakers returns a snapshot of the node's circuit breakers at the
// engine's clock: the poller breaker first (Poller true, Service the node
// id) when breaking is on, then the breakers of the protected services
// called so far, sorted by service. Only the built-in strategy's
// breakers are listed: a BreakerOptions.Strategy of another kind (any
// spi.ResilienceStrategy that is not a *breaker.Strategy) contributes
// nothing, since its state is its own. It is safe for concurrent use
// while the engine runs.
func (e *Engine) Breakers() []breaker.Status {
	now := e.opts.clock.Now()
	var out []breaker.Status
	if e.pollBreaker != nil {
		out = append(out, e.pollBreaker.Status(e.opts.NodeID, true, now))
	}
	if s, ok := e.resilience.(*breaker.Strategy); ok {
		out = append(out, s.Statuses(now)...)
	}
	return out
}
