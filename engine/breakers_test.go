package engine_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

var errGatewayDown = errors.New("gateway down")

// An open breaker reschedules its service's jobs after the retry delay
// without charging an attempt and without running them; half-open lets
// exactly the permitted trial calls through.
func TestBreakerReschedulesWithoutChargingAnAttempt(t *testing.T) {
	var calls atomic.Int32
	var down atomic.Bool
	down.Store(true)
	started, release := make(chan struct{}, 10), make(chan struct{})
	task := ratchet.NewVoidTask("charge", func(ctx context.Context, block bool) error {
		calls.Add(1)
		if block {
			started <- struct{}{}
			<-release
		}
		if down.Load() {
			return errGatewayDown
		}
		return nil
	}, ratchet.WithMaxRetries(10), ratchet.WithBackoff(ratchet.BackoffFixed, time.Hour)).ProtectedBy("payments", spi.ErrorFilter{})
	metrics := &breakerMetrics{}
	r := start(t, engine.Options{
		Client: ratchet.ClientOptions{Metrics: metrics},
		Breakers: engine.BreakerOptions{RetryDelay: 10 * time.Second,
			Config: spi.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitDuration: time.Minute, PermittedCallsInHalfOpen: 2}},
	}, task)
	ctx := context.Background()

	// Two failures open the breaker; each was a real attempt.
	for range 2 {
		id, err := task.Submit(ctx, r.client, false)
		require.NoError(t, err)
		require.Equal(t, engine.EventRetrying, r.next(id).Kind)
		assert.Equal(t, 1, r.job(id).Attempts, "a run that failed is charged")
	}
	assert.Equal(t, []string{"OPEN"}, metrics.get())

	// While open, jobs do not run and go back without an attempt.
	var blocked []uuid.UUID
	for range 3 {
		id, err := task.Submit(ctx, r.client, true)
		require.NoError(t, err)
		ev := r.next(id)
		require.Equal(t, engine.EventRetrying, ev.Kind)
		assert.Contains(t, ev.Error, `circuit breaker of service "payments" is open`)
		assert.Equal(t, r.clock.Now().Add(10*time.Second), ev.RetryAt, "after the retry delay")
		assert.Equal(t, 0, r.job(id).Attempts, "not charged an attempt")
		blocked = append(blocked, id)
	}
	assert.Equal(t, int32(2), calls.Load(), "the refused jobs did not run")

	// A minute on, half-open: the three are due, exactly two run as
	// trials, the third is refused again.
	r.advanceTo(r.clock.Now().Add(time.Minute))
	<-started
	<-started
	var refused uuid.UUID
	for refused == uuid.Nil {
		select {
		case ev := <-r.events:
			if ev.Kind == engine.EventRetrying {
				refused = ev.JobID
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no job refused while two trials run")
		}
	}
	assert.Contains(t, blocked, refused)
	assert.Equal(t, 0, r.job(refused).Attempts)
	assert.Equal(t, int32(4), calls.Load(), "two trial calls")

	// The trials succeed: the breaker closes, and the refused job runs
	// at its retry time.
	down.Store(false)
	close(release)
	for _, id := range blocked {
		if id != refused {
			require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
		}
	}
	assert.Equal(t, []string{"OPEN", "HALF_OPEN", "CLOSED"}, metrics.get())
	r.advanceTo(r.clock.Now().Add(10 * time.Second))
	require.Equal(t, engine.EventSucceeded, r.next(refused).Kind)
	assert.Equal(t, 0, r.job(refused).Attempts, "a success keeps the attempt count: never charged")
}

// Disabled, a protected task runs directly, and an invalid configuration
// is refused at New.
func TestBreakerDisabledAndChecked(t *testing.T) {
	var calls atomic.Int32
	task := ratchet.NewVoidTask("charge", func(context.Context, int) error { calls.Add(1); return errGatewayDown },
		ratchet.WithMaxRetries(5), ratchet.WithBackoff(ratchet.BackoffNone, 0)).ProtectedBy("payments", spi.ErrorFilter{})
	r := start(t, engine.Options{Breakers: engine.BreakerOptions{Disabled: true,
		Config: spi.CircuitBreakerConfig{SlidingWindowSize: 1, MinimumCalls: 1}}}, task)
	id, err := task.Submit(context.Background(), r.client, 1)
	require.NoError(t, err)
	for range 6 {
		r.next(id)
		r.advanceTo(r.clock.Now())
	}
	assert.Equal(t, spi.StatusFailed, r.job(id).Status, "every attempt ran and was charged")
	assert.Equal(t, int32(6), calls.Load())

	_, err = engine.New(memory.New(), engine.Options{Breakers: engine.BreakerOptions{Config: spi.CircuitBreakerConfig{FailureRateThreshold: 120}}}, task)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	assert.ErrorContains(t, err, "FailureRateThreshold")
}

type breakerMetrics struct {
	spi.NoOpMetrics
	mu     sync.Mutex
	states []string
}

func (m *breakerMetrics) CircuitBreakerState(_ context.Context, _, _, state string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.states = append(m.states, state)
}

func (m *breakerMetrics) get() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.states...)
}
