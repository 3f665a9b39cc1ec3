package mysql

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestCompleteBatchOfEveryOutcome(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var jobs []*spi.Job
	for range 300 {
		jobs = append(jobs, job(spi.PriorityNormal, t0))
	}
	insert(t, s, jobs...)
	claimed := claim(t, s, "node-a", 300, t0, 0)
	require.Len(t, claimed, 300)
	now := t0.Add(time.Second)
	var cs []spi.Completion
	for i, j := range claimed {
		switch i % 4 {
		case 0:
			cs = append(cs, spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: now, Result: []byte(`{"i":1}`), ResultType: "example.R"})
		case 1:
			cs = append(cs, spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeRetry, FinishedAt: now, RetryAt: now.Add(time.Minute), Attempts: 1, LastError: "again"})
		case 2:
			cs = append(cs, spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeFailed, FinishedAt: now, Attempts: 4, LastError: "dead"})
		case 3:
			cs = append(cs, spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: 9}, Outcome: spi.OutcomeSucceeded, FinishedAt: now})
		}
	}
	// In reverse id order: the store sorts, the flags stay in input order.
	for i, k := 0, len(cs)-1; i < k; i, k = i+1, k-1 {
		cs[i], cs[k] = cs[k], cs[i]
	}
	ok, err := s.CompleteJobs(ctx, cs)
	require.NoError(t, err)
	for i, c := range cs {
		assert.Equal(t, c.ClaimSeq == 1, ok[i], "entry %d", i)
		got := get(t, s, c.JobID)
		switch {
		case c.ClaimSeq != 1:
			assert.Equal(t, spi.StatusRunning, got.Status)
		case c.Outcome == spi.OutcomeSucceeded:
			assert.Equal(t, spi.StatusSucceeded, got.Status)
			assert.Equal(t, c.Result, got.Result)
			assert.Equal(t, "example.R", got.ResultType)
			assert.Equal(t, now, got.FinishedAt)
			assert.Equal(t, "node-a", got.OwnerNode)
		case c.Outcome == spi.OutcomeRetry:
			assert.Equal(t, spi.StatusPending, got.Status)
			assert.Equal(t, now.Add(time.Minute), got.ScheduledAt)
			assert.Equal(t, 1, got.Attempts)
			assert.Equal(t, "again", got.LastError)
			assert.Empty(t, got.OwnerNode)
			assert.True(t, got.FinishedAt.IsZero())
		case c.Outcome == spi.OutcomeFailed:
			assert.Equal(t, spi.StatusFailed, got.Status)
			assert.Equal(t, 4, got.Attempts)
			assert.Equal(t, "dead", got.LastError)
			assert.Equal(t, now, got.FinishedAt)
		}
		assert.Equal(t, int64(1), got.ClaimSeq, "completions do not advance the claim sequence")
	}
}

func TestCompleteSameClaimTwiceFirstWins(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	a, b := job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0)
	insert(t, s, a, b)
	c := claim(t, s, "n", 2, t0, 0)
	ok, err := s.CompleteJobs(ctx, []spi.Completion{
		{ClaimRef: ref(c[1]), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 1, LastError: "first"},
		{ClaimRef: ref(c[0]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
		{ClaimRef: ref(c[1]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, false}, ok)
	assert.Equal(t, spi.StatusFailed, get(t, s, c[1].ID).Status)

	_, err = s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref(c[0]), Outcome: spi.Outcome(42)}})
	require.ErrorContains(t, err, "unknown outcome 42")
	ok, err = s.CompleteJobs(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, ok)
}

func TestReleaseBatch(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var jobs []*spi.Job
	for range 5 {
		jobs = append(jobs, job(spi.PriorityNormal, t0))
	}
	insert(t, s, jobs...)
	c := claim(t, s, "n", 5, t0, 0)
	now := t0.Add(time.Minute)
	ok, err := s.ReleaseJobs(ctx, []spi.ClaimRef{ref(c[3]), ref(c[0]), {JobID: c[1].ID, ClaimSeq: 7}, ref(c[3])}, now)
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true, false, false}, ok)
	got := get(t, s, c[3].ID)
	assert.Equal(t, spi.StatusPending, got.Status)
	assert.Equal(t, now, got.ScheduledAt)
	assert.Equal(t, int64(2), got.ClaimSeq)
	assert.Empty(t, got.OwnerNode)
	ok, err = s.ReleaseJobs(ctx, nil, now)
	require.NoError(t, err)
	assert.Empty(t, ok)
}

func TestRetryAndCancel(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := job(spi.PriorityNormal, t0)
	k := job(spi.PriorityNormal, t0.Add(time.Hour))
	insert(t, s, j, k)
	err := s.RetryFailedJob(ctx, j.ID, t0)
	require.ErrorIs(t, err, spi.ErrInvalidState)
	assert.Contains(t, err.Error(), "is PENDING")
	require.ErrorIs(t, s.RetryFailedJob(ctx, newID(), t0), spi.ErrNotFound)
	require.ErrorIs(t, s.CancelJob(ctx, newID(), t0), spi.ErrNotFound)

	c := claim(t, s, "n", 1, t0, 0)
	err = s.CancelJob(ctx, c[0].ID, t0)
	require.ErrorIs(t, err, spi.ErrInvalidState)
	assert.Contains(t, err.Error(), "is RUNNING")
	_, err = s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref(c[0]), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 3, LastError: "x"}})
	require.NoError(t, err)
	require.NoError(t, s.RetryFailedJob(ctx, j.ID, t0.Add(time.Minute)))
	got := get(t, s, j.ID)
	assert.Equal(t, spi.StatusPending, got.Status)
	assert.Equal(t, 0, got.Attempts)
	assert.Empty(t, got.LastError)
	assert.True(t, got.FinishedAt.IsZero())
	assert.Equal(t, t0.Add(time.Minute), got.ScheduledAt)

	require.NoError(t, s.CancelJob(ctx, k.ID, t0))
	got = get(t, s, k.ID)
	assert.Equal(t, spi.StatusCancelled, got.Status)
	assert.Equal(t, t0, got.FinishedAt)
}

