package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

type approval struct {
	By string `json:"by"`
}

// signalRig runs a task "approve" that records how its wait ended.
type signalRig struct {
	*rig
	task *ratchet.Task[int, ratchet.Void]
	mu   sync.Mutex
	seen map[int]*ratchet.SignalResult
	by   map[int]string
}

func startSignals(t *testing.T, opts engine.Options) *signalRig {
	r := &signalRig{seen: map[int]*ratchet.SignalResult{}, by: map[int]string{}}
	r.task = ratchet.NewVoidTask("approve", func(ctx context.Context, n int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		s, err := jc.Signal(ctx)
		if err != nil {
			return err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.seen[n] = s
		if s != nil && s.HasPayload() {
			var a approval
			if err := s.Decode(ctx, &a); err != nil {
				return err
			}
			r.by[n] = a.By
		}
		return nil
	})
	r.rig = start(t, opts, r.task)
	return r
}

func (r *signalRig) result(n int) (*ratchet.SignalResult, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[n], r.by[n]
}

// A job submitted with AwaitSignal waits in WAITING; Signal makes it run,
// and its body reads the outcome and the payload. A second signal, a
// signal of another name and one to an unknown job are refused.
func TestSignalDeliveryRunsTheJob(t *testing.T) {
	r := startSignals(t, engine.Options{})
	ctx := context.Background()
	id, err := r.task.Submit(ctx, r.client, 1, ratchet.AwaitSignal("approved", time.Hour))
	require.NoError(t, err)
	j := r.job(id)
	assert.Equal(t, ratchet.StatusWaiting, j.Status)
	require.NotNil(t, j.Signal)
	assert.Equal(t, "approved", j.Signal.Name)
	assert.Equal(t, t0.Add(time.Hour), j.Signal.Deadline)

	err = r.client.Signal(ctx, id, "rejected", approval{By: "bob"})
	require.ErrorIs(t, err, ratchet.ErrInvalidState, "another signal's name")
	assert.Equal(t, ratchet.StatusWaiting, r.job(id).Status)

	require.NoError(t, r.client.Signal(ctx, id, "approved", approval{By: "ann"}))
	assert.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	s, by := r.result(1)
	require.NotNil(t, s)
	assert.Equal(t, ratchet.SignalDelivered, s.Outcome)
	assert.Equal(t, "approved", s.Name)
	assert.Equal(t, t0, s.At)
	assert.Equal(t, "ann", by)

	assert.ErrorIs(t, r.client.Signal(ctx, id, "approved", nil), ratchet.ErrInvalidState, "a wait resolves once")
	assert.ErrorIs(t, r.client.Signal(ctx, uuid.New(), "approved", nil), ratchet.ErrNotFound)

	// A job without a wait reads none.
	plain, err := r.task.Submit(ctx, r.client, 2)
	require.NoError(t, err)
	assert.Equal(t, engine.EventSucceeded, r.next(plain).Kind)
	s, _ = r.result(2)
	assert.Nil(t, s)
}

// SignalByKey wakes every job waiting for the signal under the key, once.
func TestSignalByKey(t *testing.T) {
	r := startSignals(t, engine.Options{})
	ctx := context.Background()
	var ids []uuid.UUID
	for n := 10; n < 13; n++ {
		id, err := r.task.Submit(ctx, r.client, n, ratchet.AwaitSignal("paid", 0), ratchet.WithSignalKey("order-7"))
		require.NoError(t, err)
		ids = append(ids, id)
	}
	other, err := r.task.Submit(ctx, r.client, 13, ratchet.AwaitSignal("paid", 0), ratchet.WithSignalKey("order-8"))
	require.NoError(t, err)
	n, err := r.client.SignalByKey(ctx, "order-7", "paid", approval{By: "bank"})
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	for i, id := range ids {
		assert.Equal(t, engine.EventSucceeded, r.next(id).Kind)
		_, by := r.result(10 + i)
		assert.Equal(t, "bank", by)
	}
	n, err = r.client.SignalByKey(ctx, "order-7", "paid", nil)
	require.NoError(t, err)
	assert.Zero(t, n, "each job is woken once")
	assert.Equal(t, ratchet.StatusWaiting, r.job(other).Status, "another key's job still waits")
	_, err = r.client.SignalByKey(ctx, "", "paid", nil)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

// expireSpy is a memory store whose ExpireSignals reports each pass.
type expireSpy struct {
	*memory.Store
	calls chan time.Time
}

func (s expireSpy) ExpireSignals(ctx context.Context, now time.Time, limit int) ([]spi.ResolvedSignal, error) {
	s.calls <- now
	return s.Store.ExpireSignals(ctx, now, limit)
}

// signalCounts is a metrics collector that counts signal callbacks.
type signalCounts struct {
	spi.NoOpMetrics
	mu sync.Mutex
	n  map[string]int
}

func (m *signalCounts) add(k string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n[k]++
}

func (m *signalCounts) get(k string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n[k]
}

func (m *signalCounts) SignalWaiting(context.Context, uuid.UUID, string, string) { m.add("waiting") }
func (m *signalCounts) SignalDelivered(context.Context, uuid.UUID, string, string) {
	m.add("delivered")
}
func (m *signalCounts) SignalTimedOut(context.Context, uuid.UUID, string, string) { m.add("timed-out") }
func (m *signalCounts) SignalCancelled(context.Context, uuid.UUID, string, string) {
	m.add("cancelled")
}

// The engine's signal sweeper times out a wait whose deadline passed, at
// its next pass: the job runs and reads TIMED_OUT. Cancelling a waiting
// job ends its wait CANCELLED. The metrics hear of every wait and how it
// ended.
func TestSignalTimeoutAndCancel(t *testing.T) {
	spy := expireSpy{Store: memory.New(), calls: make(chan time.Time, 100)}
	clock := clockwork.NewFakeClockAt(t0)
	metrics := &signalCounts{n: map[string]int{}}
	var mu sync.Mutex
	outcomes := map[int]ratchet.SignalOutcome{}
	task := ratchet.NewVoidTask("approve", func(ctx context.Context, n int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		s, err := jc.Signal(ctx)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		outcomes[n] = s.Outcome
		return nil
	})
	eng, err := engine.New(spy, engine.Options{Client: ratchet.ClientOptions{Clock: clock, Logger: quiet, Metrics: metrics}, NodeID: "n1", SignalSweepInterval: 5 * time.Second}, task)
	require.NoError(t, err)
	events, unsub := eng.SubscribeWith(engine.SubscribeOptions{Buffer: 100, Kinds: append([]engine.EventKind{engine.EventSignalResolved}, engine.CompletionKinds...)})
	defer unsub()
	require.NoError(t, eng.Start(context.Background()))
	t.Cleanup(func() { _ = eng.Stop(context.Background()) })
	pass := func() time.Time {
		select {
		case at := <-spy.calls:
			return at
		case <-time.After(10 * time.Second):
			t.Fatal("no sweeper pass")
			return time.Time{}
		}
	}
	assert.Equal(t, t0, pass(), "a pass at start")

	ctx := context.Background()
	client := eng.Client()
	timed, err := task.Submit(ctx, client, 1, ratchet.AwaitSignal("approved", 10*time.Second))
	require.NoError(t, err)
	cancelled, err := task.Submit(ctx, client, 2, ratchet.AwaitSignal("approved", 10*time.Second))
	require.NoError(t, err)
	require.NoError(t, client.CancelJob(ctx, cancelled))
	j, err := client.GetJob(ctx, cancelled)
	require.NoError(t, err)
	assert.Equal(t, ratchet.StatusCancelled, j.Status)
	assert.Equal(t, ratchet.SignalCancelled, j.Signal.Outcome)

	clock.Advance(5 * time.Second)
	assert.Equal(t, t0.Add(5*time.Second), pass())
	wj, err := client.GetJob(ctx, timed)
	require.NoError(t, err)
	assert.Equal(t, ratchet.StatusWaiting, wj.Status, "not before its deadline")
	clock.Advance(5 * time.Second)
	assert.Equal(t, t0.Add(10*time.Second), pass())
	// The job is claimable once the sweep committed, so it may succeed
	// before the sweeper has told the metrics: wait for both.
	succeeded, resolved := false, false
	for ev := range events {
		if ev.JobID == timed {
			succeeded = succeeded || ev.Kind == engine.EventSucceeded
			resolved = resolved || ev.Kind == engine.EventSignalResolved
		}
		if succeeded && resolved {
			break
		}
	}
	mu.Lock()
	assert.Equal(t, map[int]ratchet.SignalOutcome{1: ratchet.SignalTimedOut}, outcomes)
	mu.Unlock()
	assert.Equal(t, 2, metrics.get("waiting"))
	assert.Equal(t, 1, metrics.get("timed-out"))
	assert.Equal(t, 1, metrics.get("cancelled"))
	assert.Zero(t, metrics.get("delivered"))
	assert.ErrorIs(t, client.Signal(ctx, timed, "approved", nil), ratchet.ErrInvalidState, "a timed-out wait takes no signal")
}

// Bad signal input fails with an error that names the problem, and writes
// nothing.
func TestSignalRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{MaxPayloadBytes: 64})
	require.NoError(t, err)
	task := ratchet.NewVoidTask("approve", func(context.Context, int) error { return nil })
	for name, c := range map[string]struct {
		opts []ratchet.SubmitOption
		want string
	}{
		"empty name":       {[]ratchet.SubmitOption{ratchet.AwaitSignal("", 0)}, "empty signal name"},
		"negative timeout": {[]ratchet.SubmitOption{ratchet.AwaitSignal("x", -time.Second)}, "negative timeout"},
		"key alone":        {[]ratchet.SubmitOption{ratchet.WithSignalKey("k")}, "WithSignalKey needs AwaitSignal"},
		"with a delay":     {[]ratchet.SubmitOption{ratchet.AwaitSignal("x", 0), ratchet.WithDelay(time.Minute)}, "WithDelay or At"},
		"long name":        {[]ratchet.SubmitOption{ratchet.AwaitSignal(strings.Repeat("n", 256), 0)}, "over the limit of 255"},
	} {
		_, err := task.Submit(ctx, client, 1, c.opts...)
		assert.ErrorContains(t, err, c.want, name)
	}
	_, err = ratchet.NewClient(bareStore{store}, ratchet.ClientOptions{})
	require.NoError(t, err)
	bare, _ := ratchet.NewClient(bareStore{store}, ratchet.ClientOptions{})
	_, err = task.Submit(ctx, bare, 1, ratchet.AwaitSignal("x", 0))
	assert.ErrorIs(t, err, ratchet.ErrUnsupported)
	assert.ErrorIs(t, bare.Signal(ctx, uuid.New(), "x", nil), ratchet.ErrUnsupported)

	wf := ratchet.NewWorkflow()
	wf.Add(task.With(1, ratchet.AwaitSignal("x", 0)))
	_, err = client.SubmitWorkflow(ctx, wf)
	assert.ErrorContains(t, err, "cannot wait for a signal")

	page, err := client.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, page.Jobs, "nothing written")

	id, err := task.Submit(ctx, client, 1, ratchet.AwaitSignal("x", 0))
	require.NoError(t, err)
	var tooLarge *ratchet.PayloadTooLargeError
	require.ErrorAs(t, client.Signal(ctx, id, "x", strings.Repeat("p", 100)), &tooLarge)
	assert.Equal(t, "signal", tooLarge.Surface)
	j, err := client.GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, ratchet.StatusWaiting, j.Status, "an oversize signal writes nothing")
}
