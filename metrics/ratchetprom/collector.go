package ratchetprom

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Collector is a spi.MetricsCollector that records in Prometheus metrics.
// Create it with New; it is safe for concurrent use.
type Collector struct {
	started, succeeded, failed, superseded *prometheus.CounterVec
	duration                               *prometheus.HistogramVec
	claimed, claimFailures, recovered      *prometheus.CounterVec
	breaker, poller                        *prometheus.GaugeVec
	signalWaits, signalsResolved           *prometheus.CounterVec
	integrity, versionSkew                 *prometheus.CounterVec
	storeOps                               *prometheus.HistogramVec
	finalizations, gates, wakeups          *prometheus.CounterVec
	callbacksFailed, eventsDropped         *prometheus.CounterVec
	overruns                               *prometheus.CounterVec
	expired, snoozed                       *prometheus.CounterVec
	joined                                 *prometheus.CounterVec

	reg prometheus.Registerer // where ObserveJobs registers the job gauges

	// The series of the per-job callbacks, looked up once per task (and
	// node, and store operation) instead of hashing their labels per call.
	tasks sync.Map // task → *taskSeries
	nodes sync.Map // node → prometheus.Counter of claimed jobs
	ops   sync.Map // storeOp → prometheus.Observer
}

// taskSeries are the series of one task's runs.
type taskSeries struct {
	started   [spi.PriorityCritical + 1]prometheus.Counter
	succeeded prometheus.Counter
	duration  prometheus.Observer
	failed    prometheus.Counter
}

type storeOp struct{ op, store, outcome string }

func (c *Collector) task(task string) *taskSeries {
	if ts, ok := c.tasks.Load(task); ok {
		return ts.(*taskSeries)
	}
	ts := &taskSeries{succeeded: c.succeeded.WithLabelValues(task), duration: c.duration.WithLabelValues(task),
		failed: c.failed.WithLabelValues(task)}
	for p := range ts.started {
		ts.started[p] = c.started.WithLabelValues(task, spi.Priority(p).String())
	}
	got, _ := c.tasks.LoadOrStore(task, ts)
	return got.(*taskSeries)
}

var (
	_ spi.MetricsCollector    = (*Collector)(nil)
	_ spi.SignalMetrics       = (*Collector)(nil)
	_ spi.EncryptionMetrics   = (*Collector)(nil)
	_ spi.StoreMetrics        = (*Collector)(nil)
	_ spi.FinalizationMetrics = (*Collector)(nil)
	_ spi.AdmissionMetrics    = (*Collector)(nil)
	_ spi.JoinMetrics         = (*Collector)(nil)
	_ spi.WakeupMetrics       = (*Collector)(nil)
	_ spi.CallbackMetrics     = (*Collector)(nil)
	_ spi.EventMetrics        = (*Collector)(nil)
)

// breakerStates are the states a breaker gauge has a series for.
var breakerStates = []string{"CLOSED", "OPEN", "HALF_OPEN"}

