package ratchetotel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Metrics is a spi.MetricsCollector that records in OpenTelemetry
// instruments. Create it with NewMetrics; it is safe for concurrent use.
// It implements every optional collector interface of spi, StoreMetrics
// included (so the engine times its store's calls).
type Metrics struct {
	meter metric.Meter

	started, failed, superseded         metric.Int64Counter
	process, storeOps                   metric.Float64Histogram
	consumed, claimFailures, recovered  metric.Int64Counter
	breaker, poller                     metric.Int64Gauge
	signalWaits, signalsResolved        metric.Int64Counter
	integrity, versionSkew              metric.Int64Counter
	finalization, gateRejected, wakeups metric.Int64Counter
	eventsDropped                       metric.Int64Counter
	callbacksFailed                     metric.Int64Counter
	runOverruns, jobsExpired            metric.Int64Counter
	jobsSnoozed                         metric.Int64Counter
	joined                              metric.Int64Counter

	// The attribute options of the hot paths, built once per key.
	tasks   cache[string, *taskOpts]
	nodes   cache[string, *nodeOpts]
	storeOp cache[storeKey, []metric.RecordOption]
}

var (
	_ spi.MetricsCollector    = (*Metrics)(nil)
	_ spi.SignalMetrics       = (*Metrics)(nil)
	_ spi.EncryptionMetrics   = (*Metrics)(nil)
	_ spi.StoreMetrics        = (*Metrics)(nil)
	_ spi.FinalizationMetrics = (*Metrics)(nil)
	_ spi.AdmissionMetrics    = (*Metrics)(nil)
	_ spi.JoinMetrics         = (*Metrics)(nil)
	_ spi.WakeupMetrics       = (*Metrics)(nil)
	_ spi.CallbackMetrics     = (*Metrics)(nil)
	_ spi.EventMetrics        = (*Metrics)(nil)
)

// The attribute keys of the ratchet namespace.
const (
	keyTask         = attribute.Key("ratchet.task")
	keyPriority     = attribute.Key("ratchet.priority")
	keyNode         = attribute.Key("ratchet.node")
	keyService      = attribute.Key("ratchet.service")
	keyBreakerState = attribute.Key("ratchet.breaker.state")
	keySignalName   = attribute.Key("ratchet.signal.name")
	keySignalOut    = attribute.Key("ratchet.signal.outcome")
	keyJoinReason   = attribute.Key("ratchet.join.reason")
	keySurface      = attribute.Key("ratchet.encryption.surface")
	keyVerFound     = attribute.Key("ratchet.encryption.version.found")
	keyVerSupported = attribute.Key("ratchet.encryption.version.supported")
	keyFinalization = attribute.Key("ratchet.finalization")
	keyGate         = attribute.Key("ratchet.gate")
	keyEventKind    = attribute.Key("ratchet.event.kind")
	keyWakeup       = attribute.Key("ratchet.wakeup")
	keyJobStatus    = attribute.Key("ratchet.job.status")
)

// messagingSystem is the messaging.system of every messaging.* instrument.
var messagingSystem = semconv.MessagingSystemKey.String("ratchet")

// breakerStates are the states a breaker gauge has a series for.
var breakerStates = []string{"CLOSED", "OPEN", "HALF_OPEN"}

// The bucket boundaries the semantic conventions advise for
// db.client.operation.duration and messaging.process.duration.
var (
	dbBuckets        = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}
	messagingBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
)

