package ratchetotel_test

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
	ratchetotel "github.com/ratchet-go/ratchet/tracing/ratchetotel"
)

// newMetrics returns Metrics over an SDK provider read by hand.
func newMetrics(t *testing.T) (*ratchetotel.Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := ratchetotel.NewMetrics(mp)
	require.NoError(t, err)
	return m, reader
}

// collected is one collection, by instrument name.
type collected map[string]metricdata.Metrics

func collect(t *testing.T, reader *sdkmetric.ManualReader) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := collected{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, "github.com/ratchet-go/ratchet/tracing/ratchetotel", sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func (c collected) names() []string {
	var out []string
	for n := range c {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// value is the value of the point of instrument name whose attributes are
// exactly attrs (for a histogram its count), and whether there is one.
func (c collected) value(t *testing.T, name string, attrs ...attribute.KeyValue) (float64, bool) {
	t.Helper()
	m, ok := c[name]
	if !ok {
		return 0, false
	}
	want := attribute.NewSet(attrs...)
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		assert.True(t, d.IsMonotonic, "%s is a counter", name)
		for _, p := range d.DataPoints {
			if p.Attributes.Equals(&want) {
				return float64(p.Value), true
			}
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			if p.Attributes.Equals(&want) {
				return float64(p.Value), true
			}
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			if p.Attributes.Equals(&want) {
				return p.Value, true
			}
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			if p.Attributes.Equals(&want) {
				return float64(p.Count), true
			}
		}
	default:
		t.Fatalf("%s: unexpected data %T", name, m.Data)
	}
	return 0, false
}

// expect asserts the value of a point.
func (c collected) expect(t *testing.T, want float64, name string, attrs ...attribute.KeyValue) {
	t.Helper()
	got, ok := c.value(t, name, attrs...)
	if assert.True(t, ok, "%s has a point %v; it has %+v", name, attrs, c[name].Data) {
		assert.Equal(t, want, got, "%s %v", name, attrs)
	}
}

func (c collected) unit(t *testing.T, name, unit string) {
	t.Helper()
	assert.Equal(t, unit, c[name].Unit, "unit of %s", name)
}

var (
	msgSystem  = attribute.String("messaging.system", "ratchet")
	msgProcess = []attribute.KeyValue{msgSystem, attribute.String("messaging.operation.name", "process"),
		attribute.String("messaging.operation.type", "process")}
	msgClaim = []attribute.KeyValue{msgSystem, attribute.String("messaging.operation.name", "claim"),
		attribute.String("messaging.operation.type", "receive")}
)

func with(base []attribute.KeyValue, more ...attribute.KeyValue) []attribute.KeyValue {
	return append(append([]attribute.KeyValue{}, base...), more...)
}

func task(name string) attribute.KeyValue { return attribute.String("ratchet.task", name) }
func node(name string) attribute.KeyValue { return attribute.String("ratchet.node", name) }

// Every instrument shows, fed by a real engine where a run produces it
// and by the callbacks directly otherwise.
func TestMetricsRecordEveryCallback(t *testing.T) {
	ctx := context.Background()
	m, reader := newMetrics(t)
	ok := ratchet.NewVoidTask("email.send", func(context.Context, int) error { return nil })
	bad := ratchet.NewVoidTask("email.bounce", func(context.Context, int) error { return ratchet.DoNotRetry(errors.New("no such mailbox")) })
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Metrics: m, Logger: slog.New(slog.DiscardHandler)}, NodeID: "n1"}, ok, bad)
	require.NoError(t, err)
	events, unsubscribe := eng.Subscribe(10)
	defer unsubscribe()
	require.NoError(t, eng.Start(ctx))
	_, err = ok.Submit(ctx, eng.Client(), 1)
	require.NoError(t, err)
	_, err = bad.Submit(ctx, eng.Client(), 1, ratchet.WithPriority(ratchet.PriorityHigh))
	require.NoError(t, err)
	kinds := map[engine.EventKind]int{}
	kinds[(<-events).Kind]++
	kinds[(<-events).Kind]++
	require.NoError(t, eng.Stop(ctx))
	assert.Equal(t, map[engine.EventKind]int{engine.EventSucceeded: 1, engine.EventFailed: 1}, kinds)

	// The rest directly, on a node and tasks the engine did not see.
	m.ClaimTransientFailure(ctx, "n2", errors.New("connection reset"))
	m.WriteSuperseded(ctx, uuid.New(), "email.send")
	m.JobsRecovered(ctx, "n2", 3)
	m.CircuitBreakerState(ctx, "n2", "smtp", "CLOSED")
	m.CircuitBreakerState(ctx, "n2", "smtp", "OPEN")
	m.PollerBreakerState(ctx, "n2", "HALF_OPEN")
	m.SignalWaiting(ctx, uuid.New(), "refund", "approval")
	m.SignalWaiting(ctx, uuid.New(), "refund", "approval")
	m.SignalDelivered(ctx, uuid.New(), "refund", "approval")
	m.SignalTimedOut(ctx, uuid.New(), "refund", "approval")
	m.SignalCancelled(ctx, uuid.New(), "refund", "approval")
	m.EncryptionIntegrityViolation(ctx, uuid.New(), "result")
	m.EncryptionEnvelopeVersionSkew(ctx, uuid.New(), 2, 1)
	m.StoreOperation(ctx, "ClaimJobs", "postgres", "error", 20*time.Millisecond)
	m.StoreOperation(ctx, "ClaimJobs", "postgres", "error", 30*time.Millisecond)
	m.SuccessFinalizationRetried(ctx, uuid.New(), "report")
	m.SuccessFinalizationRetried(ctx, uuid.New(), "report")
	m.SuccessFinalizationMinimal(ctx, uuid.New(), "report")
	m.SuccessFinalizationStuck(ctx, uuid.New(), "report")
	m.GateRejected(ctx, "n2", spi.GateTaskLimit, 4)
	m.GateRejected(ctx, "n2", spi.GateStaleHeartbeat, 1)
	m.EventsDropped(ctx, "n2", "started")
	m.LocalWakeup(ctx, "n2")
	m.LocalWakeup(ctx, "n2")
	m.ClusterWakeupPublished(ctx, "n2", spi.PriorityCritical)
	m.ClusterWakeupReceived(ctx, "n2", "n3")
	m.CallbackFailed(ctx, uuid.New(), "on.failure", errors.New("boom"), 1)
	m.RunOverran(ctx, uuid.New(), "quote", 2*time.Second)
	m.JobExpired(ctx, uuid.New(), "remind")
	m.JobExpired(ctx, uuid.New(), "remind")
	m.SubmissionJoined(ctx, "sync", spi.JoinedDebounce)
	m.JobStarted(ctx, uuid.New(), "odd", spi.Priority(9)) // outside the cached levels

	c := collect(t, reader)
	assert.Equal(t, []string{
		"db.client.operation.duration",
		"messaging.client.consumed.messages",
		"messaging.process.duration",
		"ratchet.callbacks.failed",
		"ratchet.circuit_breaker.state",
		"ratchet.claim.failures",
		"ratchet.encryption.integrity_violations",
		"ratchet.encryption.version_skew",
		"ratchet.events.dropped",
		"ratchet.gate.rejected",
		"ratchet.jobs.expired",
		"ratchet.jobs.failed",
		"ratchet.jobs.recovered",
		"ratchet.jobs.started",
		"ratchet.poller_breaker.state",
		"ratchet.run.overruns",
		"ratchet.signal.resolved",
		"ratchet.signal.waits",
		"ratchet.submissions.joined",
		"ratchet.success_finalization",
		"ratchet.wakeups",
		"ratchet.writes.superseded",
	}, c.names())

	c.expect(t, 1, "ratchet.submissions.joined", task("sync"), attribute.String("ratchet.join.reason", "debounce"))

	// The engine's run.
	c.expect(t, 1, "ratchet.jobs.started", task("email.send"), attribute.Int("ratchet.priority", 2))
	c.expect(t, 1, "ratchet.jobs.started", task("email.bounce"), attribute.Int("ratchet.priority", 3))
	c.expect(t, 1, "ratchet.jobs.started", task("odd"), attribute.Int("ratchet.priority", 9))
	c.expect(t, 1, "messaging.process.duration", with(msgProcess, attribute.String("messaging.destination.name", "email.send"))...)
	_, found := c.value(t, "messaging.process.duration", with(msgProcess, attribute.String("messaging.destination.name", "email.bounce"))...)
	assert.False(t, found, "a failed run has no duration")
	c.expect(t, 1, "ratchet.jobs.failed", task("email.bounce"))
	_, found = c.value(t, "ratchet.jobs.failed", task("email.send"))
	assert.False(t, found, "a success is not a failure")
	c.expect(t, 2, "messaging.client.consumed.messages", with(msgClaim, node("n1"))...)
	c.expect(t, 2, "db.client.operation.duration",
		attribute.String("db.operation.name", "InsertJobs"), attribute.String("db.system.name", "memory"))
	c.expect(t, 2, "db.client.operation.duration",
		attribute.String("db.operation.name", "ClaimJobs"), attribute.String("db.system.name", "postgres"), attribute.String("error.type", "error"))
	_, found = c.value(t, "db.client.operation.duration",
		attribute.String("db.operation.name", "ClaimJobs"), attribute.String("db.system.name", "memory"))
	assert.True(t, found, "the engine's claims are timed")
	hist := c["db.client.operation.duration"].Data.(metricdata.Histogram[float64])
	for _, p := range hist.DataPoints {
		if v, _ := p.Attributes.Value("db.system.name"); v.AsString() == "postgres" {
			assert.InDelta(t, 0.05, p.Sum, 1e-9, "the durations are in seconds")
		}
	}

	// The callbacks called directly.
	c.expect(t, 1, "ratchet.claim.failures", node("n2"))
	c.expect(t, 1, "ratchet.writes.superseded", task("email.send"))
	c.expect(t, 3, "ratchet.jobs.recovered", node("n2"))
	breaker := func(state string) []attribute.KeyValue {
		return []attribute.KeyValue{node("n2"), attribute.String("ratchet.service", "smtp"), attribute.String("ratchet.breaker.state", state)}
	}
	c.expect(t, 1, "ratchet.circuit_breaker.state", breaker("OPEN")...)
	c.expect(t, 0, "ratchet.circuit_breaker.state", breaker("CLOSED")...)
	c.expect(t, 0, "ratchet.circuit_breaker.state", breaker("HALF_OPEN")...)
	c.expect(t, 1, "ratchet.poller_breaker.state", node("n2"), attribute.String("ratchet.breaker.state", "HALF_OPEN"))
	c.expect(t, 0, "ratchet.poller_breaker.state", node("n2"), attribute.String("ratchet.breaker.state", "CLOSED"))
	c.expect(t, 0, "ratchet.poller_breaker.state", node("n2"), attribute.String("ratchet.breaker.state", "OPEN"))
	signal := attribute.String("ratchet.signal.name", "approval")
	c.expect(t, 2, "ratchet.signal.waits", task("refund"), signal)
	for _, outcome := range []string{"DELIVERED", "TIMED_OUT", "CANCELLED"} {
		c.expect(t, 1, "ratchet.signal.resolved", task("refund"), signal, attribute.String("ratchet.signal.outcome", outcome))
	}
	c.expect(t, 1, "ratchet.encryption.integrity_violations", attribute.String("ratchet.encryption.surface", "result"))
	c.expect(t, 1, "ratchet.encryption.version_skew",
		attribute.Int("ratchet.encryption.version.found", 2), attribute.Int("ratchet.encryption.version.supported", 1))
	c.expect(t, 2, "ratchet.success_finalization", task("report"), attribute.String("ratchet.finalization", "retried"))
	c.expect(t, 1, "ratchet.success_finalization", task("report"), attribute.String("ratchet.finalization", "minimal"))
	c.expect(t, 1, "ratchet.success_finalization", task("report"), attribute.String("ratchet.finalization", "stuck"))
	c.expect(t, 4, "ratchet.gate.rejected", node("n2"), attribute.String("ratchet.gate", "task-limit"))
	c.expect(t, 1, "ratchet.gate.rejected", node("n2"), attribute.String("ratchet.gate", "stale-heartbeat"))
	c.expect(t, 1, "ratchet.events.dropped", node("n2"), attribute.String("ratchet.event.kind", "started"))
	c.expect(t, 2, "ratchet.wakeups", node("n2"), attribute.String("ratchet.wakeup", "local"))
	c.expect(t, 1, "ratchet.wakeups", node("n2"), attribute.String("ratchet.wakeup", "published"), attribute.Int("ratchet.priority", 4))
	c.expect(t, 1, "ratchet.wakeups", node("n2"), attribute.String("ratchet.wakeup", "received"))
	c.expect(t, 1, "ratchet.callbacks.failed", task("on.failure"))
	c.expect(t, 1, "ratchet.run.overruns", task("quote"))
	c.expect(t, 2, "ratchet.jobs.expired", task("remind"))

	for name, unit := range map[string]string{
		"db.client.operation.duration":       "s",
		"messaging.process.duration":         "s",
		"messaging.client.consumed.messages": "{message}",
		"ratchet.jobs.started":               "{job}",
		"ratchet.claim.failures":             "{claim}",
		"ratchet.wakeups":                    "{wakeup}",
		"ratchet.circuit_breaker.state":      "1",
	} {
		c.unit(t, name, unit)
	}
}

