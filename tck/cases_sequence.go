package tck

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// inSequence puts a job in sequence k (spi.SequenceKeyPrefix added),
// holding on its predecessor's failure, or with cont, continuing.
func inSequence(k string, cont bool) jobOpt {
	return func(j *spi.Job) { j.Sequence = &spi.Sequence{Key: spi.SequenceKeyPrefix + k, Hold: !cont} }
}

// tail returns the last job of sequence k.
func (f *fixture) tail(ss spi.SequenceStore, k string) uuid.UUID {
	f.t.Helper()
	id, err := ss.SequenceTail(f.ctx, spi.SequenceKeyPrefix+k)
	require.NoError(f.t, err, "SequenceTail")
	return id
}

// waitsOn returns the jobs j waits on through a link that has not
// finished.
func (f *fixture) waitsOn(ws spi.WorkflowStore, j *spi.Job) []uuid.UUID {
	f.t.Helper()
	var out []uuid.UUID
	for _, d := range f.deps(ws, j) {
		if d.ParentStatus == "" {
			out = append(out, d.ParentID)
		}
	}
	return out
}

// The cases of FIFO sequences (spi.SequenceStore): each job of a key waits
// BLOCKED on the one inserted before it until that one finishes, through
// the workflows' release.
func sequenceCases() []testCase {
	return []testCase{
		{"WaitsForTheOneBefore", func(t tb, f *fixture) {
			ss := capability[spi.SequenceStore](f, "spi.SequenceStore")
			ws := capability[spi.WorkflowStore](f, "spi.WorkflowStore")
			a := f.insertOne(inSequence("order-1", false))
			b := f.insertOne(inSequence("order-1", false), withTask("tck.other"))
			c := f.insertOne(inSequence("order-1", false))
			other := f.insertOne(inSequence("order-2", false), withDue(at(time.Hour)))
			assert.Equal(t, spi.StatusPending, f.get(a.ID).Status, "the first job of a key is PENDING")
			assert.Equal(t, spi.StatusPending, f.get(other.ID).Status, "another key is another sequence")
			for _, j := range []*spi.Job{b, c} {
				st, w := f.waiting(j)
				assert.Equal(t, spi.StatusBlocked, st, "a later job waits BLOCKED")
				assert.Equal(t, 1, w, "on one link")
			}
			assert.Equal(t, []uuid.UUID{a.ID}, f.waitsOn(ws, b), "b waits on a")
			assert.Equal(t, []uuid.UUID{b.ID}, f.waitsOn(ws, c), "c waits on b, not on a")
			ds := f.deps(ws, b)
			require.Len(t, ds, 1)
			assert.Equal(t, spi.SequenceAllow(true), ds[0].Allow, "the link's Allow is SequenceAllow")
			assert.Equal(t, 1, f.get(a.ID).Dependents, "a job of a sequence counts its successor")
			assert.Equal(t, 1, f.get(c.ID).Dependents, "even before it has one")
			assert.Nil(t, f.get(a.ID).Sequence, "reads leave Sequence nil")
			assert.Equal(t, c.ID, f.tail(ss, "order-1"))
			assert.Equal(t, uuid.Nil, f.tail(ss, "order-9"), "a key without jobs has no tail")

			f.finish(a, at(time.Second), spi.OutcomeSucceeded)
			assert.Equal(t, spi.StatusPending, f.get(b.ID).Status, "a's finish releases b")
			assert.Equal(t, spi.StatusBlocked, f.get(c.ID).Status, "and only b")
			f.finish(b, at(2*time.Second), spi.OutcomeCancelled)
			assert.Equal(t, spi.StatusPending, f.get(c.ID).Status, "a cancel of the one before lets the next go")
		}},
		{"JoinsBehindARunningJob", func(t tb, f *fixture) {
			// The tail runs when the next job is inserted: its completion,
			// carrying HasDependents from its claim, still releases it.
			capability[spi.SequenceStore](f, "spi.SequenceStore")
			capability[spi.WorkflowStore](f, "spi.WorkflowStore")
			a := f.insertOne(inSequence("acct", false))
			c := f.claimOne(a.ID, "node-a", at(time.Second))
			require.Equal(t, 1, c.Dependents, "a claimed job of a sequence has a dependent")
			b := f.insertOne(inSequence("acct", false))
			assert.Equal(t, spi.StatusBlocked, f.get(b.ID).Status, "a job inserted while the tail runs waits")
			done := spi.Completion{ClaimRef: ref(c), Outcome: spi.OutcomeSucceeded, FinishedAt: at(2 * time.Second), HasDependents: c.Dependents > 0}
			require.Equal(t, []bool{true}, f.complete(done))
			assert.Equal(t, spi.StatusPending, f.get(b.ID).Status, "the tail's completion releases it")
			f.finish(b, at(3*time.Second), spi.OutcomeSucceeded)
			d := f.insertOne(inSequence("acct", false))
			assert.Equal(t, spi.StatusPending, f.get(d.ID).Status, "behind a finished tail a job runs at once")
		}},
		{"FailureHolds", func(t tb, f *fixture) {
			capability[spi.SequenceStore](f, "spi.SequenceStore")
			ws := capability[spi.WorkflowStore](f, "spi.WorkflowStore")
			a := f.insertOne(inSequence("s", false))
			b := f.insertOne(inSequence("s", false))
			c := f.insertOne(inSequence("s", true))
			f.finish(a, at(time.Second), spi.OutcomeFailed)
			st, w := f.waiting(b)
			assert.Equal(t, spi.StatusBlocked, st, "a failure holds the next job")
			assert.Equal(t, 1, w, "still waiting on its link")
			assert.Equal(t, []uuid.UUID{a.ID}, f.waitsOn(ws, b), "the held link records no state")
			require.NoError(t, f.s.RetryFailedJob(f.ctx, a.ID, at(2*time.Second)))
			assert.Equal(t, spi.StatusBlocked, f.get(b.ID).Status, "the retried job has not finished yet")
			f.finish(a, at(3*time.Second), spi.OutcomeSucceeded)
			assert.Equal(t, spi.StatusPending, f.get(b.ID).Status, "its success releases the held job")
			f.finish(b, at(4*time.Second), spi.OutcomeFailed)
			assert.Equal(t, spi.StatusPending, f.get(c.ID).Status, "a job that continues on failure is released by one")
			f.finish(c, at(5*time.Second), spi.OutcomeSucceeded)

			// Behind a failed tail: a holding job waits, a continuing one
			// runs.
			x := f.insertOne(inSequence("t", false))
			f.finish(x, at(5*time.Second), spi.OutcomeFailed)
			y := f.insertOne(inSequence("t", true))
			assert.Equal(t, spi.StatusPending, f.get(y.ID).Status, "a continuing job does not wait on a failed tail")
			f.finish(y, at(6*time.Second), spi.OutcomeSucceeded)
			u := f.insertOne(inSequence("u", false))
			f.finish(u, at(6*time.Second), spi.OutcomeFailed)
			v := f.insertOne(inSequence("u", false))
			assert.Equal(t, []uuid.UUID{u.ID}, f.waitsOn(ws, v), "a holding job waits on a failed tail")
		}},
		{"CancelHandsOver", func(t tb, f *fixture) {
			// Cancelling a waiting job takes it out: the next one waits
			// for the one before it, and so does a job inserted after a
			// cancelled tail.
			capability[spi.SequenceStore](f, "spi.SequenceStore")
			ws := capability[spi.WorkflowStore](f, "spi.WorkflowStore")
			a := f.insertOne(inSequence("k", false))
			b := f.insertOne(inSequence("k", false))
			c := f.insertOne(inSequence("k", false))
			ca := f.claimOne(a.ID, "node-a", at(time.Second))
			require.NoError(t, f.s.CancelJob(f.ctx, b.ID, at(2*time.Second)), "CancelJob of a waiting job")
			assert.Equal(t, spi.StatusBlocked, f.get(c.ID).Status, "the next job still waits")
			assert.Equal(t, []uuid.UUID{a.ID}, f.waitsOn(ws, c), "now on the running job before the cancelled one")
			require.NoError(t, f.s.CancelJob(f.ctx, c.ID, at(3*time.Second)), "CancelJob of the waiting tail")
			d := f.insertOne(inSequence("k", false))
			assert.Equal(t, spi.StatusBlocked, f.get(d.ID).Status, "a job inserted after a cancelled tail waits too")
			assert.Equal(t, []uuid.UUID{a.ID}, f.waitsOn(ws, d), "on the running job")
			done := spi.Completion{ClaimRef: ref(ca), Outcome: spi.OutcomeSucceeded, FinishedAt: at(4 * time.Second), HasDependents: ca.Dependents > 0}
			require.Equal(t, []bool{true}, f.complete(done))
			assert.Equal(t, spi.StatusPending, f.get(d.ID).Status, "and goes once it finishes")
			f.finish(d, at(5*time.Second), spi.OutcomeSucceeded)

			// Behind a held failure, a cancelled job hands a continuing
			// successor a failed predecessor: it runs.
			x := f.insertOne(inSequence("h", false))
			y := f.insertOne(inSequence("h", false))
			z := f.insertOne(inSequence("h", true))
			f.finish(x, at(5*time.Second), spi.OutcomeFailed)
			require.NoError(t, f.s.CancelJob(f.ctx, y.ID, at(6*time.Second)))
			assert.Equal(t, spi.StatusPending, f.get(z.ID).Status, "a continuing job behind a failed one runs")
		}},
		{"BatchOrder", func(t tb, f *fixture) {
			ss := capability[spi.SequenceStore](f, "spi.SequenceStore")
			ws := capability[spi.WorkflowStore](f, "spi.WorkflowStore")
			x1, y1 := f.newJob(inSequence("x", false)), f.newJob(inSequence("y", false))
			x2, y2 := f.newJob(inSequence("x", false)), f.newJob(inSequence("y", false))
			plain := f.newJob()
			x3 := f.newJob(inSequence("x", false))
			f.insert(x1, y1, x2, plain, y2, x3)
			for _, j := range []*spi.Job{x1, y1, plain} {
				assert.Equal(t, spi.StatusPending, f.get(j.ID).Status)
			}
			assert.Equal(t, []uuid.UUID{x1.ID}, f.waitsOn(ws, x2), "one batch joins in batch order")
			assert.Equal(t, []uuid.UUID{x2.ID}, f.waitsOn(ws, x3))
			assert.Equal(t, []uuid.UUID{y1.ID}, f.waitsOn(ws, y2))
			assert.Equal(t, x3.ID, f.tail(ss, "x"))
			assert.Equal(t, 0, f.get(plain.ID).Dependents, "a job of no sequence is untouched")
		}},
		{"IdempotentJoinsOnce", func(t tb, f *fixture) {
			// A duplicate of an idempotency key writes nothing and takes
			// no place in the sequence.
			ss := capability[spi.SequenceStore](f, "spi.SequenceStore")
			ws := capability[spi.WorkflowStore](f, "spi.WorkflowStore")
			a := f.insertOne(inSequence("events", false), withKey("evt-1"))
			b := f.insertOne(inSequence("events", false), withKey("evt-2"))
			again := f.newJob(inSequence("events", false), withKey("evt-1"))
			assert.Equal(t, []spi.InsertResult{{ID: a.ID, Duplicate: true}}, f.insertRes(again), "a sender's retry answers the first job")
			assert.Equal(t, b.ID, f.tail(ss, "events"), "and is not the tail")
			c := f.insertOne(inSequence("events", false), withKey("evt-3"))
			assert.Equal(t, []uuid.UUID{b.ID}, f.waitsOn(ws, c), "the next job waits on the last one written")
			assert.Len(t, f.listAll(""), 3, "three jobs written")
		}},
		{"InsertRace", func(t tb, f *fixture) {
			// Writers (on two handles when Harness.Reopen gives one) race
			// to insert jobs of one key: they form one line, each job
			// waiting on another, none on the same one.
			ss := capability[spi.SequenceStore](f, "spi.SequenceStore")
			ws := capability[spi.WorkflowStore](f, "spi.WorkflowStore")
			const writers = 8
			for round := range 3 {
				key := fmt.Sprint("race-", round)
				jobs := make([]*spi.Job, writers)
				for w := range jobs {
					jobs[w] = f.newJob(inSequence(key, false))
				}
				f.raceInserts(t, jobs)
				next := map[uuid.UUID]uuid.UUID{} // a job to the one after it
				var heads []uuid.UUID
				for _, j := range jobs {
					switch on := f.waitsOn(ws, j); len(on) {
					case 0:
						heads = append(heads, j.ID)
					case 1:
						_, dup := next[on[0]]
						assert.False(t, dup, "round %d: two jobs wait on %s", round, on[0])
						next[on[0]] = j.ID
					default:
						t.Errorf("round %d: job %s waits on %d jobs", round, j.ID, len(on))
					}
				}
				require.Len(t, heads, 1, "round %d: one job runs first", round)
				n, last := 1, heads[0]
				for id, ok := next[last]; ok; id, ok = next[last] {
					n, last = n+1, id
				}
				assert.Equal(t, writers, n, "round %d: one line through every job", round)
				assert.Equal(t, last, f.tail(ss, key), "round %d: the line's last job is the tail", round)
			}
		}},
	}
}