// NewMetrics returns a spi.MetricsCollector recording in OpenTelemetry
// instruments from mp (nil: otel.GetMeterProvider()). Pass it as the
// engine's Options.Client.Metrics, and to the client and the encrypting codec
// that report to a collector.
func NewMetrics(mp metric.MeterProvider) (*Metrics, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(instrumentation, metric.WithSchemaURL(semconv.SchemaURL))
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string, buckets []float64) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(buckets...))
		errs = append(errs, err)
		return h
	}
	gauge := func(name, desc string) metric.Int64Gauge {
		g, err := meter.Int64Gauge(name, metric.WithUnit("1"), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	m := &Metrics{
		meter:         meter,
		started:       counter("ratchet.jobs.started", "{job}", "Job runs started, by task and priority."),
		failed:        counter("ratchet.jobs.failed", "{job}", "Job runs that failed (retried or dead-lettered), by task."),
		superseded:    counter("ratchet.writes.superseded", "{write}", "Owner writes that lost their fence, by task."),
		process:       histogram("messaging.process.duration", "Duration of the job runs that succeeded, by task.", messagingBuckets),
		storeOps:      histogram("db.client.operation.duration", "Duration of the store's core operations.", dbBuckets),
		consumed:      counter("messaging.client.consumed.messages", "{message}", "Jobs claimed, by node."),
		claimFailures: counter("ratchet.claim.failures", "{claim}", "Claims that failed, by node."),
		recovered:     counter("ratchet.jobs.recovered", "{job}", "Orphaned jobs recovered, by the node that recovered them."),
		breaker:       gauge("ratchet.circuit_breaker.state", "1 for the current state of a service's circuit breaker on a node, 0 for the others."),
		poller:        gauge("ratchet.poller_breaker.state", "1 for the current state of a node's poller breaker, 0 for the others."),
		signalWaits:   counter("ratchet.signal.waits", "{wait}", "Jobs written waiting for a signal, by task and signal."),
		signalsResolved: counter("ratchet.signal.resolved", "{wait}",
			"Signal waits ended, by task, signal and outcome (DELIVERED, TIMED_OUT, CANCELLED)."),
		integrity:   counter("ratchet.encryption.integrity_violations", "{value}", "Sealed values that failed their integrity check, by surface."),
		versionSkew: counter("ratchet.encryption.version_skew", "{envelope}", "Envelopes of a version this release does not read."),
		finalization: counter("ratchet.success_finalization", "{job}",
			"Successes whose write was retried, written without their result (minimal) or left unwritten at shutdown (stuck)."),
		gateRejected:    counter("ratchet.gate.rejected", "{claim}", "Claims or claimed jobs an admission gate turned away, by node and gate."),
		eventsDropped:   counter("ratchet.events.dropped", "{event}", "Events an engine dropped for a subscriber that fell behind, by node and kind."),
		wakeups:         counter("ratchet.wakeups", "{wakeup}", "Wakeups of a node's poller: local, published to the cluster, received from it."),
		callbacksFailed: counter("ratchet.callbacks.failed", "{job}", "Failed runs of callback jobs, by task."),
		runOverruns:     counter("ratchet.run.overruns", "{job}", "Bodies that returned after their run's timeout (the run had failed at the timeout; the body kept its slot), by task."),
		jobsExpired:     counter("ratchet.jobs.expired", "{job}", "Jobs failed without running past their start-by deadline (at a claim or by the start-by sweeper), by task."),
		jobsSnoozed:     counter("ratchet.jobs.snoozed", "{run}", "Runs that ended in a snooze (back to PENDING, no attempt spent), by task."),
		joined:          counter("ratchet.submissions.joined", "{submission}", "Submissions that wrote no job and joined an earlier one, by task and reason (idempotency, unique, debounce)."),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}

// cache holds values built once per key, for concurrent use.
type cache[K comparable, V any] struct{ m sync.Map }

func (c *cache[K, V]) get(k K, build func(K) V) V {
	if v, ok := c.m.Load(k); ok {
		return v.(V)
	}
	v, _ := c.m.LoadOrStore(k, build(k))
	return v.(V)
}

// taskOpts are the attribute options of a task's instruments.
type taskOpts struct {
	started [spi.NumPriorities][]metric.AddOption // by valid priority
	process []metric.RecordOption                 // messaging.process.duration
	task    []metric.AddOption                    // ratchet.task alone
}

func newTaskOpts(task string) *taskOpts {
	t := &taskOpts{
		process: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(messagingSystem,
			semconv.MessagingOperationNameKey.String("process"), semconv.MessagingOperationTypeProcess,
			semconv.MessagingDestinationNameKey.String(task)))},
		task: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(keyTask.String(task)))},
	}
	for p := range t.started {
		t.started[p] = startedOpts(task, spi.Priority(p))
	}
	return t
}

func startedOpts(task string, p spi.Priority) []metric.AddOption {
	return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(keyTask.String(task), keyPriority.Int(int(p))))}
}

func (m *Metrics) task(task string) *taskOpts { return m.tasks.get(task, newTaskOpts) }

// nodeOpts are the attribute options of a node's instruments.
type nodeOpts struct {
	consumed []metric.AddOption // messaging.client.consumed.messages
	node     []metric.AddOption // ratchet.node alone
	local    []metric.AddOption // ratchet.wakeups of a local wakeup
	received []metric.AddOption // ratchet.wakeups of a received one
}

