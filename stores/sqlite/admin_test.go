package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestRetryFailedJob(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := claimedJob(t, s)
	exec(t, s, `UPDATE scheduler_job SET crash_count = 2 WHERE job_id = ?`, j.ID.String())
	ok, err := s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref(j), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 4, LastError: "dead"}})
	require.NoError(t, err)
	require.Equal(t, []bool{true}, ok)

	now := t0.Add(time.Hour)
	require.NoError(t, s.RetryFailedJob(ctx, j.ID, now))
	got := get(t, s, j.ID)
	want := j.Clone()
	want.Status = spi.StatusPending
	want.ScheduledAt = now
	want.OwnerNode = ""
	assert.Equal(t, want, got)

	// It is PENDING now: retrying again is an invalid state.
	err = s.RetryFailedJob(ctx, j.ID, now)
	require.ErrorIs(t, err, spi.ErrInvalidState)
	assert.Contains(t, err.Error(), "PENDING")
	assert.Contains(t, err.Error(), j.ID.String())

	id := newID()
	err = s.RetryFailedJob(ctx, id, now)
	require.ErrorIs(t, err, spi.ErrNotFound)
	assert.Contains(t, err.Error(), id.String())

	again := claim(t, s, "n", 1, now, 0)
	require.Len(t, again, 1)
	assert.Equal(t, j.ClaimSeq+1, again[0].ClaimSeq)
}

func TestCancelJob(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := job(spi.PriorityNormal, t0.Add(time.Hour))
	insert(t, s, j)
	now := t0.Add(time.Minute)
	require.NoError(t, s.CancelJob(ctx, j.ID, now))
	got := get(t, s, j.ID)
	assert.Equal(t, spi.StatusCancelled, got.Status)
	assert.Equal(t, now, got.FinishedAt)
	assert.Empty(t, claim(t, s, "n", 1, t0.Add(2*time.Hour), 0))

	err := s.CancelJob(ctx, j.ID, now)
	require.ErrorIs(t, err, spi.ErrInvalidState)
	assert.Contains(t, err.Error(), "CANCELLED")

	r := claimedJob(t, s)
	require.NoError(t, s.CancelJob(ctx, r.ID, now), "a RUNNING job is cancelled too")
	got = get(t, s, r.ID)
	assert.Equal(t, spi.StatusCancelled, got.Status)
	assert.Equal(t, r.ClaimSeq+1, got.ClaimSeq, "its claim ends")
	assert.Empty(t, got.OwnerNode)

	id := newID()
	err = s.CancelJob(ctx, id, now)
	require.ErrorIs(t, err, spi.ErrNotFound)
	assert.Contains(t, err.Error(), id.String())
}

func nodeRows(t *testing.T, s *Store) map[string]time.Time {
	t.Helper()
	rows, err := s.db.Query(`SELECT node_id, heartbeat_ts FROM scheduler_node`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var ts int64
		require.NoError(t, rows.Scan(&id, &ts))
		out[id] = fromMicros(ts)
	}
	require.NoError(t, rows.Err())
	return out
}

func TestHeartbeatAndDeregister(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Heartbeat(ctx, "a", t0))
	require.NoError(t, s.Heartbeat(ctx, "b", t0))
	require.NoError(t, s.Heartbeat(ctx, "a", t0.Add(time.Second)))
	assert.Equal(t, map[string]time.Time{"a": t0.Add(time.Second), "b": t0}, nodeRows(t, s))
	require.NoError(t, s.DeregisterNode(ctx, "a"))
	require.NoError(t, s.DeregisterNode(ctx, "nobody"))
	assert.Equal(t, map[string]time.Time{"b": t0}, nodeRows(t, s))
}

