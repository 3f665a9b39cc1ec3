package ratchetprom_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/metrics/ratchetprom"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// scrape reads the registry's /metrics page.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// The endpoint shows each family, fed by a real engine where the run can
// produce it and by the callbacks directly otherwise.
func TestScrapeShowsEveryFamily(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	c, err := ratchetprom.New(reg)
	require.NoError(t, err)
	ok := ratchet.NewVoidTask("email.send", func(context.Context, int) error { return nil })
	bad := ratchet.NewVoidTask("email.bounce", func(context.Context, int) error { return ratchet.DoNotRetry(errors.New("no such mailbox")) })
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Metrics: c, Logger: slog.New(slog.DiscardHandler)}, NodeID: "n1"}, ok, bad)
	require.NoError(t, err)
	events, unsubscribe := eng.Subscribe(10)
	defer unsubscribe()
	require.NoError(t, eng.Start(ctx))
	_, err = ok.Submit(ctx, eng.Client(), 1)
	require.NoError(t, err)
	_, err = bad.Submit(ctx, eng.Client(), 1)
	require.NoError(t, err)
	<-events
	<-events
	require.NoError(t, eng.Stop(ctx))
	c.ClaimTransientFailure(ctx, "n1", errors.New("connection reset"))
	c.WriteSuperseded(ctx, uuid.New(), "email.send")
	c.JobsRecovered(ctx, "n1", 3)
	c.CircuitBreakerState(ctx, "n1", "smtp", "OPEN")
	c.PollerBreakerState(ctx, "n1", "HALF_OPEN")
	c.SignalWaiting(ctx, uuid.New(), "refund", "approval")
	c.SignalDelivered(ctx, uuid.New(), "refund", "approval")
	c.SignalTimedOut(ctx, uuid.New(), "refund", "approval")
	c.SignalCancelled(ctx, uuid.New(), "refund", "approval")
	c.EncryptionIntegrityViolation(ctx, uuid.New(), "result")
	c.EncryptionEnvelopeVersionSkew(ctx, uuid.New(), 2, 1)
	c.SuccessFinalizationRetried(ctx, uuid.New(), "email.send")
	c.SuccessFinalizationStuck(ctx, uuid.New(), "email.send")
	c.GateRejected(ctx, "n1", spi.GateTaskLimit, 4)
	c.EventsDropped(ctx, "n1", "started")
	c.ClusterWakeupPublished(ctx, "n1", spi.PriorityHigh)
	c.ClusterWakeupReceived(ctx, "n1", "n2")

	page := scrape(t, reg)
	for _, want := range []string{
		`ratchet_jobs_started_total{priority="NORMAL",task="email.send"} 1`,
		`ratchet_jobs_succeeded_total{task="email.send"} 1`,
		`ratchet_jobs_failed_total{task="email.bounce"} 1`,
		`ratchet_job_duration_seconds_count{task="email.send"} 1`,
		`ratchet_claims_jobs_total{node="n1"}`,
		`ratchet_claim_failures_total{node="n1"} 1`,
		`ratchet_writes_superseded_total{task="email.send"} 1`,
		`ratchet_jobs_recovered_total{node="n1"} 3`,
		`ratchet_circuit_breaker_state{node="n1",service="smtp",state="OPEN"} 1`,
		`ratchet_circuit_breaker_state{node="n1",service="smtp",state="CLOSED"} 0`,
		`ratchet_poller_breaker_state{node="n1",state="HALF_OPEN"} 1`,
		`ratchet_signal_waits_total{signal="approval",task="refund"} 1`,
		`ratchet_signal_waits_resolved_total{outcome="DELIVERED",signal="approval",task="refund"} 1`,
		`ratchet_signal_waits_resolved_total{outcome="TIMED_OUT",signal="approval",task="refund"} 1`,
		`ratchet_signal_waits_resolved_total{outcome="CANCELLED",signal="approval",task="refund"} 1`,
		`ratchet_encryption_integrity_violations_total{surface="result"} 1`,
		`ratchet_encryption_envelope_version_skew_total{found="2",supported="1"} 1`,
		`ratchet_success_finalizations_total{kind="retried",task="email.send"} 1`,
		`ratchet_success_finalizations_total{kind="stuck",task="email.send"} 1`,
		`ratchet_gate_rejections_total{gate="task-limit",node="n1"} 4`,
		`ratchet_events_dropped_total{kind="started",node="n1"} 1`,
		`ratchet_wakeups_total{kind="local",node="n1"} 2`,
		`ratchet_wakeups_total{kind="published",node="n1"} 1`,
		`ratchet_wakeups_total{kind="received",node="n1"} 1`,
	} {
		assert.True(t, strings.Contains(page, want), "the page shows %s:\n%s", want, page)
	}

	_, err = ratchetprom.New(reg)
	assert.Error(t, err, "a second collector on the same registry is refused")
}

