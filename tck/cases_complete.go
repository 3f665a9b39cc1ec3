package tck

import (
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// staleRefs returns references to j with claim sequences other than its
// current one.
func staleRefs(j *spi.Job) []spi.ClaimRef {
	return []spi.ClaimRef{
		{JobID: j.ID, ClaimSeq: j.ClaimSeq - 1},
		{JobID: j.ID, ClaimSeq: j.ClaimSeq + 1},
		{JobID: j.ID, ClaimSeq: 0},
	}
}

// outcomes returns one completion of each outcome for ref r at now.
func outcomes(r spi.ClaimRef, now time.Time) []spi.Completion {
	return []spi.Completion{
		{ClaimRef: r, Outcome: spi.OutcomeSucceeded, FinishedAt: now, Result: []byte(`"stale"`), ResultType: "string"},
		{ClaimRef: r, Outcome: spi.OutcomeRetry, FinishedAt: now, RetryAt: now.Add(time.Minute), Attempts: 1, LastError: "stale"},
		{ClaimRef: r, Outcome: spi.OutcomeFailed, FinishedAt: now, Attempts: 1, LastError: "stale"},
	}
}

// assertSuperseded checks that every completion of cs, applied alone, is
// superseded and leaves job id exactly as before.
func (f *fixture) assertSuperseded(u uuid.UUID, what string, cs []spi.Completion) {
	f.t.Helper()
	before := f.get(u)
	for _, c := range cs {
		assert.Equal(f.t, []bool{false}, f.complete(c), "%s: CompleteJobs(seq %d, outcome %d) must be superseded", what, c.ClaimSeq, c.Outcome)
		assertJob(f.t, before, f.get(u), what+": a superseded completion must change nothing")
	}
}

// assertReleaseSuperseded checks that every release of refs, applied
// alone, is superseded and leaves job id exactly as before.
func (f *fixture) assertReleaseSuperseded(u uuid.UUID, what string, refs []spi.ClaimRef, now time.Time) {
	f.t.Helper()
	before := f.get(u)
	for _, r := range refs {
		assert.Equal(f.t, []bool{false}, f.release(now, r), "%s: ReleaseJobs(seq %d) must be superseded", what, r.ClaimSeq)
		assertJob(f.t, before, f.get(u), what+": a superseded release must change nothing")
	}
}

func fencingCases() []testCase {
	return []testCase{
		{"CompleteStaleSeq", func(t tb, f *fixture) {
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			var cs []spi.Completion
			for _, r := range staleRefs(c) {
				cs = append(cs, outcomes(r, at(2*time.Second))...)
			}
			f.assertSuperseded(j.ID, "RUNNING job, wrong claim sequence", cs)
			assert.Equal(t, []bool{true}, f.complete(succeeded(c, at(3*time.Second), nil, "")), "the current owner's write still applies")
		}},
		{"CompleteEachOnItsOwnJob", func(t tb, f *fixture) {
			// In one batch, a success and a failure each write their own
			// job, and a superseded completion stays superseded.
			f.insertOne()
			f.insertOne()
			jobs := f.claim("node-a", 2, at(time.Second), 0)
			require.Len(t, jobs, 2)
			a, b := jobs[0], jobs[1]
			ca := succeeded(a, at(2*time.Second), []byte(`"a"`), "string")
			cb := failed(b, at(2*time.Second), 1, "b failed")
			assert.Equal(t, []bool{true, true}, f.complete(ca, cb), "both completions apply")
			ga, gb := f.get(a.ID), f.get(b.ID)
			assert.Equal(t, spi.StatusSucceeded, ga.Status)
			assert.Equal(t, []byte(`"a"`), ga.Result, "the success's result is on its own job")
			assert.Empty(t, ga.LastError, "the failure's error is not on the success's job")
			assert.Equal(t, spi.StatusFailed, gb.Status)
			assert.Equal(t, "b failed", gb.LastError, "the failure is on its own job")
			assert.Nil(t, gb.Result, "the success's result is not on the failure's job")

			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(3*time.Second))
			stale := succeeded(c, at(4*time.Second), nil, "")
			stale.ClaimSeq--
			f.assertSuperseded(j.ID, "RUNNING job, wrong claim sequence", []spi.Completion{stale})
			assert.Equal(t, []bool{true}, f.complete(succeeded(c, at(5*time.Second), nil, "")), "the current owner's write still applies")
		}},
		{"CompleteNotRunning", func(t tb, f *fixture) {
			pending := f.insertOne(withDue(at(100 * time.Hour)))
			f.assertSuperseded(pending.ID, "PENDING job never claimed", outcomes(ref(pending), at(time.Second)))

			j := f.insertOne(withDue(at(time.Minute)))
			c := f.claimOne(j.ID, "node-a", at(time.Minute))
			require.Equal(t, []bool{true}, f.complete(succeeded(c, at(2*time.Minute), []byte(`1`), "int")))
			f.assertSuperseded(j.ID, "SUCCEEDED job, its last claim sequence", outcomes(ref(c), at(3*time.Minute)))

			k := f.insertOne(withDue(at(time.Hour)))
			ck := f.claimOne(k.ID, "node-a", at(time.Hour))
			require.Equal(t, []bool{true}, f.complete(failed(ck, at(time.Hour+time.Second), 1, "boom")))
			f.assertSuperseded(k.ID, "FAILED job, its last claim sequence", outcomes(ref(ck), at(2*time.Hour)))

			l := f.insertOne(withDue(at(3 * time.Hour)))
			cl := f.claimOne(l.ID, "node-a", at(3*time.Hour))
			require.Equal(t, []bool{true}, f.complete(retried(cl, at(3*time.Hour), at(4*time.Hour), 1, "again")))
			f.assertSuperseded(l.ID, "PENDING job after a retry, its last claim sequence", outcomes(ref(cl), at(3*time.Hour+time.Second)))

			m := f.insertOne(withDue(at(5 * time.Hour)))
			require.NoError(t, f.s.CancelJob(f.ctx, m.ID, at(5*time.Hour)))
			f.assertSuperseded(m.ID, "CANCELLED job", outcomes(ref(m), at(5*time.Hour)))
		}},
		{"CompleteUnknownJob", func(t tb, f *fixture) {
			f.insertOne()
			unknown := spi.ClaimRef{JobID: id(999), ClaimSeq: 1}
			assert.Equal(t, []bool{false, false, false}, f.complete(outcomes(unknown, at(time.Second))...),
				"a completion of a job that does not exist is superseded")
		}},
		{"CompleteMixedBatch", func(t tb, f *fixture) {
			a := f.insertOne()
			b := f.insertOne()
			c := f.insertOne()
			d := f.insertOne()
			claimed := f.claimSet("node-a", at(time.Second), a, b, c, d)
			bBefore, dBefore := f.get(b.ID), f.get(d.ID)
			now := at(2 * time.Second)
			res := f.complete(
				succeeded(claimed[a.ID], now, []byte(`"a"`), "string"),
				spi.Completion{ClaimRef: spi.ClaimRef{JobID: b.ID, ClaimSeq: 7}, Outcome: spi.OutcomeSucceeded, FinishedAt: now},
				failed(claimed[c.ID], now, 2, "c failed"),
				spi.Completion{ClaimRef: spi.ClaimRef{JobID: d.ID, ClaimSeq: 0}, Outcome: spi.OutcomeFailed, FinishedAt: now, Attempts: 1, LastError: "stale"},
			)
			assert.Equal(t, []bool{true, false, true, false}, res, "flags of a batch mixing current and stale claims, in order")
			assert.Equal(t, spi.StatusSucceeded, f.get(a.ID).Status, "valid entry a applied")
			assert.Equal(t, spi.StatusFailed, f.get(c.ID).Status, "valid entry c applied")
			assertJob(t, bBefore, f.get(b.ID), "stale entry b changed nothing")
			assertJob(t, dBefore, f.get(d.ID), "stale entry d changed nothing")
		}},
		{"CompleteTwice", func(t tb, f *fixture) {
			// Finalization is exactly once: two writes of one claim in one
			// batch apply at most once, and the job shows the one that did.
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			res := f.complete(succeeded(c, at(2*time.Second), []byte(`1`), "int"), failed(c, at(3*time.Second), 1, "late"))
			require.Len(t, res, 2)
			assert.True(t, res[0] != res[1], "exactly one of two writes of one claim in a batch applies, got %v", res)
			got := f.get(j.ID)
			switch {
			case res[0] && !res[1]:
				assert.Equal(t, spi.StatusSucceeded, got.Status, "the applied write was the success")
			case res[1] && !res[0]:
				assert.Equal(t, spi.StatusFailed, got.Status, "the applied write was the failure")
			}
			assert.Equal(t, []bool{false}, f.complete(succeeded(c, at(4*time.Second), nil, "")), "a third write of a finalized claim")
		}},
		{"CompleteReplayed", func(t tb, f *fixture) {
			// A batch whose commit succeeded but whose answer was lost is
			// sent again: a completion whose job already shows exactly
			// what it writes counts as applied, and changes nothing.
			a, b, c, d := f.insertOne(), f.insertOne(), f.insertOne(), f.insertOne()
			claimed := f.claimSet("node-a", at(time.Second), a, b, c, d)
			now := at(2*time.Second + 7*time.Microsecond)
			batch := []spi.Completion{
				succeeded(claimed[a.ID], now, []byte(`"a"`), "string"),
				retried(claimed[b.ID], now, now.Add(time.Hour), 1, "later"),
				failed(claimed[c.ID], now, 2, "c failed"),
			}
			require.Equal(t, []bool{true, true, true}, f.complete(batch...))
			before := []*spi.Job{f.get(a.ID), f.get(b.ID), f.get(c.ID)}
			replay := append(slices.Clone(batch), succeeded(claimed[d.ID], now, nil, ""))
			assert.Equal(t, []bool{true, true, true, true}, f.complete(replay...),
				"a replayed success, retry and failure count as applied, beside a first write")
			for _, j := range before {
				assertJob(t, j, f.get(j.ID), "a replayed completion changes nothing")
			}
			assert.Equal(t, spi.StatusSucceeded, f.get(d.ID).Status)
			// Once the retried job is claimed again, the replay of its
			// retry is superseded.
			f.claimOne(b.ID, "node-b", now.Add(time.Hour))
			assert.Equal(t, []bool{false}, f.complete(batch[1]), "a retry replayed after the job was claimed again")
		}},
		{"CompleteLargeBatch", func(t tb, f *fixture) {
			// 300 completions of every outcome and stale ones, in reverse
			// id order: more than one statement's worth in most stores;
			// the flags stay in input order.
			var jobs []*spi.Job
			for range 300 {
				jobs = append(jobs, f.insertOne())
			}
			claimed := f.claim("node-a", 300, at(time.Second), 0)
			require.Len(t, claimed, 300)
			now := at(2*time.Second + 3*time.Microsecond)
			var cs []spi.Completion
			for i, j := range claimed {
				switch i % 4 {
				case 0:
					cs = append(cs, succeeded(j, now, []byte(`{"i":1}`), "example.R"))
				case 1:
					cs = append(cs, retried(j, now, now.Add(time.Minute), 1, "again"))
				case 2:
					cs = append(cs, failed(j, now, 4, "dead"))
				case 3:
					cs = append(cs, spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq + 8}, Outcome: spi.OutcomeSucceeded, FinishedAt: now})
				}
			}
			slices.Reverse(cs)
			res := f.complete(cs...)
			for i, c := range cs {
				stale := c.ClaimSeq != 1
				assert.Equal(t, !stale, res[i], "entry %d", i)
				got := f.get(c.JobID)
				switch {
				case stale:
					assert.Equal(t, spi.StatusRunning, got.Status, "a stale entry changes nothing")
				case c.Outcome == spi.OutcomeSucceeded:
					assert.Equal(t, spi.StatusSucceeded, got.Status)
					assert.Equal(t, c.Result, got.Result)
					assert.True(t, now.Equal(got.FinishedAt))
				case c.Outcome == spi.OutcomeRetry:
					assert.Equal(t, spi.StatusPending, got.Status)
					assert.True(t, c.RetryAt.Equal(got.ScheduledAt))
					assert.Equal(t, 1, got.Attempts)
				case c.Outcome == spi.OutcomeFailed:
					assert.Equal(t, spi.StatusFailed, got.Status)
					assert.Equal(t, 4, got.Attempts)
				}
				assert.Equal(t, int64(1), got.ClaimSeq, "completions do not advance the claim sequence")
			}
		}},
		{"CompleteUnknownOutcome", func(t tb, f *fixture) {
			// An unknown outcome anywhere in a batch fails the whole batch
			// before anything is written.
			a, b := f.insertOne(), f.insertOne()
			claimed := f.claimSet("node-a", at(time.Second), a, b)
			before := []*spi.Job{f.get(a.ID), f.get(b.ID)}
			_, err := f.s.CompleteJobs(f.ctx, []spi.Completion{
				succeeded(claimed[a.ID], at(2*time.Second), nil, ""),
				{ClaimRef: ref(claimed[b.ID]), Outcome: spi.Outcome(42), FinishedAt: at(2 * time.Second)},
			})
			require.Error(t, err, "CompleteJobs with outcome 42")
			assert.Contains(t, err.Error(), "42", "the error names the outcome")
			for _, j := range before {
				assertJob(t, j, f.get(j.ID), "nothing written")
			}
		}},
		{"EmptyBatches", func(t tb, f *fixture) {
			f.insertOne()
			assert.Empty(t, f.complete(), "CompleteJobs of no completions")
			assert.Empty(t, f.release(at(time.Second)), "ReleaseJobs of no claims")
		}},
		{"ReleaseStaleSeq", func(t tb, f *fixture) {
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			f.assertReleaseSuperseded(j.ID, "RUNNING job, wrong claim sequence", staleRefs(c), at(2*time.Second))
		}},
		{"ReleaseNotRunning", func(t tb, f *fixture) {
			pending := f.insertOne(withDue(at(time.Hour)))
			f.assertReleaseSuperseded(pending.ID, "PENDING job never claimed", []spi.ClaimRef{ref(pending)}, at(time.Second))
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(succeeded(c, at(2*time.Second), nil, "")))
			f.assertReleaseSuperseded(j.ID, "SUCCEEDED job, its last claim sequence", []spi.ClaimRef{ref(c)}, at(3*time.Second))
			assert.Equal(t, []bool{false}, f.release(at(4*time.Second), spi.ClaimRef{JobID: id(998), ClaimSeq: 1}), "release of an unknown job")
		}},
		{"ReleaseMixedBatch", func(t tb, f *fixture) {
			a := f.insertOne()
			b := f.insertOne()
			claimed := f.claimSet("node-a", at(time.Second), a, b)
			bBefore := f.get(b.ID)
			res := f.release(at(2*time.Second), spi.ClaimRef{JobID: b.ID, ClaimSeq: 5}, ref(claimed[a.ID]))
			assert.Equal(t, []bool{false, true}, res, "flags of a release batch mixing stale and current claims, in order")
			assert.Equal(t, spi.StatusPending, f.get(a.ID).Status, "valid entry applied")
			assertJob(t, bBefore, f.get(b.ID), "stale entry changed nothing")
		}},
	}
}

