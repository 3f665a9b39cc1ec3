package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claimedJob inserts one job and claims it for node "owner" at t0.
func claimedJob(t *testing.T, s *Store) *spi.Job {
	t.Helper()
	j := job(spi.PriorityNormal, t0)
	insert(t, s, j)
	got, err := s.ClaimJobs(context.Background(), spi.ClaimParams{NodeID: "owner", Limit: 1, Now: t0})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, j.ID, got[0].ID)
	return got[0]
}

func TestCompleteSucceeded(t *testing.T) {
	s := openStore(t)
	j := claimedJob(t, s)
	fin := t0.Add(3 * time.Second)
	ok, err := s.CompleteJobs(context.Background(), []spi.Completion{{
		ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: fin,
		Result: []byte(`{"ok":true}`), ResultType: "main.Out",
	}})
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, ok)
	want := j.Clone()
	want.Status = spi.StatusSucceeded
	want.FinishedAt = fin
	want.Result = []byte(`{"ok":true}`)
	want.ResultType = "main.Out"
	assert.Equal(t, want, get(t, s, j.ID))
}

func TestCompleteSucceededWithoutResult(t *testing.T) {
	s := openStore(t)
	j := claimedJob(t, s)
	ok, err := s.CompleteJobs(context.Background(), []spi.Completion{{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}})
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, ok)
	got := get(t, s, j.ID)
	assert.Nil(t, got.Result)
	assert.Empty(t, got.ResultType)
}

func TestCompleteRetry(t *testing.T) {
	s := openStore(t)
	j := claimedJob(t, s)
	retryAt := t0.Add(time.Minute)
	ok, err := s.CompleteJobs(context.Background(), []spi.Completion{{
		ClaimRef: ref(j), Outcome: spi.OutcomeRetry, FinishedAt: t0.Add(time.Second),
		RetryAt: retryAt, Attempts: 1, LastError: "boom",
	}})
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, ok)
	want := j.Clone()
	want.Status = spi.StatusPending
	want.ScheduledAt = retryAt
	want.Attempts = 1
	want.LastError = "boom"
	want.OwnerNode = ""
	assert.Equal(t, want, get(t, s, j.ID))

	assert.Empty(t, claim(t, s, "n", 1, retryAt.Add(-time.Millisecond), 0), "claimable before RetryAt")
	again := claim(t, s, "n", 1, retryAt, 0)
	require.Len(t, again, 1)
	assert.Equal(t, int64(2), again[0].ClaimSeq)
	assert.Equal(t, 1, again[0].Attempts)
}

func TestCompleteFailed(t *testing.T) {
	s := openStore(t)
	j := claimedJob(t, s)
	fin := t0.Add(time.Second)
	ok, err := s.CompleteJobs(context.Background(), []spi.Completion{{
		ClaimRef: ref(j), Outcome: spi.OutcomeFailed, FinishedAt: fin, Attempts: 4, LastError: "gave up",
	}})
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, ok)
	want := j.Clone()
	want.Status = spi.StatusFailed
	want.FinishedAt = fin
	want.Attempts = 4
	want.LastError = "gave up"
	assert.Equal(t, want, get(t, s, j.ID))
}

func TestFencedWritesWithStaleClaimChangeNothing(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := claimedJob(t, s)
	stale := spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq - 1}
	future := spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq + 1}
	unknown := spi.ClaimRef{JobID: newID(), ClaimSeq: 1}
	before := get(t, s, j.ID)

	var cs []spi.Completion
	for _, r := range []spi.ClaimRef{stale, future, unknown} {
		cs = append(cs,
			spi.Completion{ClaimRef: r, Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
			spi.Completion{ClaimRef: r, Outcome: spi.OutcomeRetry, RetryAt: t0, Attempts: 1, LastError: "x"},
			spi.Completion{ClaimRef: r, Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 1, LastError: "x"})
	}
	ok, err := s.CompleteJobs(ctx, cs)
	require.NoError(t, err)
	assert.Equal(t, make([]bool, len(cs)), ok)
	rel, err := s.ReleaseJobs(ctx, []spi.ClaimRef{stale, future, unknown}, t0)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, false, false}, rel)
	assert.Equal(t, before, get(t, s, j.ID))
}