// The engine reports its signal waits to the collector (a wait written and
// delivered is counted) and times its store's operations.
func TestSignalMetricsThroughTheEngine(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	c, err := ratchetprom.New(reg)
	require.NoError(t, err)
	approve := ratchet.NewVoidTask("refund.approve", func(context.Context, int) error { return nil })
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Metrics: c, Logger: slog.New(slog.DiscardHandler)}, NodeID: "n1"}, approve)
	require.NoError(t, err)
	events, unsubscribe := eng.Subscribe(10)
	defer unsubscribe()
	require.NoError(t, eng.Start(ctx))
	defer eng.Stop(ctx)
	id, err := approve.Submit(ctx, eng.Client(), 1, ratchet.AwaitSignal("approval", 0))
	require.NoError(t, err)
	require.NoError(t, eng.Client().Signal(ctx, id, "approval", nil))
	assert.Equal(t, engine.EventSucceeded, (<-events).Kind)
	page := scrape(t, reg)
	for _, want := range []string{
		`ratchet_signal_waits_total{signal="approval",task="refund.approve"} 1`,
		`ratchet_signal_waits_resolved_total{outcome="DELIVERED",signal="approval",task="refund.approve"} 1`,
		`ratchet_store_operation_duration_seconds_count{op="InsertJobs",outcome="ok",store="memory"} 1`,
		`ratchet_store_operation_duration_seconds_count{op="ClaimJobs",outcome="ok",store="memory"}`,
		`ratchet_store_operation_duration_seconds_count{op="CompleteJobs",outcome="ok",store="memory"} 1`,
		`ratchet_store_operation_duration_seconds_count{op="RecoverOrphans",outcome="ok",store="memory"}`,
	} {
		assert.True(t, strings.Contains(page, want), "the page shows %s:\n%s", want, page)
	}
}

// A callback job that fails and a result that does not serialize reach the
// collector through the engine.
func TestCallbackAndFinalizationMetricsThroughTheEngine(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	c, err := ratchetprom.New(reg)
	require.NoError(t, err)
	notify := ratchet.NewVoidTask("order.notify", func(context.Context, int) error { return ratchet.DoNotRetry(errors.New("smtp down")) })
	place := ratchet.NewTask("order.place", func(context.Context, int) (chan int, error) { return make(chan int), nil })
	eng, err := engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Metrics: c, Logger: slog.New(slog.DiscardHandler)}, NodeID: "n1"}, notify, place)
	require.NoError(t, err)
	events, unsubscribe := eng.Subscribe(10)
	defer unsubscribe()
	require.NoError(t, eng.Start(ctx))
	defer eng.Stop(ctx)
	_, err = place.Submit(ctx, eng.Client(), 1, ratchet.OnSuccess(notify.With(7)))
	require.NoError(t, err)
	// The order is placed (without its result), and its callback fails:
	// the callback may end before the order's event is published.
	kinds := []engine.EventKind{(<-events).Kind, (<-events).Kind}
	assert.ElementsMatch(t, []engine.EventKind{engine.EventSucceeded, engine.EventFailed}, kinds)
	page := scrape(t, reg)
	for _, want := range []string{
		`ratchet_success_finalizations_total{kind="minimal",task="order.place"} 1`,
		`ratchet_callbacks_failed_total{task="order.notify"} 1`,
		`ratchet_jobs_failed_total{task="order.notify"} 1`,
	} {
		assert.True(t, strings.Contains(page, want), "the page shows %s:\n%s", want, page)
	}
	assert.NotContains(t, page, `ratchet_callbacks_failed_total{task="order.place"}`, "only callbacks count as callbacks")
}