func newNodeOpts(node string) *nodeOpts {
	n := keyNode.String(node)
	return &nodeOpts{
		consumed: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(messagingSystem,
			semconv.MessagingOperationNameKey.String("claim"), semconv.MessagingOperationTypeReceive, n))},
		node:     []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(n))},
		local:    []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(n, keyWakeup.String("local")))},
		received: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(n, keyWakeup.String("received")))},
	}
}

func (m *Metrics) node(node string) *nodeOpts { return m.nodes.get(node, newNodeOpts) }

// storeKey names a series of db.client.operation.duration.
type storeKey struct {
	op, store string
	failed    bool
}

func newStoreOpts(k storeKey) []metric.RecordOption {
	attrs := []attribute.KeyValue{semconv.DBOperationNameKey.String(k.op), semconv.DBSystemNameKey.String(k.store)}
	if k.failed {
		attrs = append(attrs, semconv.ErrorTypeKey.String("error"))
	}
	return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
}

// JobStarted counts a run (ratchet.jobs.started).
func (m *Metrics) JobStarted(ctx context.Context, _ uuid.UUID, task string, p spi.Priority) {
	if p.Valid() {
		m.started.Add(ctx, 1, m.task(task).started[p]...)
		return
	}
	m.started.Add(ctx, 1, startedOpts(task, p)...)
}

// JobCompleted records the duration of a success
// (messaging.process.duration).
func (m *Metrics) JobCompleted(ctx context.Context, _ uuid.UUID, task string, elapsed time.Duration) {
	m.process.Record(ctx, elapsed.Seconds(), m.task(task).process...)
}

// JobFailed counts a failed run (ratchet.jobs.failed).
func (m *Metrics) JobFailed(ctx context.Context, _ uuid.UUID, task string, _ error, _ int) {
	m.failed.Add(ctx, 1, m.task(task).task...)
}

// JobsClaimed counts claimed jobs (messaging.client.consumed.messages).
func (m *Metrics) JobsClaimed(ctx context.Context, node string, n int) {
	m.consumed.Add(ctx, int64(n), m.node(node).consumed...)
}

// ClaimTransientFailure counts a failed claim (ratchet.claim.failures).
func (m *Metrics) ClaimTransientFailure(ctx context.Context, node string, _ error) {
	m.claimFailures.Add(ctx, 1, m.node(node).node...)
}

// WriteSuperseded counts an owner write that lost its fence
// (ratchet.writes.superseded).
func (m *Metrics) WriteSuperseded(ctx context.Context, _ uuid.UUID, task string) {
	m.superseded.Add(ctx, 1, m.task(task).task...)
}

// JobsRecovered counts recovered orphans (ratchet.jobs.recovered).
func (m *Metrics) JobsRecovered(ctx context.Context, node string, n int) {
	m.recovered.Add(ctx, int64(n), m.node(node).node...)
}

// CircuitBreakerState sets ratchet.circuit_breaker.state: 1 for the new
// state, 0 for the others.
func (m *Metrics) CircuitBreakerState(ctx context.Context, node, service, state string) {
	for _, s := range breakerStates {
		m.breaker.Record(ctx, flag(s == state), metric.WithAttributes(keyNode.String(node), keyService.String(service), keyBreakerState.String(s)))
	}
}

// PollerBreakerState sets ratchet.poller_breaker.state: 1 for the new
// state, 0 for the others.
func (m *Metrics) PollerBreakerState(ctx context.Context, node, state string) {
	for _, s := range breakerStates {
		m.poller.Record(ctx, flag(s == state), metric.WithAttributes(keyNode.String(node), keyBreakerState.String(s)))
	}
}

// SignalWaiting counts a job written waiting for a signal
// (ratchet.signal.waits).
func (m *Metrics) SignalWaiting(ctx context.Context, _ uuid.UUID, task, name string) {
	m.signalWaits.Add(ctx, 1, metric.WithAttributes(keyTask.String(task), keySignalName.String(name)))
}

// SignalDelivered counts a wait ended by a delivery (ratchet.signal.resolved).
func (m *Metrics) SignalDelivered(ctx context.Context, _ uuid.UUID, task, name string) {
	m.resolved(ctx, task, name, spi.SignalDelivered)
}

// SignalTimedOut counts a wait that timed out (ratchet.signal.resolved).
func (m *Metrics) SignalTimedOut(ctx context.Context, _ uuid.UUID, task, name string) {
	m.resolved(ctx, task, name, spi.SignalTimedOut)
}

