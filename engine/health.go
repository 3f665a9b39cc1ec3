package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Health is a node's health, as its probes report it.
type Health struct {
	// Live: the engine was started and has not stopped (a draining node
	// is live). A liveness probe restarts the process when it is not.
	Live bool `json:"live"`
	// Ready: live, not draining, the store answered, and the node's
	// heartbeat is fresh (written within two heartbeat intervals). A
	// readiness probe takes the node out of service when it is not.
	Ready bool `json:"ready"`
	// Draining: Stop has begun.
	Draining bool `json:"draining"`
	// LastHeartbeat is when the node's heartbeat last succeeded (zero:
	// never).
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// Problems says what keeps the node from being ready, one line each.
	Problems []string `json:"problems,omitempty"`
}

// healthTimeout bounds the store's answer to a readiness check.
const healthTimeout = 2 * time.Second

// Health checks the node now: its state, its heartbeat's age, and the
// store, with a one-row read bounded by ctx and by 2 s.
func (e *Engine) Health(ctx context.Context) Health {
	e.mu.Lock()
	state, draining := e.state, e.draining
	e.mu.Unlock()
	h := Health{Live: state == 1 || draining, Draining: draining}
	switch {
	case state == 0:
		h.Problems = append(h.Problems, "not started")
	case state == 2 && !draining:
		h.Problems = append(h.Problems, "stopped")
	case draining:
		h.Problems = append(h.Problems, "draining: Stop has begun")
	}
	if state != 0 {
		h.LastHeartbeat = e.beats.LastBeat().UTC()
		if age := e.opts.clock.Since(h.LastHeartbeat); h.LastHeartbeat.IsZero() || age > 2*e.opts.HeartbeatInterval {
			h.Problems = append(h.Problems, fmt.Sprintf("heartbeat stale: last written %s ago (interval %s)", age.Round(time.Millisecond), e.opts.HeartbeatInterval))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	if _, _, err := e.store.ListJobs(ctx, spi.ListParams{Limit: 1}); err != nil {
		h.Problems = append(h.Problems, "store unreachable: "+err.Error())
	}
	h.Ready = h.Live && len(h.Problems) == 0
	return h
}

// LivenessHandler answers Kubernetes liveness probes: 200 while the node
// is live, 503 otherwise, with the Health as JSON.
func (e *Engine) LivenessHandler() http.Handler {
	return healthHandler(e, func(h Health) bool { return h.Live })
}

// ReadinessHandler answers Kubernetes readiness probes: 200 while the
// node is ready (live, not draining, store reachable, heartbeat fresh),
// 503 otherwise, with the Health as JSON.
func (e *Engine) ReadinessHandler() http.Handler {
	return healthHandler(e, func(h Health) bool { return h.Ready })
}

func healthHandler(e *Engine, ok func(Health) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := e.Health(r.Context())
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !ok(h) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(h)
	})
}
