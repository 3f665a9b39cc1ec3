package tck

import (
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// snoozed returns the snooze completion of claimed job j at now: PENDING
// again, due at due, with snoozes as its new snooze count.
func snoozed(j *spi.Job, now, due time.Time, snoozes int) spi.Completion {
	return spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSnoozed, FinishedAt: now, RetryAt: due,
		Snoozes: snoozes, Attempts: j.Attempts + 1}
}

// The cases of snoozes (ratchet.Snooze): a body asks to run again later
// without spending an attempt. The owner's write puts the job back to
// PENDING, due later, its snooze count one more and its attempts and last
// error as they were; the store keeps the count until a dead-letter retry
// resets it.
func snoozeCases() []testCase {
	return []testCase{
		{"KeepsAttempts", func(t tb, f *fixture) {
			j := f.insertOne(withMaxRetries(5))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(retried(c, at(2*time.Second), at(3*time.Second), 1, "upstream down")))
			c = f.claimOne(j.ID, "node-a", at(3*time.Second))
			due := at(10*time.Minute + 7*time.Microsecond)
			require.Equal(t, []bool{true}, f.complete(snoozed(c, at(4*time.Second), due, 1)), "the snooze applies")
			want := c.Clone()
			want.Status, want.ScheduledAt, want.OwnerNode, want.Snoozes = spi.StatusPending, due, "", 1
			got := f.get(j.ID)
			assertJob(t, want, got, "job after a snooze: attempts and last error as they were", anyClaimedAt)
			assert.Equal(t, 1, got.Attempts, "a snooze spends no attempt")
			assert.Equal(t, "upstream down", got.LastError, "a snooze keeps the last error")
			assert.True(t, got.FinishedAt.IsZero(), "a snoozed job is not terminal")

			assert.Empty(t, f.claim("node-b", 10, due.Add(-time.Millisecond), boost), "a snoozed job is not due before its time")
			c2 := f.claim("node-b", 10, due, boost)
			require.Len(t, c2, 1, "a snoozed job is claimable when due")
			assert.Equal(t, 1, c2[0].Snoozes, "the claim carries the snooze count: the node bounds snoozes by it")
			assert.Equal(t, c.ClaimSeq+1, c2[0].ClaimSeq, "the next claim advances ClaimSeq")
			assert.Equal(t, []bool{false}, f.complete(snoozed(c, at(11*time.Minute), at(time.Hour), 1)), "the snoozed run's claim is fenced out")
			require.Equal(t, []bool{true}, f.complete(snoozed(c2[0], at(11*time.Minute), at(12*time.Minute), 2)))
			got = f.get(j.ID)
			assert.Equal(t, 2, got.Snoozes, "the second snooze")
			assert.Equal(t, 1, got.Attempts, "still no attempt spent")
		}},
		{"Replayed", func(t tb, f *fixture) {
			// A snooze sent again after its answer was lost counts as
			// applied and writes nothing twice.
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			s := snoozed(c, at(2*time.Second), at(time.Minute), 1)
			require.Equal(t, []bool{true}, f.complete(s))
			after := f.get(j.ID)
			assert.Equal(t, []bool{true}, f.complete(s), "a replayed snooze counts as applied")
			assertJob(t, after, f.get(j.ID), "the replay changes nothing")
		}},
		{"MixedBatch", func(t tb, f *fixture) {
			// One batch of a success, a retry, a snooze and a failure: each
			// writes its own outcome (a store that batches completions must
			// not write a snooze as a retry).
			var cs []spi.Completion
			var claimed []*spi.Job
			for range 4 {
				j := f.insertOne(withMaxRetries(3))
				claimed = append(claimed, f.claimOne(j.ID, "node-a", at(time.Second)))
			}
			now := at(2 * time.Second)
			cs = append(cs, succeeded(claimed[0], now, []byte(`1`), "int"), retried(claimed[1], now, at(time.Minute), 1, "again"),
				snoozed(claimed[2], now, at(time.Hour), 1), failed(claimed[3], now, 1, "bad"))
			require.Equal(t, []bool{true, true, true, true}, f.complete(cs...))
			assert.Equal(t, spi.StatusSucceeded, f.get(claimed[0].ID).Status)
			r := f.get(claimed[1].ID)
			assert.Equal(t, [3]any{spi.StatusPending, 1, 0}, [3]any{r.Status, r.Attempts, r.Snoozes}, "the retry")
			s := f.get(claimed[2].ID)
			assert.Equal(t, [3]any{spi.StatusPending, 0, 1}, [3]any{s.Status, s.Attempts, s.Snoozes}, "the snooze")
			assert.True(t, s.ScheduledAt.Equal(at(time.Hour)), "the snooze's due time: %s", s.ScheduledAt)
			assert.Empty(t, s.LastError, "the snooze writes no error")
			assert.Equal(t, spi.StatusFailed, f.get(claimed[3].ID).Status)
		}},
		{"ResetByRetryFailed", func(t tb, f *fixture) {
			// A job that snoozed and then failed keeps its count; a
			// dead-letter retry resets it with the attempts.
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(snoozed(c, at(2*time.Second), at(3*time.Second), 1)))
			c = f.claimOne(j.ID, "node-a", at(3*time.Second))
			require.Equal(t, []bool{true}, f.complete(failed(c, at(4*time.Second), 1, "bad")))
			assert.Equal(t, 1, f.get(j.ID).Snoozes, "a failure keeps the snooze count")
			require.NoError(t, f.s.RetryFailedJob(f.ctx, j.ID, at(time.Minute)))
			got := f.get(j.ID)
			assert.Equal(t, [2]int{0, 0}, [2]int{got.Attempts, got.Snoozes}, "a dead-letter retry resets attempts and snoozes")
		}},
	}
}