// failingStats is a StatsReader whose store is down.
type failingStats struct{}

func (failingStats) JobStats(context.Context, time.Time) (spi.JobStats, error) {
	return spi.JobStats{}, errors.New("connection refused")
}

// ObserveJobs shows the store's counts and the age of its oldest due job at
// each scrape, and a store that fails the read as job_stats_up 0.
func TestObserveJobs(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	c, err := ratchetprom.New(reg)
	require.NoError(t, err)
	store := memory.New()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	ok := ratchet.NewVoidTask("email.send", func(context.Context, int) error { return nil })
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{Clock: clockwork.NewFakeClockAt(now.Add(-90 * time.Second))})
	require.NoError(t, err)
	for range 3 {
		_, err = ok.Submit(ctx, client, 1)
		require.NoError(t, err)
	}
	_, err = ok.Submit(ctx, client, 1, ratchet.WithPriority(spi.PriorityHigh), ratchet.WithDelay(time.Hour))
	require.NoError(t, err)
	require.NoError(t, client.PauseTask(ctx, "email.send"))
	require.NoError(t, c.ObserveJobs(store, func() time.Time { return now }, 0))
	page := scrape(t, reg)
	for _, want := range []string{
		`ratchet_jobs{priority="NORMAL",status="PENDING",task="email.send"} 3`,
		`ratchet_jobs{priority="HIGH",status="PENDING",task="email.send"} 1`,
		`ratchet_jobs_estimated 0`,
		`ratchet_oldest_due_job_age_seconds 90`,
		`ratchet_job_stats_up 1`,
		`ratchet_task_paused{since="` + strconv.FormatInt(now.Add(-90*time.Second).Unix(), 10) + `",task="email.send"} 1`,
	} {
		assert.True(t, strings.Contains(page, want), "the page shows %s:\n%s", want, page)
	}

	down := prometheus.NewRegistry()
	c, err = ratchetprom.New(down)
	require.NoError(t, err)
	require.NoError(t, c.ObserveJobs(failingStats{}, nil, time.Second))
	page = scrape(t, down)
	assert.Contains(t, page, "ratchet_job_stats_up 0")
	assert.NotContains(t, page, "ratchet_jobs{", "no job gauges from a store that failed the read")
}

// A job claimed past its start-by deadline is counted as expired, once,
// and as a failure of its task.
func TestExpiredJobsThroughTheEngine(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	c, err := ratchetprom.New(reg)
	require.NoError(t, err)
	clock := clockwork.NewFakeClock()
	remind := ratchet.NewVoidTask("meeting.remind", func(context.Context, int) error { return nil })
	eng, err := engine.New(memory.New(), engine.Options{NodeID: "n1",
		Client: ratchet.ClientOptions{Metrics: c, Clock: clock, Logger: slog.New(slog.DiscardHandler)}}, remind)
	require.NoError(t, err)
	_, err = remind.Submit(ctx, eng.Client(), 1, ratchet.WithStartBy(clock.Now().Add(time.Second)))
	require.NoError(t, err)
	clock.Advance(2 * time.Second)
	events, unsubscribe := eng.Subscribe(10)
	defer unsubscribe()
	require.NoError(t, eng.Start(ctx))
	defer eng.Stop(ctx)
	assert.Equal(t, engine.EventFailed, (<-events).Kind)
	page := scrape(t, reg)
	for _, want := range []string{
		`ratchet_jobs_expired_total{task="meeting.remind"} 1`,
		`ratchet_jobs_failed_total{task="meeting.remind"} 1`,
	} {
		assert.True(t, strings.Contains(page, want), "the page shows %s:\n%s", want, page)
	}
}

// A submission that joins an earlier job is counted by its reason.
func TestJoinedSubmissions(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	c, err := ratchetprom.New(reg)
	require.NoError(t, err)
	client, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{Metrics: c, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	sync := ratchet.NewVoidTask("acct.sync", func(context.Context, int) error { return nil })
	for range 3 {
		_, err = sync.Submit(ctx, client, 7, ratchet.WithUnique(ratchet.UniqueOpts{ByArgs: true}))
		require.NoError(t, err)
	}
	page := scrape(t, reg)
	assert.Contains(t, page, `ratchet_submissions_joined_total{reason="unique",task="acct.sync"} 2`)
}
