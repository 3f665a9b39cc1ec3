package prometheus_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchetprom "github.com/ratchet-go/ratchet/metrics/prometheus"
	ratchet "github.com/ratchet-go/ratchet/sdk"
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
	eng, err := engine.New(memory.New(), engine.Options{Metrics: c, NodeID: "n1", Logger: slog.New(slog.DiscardHandler)}, ok, bad)
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

	page := scrape(t, reg)
	for _, want := range []string{
		`ratchet_jobs_started_total{priority="2",task="email.send"} 1`,
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
	eng, err := engine.New(memory.New(), engine.Options{Metrics: c, NodeID: "n1", Logger: slog.New(slog.DiscardHandler)}, approve)
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