// SignalCancelled counts a wait ended by a cancel (ratchet.signal.resolved).
func (m *Metrics) SignalCancelled(ctx context.Context, _ uuid.UUID, task, name string) {
	m.resolved(ctx, task, name, spi.SignalCancelled)
}

func (m *Metrics) resolved(ctx context.Context, task, name string, outcome spi.SignalOutcome) {
	m.signalsResolved.Add(ctx, 1, metric.WithAttributes(keyTask.String(task), keySignalName.String(name), keySignalOut.String(string(outcome))))
}

// EncryptionIntegrityViolation counts a sealed value that did not open
// (ratchet.encryption.integrity_violations).
func (m *Metrics) EncryptionIntegrityViolation(ctx context.Context, _ uuid.UUID, surface string) {
	m.integrity.Add(ctx, 1, metric.WithAttributes(keySurface.String(surface)))
}

// EncryptionEnvelopeVersionSkew counts an envelope of an unknown version
// (ratchet.encryption.version_skew).
func (m *Metrics) EncryptionEnvelopeVersionSkew(ctx context.Context, _ uuid.UUID, found, supported int) {
	m.versionSkew.Add(ctx, 1, metric.WithAttributes(keyVerFound.Int(found), keyVerSupported.Int(supported)))
}

// StoreOperation records the duration of a store call
// (db.client.operation.duration), with error.type "error" when it failed.
func (m *Metrics) StoreOperation(ctx context.Context, op, store, outcome string, elapsed time.Duration) {
	m.storeOps.Record(ctx, elapsed.Seconds(), m.storeOp.get(storeKey{op, store, outcome != "ok"}, newStoreOpts)...)
}

// SuccessFinalizationRetried counts a success whose write is tried again
// (ratchet.success_finalization, ratchet.finalization "retried").
func (m *Metrics) SuccessFinalizationRetried(ctx context.Context, _ uuid.UUID, task string) {
	m.finalized(ctx, task, "retried")
}

// SuccessFinalizationMinimal counts a success written without its result
// (ratchet.success_finalization, ratchet.finalization "minimal").
func (m *Metrics) SuccessFinalizationMinimal(ctx context.Context, _ uuid.UUID, task string) {
	m.finalized(ctx, task, "minimal")
}

// SuccessFinalizationStuck counts a success left unwritten at shutdown
// (ratchet.success_finalization, ratchet.finalization "stuck").
func (m *Metrics) SuccessFinalizationStuck(ctx context.Context, _ uuid.UUID, task string) {
	m.finalized(ctx, task, "stuck")
}

func (m *Metrics) finalized(ctx context.Context, task, how string) {
	m.finalization.Add(ctx, 1, metric.WithAttributes(keyTask.String(task), keyFinalization.String(how)))
}

// GateRejected counts what an admission gate turned away
// (ratchet.gate.rejected).
func (m *Metrics) GateRejected(ctx context.Context, node, gate string, n int) {
	m.gateRejected.Add(ctx, int64(n), metric.WithAttributes(keyNode.String(node), keyGate.String(gate)))
}

// EventsDropped counts an event dropped for a subscriber that fell behind
// (ratchet.events.dropped).
func (m *Metrics) EventsDropped(ctx context.Context, node, kind string) {
	m.eventsDropped.Add(ctx, 1, metric.WithAttributes(keyNode.String(node), keyEventKind.String(kind)))
}

// LocalWakeup counts a wakeup by local work (ratchet.wakeups,
// ratchet.wakeup "local").
func (m *Metrics) LocalWakeup(ctx context.Context, node string) {
	m.wakeups.Add(ctx, 1, m.node(node).local...)
}

// ClusterWakeupPublished counts a wakeup published to the cluster
// (ratchet.wakeups, ratchet.wakeup "published", with the work's priority).
func (m *Metrics) ClusterWakeupPublished(ctx context.Context, node string, p spi.Priority) {
	m.wakeups.Add(ctx, 1, metric.WithAttributes(keyNode.String(node), keyWakeup.String("published"), keyPriority.Int(int(p))))
}

// ClusterWakeupReceived counts a wakeup from another node (ratchet.wakeups,
// ratchet.wakeup "received"). The source is not an attribute: it would
// multiply the series by the size of the fleet.
func (m *Metrics) ClusterWakeupReceived(ctx context.Context, node, _ string) {
	m.wakeups.Add(ctx, 1, m.node(node).received...)
}

