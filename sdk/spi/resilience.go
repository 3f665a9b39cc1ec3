package spi

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ResilienceStrategy wraps the execution of jobs that call a service with
// resilience patterns such as circuit breakers: the spec's
// ResilienceStrategy. The built-in one is package breaker's count-based
// circuit breaker; a strategy of another library plugs in here. Methods
// are safe for concurrent use.
type ResilienceStrategy interface {
	// Execute runs fn on behalf of service, unless the service is not
	// available: then it returns an error wrapping ErrCircuitOpen without
	// running fn. It returns fn's result and error unchanged otherwise.
	// filter says which of fn's errors count as failures of the service
	// (a strategy merges it with its own); the zero filter records every
	// error.
	Execute(ctx context.Context, service string, filter ErrorFilter, fn func(context.Context) (any, error)) (any, error)
	// ServiceAvailable reports whether calls to service are permitted
	// now (its circuit is not open): an advisory pre-check, Execute may
	// still refuse.
	ServiceAvailable(service string) bool
	// RetryDelay is how long to wait before running again a job that
	// Execute refused; never negative. DefaultRetryDelay unless the
	// strategy knows better.
	RetryDelay(service string) time.Duration
}

// DefaultRetryDelay is the spec's delay before a job refused by an open
// circuit runs again.
const DefaultRetryDelay = 30 * time.Second

// ErrCircuitOpen is wrapped by the error of a call that a circuit breaker
// refused: the call did not run.
var ErrCircuitOpen = errors.New("circuit breaker open")

// CircuitOpenError is the error of a call refused by an open (or a full
// half-open) circuit. It wraps ErrCircuitOpen.
type CircuitOpenError struct {
	Service string
	// RetryAfter is the strategy's retry delay for the service.
	RetryAfter time.Duration
}

// Error names the service.
func (e *CircuitOpenError) Error() string {
	return fmt.Sprintf("circuit breaker of service %q is open: retry after %s", e.Service, e.RetryAfter)
}

// Unwrap returns ErrCircuitOpen.
func (e *CircuitOpenError) Unwrap() error { return ErrCircuitOpen }

// ErrorMatcher tells whether an error is of a kind (the spec's exception
// classes); ErrorIs and ErrorAs make the usual ones.
type ErrorMatcher func(error) bool

// ErrorIs matches the errors whose chain holds target (errors.Is).
func ErrorIs(target error) ErrorMatcher {
	return func(err error) bool { return errors.Is(err, target) }
}

// ErrorAs matches the errors whose chain holds an error of type E
// (errors.As), the spec's "subclasses included".
func ErrorAs[E error]() ErrorMatcher {
	return func(err error) bool {
		var e E
		return errors.As(err, &e)
	}
}

// ErrorFilter says which errors of a call count as failures of the service
// (the spec's CircuitBreakerExceptionFilter). The zero value records every
// error.
type ErrorFilter struct {
	// Record lists the errors that count as failures; with Record and
	// Predicate both empty, every error not ignored counts.
	Record []ErrorMatcher
	// Ignore lists the errors that count as neither success nor failure;
	// an ignore match wins over a record match.
	Ignore []ErrorMatcher
	// Predicate, when set, records the errors it accepts (beside
	// Record's). A predicate that panics records the call as a failure.
	Predicate func(error) bool
}

// CallOutcome is how a call counts for a circuit breaker.
type CallOutcome int

// The outcomes of ErrorFilter.Classify.
const (
	// CallSucceeded: no error.
	CallSucceeded CallOutcome = iota
	// CallFailed: an error the filter records.
	CallFailed
	// CallNotCounted: an error the filter ignores, or one it neither
	// records nor ignores. It counts as neither; a half-open trial call
	// gives its permit back.
	CallNotCounted
)

// Classify says how a call that returned err counts, by the spec's rules:
// no error is a success; an error matching Ignore is not counted (ignore
// wins); with no Record and no Predicate every other error is a failure;
// otherwise an error matching Record, or accepted by Predicate, is a
// failure, and any other is not counted. Matchers walk err's chain.
func (f ErrorFilter) Classify(err error) (out CallOutcome) {
	if err == nil {
		return CallSucceeded
	}
	for _, m := range f.Ignore {
		if m(err) {
			return CallNotCounted
		}
	}
	if len(f.Record) == 0 && f.Predicate == nil {
		return CallFailed
	}
	for _, m := range f.Record {
		if m(err) {
			return CallFailed
		}
	}
	if f.Predicate == nil {
		return CallNotCounted
	}
	defer func() {
		if recover() != nil {
			out = CallFailed
		}
	}()
	if f.Predicate(err) {
		return CallFailed
	}
	return CallNotCounted
}

