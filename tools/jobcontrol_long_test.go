package tools_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// overranBy records spi.TimeoutMetrics' overruns.
type overranBy struct {
	spi.NoOpMetrics
	n  atomic.Int32
	by atomic.Int64
}

func (o *overranBy) RunOverran(_ context.Context, _ uuid.UUID, _ string, by time.Duration) {
	o.n.Add(1)
	o.by.Store(int64(by))
}

// jobControlNode starts an engine on a fresh PostgreSQL schema with the
// given slots and tasks, and returns it with its event stream.
func jobControlNode(t *testing.T, slots int, m spi.MetricsCollector, tasks ...ratchet.Definition) (*engine.Engine, <-chan engine.Event) {
	t.Helper()
	store := storeOpeners["postgres"](t)
	t.Cleanup(func() { _ = store.Close() })
	eng, err := engine.New(store, engine.Options{Concurrency: slots, Client: ratchet.ClientOptions{Logger: quiet, Metrics: m}}, tasks...)
	require.NoError(t, err)
	events, unsub := eng.SubscribeWith(engine.SubscribeOptions{Kinds: append([]engine.EventKind{engine.EventStarted}, engine.CompletionKinds...)})
	require.NoError(t, eng.Start(t.Context()))
	t.Cleanup(func() {
		_ = eng.Stop(context.Background())
		unsub()
	})
	return eng, events
}

// nextEvent waits up to 30 s for the next event of job id of one of kinds.
func nextEvent(t *testing.T, events <-chan engine.Event, id uuid.UUID, kinds ...engine.EventKind) (engine.Event, time.Time) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			for _, k := range kinds {
				if ev.JobID == id && ev.Kind == k {
					return ev, time.Now()
				}
			}
		case <-timeout:
			t.Fatalf("no %v event of job %s within 30 s", kinds, id)
		}
	}
}