// CallbackFailed counts a failed run of a callback job
// (ratchet.callbacks.failed).
func (m *Metrics) CallbackFailed(ctx context.Context, _ uuid.UUID, task string, _ error, _ int) {
	m.callbacksFailed.Add(ctx, 1, m.task(task).task...)
}

// RunOverran counts a body that returned after its run's timeout
// (ratchet.run.overruns): it implements spi.TimeoutMetrics.
func (m *Metrics) RunOverran(ctx context.Context, _ uuid.UUID, task string, _ time.Duration) {
	m.runOverruns.Add(ctx, 1, m.task(task).task...)
}

// JobExpired counts a job failed unrun past its start-by deadline
// (ratchet.jobs.expired): it implements spi.StartByMetrics.
func (m *Metrics) JobExpired(ctx context.Context, _ uuid.UUID, task string) {
	m.jobsExpired.Add(ctx, 1, m.task(task).task...)
}

// JobSnoozed counts a run that ended in a snooze (ratchet.jobs.snoozed):
// it implements spi.SnoozeMetrics.
func (m *Metrics) JobSnoozed(ctx context.Context, _ uuid.UUID, task string, _ time.Duration) {
	m.jobsSnoozed.Add(ctx, 1, m.task(task).task...)
}

// SubmissionJoined counts a submission that joined an earlier job
// (ratchet.submissions.joined): it implements spi.JoinMetrics.
func (m *Metrics) SubmissionJoined(ctx context.Context, task, reason string) {
	m.joined.Add(ctx, 1, metric.WithAttributes(keyTask.String(task), keyJoinReason.String(reason)))
}

// defaultStatsTimeout bounds a JobStats read when ObserveJobs is given 0.
const defaultStatsTimeout = 5 * time.Second

// ObserveJobs registers observable gauges read from the store's
// spi.StatsReader (sdk/spi/stats.go) once per collection: ratchet.jobs
// (Int64ObservableGauge, "{job}", attrs ratchet.job.status, ratchet.task,
// ratchet.priority), ratchet.jobs.estimated (1 when the store's counts are
// estimates, else 0) and ratchet.jobs.oldest_due.age ("s",
// Float64ObservableGauge, now - OldestDue, 0 when none due; now nil means
// time.Now). timeout bounds each read (0: 5s). A read that fails records
// nothing for that collection (and is not an error of the collection: it
// goes to otel.Handle). Unregister the returned Registration to stop.
func (m *Metrics) ObserveJobs(r spi.StatsReader, now func() time.Time, timeout time.Duration) (metric.Registration, error) {
	if r == nil {
		return nil, errors.New("ratchetotel: ObserveJobs needs a StatsReader")
	}
	if now == nil {
		now = time.Now
	}
	if timeout <= 0 {
		timeout = defaultStatsTimeout
	}
	jobs, err1 := m.meter.Int64ObservableGauge("ratchet.jobs", metric.WithUnit("{job}"),
		metric.WithDescription("Live jobs, by status, task and priority."))
	estimated, err2 := m.meter.Int64ObservableGauge("ratchet.jobs.estimated", metric.WithUnit("1"),
		metric.WithDescription("1 when ratchet.jobs holds the store's estimates rather than counts, else 0."))
	age, err3 := m.meter.Float64ObservableGauge("ratchet.jobs.oldest_due.age", metric.WithUnit("s"),
		metric.WithDescription("How long the oldest due PENDING job has been due, 0 when none is."))
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	type key struct {
		status spi.Status
		task   string
		p      spi.Priority
	}
	return m.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		t := now()
		st, err := r.JobStats(ctx, t)
		if err != nil {
			otel.Handle(fmt.Errorf("ratchetotel: reading the job stats: %w", err))
			return nil
		}
		// A store gives one entry per status, task and priority; add up
		// any repeat rather than let the last one win.
		sums := make(map[key]int64, len(st.Counts))
		for _, c := range st.Counts {
			sums[key{c.Status, c.Task, c.Priority}] += c.N
		}
		for k, n := range sums {
			o.ObserveInt64(jobs, n, metric.WithAttributes(keyJobStatus.String(string(k.status)), keyTask.String(k.task), keyPriority.Int(int(k.p))))
		}
		o.ObserveInt64(estimated, flag(st.Estimated))
		var wait float64
		if !st.OldestDue.IsZero() {
			wait = math.Max(0, t.Sub(st.OldestDue).Seconds())
		}
		o.ObserveFloat64(age, wait)
		return nil
	}, jobs, estimated, age)
}

func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
