package spi_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func running() *spi.Job {
	return &spi.Job{ID: uuid.New(), Status: spi.StatusRunning, OwnerNode: "n1", ClaimSeq: 3, Attempts: 1,
		LastError: "old", ScheduledAt: time.Unix(10, 0).UTC()}
}

func TestACompletionWritesWhatItsOutcomeSays(t *testing.T) {
	at := time.Unix(100, 0).UTC()
	for _, tc := range []struct {
		c    spi.Completion
		want func(j *spi.Job)
	}{
		{spi.Completion{Outcome: spi.OutcomeSucceeded, FinishedAt: at, Result: []byte("r"), ResultType: "t"}, func(j *spi.Job) {
			j.Status, j.FinishedAt, j.Result, j.ResultType = spi.StatusSucceeded, at, []byte("r"), "t"
		}},
		{spi.Completion{Outcome: spi.OutcomeRetry, RetryAt: at, Attempts: 2, LastError: "boom"}, func(j *spi.Job) {
			j.Status, j.ScheduledAt, j.Attempts, j.LastError, j.OwnerNode = spi.StatusPending, at, 2, "boom", ""
		}},
		{spi.Completion{Outcome: spi.OutcomeFailed, FinishedAt: at, Attempts: 4}, func(j *spi.Job) {
			j.Status, j.FinishedAt, j.Attempts, j.LastError = spi.StatusFailed, at, 4, ""
		}},
		{spi.Completion{Outcome: spi.OutcomeSkipped, FinishedAt: at, LastError: "why"}, func(j *spi.Job) {
			j.Status, j.FinishedAt, j.LastError = spi.StatusSkipped, at, "why"
		}},
	} {
		j, want := running(), running()
		want.ID = j.ID
		tc.c.JobID, tc.c.ClaimSeq = j.ID, j.ClaimSeq
		ch, err := tc.c.Change()
		require.NoError(t, err)
		assert.True(t, ch.Applies(spi.StatusRunning))
		assert.False(t, ch.Applies(spi.StatusPending), "only the claim's RUNNING job")
		assert.False(t, tc.c.AlreadyApplied(j))
		ch.Apply(j)
		tc.want(want)
		assert.Equal(t, want, j, "outcome %d", tc.c.Outcome)
		assert.Equal(t, want.Status, ch.To())
		assert.True(t, tc.c.AlreadyApplied(j), "the job shows the completion")
		j.ClaimSeq++
		assert.False(t, tc.c.AlreadyApplied(j), "another claim's job")
	}
	_, err := spi.Completion{Outcome: 99}.Change()
	assert.ErrorContains(t, err, "unknown outcome 99")
}

func TestARecoveryRedeliversWithinTheBudgetAndFailsPastIt(t *testing.T) {
	now := time.Unix(100, 0).UTC()
	j := running()
	spi.Recovered(0, 1, "gone", now).Apply(j)
	assert.Equal(t, spi.StatusPending, j.Status)
	assert.Equal(t, 1, j.CrashCount)
	assert.Equal(t, int64(4), j.ClaimSeq, "the dead owner's claim fenced")
	assert.Equal(t, now, j.ScheduledAt)
	assert.Empty(t, j.OwnerNode)

	j = running()
	j.CrashCount = 1
	spi.Recovered(1, 1, "gone", now).Apply(j)
	assert.Equal(t, spi.StatusFailed, j.Status)
	assert.Equal(t, "gone", j.LastError)
	assert.Equal(t, now, j.FinishedAt)
	assert.Equal(t, 1, j.CrashCount)
	assert.Equal(t, int64(4), j.ClaimSeq)
}

func TestTheTransitionsApplyOnlyFromTheirStates(t *testing.T) {
	now := time.Unix(100, 0)
	for _, tc := range []struct {
		ch   spi.Change
		from []spi.Status
		to   spi.Status
	}{
		{spi.Claimed("n", now), []spi.Status{spi.StatusPending}, spi.StatusRunning},
		{spi.Released(now), []spi.Status{spi.StatusRunning}, spi.StatusPending},
		{spi.Retried(now), []spi.Status{spi.StatusFailed}, spi.StatusPending},
		{spi.Cancelled(now), []spi.Status{spi.StatusPending, spi.StatusBlocked, spi.StatusWaiting}, spi.StatusCancelled},
		{spi.Woken(spi.SignalDelivered, now), []spi.Status{spi.StatusWaiting}, spi.StatusPending},
		{spi.Woken(spi.SignalCancelled, now), []spi.Status{spi.StatusWaiting}, spi.StatusCancelled},
		{spi.Failed(spi.StatusPending, "bad row", now), []spi.Status{spi.StatusPending}, spi.StatusFailed},
		{spi.Aborted(now), []spi.Status{spi.StatusRunning}, spi.StatusCancelled},
		{spi.Unblocked(now, now), []spi.Status{spi.StatusBlocked}, spi.StatusPending},
		{spi.Revived(), []spi.Status{spi.StatusBlocked, spi.StatusPending, spi.StatusCancelled, spi.StatusSkipped}, spi.StatusBlocked},
	} {
		assert.ElementsMatch(t, tc.from, tc.ch.From)
		assert.Equal(t, tc.to, tc.ch.To())
	}
	later := now.Add(time.Hour)
	j := &spi.Job{Status: spi.StatusBlocked, ScheduledAt: later}
	spi.Unblocked(j.ScheduledAt, now).Apply(j)
	assert.Equal(t, later, j.ScheduledAt, "a released dependent keeps a later due time")
	spi.Unblocked(now.Add(-time.Hour), now).Apply(j)
	assert.Equal(t, now, j.ScheduledAt, "and is due now at the earliest")

	j = &spi.Job{Status: spi.StatusRunning, OwnerNode: "n", ClaimSeq: 2}
	spi.Aborted(now).Apply(j)
	assert.Equal(t, &spi.Job{Status: spi.StatusCancelled, FinishedAt: now, ClaimSeq: 3}, j, "its owner's writes fenced out")

	j = &spi.Job{Status: spi.StatusFailed, Attempts: 3, CrashCount: 2, LastError: "x", FinishedAt: now}
	spi.Retried(now).Apply(j)
	assert.Equal(t, &spi.Job{Status: spi.StatusPending, ScheduledAt: now}, j, "a dead letter's retry starts afresh")
}

// A store applies a completion by writing its change to the claim's job,
// guarded by the states the change leaves and the claim sequence.
func ExampleCompletion_Change() {
	job := &spi.Job{ID: uuid.New(), Status: spi.StatusRunning, ClaimSeq: 1, OwnerNode: "n1"}
	c := spi.Completion{ClaimRef: spi.ClaimRef{JobID: job.ID, ClaimSeq: 1}, Outcome: spi.OutcomeRetry,
		RetryAt: time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC), Attempts: 1, LastError: "timeout"}
	ch, err := c.Change()
	if err != nil {
		panic(err)
	}
	if ch.Applies(job.Status) && job.ClaimSeq == c.ClaimSeq {
		ch.Apply(job)
	}
	fmt.Println(job.Status, job.ScheduledAt.Format(time.Kitchen), job.Attempts, job.LastError, job.OwnerNode == "")
	// Output: PENDING 3:00PM 1 timeout true
}