// The hot-path callbacks reuse their attribute options: with the SDK
// recording, a run's JobStarted and JobCompleted allocate no more than
// the same calls through attributes built by hand would.
func TestHotPathCallbacksDoNotAllocate(t *testing.T) {
	ctx := context.Background()
	m, _ := newMetrics(t)
	id := uuid.New()
	m.JobStarted(ctx, id, "email.send", spi.PriorityNormal)
	m.JobCompleted(ctx, id, "email.send", time.Millisecond)
	m.JobsClaimed(ctx, "n1", 1)
	m.StoreOperation(ctx, "ClaimJobs", "memory", "ok", time.Millisecond)
	allocs := testing.AllocsPerRun(200, func() {
		m.JobStarted(ctx, id, "email.send", spi.PriorityNormal)
		m.JobCompleted(ctx, id, "email.send", time.Millisecond)
		m.JobsClaimed(ctx, "n1", 1)
		m.StoreOperation(ctx, "ClaimJobs", "memory", "ok", time.Millisecond)
	})
	assert.Zero(t, allocs)
}

// fakeStats is a StatsReader that answers what it holds.
type fakeStats struct {
	stats spi.JobStats
	err   error
	asked atomic.Int64 // reads
	at    atomic.Value // the time of the last read
	dl    atomic.Bool  // the last read had a deadline
}