func TestRecoverOrphans(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	const grace = 30 * time.Second
	now := t0.Add(time.Hour)
	require.NoError(t, s.Heartbeat(ctx, "alive", now.Add(-grace))) // exactly at the cutoff: alive
	require.NoError(t, s.Heartbeat(ctx, "stale", now.Add(-grace-time.Microsecond)))
	require.NoError(t, s.Heartbeat(ctx, "restarted", now)) // named in Nodes
	// "ghost" has no node row.

	claimFor := func(node string, crashCount int) *spi.Job {
		j := job(spi.PriorityNormal, t0)
		j.CrashCount = crashCount
		insert(t, s, j)
		got := claim(t, s, node, 1, t0, 0)
		require.Len(t, got, 1)
		require.Equal(t, j.ID, got[0].ID)
		return got[0]
	}
	aliveJob := claimFor("alive", 0)
	staleJob := claimFor("stale", 0)
	staleSpent := claimFor("stale", 2) // crash budget spent
	ghostJob := claimFor("ghost", 1)
	restartedJob := claimFor("restarted", 0)
	pending := job(spi.PriorityNormal, t0)
	insert(t, s, pending)

	rec, err := s.RecoverOrphans(ctx, spi.RecoverParams{
		Now: now, Grace: grace, MaxCrashRedeliveries: 2, Nodes: []string{"restarted"}, LastError: "node lost",
	})
	require.NoError(t, err)
	want := []spi.RecoveredJob{
		{JobID: staleJob.ID, TaskName: staleJob.TaskName, FromNode: "stale", NewStatus: spi.StatusPending, CrashCount: 1},
		{JobID: staleSpent.ID, TaskName: staleSpent.TaskName, FromNode: "stale", NewStatus: spi.StatusFailed, CrashCount: 2},
		{JobID: ghostJob.ID, TaskName: ghostJob.TaskName, FromNode: "ghost", NewStatus: spi.StatusPending, CrashCount: 2},
		{JobID: restartedJob.ID, TaskName: restartedJob.TaskName, FromNode: "restarted", NewStatus: spi.StatusPending, CrashCount: 1},
	}
	assert.Equal(t, want, rec)

	assert.Equal(t, aliveJob, get(t, s, aliveJob.ID), "a live node's job was touched")
	assert.Equal(t, spi.StatusPending, get(t, s, pending.ID).Status)
	for _, j := range []*spi.Job{staleJob, ghostJob, restartedJob} {
		got := get(t, s, j.ID)
		w := j.Clone()
		w.Status = spi.StatusPending
		w.ScheduledAt = now
		w.OwnerNode = ""
		w.ClaimSeq = j.ClaimSeq + 1
		w.CrashCount = j.CrashCount + 1
		assert.Equal(t, w, got)
	}
	got := get(t, s, staleSpent.ID)
	w := staleSpent.Clone()
	w.Status = spi.StatusFailed
	w.LastError = "node lost"
	w.FinishedAt = now
	w.OwnerNode = ""
	w.ClaimSeq = staleSpent.ClaimSeq + 1
	assert.Equal(t, w, got)

	assert.Equal(t, map[string]time.Time{"alive": now.Add(-grace)}, nodeRows(t, s), "stale node rows are deleted")

	// The old owners are fenced out.
	ok, err := s.CompleteJobs(ctx, []spi.Completion{
		{ClaimRef: ref(staleJob), Outcome: spi.OutcomeSucceeded, FinishedAt: now},
		{ClaimRef: ref(staleSpent), Outcome: spi.OutcomeSucceeded, FinishedAt: now},
	})
	require.NoError(t, err)
	assert.Equal(t, []bool{false, false}, ok)

	// Nothing left to recover.
	rec, err = s.RecoverOrphans(ctx, spi.RecoverParams{Now: now, Grace: grace, MaxCrashRedeliveries: 2})
	require.NoError(t, err)
	assert.Empty(t, rec)
}

func TestRecoverOrphansZeroBudgetFailsAtOnce(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	j := claimedJob(t, s) // owner has never heartbeated
	rec, err := s.RecoverOrphans(ctx, spi.RecoverParams{Now: t0, Grace: time.Minute, MaxCrashRedeliveries: 0, LastError: "crashed"})
	require.NoError(t, err)
	assert.Equal(t, []spi.RecoveredJob{{JobID: j.ID, TaskName: j.TaskName, FromNode: "owner", NewStatus: spi.StatusFailed, CrashCount: 0}}, rec)
	got := get(t, s, j.ID)
	assert.Equal(t, spi.StatusFailed, got.Status)
	assert.Equal(t, "crashed", got.LastError)

	// A DLQ retry clears the crash count.
	require.NoError(t, s.RetryFailedJob(ctx, j.ID, t0))
	assert.Zero(t, get(t, s, j.ID).CrashCount)
}

func TestRecoverAfterDeregister(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	require.NoError(t, s.Heartbeat(ctx, "owner", t0))
	j := claimedJob(t, s)
	rec, err := s.RecoverOrphans(ctx, spi.RecoverParams{Now: t0, Grace: time.Minute, MaxCrashRedeliveries: 3})
	require.NoError(t, err)
	assert.Empty(t, rec)
	require.NoError(t, s.DeregisterNode(ctx, "owner"))
	rec, err = s.RecoverOrphans(ctx, spi.RecoverParams{Now: t0, Grace: time.Minute, MaxCrashRedeliveries: 3})
	require.NoError(t, err)
	require.Len(t, rec, 1)
	assert.Equal(t, j.ID, rec[0].JobID)
}
