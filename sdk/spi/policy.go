package spi

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// RetryPolicy lets an application override the retry decision and the delay
// of a failed job. The engine consults it after the DoNotRetry check and
// before the attempt limit, as the FAQ's decision path describes.
type RetryPolicy interface {
	// ShouldRetry reports whether a job that failed on attempt (1-based)
	// with err may be retried. Returning true still honours MaxRetries.
	ShouldRetry(attempt int, err error) bool
	// Delay returns the delay before the next attempt; zero defers to the
	// job's own backoff settings.
	Delay(attempt int) time.Duration
}

// PayloadSerializer converts task arguments and results to and from bytes.
// Implementations must be safe for concurrent use and must not let the
// bytes select the Go type they decode into.
type PayloadSerializer interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// ErrorSanitizer turns a task's error into the text stored on the job and
// published in events, stripping secrets and bounding the length.
type ErrorSanitizer interface {
	Sanitize(err error) string
}

// MetricsCollector receives job lifecycle events. Implementations must be
// fast and safe for concurrent use. Embed [NoOpMetrics] to implement only
// the callbacks you need. Each callback gets the context of the work it
// reports (a job's run for JobStarted, JobCompleted and JobFailed; the
// claim, heartbeat, scan or completion write otherwise), so that an
// implementation can relate a measurement to the trace in it.
type MetricsCollector interface {
	JobStarted(ctx context.Context, id uuid.UUID, task string, p Priority)
	JobCompleted(ctx context.Context, id uuid.UUID, task string, elapsed time.Duration)
	JobFailed(ctx context.Context, id uuid.UUID, task string, err error, attempt int)
	JobsClaimed(ctx context.Context, node string, n int)
	ClaimTransientFailure(ctx context.Context, node string, err error)
	WriteSuperseded(ctx context.Context, id uuid.UUID, task string)
	JobsRecovered(ctx context.Context, node string, n int)
	// CircuitBreakerState reports a transition of a service's circuit
	// breaker (the states "CLOSED", "OPEN", "HALF_OPEN"); node is the
	// node whose breaker it is (breakers are per node).
	CircuitBreakerState(ctx context.Context, node, service, state string)
	// PollerBreakerState reports a transition of a node's poller breaker,
	// which stops its claims while the store keeps failing them.
	PollerBreakerState(ctx context.Context, node, state string)
}

// NoOpMetrics is a MetricsCollector that records nothing. Its zero value is
// ready to use.
type NoOpMetrics struct{}

// JobStarted does nothing.
func (NoOpMetrics) JobStarted(context.Context, uuid.UUID, string, Priority) {}

// JobCompleted does nothing.
func (NoOpMetrics) JobCompleted(context.Context, uuid.UUID, string, time.Duration) {}

// JobFailed does nothing.
func (NoOpMetrics) JobFailed(context.Context, uuid.UUID, string, error, int) {}

// JobsClaimed does nothing.
func (NoOpMetrics) JobsClaimed(context.Context, string, int) {}

// ClaimTransientFailure does nothing.
func (NoOpMetrics) ClaimTransientFailure(context.Context, string, error) {}

// WriteSuperseded does nothing.
func (NoOpMetrics) WriteSuperseded(context.Context, uuid.UUID, string) {}

// JobsRecovered does nothing.
func (NoOpMetrics) JobsRecovered(context.Context, string, int) {}

// CircuitBreakerState does nothing.
func (NoOpMetrics) CircuitBreakerState(context.Context, string, string, string) {}

// PollerBreakerState does nothing.
func (NoOpMetrics) PollerBreakerState(context.Context, string, string) {}

// PollResult is what one claim did, as a PollDelayStrategy sees it.
type PollResult struct {
	// Asked is how many jobs the claim asked for; Claimed how many it got.
	Asked, Claimed int
	// Err is the claim's error, nil when it succeeded.
	Err error
	// Room, when not zero, is how long until a rate limit that held back
	// due jobs of the claim has room again (ClaimHeld.Room): the next
	// claim need not come later.
	Room time.Duration
}

// PollDelayStrategy decides how long a poller waits before its next claim
// (a wakeup still cuts the wait short). It is stateful: each poller gets its
// own from a PollStrategyFunc, and calls it from one goroutine.
type PollDelayStrategy interface {
	// Next returns the wait after a claim; zero claims again at once.
	Next(r PollResult) time.Duration
}

// PollConfig is the engine's polling configuration, given to a
// PollStrategyFunc.
type PollConfig struct {
	// MinInterval and MaxInterval are the engine's MinPollInterval and
	// PollInterval.
	MinInterval, MaxInterval time.Duration
	// Notified says that new work wakes the poller wherever it is
	// submitted: the engine has a cluster coordinator, or its store
	// delivers wakeups between processes (spi.WakeupListener). A claim
	// that got less than it asked for then took all the due work, and
	// until new work's wakeup only jobs that become due by time (delayed
	// jobs, retries) need a poll. False: submissions in other processes
	// are seen only by polling.
	Notified bool
}

// PollStrategyFunc creates a poller's PollDelayStrategy: the spec's
// PollingStrategyProvider.
type PollStrategyFunc func(PollConfig) PollDelayStrategy