func (f *fakeStats) JobStats(ctx context.Context, now time.Time) (spi.JobStats, error) {
	f.asked.Add(1)
	f.at.Store(now)
	_, ok := ctx.Deadline()
	f.dl.Store(ok)
	return f.stats, f.err
}

func TestObserveJobs(t *testing.T) {
	m, reader := newMetrics(t)
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	r := &fakeStats{stats: spi.JobStats{
		Counts: []spi.JobCount{
			{Status: spi.StatusPending, Task: "email.send", Priority: spi.PriorityNormal, N: 7},
			{Status: spi.StatusRunning, Task: "email.send", Priority: spi.PriorityNormal, N: 2},
			{Status: spi.StatusFailed, Task: "report", Priority: spi.PriorityHigh, N: 1},
		},
		OldestDue: now.Add(-90 * time.Second),
	}}
	handled := captureErrors(t)
	reg, err := m.ObserveJobs(r, func() time.Time { return now }, 0)
	require.NoError(t, err)

	c := collect(t, reader)
	assert.Equal(t, int64(1), r.asked.Load(), "one read per collection")
	assert.Equal(t, now, r.at.Load(), "read at the clock's time")
	assert.True(t, r.dl.Load(), "the read is bounded")
	jobs := func(status string, tk string, p int) []attribute.KeyValue {
		return []attribute.KeyValue{attribute.String("ratchet.job.status", status), task(tk), attribute.Int("ratchet.priority", p)}
	}
	c.expect(t, 7, "ratchet.jobs", jobs("PENDING", "email.send", 2)...)
	c.expect(t, 2, "ratchet.jobs", jobs("RUNNING", "email.send", 2)...)
	c.expect(t, 1, "ratchet.jobs", jobs("FAILED", "report", 3)...)
	assert.Len(t, c["ratchet.jobs"].Data.(metricdata.Gauge[int64]).DataPoints, 3)
	c.expect(t, 0, "ratchet.jobs.estimated")
	c.expect(t, 90, "ratchet.jobs.oldest_due.age")
	c.unit(t, "ratchet.jobs", "{job}")
	c.unit(t, "ratchet.jobs.oldest_due.age", "s")

	// Estimates, nothing due, and a series gone since.
	r.stats = spi.JobStats{Counts: []spi.JobCount{{Status: spi.StatusPending, Task: "email.send", Priority: spi.PriorityNormal, N: 12000}}, Estimated: true}
	c = collect(t, reader)
	c.expect(t, 12000, "ratchet.jobs", jobs("PENDING", "email.send", 2)...)
	assert.Len(t, c["ratchet.jobs"].Data.(metricdata.Gauge[int64]).DataPoints, 1, "only what the store has now")
	c.expect(t, 1, "ratchet.jobs.estimated")
	c.expect(t, 0, "ratchet.jobs.oldest_due.age")

	// A failed read records nothing, and the collection succeeds.
	r.err = errors.New("connection refused")
	c = collect(t, reader)
	assert.Equal(t, int64(3), r.asked.Load())
	for _, name := range []string{"ratchet.jobs", "ratchet.jobs.estimated", "ratchet.jobs.oldest_due.age"} {
		if got, ok := c[name]; ok {
			assert.Zero(t, dataPoints(got), "%s records nothing after a failed read", name)
		}
	}
	if assert.Len(t, *handled, 1, "the failed read goes to the error handler") {
		assert.ErrorIs(t, (*handled)[0], r.err)
	}

	// Unregistered, it reads no more.
	r.err = nil
	require.NoError(t, reg.Unregister())
	collect(t, reader)
	assert.Equal(t, int64(3), r.asked.Load())

	_, err = m.ObserveJobs(nil, nil, 0)
	assert.Error(t, err)
}

