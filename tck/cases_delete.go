package tck

import (
	"errors"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// deleteJobs runs DeleteJobs, requiring one flag per id.
func (f *fixture) deleteJobs(d spi.JobDeleter, jobs ...*spi.Job) []bool {
	f.t.Helper()
	got, err := d.DeleteJobs(f.ctx, ids(jobs))
	require.NoError(f.t, err, "DeleteJobs")
	require.Len(f.t, got, len(jobs), "DeleteJobs returns one flag per id")
	return got
}

func deleteCases() []testCase {
	return []testCase{
		{"DeletesFinishedOnly", func(t tb, f *fixture) {
			d := capability[spi.JobDeleter](f, "spi.JobDeleter")
			done := f.insertOne(withKey("order-7"), withTags("eu"))
			f.finish(done, at(time.Minute), spi.OutcomeSucceeded)
			dead := f.insertOne()
			f.finish(dead, at(time.Minute), spi.OutcomeFailed)
			running := f.insertOne()
			f.claimOne(running.ID, "n1", at(time.Minute))
			pending := f.insertOne()
			unknown := f.newJob()
			assert.Equal(t, []bool{true, true, false, false, false}, f.deleteJobs(d, done, dead, running, pending, unknown),
				"the finished jobs go; a RUNNING, a PENDING and an unknown job do not")
			for _, j := range []*spi.Job{done, dead} {
				_, err := f.s.GetJob(f.ctx, j.ID)
				assert.True(t, errors.Is(err, spi.ErrNotFound), "a deleted job is not found: %v", err)
			}
			f.get(running.ID)
			f.get(pending.ID)
			left, _ := f.list(spi.ListParams{})
			assert.Equal(t, ids([]*spi.Job{running, pending}), ids(left), "ListJobs lists what is left")
			tagged, _ := f.list(spi.ListParams{Tag: "eu"})
			assert.Empty(t, tagged, "the deleted job's tags went with it")
			// Its idempotency key is free again.
			res, err := f.s.InsertJobs(f.ctx, cloneJobs([]*spi.Job{f.newJob(withKey("order-7"))}), spi.InsertOptions{})
			require.NoError(t, err)
			assert.False(t, res[0].Duplicate, "the key of a deleted job is free")
			assert.Equal(t, []bool{false}, f.deleteJobs(d, done), "deleting again deletes nothing")
		}},
		{"KeepsParentsOfUnfinished", func(t tb, f *fixture) {
			d := capability[spi.JobDeleter](f, "spi.JobDeleter")
			f.workflows()
			w := f.newFlow()
			p := w.add(nil)
			k := w.after(p)
			w.insert()
			f.finish(p, at(time.Minute), spi.OutcomeSucceeded)
			assert.Equal(t, []bool{false}, f.deleteJobs(d, p), "a parent whose child has not finished stays")
			f.finish(k, at(time.Hour), spi.OutcomeSucceeded)
			assert.Equal(t, []bool{true, true}, f.deleteJobs(d, p, k), "once the child finished, both go")
		}},
	}
}
