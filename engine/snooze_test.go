package engine_test

import (
	"context"
	"fmt"
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

// snoozeCounter counts the snoozes the engine reports to its metrics.
type snoozeCounter struct {
	spi.NoOpMetrics
	n atomic.Int32
}

func (c *snoozeCounter) JobSnoozed(context.Context, uuid.UUID, string, time.Duration) { c.n.Add(1) }

// A body that snoozes twice, then succeeds, on a task with no retries:
// each snooze puts the job back to PENDING due a minute later, its count
// one more and no attempt spent; the body sees the count, and the run
// number stays 1.
func TestSnoozeSpendsNoAttempt(t *testing.T) {
	type run struct{ n, snoozes int }
	runs := make(chan run, 3)
	poll := ratchet.NewVoidTask("poll", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		runs <- run{jc.Run, jc.Snoozes}
		if jc.Snoozes < 2 {
			return ratchet.Snooze(time.Minute)
		}
		return nil
	}, ratchet.WithMaxRetries(0))
	metrics := &snoozeCounter{}
	r := start(t, engine.Options{Client: ratchet.ClientOptions{Metrics: metrics}}, poll)
	id, err := poll.Submit(context.Background(), r.client, 1)
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)

	for i := 1; i <= 2; i++ {
		ev := r.next(id)
		require.Equal(t, engine.EventSnoozed, ev.Kind, "snooze %d", i)
		assert.Equal(t, t0.Add(time.Duration(i)*time.Minute), ev.RetryAt, "due a minute after the run")
		j := r.job(id)
		assert.Equal(t, [3]any{spi.StatusPending, 0, i}, [3]any{j.Status, j.Attempts, j.Snoozes}, "PENDING, no attempt spent, snoozed %d times", i)
		assert.Empty(t, j.LastError)
		r.advanceTo(ev.RetryAt)
	}
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind, "the third run succeeds: no retry was needed")
	j := r.job(id)
	assert.Equal(t, [2]int{0, 2}, [2]int{j.Attempts, j.Snoozes})
	close(runs)
	var got []run
	for x := range runs {
		got = append(got, x)
	}
	assert.Equal(t, []run{{1, 0}, {1, 1}, {1, 2}}, got, "each run is run 1 and sees the snoozes before it")
	assert.Equal(t, int32(2), metrics.n.Load(), "the metrics count each snooze")
}

// A job may snooze as many times as its bound (WithMaxSnoozes): the run
// that would snooze once more fails the job for good, with an error that
// names the bound, and spends the attempt.
func TestSnoozePastTheBoundFails(t *testing.T) {
	always := ratchet.NewVoidTask("always", func(context.Context, int) error {
		return ratchet.Snooze(time.Second)
	}, ratchet.WithMaxRetries(3), ratchet.WithMaxSnoozes(5))
	r := start(t, engine.Options{}, always)
	id, err := always.Submit(context.Background(), r.client, 1, ratchet.WithMaxSnoozes(1))
	require.NoError(t, err)
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
	ev := r.next(id)
	require.Equal(t, engine.EventSnoozed, ev.Kind)
	r.advanceTo(ev.RetryAt)
	ev = r.next(id)
	require.Equal(t, engine.EventFailed, ev.Kind, "the second snooze is past the submission's bound of 1")
	assert.Contains(t, ev.Error, "ratchet: snoozed too many times: the job snoozed 1 times, its bound (ratchet.WithMaxSnoozes: 1)")
	j := r.job(id)
	assert.Equal(t, [3]any{spi.StatusFailed, 1, 1}, [3]any{j.Status, j.Attempts, j.Snoozes}, "FAILED, not retried, the attempt spent")

	_, err = always.Submit(context.Background(), r.client, 2, ratchet.WithMaxSnoozes(-1))
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, "a negative bound is refused")
}

// A snooze is found anywhere in the error chain, and a negative delay is
// none.
func TestSnoozeOf(t *testing.T) {
	d, ok := ratchet.SnoozeOf(fmt.Errorf("poll upstream: %w", ratchet.Snooze(3*time.Second)))
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d)
	d, ok = ratchet.SnoozeOf(ratchet.Snooze(-time.Second))
	assert.True(t, ok)
	assert.Zero(t, d)
	_, ok = ratchet.SnoozeOf(context.Canceled)
	assert.False(t, ok)
}
