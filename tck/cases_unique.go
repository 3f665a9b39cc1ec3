package tck

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// withUnique gives a job the unique key k, held in states.
func withUnique(k string, states ...spi.Status) jobOpt {
	return func(j *spi.Job) { j.Unique = &spi.Unique{Key: k, States: states} }
}

// unheld are the states of a unique key that only finished jobs let go of.
var unheld = []spi.Status{spi.StatusPending, spi.StatusRunning, spi.StatusWaiting, spi.StatusBlocked, spi.StatusSucceeded}

// insertRes inserts jobs (clones of them) and returns the store's results,
// one per job.
func (f *fixture) insertRes(jobs ...*spi.Job) []spi.InsertResult {
	f.t.Helper()
	res, err := f.s.InsertJobs(f.ctx, cloneJobs(jobs), spi.InsertOptions{})
	require.NoError(f.t, err, "InsertJobs")
	require.Len(f.t, res, len(jobs), "InsertJobs must return one result per job")
	return res
}

// holder returns the job that holds unique key k.
func (f *fixture) holder(us spi.UniqueStore, k string) uuid.UUID {
	f.t.Helper()
	h, err := us.UniqueHolder(f.ctx, k)
	require.NoError(f.t, err, "UniqueHolder")
	return h
}

// The cases of unique jobs (spi.UniqueStore): an insert whose key's holder
// is in one of the job's unique states writes nothing and answers the
// holder; otherwise the job is written and holds the key. The key is
// decided in the database, so that inserts at once take turns.
func uniqueCases() []testCase {
	return []testCase{
		{"DuplicateAnswersHolder", func(t tb, f *fixture) {
			us := capability[spi.UniqueStore](f, "spi.UniqueStore")
			a := f.newJob(withUnique("report:7", unheld...))
			assert.Equal(t, []spi.InsertResult{{ID: a.ID}}, f.insertRes(a), "the first job of a key is written")
			b := f.newJob(withUnique("report:7", unheld...), withTask("tck.other"))
			assert.Equal(t, []spi.InsertResult{{ID: a.ID, Duplicate: true}}, f.insertRes(b), "a second job of the key answers the first")
			c := f.newJob(withUnique("report:8", unheld...))
			assert.Equal(t, []spi.InsertResult{{ID: c.ID}}, f.insertRes(c), "another key is another job")
			assert.ElementsMatch(t, []uuid.UUID{a.ID, c.ID}, ids(f.listAll("")), "the duplicate wrote nothing")
			assert.Equal(t, a.ID, f.holder(us, "report:7"))
			assert.Equal(t, uuid.Nil, f.holder(us, "report:9"), "a key no job took has no holder")
			assert.Nil(t, f.get(a.ID).Unique, "reads leave Unique nil")
		}},
		{"WithinBatch", func(t tb, f *fixture) {
			capability[spi.UniqueStore](f, "spi.UniqueStore")
			a := f.newJob(withUnique("k1", unheld...))
			b := f.newJob(withUnique("k1", unheld...))
			c := f.newJob()
			d := f.newJob(withUnique("k0", unheld...))
			res := f.insertRes(a, b, c, d)
			assert.Equal(t, []spi.InsertResult{{ID: a.ID}, {ID: a.ID, Duplicate: true}, {ID: c.ID}, {ID: d.ID}}, res,
				"the second job of a key in one batch answers the first")
			assert.ElementsMatch(t, []uuid.UUID{a.ID, c.ID, d.ID}, ids(f.listAll("")), "jobs written")
		}},
		{"StatesLetGo", func(t tb, f *fixture) {
			// Held while PENDING only: once the holder runs, a new job is
			// written and takes the key over; the next answers it.
			us := capability[spi.UniqueStore](f, "spi.UniqueStore")
			a := f.insertOne(withUnique("sync:acct-1", spi.StatusPending))
			assert.True(t, f.insertRes(f.newJob(withUnique("sync:acct-1", spi.StatusPending)))[0].Duplicate, "held while the holder is PENDING")
			f.claimOne(a.ID, "node-a", at(time.Second))
			b := f.newJob(withUnique("sync:acct-1", spi.StatusPending), withDue(at(time.Hour)))
			assert.Equal(t, []spi.InsertResult{{ID: b.ID}}, f.insertRes(b), "a RUNNING holder lets go of a key held while PENDING")
			assert.Equal(t, b.ID, f.holder(us, "sync:acct-1"), "the new job holds the key")
			c := f.newJob(withUnique("sync:acct-1", spi.StatusPending))
			assert.Equal(t, []spi.InsertResult{{ID: b.ID, Duplicate: true}}, f.insertRes(c), "and the next job answers the new holder")
			d := f.newJob(withUnique("sync:acct-1", spi.StatusRunning))
			assert.Equal(t, []spi.InsertResult{{ID: d.ID}}, f.insertRes(d), "the new job's states decide: the holder is PENDING, not RUNNING")
		}},
		{"FinishedLetsGo", func(t tb, f *fixture) {
			// Held until it finishes for good, but not once FAILED or
			// CANCELLED; SUCCEEDED holds when the states name it.
			capability[spi.UniqueStore](f, "spi.UniqueStore")
			a := f.insertOne(withUnique("k", unheld...))
			f.finish(a, at(time.Second), spi.OutcomeFailed)
			b := f.newJob(withUnique("k", unheld...))
			assert.Equal(t, []spi.InsertResult{{ID: b.ID}}, f.insertRes(b), "a FAILED holder lets go")
			f.finish(b, at(2*time.Second), spi.OutcomeSucceeded)
			c := f.newJob(withUnique("k", unheld...))
			assert.Equal(t, []spi.InsertResult{{ID: b.ID, Duplicate: true}}, f.insertRes(c), "a SUCCEEDED holder holds when its states say so")
			d := f.newJob(withUnique("k", spi.StatusPending, spi.StatusRunning))
			assert.Equal(t, []spi.InsertResult{{ID: d.ID}}, f.insertRes(d), "and lets go when they do not")
		}},
		{"DeletedLetsGo", func(t tb, f *fixture) {
			us := capability[spi.UniqueStore](f, "spi.UniqueStore")
			d := capability[spi.JobDeleter](f, "spi.JobDeleter")
			a := f.insertOne(withUnique("k", unheld...))
			f.finish(a, at(time.Second), spi.OutcomeSucceeded)
			require.Equal(t, []bool{true}, f.deleteJobs(d, a))
			assert.Equal(t, uuid.Nil, f.holder(us, "k"), "a deleted holder lets go of its key")
			b := f.newJob(withUnique("k", unheld...))
			assert.Equal(t, []spi.InsertResult{{ID: b.ID}}, f.insertRes(b), "and the key is free")
		}},
		{"OneKeyRace", func(t tb, f *fixture) {
			// Writers (on two handles when Harness.Reopen gives one) race
			// to insert one unique key: one job is written, and every
			// writer gets its id.
			us := capability[spi.UniqueStore](f, "spi.UniqueStore")
			const writers = 8
			for round := range 4 {
				key := fmt.Sprint("race-", round)
				jobs := make([]*spi.Job, writers)
				for w := range jobs {
					jobs[w] = f.newJob(withUnique(key, unheld...))
				}
				res := f.raceInserts(t, jobs)
				winners := 0
				for w := range writers {
					if !res[w].Duplicate {
						winners++
					}
				}
				assert.Equal(t, 1, winners, "round %d: exactly one writer wrote a job", round)
				h := f.holder(us, key)
				for w := range writers {
					assert.Equal(t, h, res[w].ID, "round %d: every writer gets the holder's id", round)
				}
			}
			assert.Len(t, f.listAll(""), 4, "one job per key")
		}},
	}
}

