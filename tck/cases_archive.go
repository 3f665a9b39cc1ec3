package tck

import (
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// archiver returns the case's store as a JobArchiver, or skips the case.
func (f *fixture) archiver() spi.JobArchiver {
	f.t.Helper()
	return capability[spi.JobArchiver](f, "spi.JobArchiver")
}

// archive runs ArchiveJobs, failing the case on an error.
func (f *fixture) archive(a spi.JobArchiver, before time.Time, limit int) int {
	f.t.Helper()
	n, err := a.ArchiveJobs(f.ctx, before, limit)
	require.NoError(f.t, err, "ArchiveJobs(before %s, limit %d)", before.Format(time.RFC3339), limit)
	return n
}

// finishAt claims job j alone and completes it at finish (succeeded, or
// failed when fail).
func (f *fixture) finishAt(j *spi.Job, finish time.Time, fail bool) {
	f.t.Helper()
	c := f.claimOne(j.ID, "node-a", finish.Add(-time.Second))
	w := succeeded(c, finish, []byte(`{"ok":true}`), "tck.result")
	if fail {
		w = failed(c, finish, 1, "boom")
	}
	require.Equal(f.t, []bool{true}, f.complete(w))
}

func archiveCases() []testCase {
	return []testCase{
		{"MovesFinishedJobs", func(t tb, f *fixture) {
			a := f.archiver()
			cutoff := at(time.Hour)
			old := f.insertOne(withTags("eu", "gpu"), withParams(map[string]string{"tenant": "acme"}), withKey("k-old"),
				withProps(map[string]string{"order": "A-1"}), withTrace(traceBytes))
			f.finishAt(old, at(10*time.Minute), false)
			dead := f.insertOne()
			f.finishAt(dead, at(20*time.Minute), true)
			gone := f.insertOne()
			require.NoError(t, f.s.CancelJob(f.ctx, gone.ID, at(30*time.Minute)))
			recent := f.insertOne()
			f.finishAt(recent, at(2*time.Hour), false)
			running := f.insertOne()
			f.claimOne(running.ID, "node-b", at(3*time.Hour))
			pending := f.insertOne()
			before := f.get(old.ID)

			assert.Equal(t, 3, f.archive(a, cutoff, 100), "the three jobs finished before the cutoff")
			for _, j := range []*spi.Job{old, dead, gone} {
				_, err := f.s.GetJob(f.ctx, j.ID)
				assert.ErrorIs(t, err, spi.ErrNotFound, "an archived job is no longer live")
			}
			for _, j := range []*spi.Job{recent, pending, running} {
				f.get(j.ID) // still live
			}
			got, err := a.GetArchivedJob(f.ctx, old.ID)
			require.NoError(t, err)
			assert.Equal(t, spi.StatusSucceeded, got.Status)
			assert.Equal(t, before.Result, got.Result, "the result is kept")
			assert.Equal(t, before.ResultType, got.ResultType)
			assert.True(t, before.FinishedAt.Equal(got.FinishedAt), "the finish time is kept")
			assert.ElementsMatch(t, []string{"eu", "gpu"}, got.Tags, "the tags are kept")
			assert.Equal(t, map[string]string{"tenant": "acme"}, got.Params, "the params are kept")
			assert.Equal(t, traceBytes, got.TraceContext, "the trace context is kept")
			assert.Equal(t, "k-old", got.IdempotencyKey)
			assert.Equal(t, map[string]string{"order": "A-1"}, got.Properties, "the properties are kept and read with the archived job")
			failedJob, err := a.GetArchivedJob(f.ctx, dead.ID)
			require.NoError(t, err)
			assert.Equal(t, spi.StatusFailed, failedJob.Status)
			assert.Equal(t, "boom", failedJob.LastError)
			_, err = a.GetArchivedJob(f.ctx, pending.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound, "a live job is not in the archive")

			// The key of an archived job no longer deduplicates.
			again := f.newJob(withKey("k-old"))
			res, err := f.s.InsertJobs(f.ctx, cloneJobs([]*spi.Job{again}), spi.InsertOptions{})
			require.NoError(t, err)
			assert.Equal(t, []spi.InsertResult{{ID: again.ID}}, res, "a key deduplicates while its job is live")
			assert.Zero(t, f.archive(a, cutoff, 100), "nothing more is old enough")
		}},
		{"InBatches", func(t tb, f *fixture) {
			a := f.archiver()
			var jobs []*spi.Job
			for i := range 5 {
				j := f.insertOne()
				f.finishAt(j, at(time.Duration(i+1)*time.Minute), false)
				jobs = append(jobs, j)
			}
			assert.Equal(t, 2, f.archive(a, at(time.Hour), 2), "a batch is at most the limit")
			assert.Equal(t, 2, f.archive(a, at(time.Hour), 2), "the next call goes on")
			assert.Equal(t, 1, f.archive(a, at(time.Hour), 2))
			assert.Zero(t, f.archive(a, at(time.Hour), 2))
			page, next, err := a.ListArchivedJobs(f.ctx, spi.ListParams{Limit: 3})
			require.NoError(t, err)
			assert.Equal(t, ids(jobs[:3]), ids(page), "the archive lists in id order")
			page, next, err = a.ListArchivedJobs(f.ctx, spi.ListParams{After: next, Limit: 3})
			require.NoError(t, err)
			assert.Equal(t, ids(jobs[3:]), ids(page), "the next page")
			assert.Equal(t, uuid.Nil, next, "the end")
		}},
		{"ListFilters", func(t tb, f *fixture) {
			a := f.archiver()
			ok := f.insertOne(withProps(map[string]string{"tenant": "acme"}))
			f.finishAt(ok, at(time.Minute), false)
			bad := f.insertOne(withProps(map[string]string{"tenant": "globex"}))
			f.finishAt(bad, at(2*time.Minute), true)
			require.Equal(t, 2, f.archive(a, at(time.Hour), 10))
			list := func(p spi.ListParams) []uuid.UUID {
				page, _, err := a.ListArchivedJobs(f.ctx, p)
				require.NoError(t, err)
				return ids(page)
			}
			assert.Equal(t, []uuid.UUID{bad.ID}, list(spi.ListParams{Status: spi.StatusFailed}), "by status")
			assert.Equal(t, []uuid.UUID{ok.ID}, list(spi.ListParams{PropertyKey: "tenant", PropertyValue: "acme"}), "by property")
			assert.Empty(t, list(spi.ListParams{TaskName: "tck.other"}), "by task")
		}},
		{"Purge", func(t tb, f *fixture) {
			a := f.archiver()
			ls, logs := pick[spi.JobLogStore](f.s)
			purge := func(before time.Time, limit int) int {
				t.Helper()
				n, err := a.PurgeArchivedJobs(f.ctx, before, limit)
				require.NoError(t, err, "PurgeArchivedJobs(before %s, limit %d)", before.Format(time.RFC3339), limit)
				return n
			}
			// done inserts a job with tags and properties and finishes it at
			// finish, with two log lines where the store keeps logs.
			done := func(finish time.Time) *spi.Job {
				t.Helper()
				j := f.insertOne(withTags("eu"), withProps(map[string]string{"tenant": "acme"}))
				c := f.claimOne(j.ID, "node-a", finish.Add(-time.Second))
				if logs {
					require.Equal(t, []bool{true}, f.appendLogs(ls, spi.LogAppend{ClaimRef: ref(c), Lines: logLines(1, 0, 2, finish.Add(-time.Second))}))
				}
				require.Equal(t, []bool{true}, f.complete(succeeded(c, finish, nil, "")))
				return j
			}
			cutoff := at(time.Hour)
			tied := done(at(10 * time.Minute))
			oldest := done(at(5 * time.Minute)) // a larger id, finished first
			tiedLater := done(at(10 * time.Minute))
			kept := done(at(2 * time.Hour))
			assert.Zero(t, purge(cutoff, 100), "nothing is archived yet: live jobs are never purged")
			f.get(oldest.ID)
			require.Equal(t, 4, f.archive(a, at(3*time.Hour), 100))
			// Finished after the archive ran, before the purge's cutoff: live.
			live := done(at(40 * time.Minute))

			assert.Equal(t, 1, purge(cutoff, 1), "at most the limit")
			_, err := a.GetArchivedJob(f.ctx, oldest.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound, "the oldest finished goes first")
			_, err = a.GetArchivedJob(f.ctx, tied.ID)
			require.NoError(t, err, "a job finished later stays in the archive until the next call")
			assert.Equal(t, 1, purge(cutoff, 1), "the next call goes on")
			_, err = a.GetArchivedJob(f.ctx, tied.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound, "of two finished at once, the lower id goes first")
			_, err = a.GetArchivedJob(f.ctx, tiedLater.ID)
			require.NoError(t, err)
			assert.Equal(t, 1, purge(cutoff, 100), "the last one finished before the cutoff")
			assert.Zero(t, purge(cutoff, 100), "nothing more is old enough")

			for _, j := range []*spi.Job{oldest, tied, tiedLater} {
				_, err := a.GetArchivedJob(f.ctx, j.ID)
				assert.ErrorIs(t, err, spi.ErrNotFound, "a purged job is gone from the archive")
				if logs {
					assert.Empty(t, f.readLog(ls, j, 10), "a purged job's log lines are gone")
				}
			}
			list := func(p spi.ListParams) []uuid.UUID {
				page, _, err := a.ListArchivedJobs(f.ctx, p)
				require.NoError(t, err)
				return ids(page)
			}
			want := []uuid.UUID{kept.ID}
			assert.Equal(t, want, list(spi.ListParams{}), "the archive lists only the job finished after the cutoff")
			assert.Equal(t, want, list(spi.ListParams{Tag: "eu"}), "the purged jobs' tags are gone")
			assert.Equal(t, want, list(spi.ListParams{PropertyKey: "tenant", PropertyValue: "acme"}), "the purged jobs' properties are gone")
			got, err := a.GetArchivedJob(f.ctx, kept.ID)
			require.NoError(t, err, "a job finished after the cutoff stays archived")
			assert.Equal(t, []string{"eu"}, got.Tags, "with its tags")
			assert.Equal(t, map[string]string{"tenant": "acme"}, got.Properties, "and its properties")
			assert.Equal(t, spi.StatusSucceeded, f.get(live.ID).Status, "a live job finished before the cutoff stays live")
			if logs {
				assert.Len(t, f.readLog(ls, kept, 10), 2, "the log of a job still archived stays")
				assert.Len(t, f.readLog(ls, live, 10), 2, "the log of a live job stays")
			}
		}},
		{"NotFinishedStays", func(t tb, f *fixture) {
			a := f.archiver()
			running := f.insertOne()
			f.claimOne(running.ID, "node-a", at(time.Second))
			retrying := f.insertOne()
			c := f.claimOne(retrying.ID, "node-a", at(2*time.Second))
			require.Equal(t, []bool{true}, f.complete(retried(c, at(3*time.Second), at(time.Hour), 1, "later")))
			pending := f.insertOne(withDue(at(time.Hour)))
			assert.Zero(t, f.archive(a, at(100*time.Hour), 100), "only terminal jobs are archived")
			for _, j := range []*spi.Job{pending, retrying, running} {
				f.get(j.ID)
			}
		}},
	}
}
