package tck

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// failedJob inserts a job and drives it to FAILED through a retry, an orphan
// recovery and a failure, so that attempts, crash count, last error and
// finish time are all set. It returns the FAILED job as stored.
func (f *fixture) failedJob() *spi.Job {
	f.t.Helper()
	j := f.insertOne()
	c := f.claimOne(j.ID, "node-a", at(time.Second))
	require.Equal(f.t, []bool{true}, f.complete(retried(c, at(2*time.Second), at(time.Minute), 1, "first")))
	f.claimOne(j.ID, "node-gone", at(time.Minute))
	rec := f.recover(spi.RecoverParams{Now: at(2 * time.Minute), Grace: time.Minute, MaxCrashRedeliveries: 3, LastError: "crash"})
	require.Len(f.t, rec, 1, "setup: the job of a node without a node row is recovered")
	c = f.claimOne(j.ID, "node-b", at(3*time.Minute))
	require.Equal(f.t, []bool{true}, f.complete(failed(c, at(4*time.Minute), 2, "second failure")))
	got := f.get(j.ID)
	require.Equal(f.t, spi.StatusFailed, got.Status, "setup: FAILED")
	require.Equal(f.t, 2, got.Attempts, "setup: attempts")
	require.Equal(f.t, 1, got.CrashCount, "setup: crash count")
	return got
}

func retryFailedCases() []testCase {
	return []testCase{
		{"Reset", func(t tb, f *fixture) {
			before := f.failedJob()
			now := at(time.Hour + 77*time.Microsecond)
			require.NoError(t, f.s.RetryFailedJob(f.ctx, before.ID, now), "RetryFailedJob of a FAILED job")
			want := retriedByHand(before, now)
			got := f.get(before.ID)
			assertJob(t, want, got, "job after RetryFailedJob", anyClaimSeq, anyClaimedAt)
			assert.True(t, got.FinishedAt.IsZero(), "FinishedAt is cleared")
			assert.Empty(t, got.OwnerNode, "owner is cleared")

			assert.Empty(t, f.claim("node-c", 10, now.Add(-time.Millisecond), boost), "a retried DLQ job is due at now, not before")
			c := f.claim("node-c", 10, now, boost)
			require.Len(t, c, 1, "a retried DLQ job is claimable at now")
			assert.Equal(t, got.ClaimSeq+1, c[0].ClaimSeq, "the claim advances ClaimSeq")
			assert.Greater(t, c[0].ClaimSeq, before.ClaimSeq, "ClaimSeq never goes back")
		}},
		{"ResetFailedByCompletion", func(t tb, f *fixture) {
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(failed(c, at(2*time.Second), 3, "boom")))
			require.NoError(t, f.s.RetryFailedJob(f.ctx, j.ID, at(time.Minute)))
			got := f.get(j.ID)
			assert.Equal(t, spi.StatusPending, got.Status)
			assert.Equal(t, 0, got.Attempts)
			assert.Empty(t, got.LastError)
			assert.Equal(t, at(time.Minute), got.ScheduledAt.UTC())
		}},
		{"NotFailed", func(t tb, f *fixture) {
			pending := f.insertOne(withDue(at(time.Hour)))
			running := f.insertOne()
			f.claimOne(running.ID, "node-a", at(time.Second))
			done := f.insertOne(withDue(at(time.Minute)))
			cd := f.claimOne(done.ID, "node-a", at(time.Minute))
			require.Equal(t, []bool{true}, f.complete(succeeded(cd, at(2*time.Minute), nil, "")))
			cancelled := f.insertOne(withDue(at(2 * time.Hour)))
			require.NoError(t, f.s.CancelJob(f.ctx, cancelled.ID, at(time.Second)))
			for name, j := range map[string]*spi.Job{"PENDING": pending, "RUNNING": running, "SUCCEEDED": done, "CANCELLED": cancelled} {
				before := f.get(j.ID)
				err := f.s.RetryFailedJob(f.ctx, j.ID, at(3*time.Hour))
				assert.ErrorIs(t, err, spi.ErrInvalidState, "RetryFailedJob of a %s job", name)
				assertJob(t, before, f.get(j.ID), "RetryFailedJob of a "+name+" job must change nothing")
			}
		}},
		{"Unknown", func(t tb, f *fixture) {
			f.insertOne()
			err := f.s.RetryFailedJob(f.ctx, id(997), at(time.Second))
			assert.ErrorIs(t, err, spi.ErrNotFound, "RetryFailedJob of an unknown id")
		}},
	}
}

func cancelCases() []testCase {
	return []testCase{
		{"Pending", func(t tb, f *fixture) {
			j := f.insertOne(withDue(at(time.Hour)), withTags("x"))
			require.NoError(t, f.s.CancelJob(f.ctx, j.ID, at(time.Second)), "CancelJob of a PENDING job")
			want := j.Clone()
			want.Status = spi.StatusCancelled
			assertJob(t, want, f.get(j.ID), "cancelled job", anyFinishedAt)
		}},
		{"NeverClaimed", func(t tb, f *fixture) {
			due := f.insertOne(withPriority(spi.PriorityCritical))
			later := f.insertOne(withDue(at(time.Hour)))
			require.NoError(t, f.s.CancelJob(f.ctx, due.ID, at(time.Second)))
			require.NoError(t, f.s.CancelJob(f.ctx, later.ID, at(time.Second)))
			assert.Empty(t, f.claim("node-a", 10, at(100*time.Hour), boost), "a CANCELLED job must never be claimed")
		}},
		{"Finished", func(t tb, f *fixture) {
			done := f.insertOne(withDue(at(time.Minute)))
			cd := f.claimOne(done.ID, "node-a", at(time.Minute))
			require.Equal(t, []bool{true}, f.complete(succeeded(cd, at(2*time.Minute), nil, "")))
			dead := f.insertOne(withDue(at(time.Hour)))
			cx := f.claimOne(dead.ID, "node-a", at(time.Hour))
			require.Equal(t, []bool{true}, f.complete(failed(cx, at(time.Hour), 1, "x")))
			cancelled := f.insertOne(withDue(at(2 * time.Hour)))
			require.NoError(t, f.s.CancelJob(f.ctx, cancelled.ID, at(time.Second)))
			for name, j := range map[string]*spi.Job{"SUCCEEDED": done, "FAILED": dead, "CANCELLED": cancelled} {
				before := f.get(j.ID)
				err := f.s.CancelJob(f.ctx, j.ID, at(3*time.Hour))
				assert.ErrorIs(t, err, spi.ErrInvalidState, "CancelJob of a %s job", name)
				assertJob(t, before, f.get(j.ID), "CancelJob of a "+name+" job must change nothing")
			}
		}},
		{"Unknown", func(t tb, f *fixture) {
			f.insertOne()
			err := f.s.CancelJob(f.ctx, id(996), at(time.Second))
			assert.ErrorIs(t, err, spi.ErrNotFound, "CancelJob of an unknown id")
		}},
	}
}

// retriedByHand is j as a manual retry out of the dead-letter queue leaves it
// (RetryFailedJob, RetryFailedJobs): PENDING, due at now, its error,
// attempts, crash count, snooze count, finish time and owner cleared.
func retriedByHand(j *spi.Job, now time.Time) *spi.Job {
	want := j.Clone()
	want.Status = spi.StatusPending
	want.LastError = ""
	want.Attempts = 0
	want.CrashCount = 0
	want.Snoozes = 0
	want.ScheduledAt = now
	want.FinishedAt = time.Time{}
	want.OwnerNode = ""
	return want
}