func completeCases() []testCase {
	return []testCase{
		{"Succeeded", func(t tb, f *fixture) {
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			now := at(5*time.Second + 42*time.Microsecond)
			result := []byte(`{"total": 42, "note": "café ☕"}`)
			require.Equal(t, []bool{true}, f.complete(succeeded(c, now, result, "example.Result")))
			want := c.Clone()
			want.Status = spi.StatusSucceeded
			want.Result = result
			want.ResultType = "example.Result"
			want.FinishedAt = now
			got := f.get(j.ID)
			assertJob(t, want, got, "SUCCEEDED job", anyOwner, anyLastError)
			assert.Equal(t, result, got.Result, "result byte for byte")
		}},
		{"SucceededNoResult", func(t tb, f *fixture) {
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(succeeded(c, at(2*time.Second), nil, "")))
			want := c.Clone()
			want.Status = spi.StatusSucceeded
			want.FinishedAt = at(2 * time.Second)
			got := f.get(j.ID)
			assertJob(t, want, got, "SUCCEEDED job without a result", anyOwner, anyLastError)
			assert.Nil(t, got.Result, "Result is nil when none")
		}},
		{"SucceededAfterRetry", func(t tb, f *fixture) {
			// A success keeps the attempt count of earlier failures.
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(retried(c, at(2*time.Second), at(time.Minute), 1, "first try failed")))
			c2 := f.claimOne(j.ID, "node-b", at(time.Minute))
			require.Equal(t, []bool{true}, f.complete(succeeded(c2, at(2*time.Minute), []byte(`true`), "bool")))
			got := f.get(j.ID)
			assert.Equal(t, spi.StatusSucceeded, got.Status)
			assert.Equal(t, 1, got.Attempts, "a success must not change Attempts (Completion.Attempts is for RETRY and FAILED)")
			assert.Equal(t, int64(2), got.ClaimSeq, "ClaimSeq after two claims")
		}},
		{"Retry", func(t tb, f *fixture) {
			j := f.insertOne(withMaxRetries(5))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			retryAt := at(10*time.Minute + 7*time.Microsecond)
			require.Equal(t, []bool{true}, f.complete(retried(c, at(2*time.Second), retryAt, 1, "timeout calling upstream")))
			want := c.Clone()
			want.Status = spi.StatusPending
			want.ScheduledAt = retryAt
			want.Attempts = 1
			want.LastError = "timeout calling upstream"
			want.OwnerNode = ""
			got := f.get(j.ID)
			assertJob(t, want, got, "job after a RETRY outcome (FinishedAt stays zero: not terminal)", anyClaimedAt)
			assert.Empty(t, got.OwnerNode, "a RETRY outcome clears the owner")
			assert.True(t, got.FinishedAt.IsZero(), "a retried job is not terminal: FinishedAt stays zero")

			assert.Empty(t, f.claim("node-b", 10, retryAt.Add(-time.Millisecond), boost), "a retried job is not due before RetryAt")
			c2 := f.claim("node-b", 10, retryAt, boost)
			require.Len(t, c2, 1, "a retried job is claimable at RetryAt")
			assertJob(t, running(got, "node-b", retryAt), c2[0], "second claim")
			assert.Equal(t, int64(2), c2[0].ClaimSeq, "the second claim advances ClaimSeq again")
			assert.Equal(t, []bool{false}, f.complete(succeeded(c, at(11*time.Minute), nil, "")), "the first claim is fenced out")
			require.Equal(t, []bool{true}, f.complete(retried(c2[0], at(11*time.Minute), at(20*time.Minute), 2, "again")))
			got = f.get(j.ID)
			assert.Equal(t, 2, got.Attempts, "attempts after the second retry")
			assert.Equal(t, "again", got.LastError)
		}},
		{"Failed", func(t tb, f *fixture) {
			j := f.insertOne()
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			now := at(3*time.Second + 3*time.Microsecond)
			require.Equal(t, []bool{true}, f.complete(failed(c, now, 4, "permanent: bad input «x»")))
			want := c.Clone()
			want.Status = spi.StatusFailed
			want.Attempts = 4
			want.LastError = "permanent: bad input «x»"
			want.FinishedAt = now
			assertJob(t, want, f.get(j.ID), "FAILED job", anyOwner)
			assert.Empty(t, f.claim("node-b", 10, at(time.Hour), boost), "a FAILED job is not claimed")
		}},
	}
}

