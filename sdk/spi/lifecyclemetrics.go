package spi

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The spec's MetricsCollector lists 23 callbacks. MetricsCollector holds the
// required ones; the others come in small optional interfaces that
// NoOpMetrics implements (SignalMetrics, EncryptionMetrics and the ones
// below) or, for StoreMetrics, that a collector opts into. The engine looks
// each one up once, when it is created. The spec's executionTargetFallback
// has no Go counterpart: every job runs on a goroutine, and there is no
// execution target to fall back from.

// FinalizationMetrics is implemented by a MetricsCollector that also
// follows the write that ends a successful run (the spec's success
// finalization callbacks). NoOpMetrics implements it.
type FinalizationMetrics interface {
	// SuccessFinalizationRetried reports a success whose completion write
	// failed and is being tried again (the completer backs off and
	// retries the batch it was in).
	SuccessFinalizationRetried(ctx context.Context, id uuid.UUID, task string)
	// SuccessFinalizationMinimal reports a success written without its
	// result: the result did not serialize, was over the payload limit or
	// failed its codec. The job still succeeds.
	SuccessFinalizationMinimal(ctx context.Context, id uuid.UUID, task string)
	// SuccessFinalizationStuck reports a success that could not be written
	// when the engine stopped (the store kept failing): the job stays
	// RUNNING until orphan recovery hands it out again.
	SuccessFinalizationStuck(ctx context.Context, id uuid.UUID, task string)
}

// SuccessFinalizationRetried does nothing.
func (NoOpMetrics) SuccessFinalizationRetried(context.Context, uuid.UUID, string) {}

// SuccessFinalizationMinimal does nothing.
func (NoOpMetrics) SuccessFinalizationMinimal(context.Context, uuid.UUID, string) {}

// SuccessFinalizationStuck does nothing.
func (NoOpMetrics) SuccessFinalizationStuck(context.Context, uuid.UUID, string) {}

// The admission gates a node's poller reports to AdmissionMetrics.
const (
	// GateTaskLimit: claimed jobs over their task's concurrency limit
	// (WithTaskLimit), given back to PENDING at once.
	GateTaskLimit = "task-limit"
	// GatePollerBreaker: a claim not made because the poller breaker is
	// open.
	GatePollerBreaker = "poller-breaker"
	// GateStaleHeartbeat: a claim not made because the node's heartbeat is
	// stale (its claims could be recovered from under it).
	GateStaleHeartbeat = "stale-heartbeat"
	// GateRateLimit: due jobs a claim passed over because their rate
	// limit's window was full (ClaimHeld).
	GateRateLimit = "rate-limit"
)

// AdmissionMetrics is implemented by a MetricsCollector that also counts
// what the node's admission gates turned away (the spec's gateRejected).
// NoOpMetrics implements it.
type AdmissionMetrics interface {
	// GateRejected reports n claims or claimed jobs that gate (GateTaskLimit,
	// GatePollerBreaker, GateStaleHeartbeat) turned away on node.
	GateRejected(ctx context.Context, node, gate string, n int)
}

// GateRejected does nothing.
func (NoOpMetrics) GateRejected(context.Context, string, string, int) {}

// WakeupMetrics is implemented by a MetricsCollector that also counts the
// wakeups that cut a poller's wait short (the spec's localWakeup,
// clusterWakeupPublished and clusterWakeupReceived). NoOpMetrics
// implements it.
type WakeupMetrics interface {
	// LocalWakeup reports work submitted in the node's own process
	// waking its poller.
	LocalWakeup(ctx context.Context, node string)
	// ClusterWakeupPublished reports a wakeup the node published through
	// its ClusterCoordinator, for work of the given priority.
	ClusterWakeupPublished(ctx context.Context, node string, p Priority)
	// ClusterWakeupReceived reports a wakeup from another node (source, ""
	// when the channel does not say) reaching the node, through its
	// ClusterCoordinator or its store's WakeupListener.
	ClusterWakeupReceived(ctx context.Context, node, source string)
}

// LocalWakeup does nothing.
func (NoOpMetrics) LocalWakeup(context.Context, string) {}

// ClusterWakeupPublished does nothing.
func (NoOpMetrics) ClusterWakeupPublished(context.Context, string, Priority) {}

// ClusterWakeupReceived does nothing.
func (NoOpMetrics) ClusterWakeupReceived(context.Context, string, string) {}

// CallbackParam is the param that marks a callback job (OnSuccess,
// OnFailure, a batch's callback), so that its failures are reported as the
// callback's.
const CallbackParam = "ratchet.callback"

// CallbackMetrics is implemented by a MetricsCollector that also counts the
// failed runs of callback jobs (the spec's callbackFailed), besides their
// JobFailed. NoOpMetrics implements it.
type CallbackMetrics interface {
	CallbackFailed(ctx context.Context, id uuid.UUID, task string, err error, attempt int)
}

// CallbackFailed does nothing.
func (NoOpMetrics) CallbackFailed(context.Context, uuid.UUID, string, error, int) {}

// EventMetrics is implemented by a MetricsCollector that also counts the
// events an engine dropped for a subscriber that fell behind (a
// subscription that blocks drops none). NoOpMetrics implements it.
type EventMetrics interface {
	// EventsDropped reports one event of kind ("succeeded", "started",
	// ...) that node dropped for a subscriber whose buffer was full.
	EventsDropped(ctx context.Context, node, kind string)
}

// EventsDropped does nothing.
func (NoOpMetrics) EventsDropped(context.Context, string, string) {}

// TimeoutMetrics is implemented by a MetricsCollector that also counts the
// bodies that went on past their run's timeout (ratchet.WithTimeout): the
// run failed at the timeout, but the body ignored its context and kept its
// slot. NoOpMetrics implements it.
type TimeoutMetrics interface {
	// RunOverran reports a body of job id that returned by after its
	// run's timeout.
	RunOverran(ctx context.Context, id uuid.UUID, task string, by time.Duration)
}

// RunOverran does nothing.
func (NoOpMetrics) RunOverran(context.Context, uuid.UUID, string, time.Duration) {}

// StartByMetrics is implemented by a MetricsCollector that also counts
// the jobs a node claimed past their start-by deadline (ratchet.WithStartBy,
// WithStartWithin) and failed without running. NoOpMetrics implements it.
type StartByMetrics interface {
	// JobExpired reports job id, of task, failed unrun past its start-by
	// deadline: at its claim, or by the start-by sweeper.
	JobExpired(ctx context.Context, id uuid.UUID, task string)
}

// JobExpired does nothing.
func (NoOpMetrics) JobExpired(context.Context, uuid.UUID, string) {}

// SnoozeMetrics is implemented by a MetricsCollector that also counts the
// runs that ended in a snooze (ratchet.Snooze): the job went back to
// PENDING without spending an attempt. NoOpMetrics implements it.
type SnoozeMetrics interface {
	// JobSnoozed reports a run of job id, of task, that snoozed for d.
	JobSnoozed(ctx context.Context, id uuid.UUID, task string, d time.Duration)
}

// JobSnoozed does nothing.
func (NoOpMetrics) JobSnoozed(context.Context, uuid.UUID, string, time.Duration) {}