// Merge returns the union of f and g: both lists of each, and a predicate
// accepting what either accepts (the spec's filter merge).
func (f ErrorFilter) Merge(g ErrorFilter) ErrorFilter {
	out := ErrorFilter{
		Record: append(append([]ErrorMatcher(nil), f.Record...), g.Record...),
		Ignore: append(append([]ErrorMatcher(nil), f.Ignore...), g.Ignore...),
	}
	switch {
	case f.Predicate == nil:
		out.Predicate = g.Predicate
	case g.Predicate == nil:
		out.Predicate = f.Predicate
	default:
		fp, gp := f.Predicate, g.Predicate
		out.Predicate = func(err error) bool { return fp(err) || gp(err) }
	}
	return out
}

// CircuitBreakerConfig configures a count-based circuit breaker: the
// spec's eight fields. Zero fields take the defaults of
// DefaultCircuitBreakerConfig.
type CircuitBreakerConfig struct {
	// FailureRateThreshold, in percent (0 < t <= 100): the breaker opens
	// when the failures among the recorded calls reach it.
	FailureRateThreshold float64
	// SlidingWindowSize is how many of the latest counted calls the rate
	// is taken over (a ring buffer).
	SlidingWindowSize int
	// WaitDuration is how long the breaker stays open before it lets
	// trial calls through (half-open).
	WaitDuration time.Duration
	// PermittedCallsInHalfOpen is how many trial calls run while
	// half-open; when all of them have counted, the breaker closes, or
	// opens again if their failure rate reaches the threshold.
	PermittedCallsInHalfOpen int
	// MinimumCalls is how many calls must be counted before the rate can
	// open the breaker (at most SlidingWindowSize: a larger value counts
	// as the window's size).
	MinimumCalls int
	// Filter says which errors count (record and ignore lists, and the
	// record predicate).
	Filter ErrorFilter
}

// DefaultCircuitBreakerConfig returns the defaults: a 50 % threshold over
// a window of 100 calls (the spec's size), at least 100 calls, open for 60
// seconds, 10 trial calls, every error recorded.
func DefaultCircuitBreakerConfig() CircuitBreakerConfig {
	return CircuitBreakerConfig{FailureRateThreshold: 50, SlidingWindowSize: 100, WaitDuration: time.Minute,
		PermittedCallsInHalfOpen: 10, MinimumCalls: 100}
}

// WithDefaults returns c with its zero fields defaulted, or an error
// naming the first field out of range.
func (c CircuitBreakerConfig) WithDefaults() (CircuitBreakerConfig, error) {
	d := DefaultCircuitBreakerConfig()
	if c.FailureRateThreshold == 0 {
		c.FailureRateThreshold = d.FailureRateThreshold
	}
	if c.SlidingWindowSize == 0 {
		c.SlidingWindowSize = d.SlidingWindowSize
	}
	if c.WaitDuration == 0 {
		c.WaitDuration = d.WaitDuration
	}
	if c.PermittedCallsInHalfOpen == 0 {
		c.PermittedCallsInHalfOpen = d.PermittedCallsInHalfOpen
	}
	if c.MinimumCalls == 0 {
		c.MinimumCalls = d.MinimumCalls
	}
	switch {
	case c.FailureRateThreshold < 0 || c.FailureRateThreshold > 100:
		return c, fmt.Errorf("circuit breaker: FailureRateThreshold %v is not in (0, 100]", c.FailureRateThreshold)
	case c.SlidingWindowSize < 0:
		return c, fmt.Errorf("circuit breaker: SlidingWindowSize %d is negative", c.SlidingWindowSize)
	case c.WaitDuration < 0:
		return c, fmt.Errorf("circuit breaker: WaitDuration %s is negative", c.WaitDuration)
	case c.PermittedCallsInHalfOpen < 0:
		return c, fmt.Errorf("circuit breaker: PermittedCallsInHalfOpen %d is negative", c.PermittedCallsInHalfOpen)
	case c.MinimumCalls < 0:
		return c, fmt.Errorf("circuit breaker: MinimumCalls %d is negative", c.MinimumCalls)
	}
	c.MinimumCalls = min(c.MinimumCalls, c.SlidingWindowSize)
	return c, nil
}

// CircuitBreakerProfile names what a breaker protects: a service that
// tasks call (Poller false, Name the service), or a node's claims from
// the store (Poller true).
type CircuitBreakerProfile struct {
	Name   string
	Poller bool
}

// CircuitBreakerConfigProvider supplies the built-in breaker's
// enablement and its configuration per profile: the spec's
// CircuitBreakerConfigProvider.
type CircuitBreakerConfigProvider interface {
	Enabled() bool
	ConfigFor(CircuitBreakerProfile) CircuitBreakerConfig
}