func TestFencedWritesNeedRunning(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := claimedJob(t, s)
	ok, err := s.CompleteJobs(ctx, []spi.Completion{
		{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
		{ClaimRef: ref(j), Outcome: spi.OutcomeFailed, FinishedAt: t0}, // finalized already
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false}, ok)
	rel, err := s.ReleaseJobs(ctx, []spi.ClaimRef{ref(j)}, t0)
	require.NoError(t, err)
	assert.Equal(t, []bool{false}, rel)
	assert.Equal(t, spi.StatusSucceeded, get(t, s, j.ID).Status)

	// Same sequence, but the job went back to PENDING by a retry.
	k := claimedJob(t, s)
	ok, err = s.CompleteJobs(ctx, []spi.Completion{
		{ClaimRef: ref(k), Outcome: spi.OutcomeRetry, RetryAt: t0.Add(time.Hour), Attempts: 1},
		{ClaimRef: ref(k), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false}, ok)
	assert.Equal(t, spi.StatusPending, get(t, s, k.ID).Status)
}

func TestCompleteMixedBatch(t *testing.T) {
	s := openStore(t)
	var jobs []*spi.Job
	for range 3 {
		jobs = append(jobs, job(spi.PriorityNormal, t0))
	}
	insert(t, s, jobs...)
	claimed := claim(t, s, "n", 3, t0, 0)
	require.Len(t, claimed, 3)
	ok, err := s.CompleteJobs(context.Background(), []spi.Completion{
		{ClaimRef: ref(claimed[0]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
		{ClaimRef: spi.ClaimRef{JobID: claimed[1].ID, ClaimSeq: 99}, Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
		{ClaimRef: ref(claimed[2]), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 1, LastError: "e"},
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, false, true}, ok)
	assert.Equal(t, spi.StatusSucceeded, get(t, s, claimed[0].ID).Status)
	assert.Equal(t, spi.StatusRunning, get(t, s, claimed[1].ID).Status)
	assert.Equal(t, spi.StatusFailed, get(t, s, claimed[2].ID).Status)
}

func TestCompleteUnknownOutcomeWritesNothing(t *testing.T) {
	s := openStore(t)
	j := claimedJob(t, s)
	_, err := s.CompleteJobs(context.Background(), []spi.Completion{
		{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
		{ClaimRef: ref(j), Outcome: 42},
	})
	require.Error(t, err)
	assert.Equal(t, spi.StatusRunning, get(t, s, j.ID).Status)

	ok, err := s.CompleteJobs(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, ok)
}

func TestReleaseJobs(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := claimedJob(t, s)
	// Give it some history that the release must not charge or clear.
	exec(t, s, `UPDATE scheduler_job SET attempts = 2, crash_count = 1 WHERE job_id = ?`, j.ID.String())
	j = get(t, s, j.ID)

	now := t0.Add(10 * time.Minute)
	ok, err := s.ReleaseJobs(ctx, []spi.ClaimRef{ref(j)}, now)
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, ok)
	want := j.Clone()
	want.Status = spi.StatusPending
	want.OwnerNode = ""
	want.ScheduledAt = now
	want.ClaimSeq = j.ClaimSeq + 1
	assert.Equal(t, want, get(t, s, j.ID))

	// The old owner is fenced out.
	done, err := s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: now}})
	require.NoError(t, err)
	assert.Equal(t, []bool{false}, done)

	// The next claim takes it again with a higher sequence.
	again := claim(t, s, "other", 1, now, 0)
	require.Len(t, again, 1)
	assert.Equal(t, j.ClaimSeq+2, again[0].ClaimSeq)

	rel, err := s.ReleaseJobs(ctx, nil, now)
	require.NoError(t, err)
	assert.Empty(t, rel)
}