// New returns a Collector whose metrics are registered on reg (nil means
// prometheus.DefaultRegisterer). It fails when reg holds metrics of the
// same names already (two collectors on one registry).
func New(reg prometheus.Registerer) (*Collector, error) {
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "ratchet", Name: name, Help: help}, labels)
	}
	c := &Collector{
		started:       counter("jobs_started_total", "Job runs started, by task and priority.", "task", "priority"),
		succeeded:     counter("jobs_succeeded_total", "Job runs that succeeded, by task.", "task"),
		failed:        counter("jobs_failed_total", "Job runs that failed (retried or dead-lettered), by task.", "task"),
		superseded:    counter("writes_superseded_total", "Owner writes that lost their fence, by task.", "task"),
		claimed:       counter("claims_jobs_total", "Jobs claimed, by node.", "node"),
		claimFailures: counter("claim_failures_total", "Claims that failed, by node.", "node"),
		recovered:     counter("jobs_recovered_total", "Orphaned jobs recovered, by the node that recovered them.", "node"),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "ratchet", Name: "job_duration_seconds",
			Help: "Duration of the job runs that succeeded, by task.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"task"}),
		breaker: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "ratchet", Name: "circuit_breaker_state",
			Help: "1 for the current state of a service's circuit breaker on a node, 0 for the others."}, []string{"node", "service", "state"}),
		poller: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "ratchet", Name: "poller_breaker_state",
			Help: "1 for the current state of a node's poller breaker, 0 for the others."}, []string{"node", "state"}),
		signalWaits:     counter("signal_waits_total", "Jobs written waiting for a signal, by task and signal.", "task", "signal"),
		signalsResolved: counter("signal_waits_resolved_total", "Signal waits ended, by task, signal and outcome (DELIVERED, TIMED_OUT, CANCELLED).", "task", "signal", "outcome"),
		integrity:       counter("encryption_integrity_violations_total", "Sealed values that failed their integrity check, by surface.", "surface"),
		versionSkew:     counter("encryption_envelope_version_skew_total", "Envelopes of a version this release does not read, by version found.", "found", "supported"),
		storeOps: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "ratchet", Name: "store_operation_duration_seconds",
			Help: "Duration of the store's core operations, by operation, store and outcome (ok, error).", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9)},
			[]string{"op", "store", "outcome"}),
		finalizations:   counter("success_finalizations_total", "Success writes that were retried, written without their result (minimal), or not written when the engine stopped (stuck), by task and kind.", "task", "kind"),
		gates:           counter("gate_rejections_total", "Claims or claimed jobs an admission gate turned away (task-limit, poller-breaker, stale-heartbeat), by node and gate.", "node", "gate"),
		wakeups:         counter("wakeups_total", "Poller wakeups: local (work submitted in the process), published (sent to the cluster), received (from another node), by node and kind.", "node", "kind"),
		callbacksFailed: counter("callbacks_failed_total", "Failed runs of callback jobs (OnSuccess, OnFailure, a batch's callback), by task.", "task"),
		eventsDropped:   counter("events_dropped_total", "Events an engine dropped for a subscriber that fell behind, by node and kind.", "node", "kind"),
		overruns:        counter("run_overruns_total", "Bodies that returned after their run's timeout (the run had failed at the timeout; the body kept its slot), by task.", "task"),
		expired:         counter("jobs_expired_total", "Jobs failed without running past their start-by deadline (at a claim or by the start-by sweeper), by task.", "task"),
		snoozed:         counter("jobs_snoozed_total", "Runs that ended in a snooze (back to PENDING, no attempt spent), by task.", "task"),
		joined:          counter("submissions_joined_total", "Submissions that wrote no job and joined an earlier one, by task and reason (idempotency, unique, debounce).", "task", "reason"),
		reg:             reg,
	}
	var errs []error
	for _, m := range []prometheus.Collector{c.started, c.succeeded, c.failed, c.superseded, c.claimed, c.claimFailures,
		c.recovered, c.duration, c.breaker, c.poller, c.signalWaits, c.signalsResolved, c.integrity, c.versionSkew, c.storeOps,
		c.finalizations, c.gates, c.wakeups, c.callbacksFailed, c.eventsDropped, c.overruns, c.expired, c.snoozed, c.joined} {
		errs = append(errs, reg.Register(m))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// JobStarted counts a run.
func (c *Collector) JobStarted(_ context.Context, _ uuid.UUID, task string, p spi.Priority) {
	if p < 0 || int(p) >= len(taskSeries{}.started) {
		c.started.WithLabelValues(task, p.String()).Inc()
		return
	}
	c.task(task).started[p].Inc()
}

// JobCompleted counts a success and observes its duration.
func (c *Collector) JobCompleted(_ context.Context, _ uuid.UUID, task string, elapsed time.Duration) {
	ts := c.task(task)
	ts.succeeded.Inc()
	ts.duration.Observe(elapsed.Seconds())
}

// JobFailed counts a failed run.
func (c *Collector) JobFailed(_ context.Context, _ uuid.UUID, task string, _ error, _ int) {
	c.task(task).failed.Inc()
}

// JobsClaimed counts claimed jobs.
func (c *Collector) JobsClaimed(_ context.Context, node string, n int) {
	ctr, ok := c.nodes.Load(node)
	if !ok {
		ctr, _ = c.nodes.LoadOrStore(node, c.claimed.WithLabelValues(node))
	}
	ctr.(prometheus.Counter).Add(float64(n))
}

// ClaimTransientFailure counts a failed claim.
func (c *Collector) ClaimTransientFailure(_ context.Context, node string, _ error) {
	c.claimFailures.WithLabelValues(node).Inc()
}

// WriteSuperseded counts an owner write that lost its fence.
func (c *Collector) WriteSuperseded(_ context.Context, _ uuid.UUID, task string) {
	c.superseded.WithLabelValues(task).Inc()
}

// JobsRecovered counts recovered orphans.
func (c *Collector) JobsRecovered(_ context.Context, node string, n int) {
	c.recovered.WithLabelValues(node).Add(float64(n))
}

// CircuitBreakerState sets the gauge of the breaker's new state.
func (c *Collector) CircuitBreakerState(_ context.Context, node, service, state string) {
	for _, s := range breakerStates {
		c.breaker.WithLabelValues(node, service, s).Set(flag(s == state))
	}
}

// PollerBreakerState sets the gauge of the poller breaker's new state.
func (c *Collector) PollerBreakerState(_ context.Context, node, state string) {
	for _, s := range breakerStates {
		c.poller.WithLabelValues(node, s).Set(flag(s == state))
	}
}

// SignalWaiting counts a job written waiting for a signal.
func (c *Collector) SignalWaiting(_ context.Context, _ uuid.UUID, task, name string) {
	c.signalWaits.WithLabelValues(task, name).Inc()
}

// SignalDelivered counts a wait ended by a delivery.
func (c *Collector) SignalDelivered(_ context.Context, _ uuid.UUID, task, name string) {
	c.signalsResolved.WithLabelValues(task, name, string(spi.SignalDelivered)).Inc()
}

// SignalTimedOut counts a wait that timed out.
func (c *Collector) SignalTimedOut(_ context.Context, _ uuid.UUID, task, name string) {
	c.signalsResolved.WithLabelValues(task, name, string(spi.SignalTimedOut)).Inc()
}

// SignalCancelled counts a wait ended by a cancel.
func (c *Collector) SignalCancelled(_ context.Context, _ uuid.UUID, task, name string) {
	c.signalsResolved.WithLabelValues(task, name, string(spi.SignalCancelled)).Inc()
}

// EncryptionIntegrityViolation counts a sealed value that did not open.
func (c *Collector) EncryptionIntegrityViolation(_ context.Context, _ uuid.UUID, surface string) {
	c.integrity.WithLabelValues(surface).Inc()
}

// EncryptionEnvelopeVersionSkew counts an envelope of an unknown version.
func (c *Collector) EncryptionEnvelopeVersionSkew(_ context.Context, _ uuid.UUID, found, supported int) {
	c.versionSkew.WithLabelValues(strconv.Itoa(found), strconv.Itoa(supported)).Inc()
}

// StoreOperation records the duration of a store call.
func (c *Collector) StoreOperation(_ context.Context, op, store, outcome string, elapsed time.Duration) {
	k := storeOp{op, store, outcome}
	o, ok := c.ops.Load(k)
	if !ok {
		o, _ = c.ops.LoadOrStore(k, c.storeOps.WithLabelValues(op, store, outcome))
	}
	o.(prometheus.Observer).Observe(elapsed.Seconds())
}

// SuccessFinalizationRetried counts a success write tried again.
func (c *Collector) SuccessFinalizationRetried(_ context.Context, _ uuid.UUID, task string) {
	c.finalizations.WithLabelValues(task, "retried").Inc()
}

// SuccessFinalizationMinimal counts a success written without its result.
func (c *Collector) SuccessFinalizationMinimal(_ context.Context, _ uuid.UUID, task string) {
	c.finalizations.WithLabelValues(task, "minimal").Inc()
}

// SuccessFinalizationStuck counts a success not written at stop.
func (c *Collector) SuccessFinalizationStuck(_ context.Context, _ uuid.UUID, task string) {
	c.finalizations.WithLabelValues(task, "stuck").Inc()
}

// GateRejected counts what an admission gate turned away.
func (c *Collector) GateRejected(_ context.Context, node, gate string, n int) {
	c.gates.WithLabelValues(node, gate).Add(float64(n))
}

// EventsDropped counts an event dropped for a subscriber that fell behind.
func (c *Collector) EventsDropped(_ context.Context, node, kind string) {
	c.eventsDropped.WithLabelValues(node, kind).Inc()
}

// LocalWakeup counts a wakeup by work submitted in the process.
func (c *Collector) LocalWakeup(_ context.Context, node string) {
	c.wakeups.WithLabelValues(node, "local").Inc()
}

// ClusterWakeupPublished counts a wakeup sent to the cluster.
func (c *Collector) ClusterWakeupPublished(_ context.Context, node string, _ spi.Priority) {
	c.wakeups.WithLabelValues(node, "published").Inc()
}

// ClusterWakeupReceived counts a wakeup from another node (the source is
// not a label: it would multiply the series by the fleet's size).
func (c *Collector) ClusterWakeupReceived(_ context.Context, node, _ string) {
	c.wakeups.WithLabelValues(node, "received").Inc()
}

// RunOverran counts a body that returned after its run's timeout.
func (c *Collector) RunOverran(_ context.Context, _ uuid.UUID, task string, _ time.Duration) {
	c.overruns.WithLabelValues(task).Inc()
}

// JobExpired counts a job failed unrun past its start-by deadline.
func (c *Collector) JobExpired(_ context.Context, _ uuid.UUID, task string) {
	c.expired.WithLabelValues(task).Inc()
}

// JobSnoozed counts a run that ended in a snooze.
func (c *Collector) JobSnoozed(_ context.Context, _ uuid.UUID, task string, _ time.Duration) {
	c.snoozed.WithLabelValues(task).Inc()
}

// SubmissionJoined counts a submission that joined an earlier job: it
// implements spi.JoinMetrics.
func (c *Collector) SubmissionJoined(_ context.Context, task, reason string) {
	c.joined.WithLabelValues(task, reason).Inc()
}

// CallbackFailed counts a failed run of a callback job.
func (c *Collector) CallbackFailed(_ context.Context, _ uuid.UUID, task string, _ error, _ int) {
	c.callbacksFailed.WithLabelValues(task).Inc()
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