// The acceptance runs of run timeouts and start-by deadlines on
// PostgreSQL, in real time (opt-in: RATCHET_TEST_LONG=1; the fake-clock
// tests of the engine run always). A 200 ms timeout: a body that waits on
// its context fails with ErrTimeout by 300 ms and frees its slot; a body
// that sleeps 2 s ignoring it fails by 300 ms too, its retry starts on the
// other slot after its 100 ms backoff, its slot stays held until it
// returns, the overrun is counted once, and its return changes nothing. A
// job whose deadline is 1 s away, behind a 5 s backlog, ends FAILED with
// ErrExpired and never runs. A body that snoozes twice runs again after
// each snooze and ends with no attempt spent.
func TestJobControlRealTimeLong(t *testing.T) {
	if os.Getenv("RATCHET_TEST_LONG") != "1" {
		t.Skip("opt-in: RATCHET_TEST_LONG=1 (real-time timeouts, deadlines and snoozes, about 9 s)")
	}
	ctx := context.Background()

	t.Run("timeout/watches-context", func(t *testing.T) {
		started := make(chan time.Time, 2)
		task := ratchet.NewVoidTask("wait", func(ctx context.Context, n int) error {
			started <- time.Now()
			if n == 2 {
				return nil
			}
			<-ctx.Done()
			return ctx.Err()
		}, ratchet.WithTimeout(200*time.Millisecond), ratchet.WithBackoff(ratchet.BackoffFixed, time.Hour))
		eng, events := jobControlNode(t, 1, nil, task)
		id, err := task.Submit(ctx, eng.Client(), 1)
		require.NoError(t, err)
		begin := <-started
		ev, at := nextEvent(t, events, id, engine.EventRetrying)
		assert.Contains(t, ev.Error, "ratchet: run timed out after 200ms")
		recorded := at.Sub(begin)
		next, err := task.Submit(ctx, eng.Client(), 2)
		require.NoError(t, err)
		freed := (<-started).Sub(begin)
		nextEvent(t, events, next, engine.EventSucceeded)
		t.Logf("failure recorded %s after the body started; the one slot ran the next job %s after", recorded, freed)
		assert.Less(t, recorded, 300*time.Millisecond)
	})

	t.Run("timeout/ignores-context", func(t *testing.T) {
		started, returned := make(chan time.Time, 2), make(chan time.Time, 1)
		var runs atomic.Int32
		task := ratchet.NewVoidTask("sleepy", func(ctx context.Context, _ int) error {
			started <- time.Now()
			if runs.Add(1) == 1 {
				time.Sleep(2 * time.Second) // a body that ignores its context
				returned <- time.Now()
				return nil
			}
			return nil
		}, ratchet.WithTimeout(200*time.Millisecond), ratchet.WithBackoff(ratchet.BackoffFixed, 100*time.Millisecond))
		m := &overranBy{}
		eng, events := jobControlNode(t, 2, m, task)
		id, err := task.Submit(ctx, eng.Client(), 1)
		require.NoError(t, err)
		begin := <-started
		ev, at := nextEvent(t, events, id, engine.EventRetrying)
		assert.Contains(t, ev.Error, "ratchet: run timed out after 200ms")
		recorded := at.Sub(begin)
		retried := (<-started).Sub(begin)
		_, doneAt := nextEvent(t, events, id, engine.EventSucceeded)
		after := eng.Client()
		j, err := after.GetJob(ctx, id)
		require.NoError(t, err)
		late := (<-returned).Sub(begin)
		require.Eventually(t, func() bool { return m.n.Load() == 1 }, 5*time.Second, time.Millisecond, "the overrun is counted")
		again, err := after.GetJob(ctx, id)
		require.NoError(t, err)
		t.Logf("failure recorded %s after the body started; retry started at %s and succeeded at %s; the first body returned at %s, %s past its timeout",
			recorded, retried, doneAt.Sub(begin), late, time.Duration(m.by.Load()))
		assert.Less(t, recorded, 300*time.Millisecond)
		assert.GreaterOrEqual(t, retried, 300*time.Millisecond, "the retry waits out its backoff")
		assert.Less(t, retried, 2*time.Second, "the retry ran on the other slot while the first body slept")
		assert.GreaterOrEqual(t, late, 2*time.Second)
		assert.Equal(t, spi.StatusSucceeded, again.Status, "the late return changes nothing")
		assert.Equal(t, j.Attempts, again.Attempts)
		assert.Equal(t, 1, again.Attempts, "one attempt spent: the timed-out run")
	})

	t.Run("start-by", func(t *testing.T) {
		release := make(chan struct{})
		var ran atomic.Int32
		backlog := ratchet.NewVoidTask("backlog", func(ctx context.Context, _ int) error {
			<-release
			return nil
		})
		remind := ratchet.NewVoidTask("remind", func(context.Context, int) error {
			ran.Add(1)
			return nil
		}, ratchet.WithMaxRetries(3))
		eng, events := jobControlNode(t, 1, nil, backlog, remind)
		busy, err := backlog.Submit(ctx, eng.Client(), 1)
		require.NoError(t, err)
		nextEvent(t, events, busy, engine.EventStarted)
		late, err := remind.Submit(ctx, eng.Client(), 1, ratchet.WithStartBy(time.Now().Add(time.Second)))
		require.NoError(t, err)
		time.AfterFunc(5*time.Second, func() { close(release) }) // the backlog takes 5 s
		ev, _ := nextEvent(t, events, late, engine.EventFailed, engine.EventSucceeded)
		require.Equal(t, engine.EventFailed, ev.Kind)
		assert.Contains(t, ev.Error, "ratchet: start-by deadline passed")
		j, err := eng.Client().GetJob(ctx, late)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusFailed, j.Status)
		assert.Zero(t, ran.Load(), "it never ran")
		t.Logf("expired: %s", j.LastError)
	})

	t.Run("snooze", func(t *testing.T) {
		// A body that snoozes 300 ms twice, on a task with no retries,
		// then succeeds: each run starts no earlier than 300 ms after the
		// one before, the slot runs another job meanwhile, and the job
		// ends with no attempt spent and two snoozes.
		starts := make(chan time.Time, 3)
		poll := ratchet.NewVoidTask("poll", func(ctx context.Context, _ int) error {
			starts <- time.Now()
			if jc, _ := ratchet.JobFromContext(ctx); jc.Snoozes < 2 {
				return ratchet.Snooze(300 * time.Millisecond)
			}
			return nil
		}, ratchet.WithMaxRetries(0))
		other := ratchet.NewVoidTask("other", func(context.Context, int) error { return nil })
		eng, events := jobControlNode(t, 1, nil, poll, other)
		id, err := poll.Submit(ctx, eng.Client(), 1)
		require.NoError(t, err)
		nextEvent(t, events, id, engine.EventSnoozed)
		between, err := other.Submit(ctx, eng.Client(), 1)
		require.NoError(t, err)
		nextEvent(t, events, between, engine.EventSucceeded)
		nextEvent(t, events, id, engine.EventSucceeded)
		close(starts)
		var at []time.Time
		for s := range starts {
			at = append(at, s)
		}
		require.Len(t, at, 3)
		j, err := eng.Client().GetJob(ctx, id)
		require.NoError(t, err)
		t.Logf("runs started at +0, +%s, +%s; attempts %d, snoozes %d", at[1].Sub(at[0]), at[2].Sub(at[0]), j.Attempts, j.Snoozes)
		assert.GreaterOrEqual(t, at[1].Sub(at[0]), 300*time.Millisecond)
		assert.GreaterOrEqual(t, at[2].Sub(at[1]), 300*time.Millisecond)
		assert.Equal(t, [3]any{spi.StatusSucceeded, 0, 2}, [3]any{j.Status, j.Attempts, j.Snoozes})
	})
}