func TestRecoverOrphans(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var jobs []*spi.Job
	for range 6 {
		jobs = append(jobs, job(spi.PriorityHigh, t0))
	}
	insert(t, s, jobs...)
	require.NoError(t, s.Heartbeat(ctx, "alive", t0.Add(50*time.Second)))
	require.NoError(t, s.Heartbeat(ctx, "stale", t0.Add(-time.Hour)))
	require.NoError(t, s.Heartbeat(ctx, "restarting", t0))
	claim(t, s, "alive", 2, t0, 0)
	claim(t, s, "stale", 2, t0, 0)
	claim(t, s, "restarting", 1, t0, 0)
	claim(t, s, "never-registered", 1, t0, 0)
	// One of the stale node's jobs has used up its crash budget.
	exec(t, s, `UPDATE `+s.sql.t.job+` SET crash_count = 3 WHERE job_id = ?`, jobs[3].ID[:])

	now := t0.Add(time.Minute)
	rec, err := s.RecoverOrphans(ctx, spi.RecoverParams{Now: now, Grace: 30 * time.Second, MaxCrashRedeliveries: 3, Nodes: []string{"restarting"}, LastError: "node crashed"})
	require.NoError(t, err)
	assert.Equal(t, []spi.RecoveredJob{
		{JobID: jobs[2].ID, TaskName: "send-email", FromNode: "stale", NewStatus: spi.StatusPending, CrashCount: 1},
		{JobID: jobs[3].ID, TaskName: "send-email", FromNode: "stale", NewStatus: spi.StatusFailed, CrashCount: 3},
		{JobID: jobs[4].ID, TaskName: "send-email", FromNode: "restarting", NewStatus: spi.StatusPending, CrashCount: 1},
		{JobID: jobs[5].ID, TaskName: "send-email", FromNode: "never-registered", NewStatus: spi.StatusPending, CrashCount: 1},
	}, rec)
	failed := get(t, s, jobs[3].ID)
	assert.Equal(t, "node crashed", failed.LastError)
	assert.Equal(t, now, failed.FinishedAt)
	assert.Equal(t, int64(2), failed.ClaimSeq)
	assert.Equal(t, spi.StatusRunning, get(t, s, jobs[0].ID).Status)

	var nodes []string
	rows, err := s.db.QueryContext(ctx, `SELECT node_id FROM `+s.sql.t.node+` ORDER BY 1`)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		nodes = append(nodes, n)
	}
	assert.Equal(t, []string{"alive"}, nodes)
	require.NoError(t, s.DeregisterNode(ctx, "alive"))
	require.NoError(t, s.DeregisterNode(ctx, "unknown"))

	rec, err = s.RecoverOrphans(ctx, spi.RecoverParams{Now: now, Grace: time.Minute, MaxCrashRedeliveries: 3})
	require.NoError(t, err)
	assert.Len(t, rec, 2, "the deregistered node's jobs are orphans now")
}

func TestCompleteLargeBatchInSeveralStatements(t *testing.T) {
	// A small statement budget splits the completions' values into several
	// UPDATEs of one transaction; every flag still comes back.
	ctx := context.Background()
	s := openStore(t)
	s.budget = 16 << 10
	var jobs []*spi.Job
	for range 40 {
		jobs = append(jobs, job(spi.PriorityNormal, t0))
	}
	insert(t, s, jobs...)
	claimed := claim(t, s, "n", 40, t0, 0)
	result := []byte(strings.Repeat("r", 2<<10))
	cs := make([]spi.Completion, len(claimed))
	for i, j := range claimed {
		cs[i] = spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0, Result: result, ResultType: fmt.Sprint("T", i)}
	}
	ok, err := s.CompleteJobs(ctx, cs)
	require.NoError(t, err)
	for i, j := range claimed {
		assert.True(t, ok[i])
		got := get(t, s, j.ID)
		assert.Equal(t, result, got.Result)
		assert.Equal(t, fmt.Sprint("T", i), got.ResultType)
	}
}

func TestCompleteKeepsEmptyAndNilResultsApart(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	a, b := job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0)
	insert(t, s, a, b)
	c := claim(t, s, "n", 2, t0, 0)
	ok, err := s.CompleteJobs(ctx, []spi.Completion{
		{ClaimRef: ref(c[0]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0, Result: []byte{}},
		{ClaimRef: ref(c[1]), Outcome: spi.OutcomeSucceeded, FinishedAt: t0},
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{true, true}, ok)
	assert.Equal(t, []byte{}, get(t, s, c[0].ID).Result)
	assert.Nil(t, get(t, s, c[1].ID).Result)
}

func TestRecoverUnknownIDsAreNotReported(t *testing.T) {
	// Nothing RUNNING: nothing to do, and the stale node rows go.
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Heartbeat(ctx, "old", t0.Add(-time.Hour)))
	rec, err := s.RecoverOrphans(ctx, spi.RecoverParams{Now: t0, Grace: time.Minute})
	require.NoError(t, err)
	assert.Empty(t, rec)
	var n int
	require.NoError(t, s.db.QueryRow(`SELECT COUNT(*) FROM `+s.sql.t.node).Scan(&n))
	assert.Zero(t, n)
}
