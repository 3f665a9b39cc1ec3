package engine_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// probe calls a health handler, returning its status and body.
func probe(t *testing.T, h http.Handler) (int, engine.Health) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	var body engine.Health
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return rec.Code, body
}

// Readiness fails with a stopped store and while the node drains;
// liveness holds through the drain and fails once the engine stopped.
func TestHealthProbes(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	running, release := make(chan struct{}), make(chan struct{})
	task := ratchet.NewVoidTask("slow", func(context.Context, int) error { close(running); <-release; return nil })
	eng, err := engine.New(store, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, ShutdownTimeout: time.Minute}, task)
	require.NoError(t, err)
	code, h := probe(t, eng.ReadinessHandler())
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, h.Problems, "not started")
	require.NoError(t, eng.Start(ctx))

	code, h = probe(t, eng.ReadinessHandler())
	assert.Equal(t, http.StatusOK, code, "problems: %v", h.Problems)
	assert.True(t, h.Ready)
	assert.False(t, h.LastHeartbeat.IsZero())
	code, _ = probe(t, eng.LivenessHandler())
	assert.Equal(t, http.StatusOK, code)

	// Draining: Stop waits for the running job.
	_, err = task.Submit(ctx, eng.Client(), 1)
	require.NoError(t, err)
	<-running
	stopped := make(chan error, 1)
	go func() { stopped <- eng.Stop(ctx) }()
	require.Eventually(t, func() bool { return eng.Health(ctx).Draining }, 10*time.Second, time.Millisecond)
	code, h = probe(t, eng.ReadinessHandler())
	assert.Equal(t, http.StatusServiceUnavailable, code, "a draining node is not ready")
	assert.Contains(t, h.Problems, "draining: Stop has begun")
	code, _ = probe(t, eng.LivenessHandler())
	assert.Equal(t, http.StatusOK, code, "a draining node is live")
	close(release)
	require.NoError(t, <-stopped)
	code, h = probe(t, eng.LivenessHandler())
	assert.Equal(t, http.StatusServiceUnavailable, code, "a stopped node is not live")
	assert.Contains(t, h.Problems, "stopped")

	// A stopped store: not ready, the store named.
	store2 := memory.New()
	eng2, err := engine.New(store2, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}}, task)
	require.NoError(t, err)
	require.NoError(t, eng2.Start(ctx))
	require.NoError(t, store2.Close())
	code, h = probe(t, eng2.ReadinessHandler())
	assert.Equal(t, http.StatusServiceUnavailable, code)
	require.NotEmpty(t, h.Problems)
	assert.Contains(t, h.Problems[len(h.Problems)-1], "store unreachable")
	code, _ = probe(t, eng2.LivenessHandler())
	assert.Equal(t, http.StatusOK, code, "the process is live: restarting it would not bring the store back")
	_ = eng2.Stop(ctx)
}
