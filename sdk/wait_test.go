package ratchet_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// stillClock is a clock whose timers never fire; After tells afters of
// each one asked for.
type stillClock struct {
	now    time.Time
	afters chan time.Duration
}

func (c stillClock) Now() time.Time { return c.now }

func (c stillClock) After(d time.Duration) <-chan time.Time {
	c.afters <- d
	return make(chan time.Time)
}

// finishNotifier is a FinishNotifier whose one watch closes when the test
// says so.
type finishNotifier struct {
	finished chan struct{}
	watched  chan uuid.UUID
}

func (finishNotifier) NotifyNewWork(ratchet.Priority) {}

func (n finishNotifier) WatchFinished(id uuid.UUID) (<-chan struct{}, func()) {
	n.watched <- id
	return n.finished, func() {}
}

// WaitJob watches through its client's FinishNotifier: a job its process
// finishes wakes it at once, though its clock never lets an interval pass.
// And it polls on the client's clock: its first interval is 10 ms.
func TestWaitJobWokenByItsProcess(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	clock := stillClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), afters: make(chan time.Duration, 1)}
	n := finishNotifier{finished: make(chan struct{}), watched: make(chan uuid.UUID, 1)}
	c, err := ratchet.NewClient(store, ratchet.ClientOptions{Clock: clock, Notifier: n})
	require.NoError(t, err)
	task := ratchet.NewVoidTask("w", func(context.Context, int) error { return nil })
	id, err := task.Submit(ctx, c, 1)
	require.NoError(t, err)

	done := make(chan *ratchet.Job, 1)
	go func() {
		j, err := c.WaitJob(ctx, id)
		assert.NoError(t, err)
		done <- j
	}()
	assert.Equal(t, id, <-n.watched, "it watches the job")
	assert.Equal(t, 10*time.Millisecond, <-clock.afters, "its first read found the job PENDING: it waits on the client's clock")

	// A node of the process finishes the job.
	claimed, err := store.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n1", Limit: 1, Now: clock.now})
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	applied, err := store.CompleteJobs(ctx, []spi.Completion{{ClaimRef: spi.ClaimRef{JobID: id, ClaimSeq: claimed[0].ClaimSeq},
		Outcome: spi.OutcomeSucceeded, FinishedAt: clock.now}})
	require.NoError(t, err)
	require.Equal(t, []bool{true}, applied)
	close(n.finished)
	select {
	case j := <-done:
		assert.Equal(t, spi.StatusSucceeded, j.Status)
	case <-time.After(10 * time.Second):
		t.Fatal("WaitJob was not woken by its process's finish: its clock never moved")
	}
}