func releaseCases() []testCase {
	return []testCase{
		{"Release", func(t tb, f *fixture) {
			j := f.insertOne(withDue(at(0)))
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(retried(c, at(2*time.Second), at(time.Minute), 1, "flaky")))
			c2 := f.claimOne(j.ID, "node-a", at(2*time.Minute))
			now := at(3*time.Minute + 9*time.Microsecond)
			require.Equal(t, []bool{true}, f.release(now, ref(c2)), "release of the current claim")
			want := c2.Clone()
			want.Status = spi.StatusPending
			want.ScheduledAt = now
			want.OwnerNode = ""
			want.ClaimSeq = c2.ClaimSeq + 1
			got := f.get(j.ID)
			assertJob(t, want, got, "released job: PENDING, due at now, attempts and crash count unchanged, ClaimSeq advanced, no owner", anyClaimedAt)
			assert.Equal(t, 1, got.Attempts, "release must not charge attempts")
			assert.Equal(t, 0, got.CrashCount, "release must not charge the crash budget")
			assert.Equal(t, c2.ClaimSeq+1, got.ClaimSeq, "release advances ClaimSeq")

			assert.Equal(t, []bool{false}, f.complete(succeeded(c2, now.Add(time.Second), nil, "")), "the released owner is fenced out")
			assert.Equal(t, []bool{false}, f.release(now.Add(time.Second), ref(c2)), "a second release of the same claim is superseded")
			assertJob(t, got, f.get(j.ID), "superseded writes after a release change nothing")

			assert.Empty(t, f.claim("node-b", 10, now.Add(-time.Millisecond), boost), "a released job is due at the release time, not before")
			c3 := f.claim("node-b", 10, now, boost)
			require.Len(t, c3, 1, "a released job is claimable at once")
			assert.Equal(t, got.ClaimSeq+1, c3[0].ClaimSeq, "the next claim advances ClaimSeq again")
			assert.Equal(t, []bool{false}, f.complete(succeeded(c2, now.Add(time.Second), nil, "")), "the released owner stays fenced out once another node owns the job")
			assert.Equal(t, spi.StatusRunning, f.get(j.ID).Status, "the new owner still runs the job")
		}},
		{"ReleaseKeepsCrashCount", func(t tb, f *fixture) {
			// A job that was recovered once keeps its crash count through a
			// release.
			j := f.insertOne()
			f.claimOne(j.ID, "node-dead", at(time.Second))
			rec := f.recover(spi.RecoverParams{Now: at(time.Minute), Grace: time.Minute, MaxCrashRedeliveries: 3, LastError: "crashed"})
			require.Len(t, rec, 1, "setup: the job of a node without a node row is recovered")
			c := f.claimOne(j.ID, "node-a", at(2*time.Minute))
			require.Equal(t, 1, c.CrashCount)
			require.Equal(t, []bool{true}, f.release(at(3*time.Minute), ref(c)))
			got := f.get(j.ID)
			assert.Equal(t, 1, got.CrashCount, "release must leave the crash count alone")
			assert.Equal(t, 0, got.Attempts, "release must leave attempts alone")
		}},
	}
}