// A read is cut short at its timeout.
func TestObserveJobsTimeout(t *testing.T) {
	m, reader := newMetrics(t)
	handled := captureErrors(t)
	var deadline atomic.Value
	r := statsFunc(func(ctx context.Context, _ time.Time) (spi.JobStats, error) {
		dl, _ := ctx.Deadline()
		deadline.Store(dl)
		<-ctx.Done()
		return spi.JobStats{}, ctx.Err()
	})
	start := time.Now()
	_, err := m.ObserveJobs(r, nil, 20*time.Millisecond)
	require.NoError(t, err)
	c := collect(t, reader)
	assert.Zero(t, dataPoints(c["ratchet.jobs.oldest_due.age"]))
	assert.WithinDuration(t, start.Add(20*time.Millisecond), deadline.Load().(time.Time), time.Second)
	if assert.Len(t, *handled, 1) {
		assert.ErrorIs(t, (*handled)[0], context.DeadlineExceeded)
	}
}

// captureErrors routes OpenTelemetry's global error handler to a slice
// for the test (the callbacks run in Collect, on the test's goroutine).
func captureErrors(t *testing.T) *[]error {
	var handled []error
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { handled = append(handled, err) }))
	t.Cleanup(func() { otel.SetErrorHandler(prev) })
	return &handled
}

type statsFunc func(context.Context, time.Time) (spi.JobStats, error)

func (f statsFunc) JobStats(ctx context.Context, now time.Time) (spi.JobStats, error) {
	return f(ctx, now)
}

func dataPoints(m metricdata.Metrics) int {
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		return len(d.DataPoints)
	case metricdata.Gauge[float64]:
		return len(d.DataPoints)
	}
	return 0
}