// withDebounce gives a job the debounce key k: trailing (held while the
// holder is PENDING) or, with leading, in every state, until until, and
// with replace handing its payload to the holder.
func withDebounce(k string, until time.Time, leading, replace bool) jobOpt {
	return func(j *spi.Job) {
		states := []spi.Status{spi.StatusPending}
		if leading {
			states = []spi.Status{spi.StatusPending, spi.StatusRunning, spi.StatusWaiting, spi.StatusBlocked,
				spi.StatusSucceeded, spi.StatusFailed, spi.StatusCancelled, spi.StatusSkipped}
		}
		j.Unique = &spi.Unique{Key: k, States: states, Until: until, Replace: replace}
	}
}

// The cases of debounced jobs: a unique key with a window (spi.Unique's
// Until) and, optionally, the last arguments (Replace).
func debounceCases() []testCase {
	return []testCase{
		{"JoinsWithinWindow", func(t tb, f *fixture) {
			// A window of 10 s from the first job's creation: the jobs
			// created in it join; the first created at its end opens the
			// next.
			capability[spi.UniqueStore](f, "spi.UniqueStore")
			w := 10 * time.Second
			a := f.insertOne(withCreated(at(0)), withDue(at(w)), withDebounce("d", at(w), false, false))
			b := f.newJob(withCreated(at(5*time.Second)), withDue(at(5*time.Second+w)), withDebounce("d", at(5*time.Second+w), false, false))
			assert.Equal(t, []spi.InsertResult{{ID: a.ID, Duplicate: true}}, f.insertRes(b), "created within the window: joins")
			c := f.newJob(withCreated(at(w)), withDue(at(2*w)), withDebounce("d", at(2*w), false, false))
			assert.Equal(t, []spi.InsertResult{{ID: c.ID}}, f.insertRes(c), "created at the window's end: a job of its own")
			d := f.newJob(withCreated(at(w+time.Second)), withDue(at(2*w+time.Second)), withDebounce("d", at(2*w+time.Second), false, false))
			assert.Equal(t, []spi.InsertResult{{ID: c.ID, Duplicate: true}}, f.insertRes(d), "and the next joins it, in its window")
			assert.True(t, f.get(c.ID).ScheduledAt.Equal(at(2*w)), "the joined job stays due at its window's end")
		}},
		{"LastArguments", func(t tb, f *fixture) {
			capability[spi.UniqueStore](f, "spi.UniqueStore")
			until := at(time.Minute)
			a := f.insertOne(withCreated(at(0)), withDue(until), withPayload([]byte(`{"n":1}`)), withDebounce("d", until, false, true))
			b := f.newJob(withCreated(at(time.Second)), withDue(until), withPayload([]byte(`{"n":2}`)), withDebounce("d", until, false, true))
			assert.Equal(t, []spi.InsertResult{{ID: a.ID, Duplicate: true}}, f.insertRes(b))
			assert.JSONEq(t, `{"n":2}`, string(f.get(a.ID).Payload), "the holder runs with the last arguments")
			c := f.newJob(withCreated(at(2*time.Second)), withDue(until), withPayload([]byte(`{"n":3}`)), withDebounce("d", until, false, false))
			assert.Equal(t, []spi.InsertResult{{ID: a.ID, Duplicate: true}}, f.insertRes(c))
			assert.JSONEq(t, `{"n":2}`, string(f.get(a.ID).Payload), "a duplicate without Replace leaves the payload")
			f.claimOne(a.ID, "node-a", until)
			d := f.newJob(withCreated(at(3*time.Second)), withDue(until), withPayload([]byte(`{"n":4}`)), withDebounce("d", until, false, true))
			assert.Equal(t, []spi.InsertResult{{ID: d.ID}}, f.insertRes(d), "a trailing window ends when its job runs")
			assert.JSONEq(t, `{"n":2}`, string(f.get(a.ID).Payload), "and a RUNNING job's payload is not replaced")
		}},
		{"LeadingHoldsInEveryState", func(t tb, f *fixture) {
			capability[spi.UniqueStore](f, "spi.UniqueStore")
			until := at(time.Minute)
			a := f.insertOne(withCreated(at(0)), withDue(at(0)), withDebounce("d", until, true, false))
			f.finish(a, at(time.Second), spi.OutcomeSucceeded)
			b := f.newJob(withCreated(at(30*time.Second)), withDebounce("d", at(90*time.Second), true, false))
			assert.Equal(t, []spi.InsertResult{{ID: a.ID, Duplicate: true}}, f.insertRes(b), "a finished job holds its leading window")
			c := f.newJob(withCreated(until), withDebounce("d", at(2*time.Minute), true, false))
			assert.Equal(t, []spi.InsertResult{{ID: c.ID}}, f.insertRes(c), "the next window's first job")
		}},
	}
}
