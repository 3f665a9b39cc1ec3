package tck

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// ran marks completion c as the end of the run of claimed job j with
// outcome: what the engine writes for its attempt record.
func ran(c spi.Completion, j *spi.Job, outcome spi.AttemptOutcome) spi.Completion {
	c.Attempt, c.Node, c.StartedAt = outcome, j.OwnerNode, j.ClaimedAt
	return c
}

// attempts reads the stored attempt records of job u.
func (f *fixture) attempts(u uuid.UUID) []spi.Attempt {
	f.t.Helper()
	as, err := capability[spi.AttemptStore](f, "spi.AttemptStore").JobAttempts(f.ctx, u)
	require.NoError(f.t, err, "JobAttempts(%s)", u)
	return as
}

// attemptLine is a record as the cases compare it: claim, node, times to
// the microsecond, outcome and error.
func attemptLine(a spi.Attempt) string {
	us := func(t time.Time) string { return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano) }
	return fmt.Sprintf("claim %d on %q %s..%s %s %q", a.ClaimSeq, a.Node, us(a.StartedAt), us(a.FinishedAt), a.Outcome, a.Error)
}

func attemptLines(as []spi.Attempt) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = attemptLine(a)
	}
	return out
}

// The cases of the attempt records (spi.AttemptStore): every run that
// does not end its job SUCCEEDED leaves a record, written with the
// transition that ends it: a completion's (failed, timed out, snoozed,
// expired), a release, an orphan recovery, the cancel of a RUNNING job.
// A success writes none (the job's row is its record), a superseded write
// none, a replay no second one; a job keeps the records of its last
// spi.AttemptsKept claims.
func attemptCases() []testCase {
	return []testCase{
		{"EveryRun", func(t tb, f *fixture) {
			j := f.insertOne(withMaxRetries(9))
			var want []spi.Attempt
			run := func(node string, start, end time.Time, outcome spi.AttemptOutcome, errMsg string, c func(*spi.Job) spi.Completion) {
				t.Helper()
				cl := f.claimOne(j.ID, node, start)
				require.Equal(t, []bool{true}, f.complete(ran(c(cl), cl, outcome)), "the %s run's completion", outcome)
				want = append(want, spi.Attempt{JobID: j.ID, ClaimSeq: cl.ClaimSeq, Node: node, StartedAt: start, FinishedAt: end, Outcome: outcome, Error: errMsg})
			}
			run("node-a", at(time.Second), at(2*time.Second), spi.AttemptFailed, "upstream down", func(c *spi.Job) spi.Completion {
				return retried(c, at(2*time.Second), at(3*time.Second), 1, "upstream down")
			})
			run("node-b", at(3*time.Second), at(4*time.Second), spi.AttemptTimedOut, "ratchet: run timed out", func(c *spi.Job) spi.Completion {
				return retried(c, at(4*time.Second), at(5*time.Second), 2, "ratchet: run timed out")
			})
			run("node-a", at(5*time.Second), at(6*time.Second+7*time.Microsecond), spi.AttemptSnoozed, "", func(c *spi.Job) spi.Completion {
				return snoozed(c, at(6*time.Second+7*time.Microsecond), at(7*time.Second), 1)
			})

			// Released by a stopping node.
			c := f.claimOne(j.ID, "node-b", at(7*time.Second))
			require.Equal(t, []bool{true}, f.release(at(8*time.Second), ref(c)))
			want = append(want, spi.Attempt{JobID: j.ID, ClaimSeq: c.ClaimSeq, Node: "node-b", StartedAt: at(7 * time.Second), FinishedAt: at(8 * time.Second), Outcome: spi.AttemptReleased})

			// Crashed: its node's heartbeat went stale.
			f.heartbeat("node-c", at(8*time.Second))
			c = f.claimOne(j.ID, "node-c", at(8*time.Second))
			now := at(8*time.Second + 2*grace)
			require.Len(t, f.recoverAt(now), 1)
			want = append(want, spi.Attempt{JobID: j.ID, ClaimSeq: c.ClaimSeq, Node: "node-c", StartedAt: at(8 * time.Second), FinishedAt: now, Outcome: spi.AttemptCrashed})

			// The success: no record stored; AttemptsOf adds it from the row.
			c = f.claimOne(j.ID, "node-a", now)
			done := now.Add(time.Second)
			require.Equal(t, []bool{true}, f.complete(ran(succeeded(c, done, nil, ""), c, spi.AttemptSucceeded)))
			got := f.attempts(j.ID)
			assert.Equal(t, attemptLines(want), attemptLines(got), "a record of every run but the success, in claim order")
			for _, a := range got {
				assert.Equal(t, j.ID, a.JobID, "each record names its job")
			}
			all := spi.AttemptsOf(f.get(j.ID), got)
			require.Len(t, all, len(want)+1, "AttemptsOf adds the success from the job's row")
			assert.Equal(t, attemptLine(spi.Attempt{ClaimSeq: c.ClaimSeq, Node: "node-a", StartedAt: now, FinishedAt: done, Outcome: spi.AttemptSucceeded}),
				attemptLine(all[len(all)-1]), "the success's record, from the row")
		}},
		{"NoneForSuccess", func(t tb, f *fixture) {
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(ran(succeeded(c, at(2*time.Second), nil, ""), c, spi.AttemptSucceeded)))
			assert.Empty(t, f.attempts(j.ID), "a first-run success stores no record")
			assert.Empty(t, f.attempts(uuid.New()), "an unknown job has none, and no error")
		}},
		{"CancelledRunning", func(t tb, f *fixture) {
			c := f.runningJob(at(time.Second), withMaxRetries(3))
			now := at(time.Minute)
			require.NoError(t, f.s.CancelJob(f.ctx, c.ID, now))
			want := []string{attemptLine(spi.Attempt{ClaimSeq: c.ClaimSeq, Node: "node-a", StartedAt: at(time.Second), FinishedAt: now, Outcome: spi.AttemptCancelled})}
			assert.Equal(t, want, attemptLines(f.attempts(c.ID)), "the cancel records the run it ended")
			late := ran(retried(c, at(2*time.Minute), at(3*time.Minute), 1, "late"), c, spi.AttemptFailed)
			assert.Equal(t, []bool{false}, f.complete(late), "the owner's late write is superseded")
			assert.Equal(t, want, attemptLines(f.attempts(c.ID)), "and records nothing")
		}},
		{"MixedBatch", func(t tb, f *fixture) {
			// One batch of a success, a retry, a snooze, a failure and an
			// expiry: a record each but the success; sent again, nothing
			// more (a replay counts as applied).
			var claimed []*spi.Job
			for range 5 {
				j := f.insertOne(withMaxRetries(3))
				claimed = append(claimed, f.claimOne(j.ID, "node-a", at(time.Second)))
			}
			now := at(2 * time.Second)
			cs := []spi.Completion{
				ran(succeeded(claimed[0], now, nil, ""), claimed[0], spi.AttemptSucceeded),
				ran(retried(claimed[1], now, at(time.Minute), 1, "again"), claimed[1], spi.AttemptFailed),
				ran(snoozed(claimed[2], now, at(time.Hour), 1), claimed[2], spi.AttemptSnoozed),
				ran(failed(claimed[3], now, 1, "bad"), claimed[3], spi.AttemptFailed),
				ran(failed(claimed[4], now, 1, "ratchet: start-by deadline passed"), claimed[4], spi.AttemptExpired),
			}
			for range 2 {
				require.Equal(t, []bool{true, true, true, true, true}, f.complete(cs...))
				assert.Empty(t, f.attempts(claimed[0].ID), "the success")
				for k, w := range []struct {
					o spi.AttemptOutcome
					e string
				}{{spi.AttemptFailed, "again"}, {spi.AttemptSnoozed, ""}, {spi.AttemptFailed, "bad"}, {spi.AttemptExpired, "ratchet: start-by deadline passed"}} {
					c := claimed[k+1]
					assert.Equal(t, []string{attemptLine(spi.Attempt{ClaimSeq: c.ClaimSeq, Node: "node-a", StartedAt: at(time.Second), FinishedAt: now, Outcome: w.o, Error: w.e})},
						attemptLines(f.attempts(c.ID)), "the record of the %s run, once", w.o)
				}
			}
		}},
		{"Unmarked", func(t tb, f *fixture) {
			// A completion that ends no run (Attempt empty: a workflow
			// job's skip or cancel by its gate) writes no record.
			j := f.insertOne(withMaxRetries(3))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(retried(c, at(2*time.Second), at(3*time.Second), 1, "x")))
			assert.Empty(t, f.attempts(j.ID))
		}},
		{"LastKept", func(t tb, f *fixture) {
			// A job that ran AttemptsKept+3 times keeps the records of its
			// last AttemptsKept claims.
			j := f.insertOne()
			var seqs []int64
			for k := range spi.AttemptsKept + 3 {
				now := at(time.Duration(k) * time.Second)
				c := f.claimOne(j.ID, "node-a", now)
				require.Equal(t, []bool{true}, f.complete(ran(snoozed(c, now.Add(time.Millisecond), now.Add(time.Second), k+1), c, spi.AttemptSnoozed)))
				seqs = append(seqs, c.ClaimSeq)
			}
			got := f.attempts(j.ID)
			gotSeqs := make([]int64, len(got))
			for i, a := range got {
				gotSeqs[i] = a.ClaimSeq
			}
			assert.Equal(t, seqs[3:], gotSeqs, "the last %d runs' records, in claim order", spi.AttemptsKept)
		}},
	}
}
