package tck

import (
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// bulkManager returns the case's store as a BulkManager, or skips the case.
func (f *fixture) bulkManager() spi.BulkManager {
	f.t.Helper()
	return capability[spi.BulkManager](f, "spi.BulkManager")
}

// bulkRetry runs RetryFailedJobs, requiring one flag per id.
func (f *fixture) bulkRetry(b spi.BulkManager, now time.Time, ids ...uuid.UUID) []bool {
	f.t.Helper()
	got, err := b.RetryFailedJobs(f.ctx, ids, now)
	require.NoError(f.t, err, "RetryFailedJobs")
	require.Len(f.t, got, len(ids), "RetryFailedJobs returns one flag per id")
	return got
}

// bulkCancel runs CancelJobs, requiring one flag per id.
func (f *fixture) bulkCancel(b spi.BulkManager, now time.Time, ids ...uuid.UUID) []bool {
	f.t.Helper()
	got, err := b.CancelJobs(f.ctx, ids, now)
	require.NoError(f.t, err, "CancelJobs")
	require.Len(f.t, got, len(ids), "CancelJobs returns one flag per id")
	return got
}

// bulkMix inserts one job in each state a bulk action meets: PENDING,
// RUNNING, SUCCEEDED, FAILED (by completion) and CANCELLED.
func (f *fixture) bulkMix() map[string]*spi.Job {
	f.t.Helper()
	pending := f.insertOne(withDue(at(4 * time.Hour)))
	running := f.insertOne()
	f.claimOne(running.ID, "node-a", at(time.Second))
	done := f.insertOne(withDue(at(time.Minute)))
	cd := f.claimOne(done.ID, "node-a", at(time.Minute))
	require.Equal(f.t, []bool{true}, f.complete(succeeded(cd, at(2*time.Minute), nil, "")))
	dead := f.insertOne(withDue(at(time.Hour)))
	cx := f.claimOne(dead.ID, "node-a", at(time.Hour))
	require.Equal(f.t, []bool{true}, f.complete(failed(cx, at(time.Hour), 1, "x")))
	cancelled := f.insertOne(withDue(at(2 * time.Hour)))
	require.NoError(f.t, f.s.CancelJob(f.ctx, cancelled.ID, at(time.Second)))
	return map[string]*spi.Job{"PENDING": pending, "RUNNING": running, "SUCCEEDED": done, "FAILED": dead, "CANCELLED": cancelled}
}

func bulkCases() []testCase {
	return []testCase{
		{"RetryOnlyFailed", func(t tb, f *fixture) {
			b := f.bulkManager()
			crashed := f.failedJob() // attempts 2, crash count 1
			mix := f.bulkMix()
			unknown := id(995)
			befores := map[string]*spi.Job{}
			for name, j := range mix {
				if name != "FAILED" {
					befores[name] = f.get(j.ID)
				}
			}
			now := at(5*time.Hour + 77*time.Microsecond)
			got := f.bulkRetry(b, now, mix["PENDING"].ID, crashed.ID, mix["RUNNING"].ID, unknown, mix["SUCCEEDED"].ID,
				mix["FAILED"].ID, mix["CANCELLED"].ID, crashed.ID)
			assert.Equal(t, []bool{false, true, false, false, false, true, false, true}, got,
				"only the FAILED jobs are retried; an unknown id is false; an id named twice answers as it first did")
			want := retriedByHand(crashed, now)
			g := f.get(crashed.ID)
			assertJob(t, want, g, "job after RetryFailedJobs, as after RetryFailedJob", anyClaimSeq, anyClaimedAt)
			assert.Zero(t, g.CrashCount, "the crash count is cleared")
			assert.True(t, g.FinishedAt.IsZero(), "FinishedAt is cleared")
			d := f.get(mix["FAILED"].ID)
			assert.Equal(t, spi.StatusPending, d.Status)
			assert.Zero(t, d.Attempts)
			assert.Empty(t, d.LastError)
			for name, before := range befores {
				assertJob(t, before, f.get(before.ID), "RetryFailedJobs of a "+name+" job must change nothing")
			}

			again := f.bulkRetry(b, now.Add(time.Minute), crashed.ID, mix["FAILED"].ID, unknown)
			assert.Equal(t, []bool{false, false, false}, again, "a second call changes nothing")
			assert.True(t, f.get(crashed.ID).ScheduledAt.Equal(now), "nor the due time")

			assert.Equal(t, []uuid.UUID{mix["PENDING"].ID}, ids(f.claim("node-c", 10, now.Add(-time.Millisecond), boost)),
				"a retried DLQ job is due at now, not before")
			assert.ElementsMatch(t, []uuid.UUID{crashed.ID, mix["FAILED"].ID}, ids(f.claim("node-c", 10, now, boost)),
				"the retried jobs are claimable at now")
		}},
		{"CancelOnlyCancellable", func(t tb, f *fixture) {
			b := f.bulkManager()
			mix := f.bulkMix()
			due := f.insertOne(withPriority(spi.PriorityCritical), withTags("x"))
			unknown := id(994)
			befores := map[string]*spi.Job{}
			for name, j := range mix {
				if name != "PENDING" {
					befores[name] = f.get(j.ID)
				}
			}
			now := at(3*time.Hour + 5*time.Microsecond)
			got := f.bulkCancel(b, now, mix["RUNNING"].ID, mix["PENDING"].ID, unknown, mix["SUCCEEDED"].ID, mix["FAILED"].ID,
				mix["CANCELLED"].ID, due.ID, due.ID)
			assert.Equal(t, []bool{true, true, false, false, false, false, true, true}, got,
				"only the PENDING and RUNNING jobs are cancelled; an unknown id is false; an id named twice answers as it first did")
			assertJob(t, abortedByHand(befores["RUNNING"], now), f.get(mix["RUNNING"].ID), "a RUNNING job after CancelJobs, as after CancelJob")
			delete(befores, "RUNNING")
			for _, j := range []*spi.Job{mix["PENDING"], due} {
				want := j.Clone()
				want.Status = spi.StatusCancelled
				g := f.get(j.ID)
				assertJob(t, want, g, "job after CancelJobs, as after CancelJob", anyFinishedAt)
				assert.True(t, g.FinishedAt.Equal(now), "finished at now")
			}
			for name, before := range befores {
				assertJob(t, before, f.get(before.ID), "CancelJobs of a "+name+" job must change nothing")
			}
			assert.Equal(t, []bool{false, false}, f.bulkCancel(b, now.Add(time.Hour), due.ID, mix["PENDING"].ID), "a second call changes nothing")
			assert.True(t, f.get(due.ID).FinishedAt.Equal(now), "nor the finish time")
			assert.Empty(t, f.claim("node-b", 10, at(100*time.Hour), boost), "a cancelled job is never claimed")
		}},
		cancelRunningBulkCase(),
		{"CancelBlocked", func(t tb, f *fixture) {
			b := f.bulkManager()
			ws := f.workflows()
			w := f.newFlow()
			a := w.add(nil)
			mid := w.after(a)
			last := w.after(mid)
			w.insert()
			assert.Equal(t, []bool{true}, f.bulkCancel(b, at(time.Minute), mid.ID), "CancelJobs of a BLOCKED job")
			st, _ := f.waiting(mid)
			assert.Equal(t, spi.StatusCancelled, st)
			st, _ = f.waiting(last)
			assert.Equal(t, spi.StatusPending, st, "cancelling a BLOCKED parent releases its child, as CancelJob does")
			assert.Equal(t, []spi.Status{spi.StatusCancelled}, f.parentStates(ws, last))
			// A PENDING parent and its BLOCKED child in one call: the
			// parent's cancel releases the child, which is then cancelled.
			w2 := f.newFlow()
			p := w2.add(nil)
			k := w2.after(p)
			w2.insert()
			assert.Equal(t, []bool{true, true}, f.bulkCancel(b, at(time.Hour), p.ID, k.ID))
			st, _ = f.waiting(k)
			assert.Equal(t, spi.StatusCancelled, st)
			assert.Equal(t, []spi.Status{spi.StatusCancelled}, f.parentStates(ws, k))
			assert.ElementsMatch(t, []uuid.UUID{a.ID, last.ID}, ids(f.claim("node-a", 10, at(2*time.Hour), 0)), "only the others are claimable")
		}},
		{"CancelWaiting", func(t tb, f *fixture) {
			b := f.bulkManager()
			ss := f.signals()
			w := f.insertOne(withSignal("tck.approve", "order-1", at(time.Hour)))
			p := f.insertOne()
			now := at(30*time.Minute + 9*time.Microsecond)
			assert.Equal(t, []bool{true, true}, f.bulkCancel(b, now, w.ID, p.ID), "CancelJobs of a WAITING and a PENDING job")
			f.assertResolved(w, spi.SignalCancelled, nil, now, "cancelled: CANCELLED at now, its wait CANCELLED")
			_, err := ss.DeliverSignal(f.ctx, w.ID, "tck.approve", []byte(`{}`), now.Add(time.Minute))
			assert.ErrorIs(t, err, spi.ErrInvalidState, "DeliverSignal to a cancelled wait")
			assert.Empty(t, f.expire(ss, at(2*time.Hour), 10), "a cancelled wait does not time out")
			assert.Equal(t, []bool{false}, f.bulkCancel(b, now.Add(time.Minute), w.ID), "a second call changes nothing")
			f.assertResolved(w, spi.SignalCancelled, nil, now, "nothing after the cancel changes it")
		}},
		{"RetryRevives", func(t tb, f *fixture) {
			// As Workflows/RetryRevives: the dependents that a failure
			// cancelled wait again for the parent a batch retried.
			b := f.bulkManager()
			ws := f.workflows()
			w := f.newFlow()
			a := w.add(nil)
			k := w.after(a)
			gk := w.after(k)
			w.insert()
			f.finish(a, at(time.Hour), spi.OutcomeFailed)
			f.finish(k, at(2*time.Hour), spi.OutcomeCancelled)
			f.finish(gk, at(3*time.Hour), spi.OutcomeCancelled)
			lone := f.insertOne()
			f.finish(lone, at(4*time.Hour), spi.OutcomeFailed)
			assert.Equal(t, []bool{true, true}, f.bulkRetry(b, at(6*time.Hour), lone.ID, a.ID))
			for _, j := range []*spi.Job{k, gk} {
				g := f.get(j.ID)
				assert.Equal(t, spi.StatusBlocked, g.Status, "job %s, cancelled by the failure, waits again", j.ID)
				assert.Equal(t, 1, g.Waiting)
				assert.Empty(t, g.LastError)
			}
			assert.Equal(t, []spi.Status{""}, f.parentStates(ws, k))
		}},
		{"BatchLimit", func(t tb, f *fixture) {
			// A call of spi.MaxBulkIDs ids is taken; one more is an error
			// that changes nothing.
			b := f.bulkManager()
			dead := f.insertOne()
			c := f.claimOne(dead.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(failed(c, at(time.Minute), 1, "x")))
			pend := f.insertOne(withDue(at(time.Hour)))
			over := make([]uuid.UUID, spi.MaxBulkIDs+1)
			for i := range over {
				over[i] = id(2000 + i)
			}
			over[7], over[spi.MaxBulkIDs] = dead.ID, pend.ID
			_, err := b.RetryFailedJobs(f.ctx, over, at(time.Hour))
			assert.Error(t, err, "RetryFailedJobs of more than spi.MaxBulkIDs ids")
			_, err = b.CancelJobs(f.ctx, over, at(time.Hour))
			assert.Error(t, err, "CancelJobs of more than spi.MaxBulkIDs ids")
			assert.Equal(t, spi.StatusFailed, f.get(dead.ID).Status, "a refused call changes nothing")
			assert.Equal(t, spi.StatusPending, f.get(pend.ID).Status, "a refused call changes nothing")

			full := over[:spi.MaxBulkIDs]
			full[spi.MaxBulkIDs-1] = pend.ID
			got := f.bulkRetry(b, at(2*time.Hour), full...)
			want := make([]bool, spi.MaxBulkIDs)
			want[7] = true
			assert.Equal(t, want, got, "RetryFailedJobs of spi.MaxBulkIDs ids")
			got = f.bulkCancel(b, at(2*time.Hour), full...)
			want[spi.MaxBulkIDs-1] = true
			assert.Equal(t, want, got, "CancelJobs of spi.MaxBulkIDs ids: the retried job, PENDING again, and the PENDING one")
			assert.Equal(t, spi.StatusCancelled, f.get(dead.ID).Status)
			assert.Equal(t, spi.StatusCancelled, f.get(pend.ID).Status)
			assert.Empty(t, f.bulkRetry(b, at(3*time.Hour)), "no ids: nothing")
		}},
	}
}
