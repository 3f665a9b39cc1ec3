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

// outageStore fails claims while claimsDown, and the next completesDown
// completion writes (every one while it is negative).
type outageStore struct {
	*memory.Store
	claimsDown    atomic.Bool
	completesDown atomic.Int32
}

func (s *outageStore) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	if s.claimsDown.Load() {
		return nil, errors.New("connection refused")
	}
	return s.Store.ClaimJobs(ctx, p)
}

func (s *outageStore) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	if n := s.completesDown.Load(); n != 0 {
		s.completesDown.CompareAndSwap(n, max(n-1, -1)) // a negative count stays
		if n > 0 || n < 0 {
			return nil, errors.New("connection reset")
		}
	}
	return s.Store.CompleteJobs(ctx, cs)
}

// callbackCounts counts the callbacks the engine makes on an outage.
type callbackCounts struct {
	spi.NoOpMetrics
	mu    sync.Mutex
	n     map[string]int
	nodes map[string]bool
	jobs  map[uuid.UUID]bool
}

func newCallbackCounts() *callbackCounts {
	return &callbackCounts{n: map[string]int{}, nodes: map[string]bool{}, jobs: map[uuid.UUID]bool{}}
}

func (c *callbackCounts) add(what, node string, id uuid.UUID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[what]++
	if node != "" {
		c.nodes[node] = true
	}
	if id != uuid.Nil {
		c.jobs[id] = true
	}
}

func (c *callbackCounts) get(what string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[what]
}

func (c *callbackCounts) ClaimTransientFailure(_ context.Context, node string, _ error) {
	c.add("claim-failure", node, uuid.Nil)
}

func (c *callbackCounts) GateRejected(_ context.Context, node, gate string, n int) {
	for range n {
		c.add("gate "+gate, node, uuid.Nil)
	}
}

func (c *callbackCounts) SuccessFinalizationRetried(_ context.Context, id uuid.UUID, _ string) {
	c.add("retried", "", id)
}

func (c *callbackCounts) SuccessFinalizationStuck(_ context.Context, id uuid.UUID, _ string) {
	c.add("stuck", "", id)
}

// outageEngine starts an engine on a store that fails on demand, with a
// poller breaker that opens after two failed claims and then probes every
// poll interval (200 ms).
func outageEngine(t *testing.T, tasks ...ratchet.Definition) (*engine.Engine, *outageStore, *callbackCounts) {
	t.Helper()
	s := &outageStore{Store: memory.New()}
	m := newCallbackCounts()
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Logger: quiet, Metrics: m}, NodeID: "n1",
		MinPollInterval: time.Millisecond, PollInterval: 200 * time.Millisecond,
		Breakers: engine.BreakerOptions{Config: spi.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitDuration: time.Minute, PermittedCallsInHalfOpen: 1}}},
		tasks...)
	require.NoError(t, err)
	return eng, s, m
}

// Through a real engine: failed claims reach ClaimTransientFailure, the
// claims the open poller breaker turns away reach GateRejected, and the
// node claims again once the store answers.
func TestClaimOutageCallbacks(t *testing.T) {
	ctx := context.Background()
	ran := make(chan uuid.UUID, 1)
	task := ratchet.NewVoidTask("t", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		ran <- jc.ID
		return nil
	})
	eng, s, m := outageEngine(t, task)
	s.claimsDown.Store(true)
	require.NoError(t, eng.Start(ctx))
	t.Cleanup(func() { _ = eng.Stop(ctx) })
	require.Eventually(t, func() bool {
		eng.NotifyNewWork(ratchet.PriorityNormal) // a claim between the breaker's probes
		return m.get("gate "+spi.GatePollerBreaker) > 0
	}, 10*time.Second, 5*time.Millisecond, "the open breaker turns claims away")
	assert.GreaterOrEqual(t, m.get("claim-failure"), 2, "each failed claim is reported")
	m.mu.Lock()
	assert.Equal(t, map[string]bool{"n1": true}, m.nodes, "with the node's id")
	m.mu.Unlock()

	s.claimsDown.Store(false)
	id, err := task.Submit(ctx, eng.Client(), 1)
	require.NoError(t, err)
	select {
	case got := <-ran:
		assert.Equal(t, id, got, "claims resume once the store answers")
	case <-time.After(10 * time.Second):
		t.Fatal("no claim after the store came back")
	}
}

// Through a real engine: a success whose write fails is retried
// (SuccessFinalizationRetried) until it lands; one the store still refuses
// when the engine stops is reported stuck (SuccessFinalizationStuck).
func TestCompletionOutageCallbacks(t *testing.T) {
	ctx := context.Background()
	task := ratchet.NewVoidTask("t", func(context.Context, int) error { return nil })

	t.Run("retried", func(t *testing.T) {
		eng, s, m := outageEngine(t, task)
		s.completesDown.Store(2)
		events, unsub := eng.Subscribe(10)
		defer unsub()
		require.NoError(t, eng.Start(ctx))
		t.Cleanup(func() { _ = eng.Stop(ctx) })
		id, err := task.Submit(ctx, eng.Client(), 1)
		require.NoError(t, err)
		select {
		case ev := <-events:
			assert.Equal(t, engine.EventSucceeded, ev.Kind, "written on the third try")
		case <-time.After(10 * time.Second):
			t.Fatal("the success was never written")
		}
		assert.Equal(t, 2, m.get("retried"), "one report per failed write")
		assert.True(t, m.jobs[id])
		assert.Zero(t, m.get("stuck"))
	})

	t.Run("stuck", func(t *testing.T) {
		eng, s, m := outageEngine(t, task)
		s.completesDown.Store(-1)
		require.NoError(t, eng.Start(ctx))
		id, err := task.Submit(ctx, eng.Client(), 1)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return m.get("retried") > 0 }, 10*time.Second, time.Millisecond, "the body ran; its write fails")
		stop, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		require.Error(t, eng.Stop(stop), "the stop reports the unwritten success")
		assert.Equal(t, 1, m.get("stuck"), "reported once, at the stop")
		assert.True(t, m.jobs[id])
		j, err := s.GetJob(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusRunning, j.Status, "left RUNNING for orphan recovery")
	})
}
