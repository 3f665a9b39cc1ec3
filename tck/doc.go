// Package tck is Ratchet's store conformance kit, the Go counterpart of the
// Java library's ratchet-tck-store: a store that passes [Run] implements the
// [spi.Store] contract and is "Ratchet Store Compatible".
//
// # Using it
//
// A store author adds one test next to the store, in the store's own module
// (the kit never imports a store; the store's module requires this one for
// its tests):
//
//	func TestConformance(t *testing.T) {
//		tck.Run(t, tck.Harness{
//			Open: func(t *testing.T) spi.Store {
//				s, err := mystore.Open(filepath.Join(t.TempDir(), "ratchet.db"))
//				require.NoError(t, err)
//				return s
//			},
//			Corrupt: func(t *testing.T, s spi.Store, id uuid.UUID) {
//				_, err := s.(*mystore.Store).DB().Exec(
//					`UPDATE scheduler_job SET params = '{not json' WHERE job_id = ?`, id.String())
//				require.NoError(t, err)
//			},
//		})
//	}
//
// Open must return a fresh, empty store that no other test sees; Run closes
// it when the case ends. Cases run in parallel (t.Parallel) unless
// [Harness.Serial] is set. Corrupt is optional: without it the corrupted-row
// cases are skipped with a message saying so.
//
// A case that finds a problem fails with the contract's expectation and what
// the store did; a store that panics fails the case it panicked in.
//
// # What it checks
//
// Every case works on synthetic times (2030-01-01T00:00:00Z plus offsets,
// microsecond precision, UTC) passed in as the methods' now arguments; no
// case sleeps or reads the wall clock, so a store that consults a clock of
// its own fails. Jobs are built as the client builds them (UUIDv7 ids,
// defaults applied). Stored values are compared field by field with the
// contract's expectations; fields the contract leaves open for a transition
// (for example ClaimedAt after a retry, FinishedAt of a cancelled job, the
// owner of a finished job) are left out of that comparison. Tags are
// compared as a set; an empty tag list or parameter map equals nil.
//
// The groups and what they establish:
//
//   - Insert: every field a client sets comes back from GetJob unchanged,
//     the payload byte for byte (non-ASCII JSON with odd spacing, 100 KiB),
//     times at microsecond precision and in UTC, zero times zero and a nil
//     result nil; batches; the store keeps no reference to the caller's
//     jobs; GetJob of an unknown id wraps spi.ErrNotFound. Fields that only
//     transitions set (attempts, crash count, claim sequence, owner, claim
//     and finish times, error, result) are checked by the later groups.
//   - Idempotency: an existing key returns the existing id with Duplicate
//     and writes nothing, across calls, inside one batch and for a finished
//     job; jobs without a key never clash.
//   - List: ordering by id whatever the insertion order, status filter,
//     paging with the returned cursor (25 jobs in pages of 10 give 10, 10, 5
//     and a zero cursor at the end; with a status filter the filter applies
//     before the limit), an exclusive After cursor, Limit, and the default
//     of 100 for a limit of zero or less.
//   - Claim: due times (due at T: not claimable at T−1µs, claimable at T),
//     Limit, the claimed job's fields (RUNNING, owner, ClaimSeq + 1,
//     ClaimedAt = now, nothing else changed), no second claim of a RUNNING,
//     finished or cancelled job, and the exact order: effective priority
//     ([spi.EffectivePriority]) descending, then ScheduledAt, then id, with
//     aging (a LOWEST job waiting long enough overtakes a CRITICAL one, ties
//     go to the earlier due time, the floor of the wait is used, an interval
//     of zero or less disables aging) and the best N overall when a level has
//     many more than N due jobs. Order is checked by which jobs each claim
//     takes; the order of the returned slice is not part of the contract.
//   - ClaimConcurrency: 500 due jobs, [Harness.Concurrency] goroutines, each
//     a distinct node claiming batches of 7 until none is left: every job is
//     handed out exactly once, to the node the store records as its owner.
//   - Fencing: CompleteJobs and ReleaseJobs with a stale or future claim
//     sequence, or on a job that is not RUNNING (PENDING, retried, finished,
//     cancelled, unknown), report false and change nothing (the whole job is
//     compared before and after); batches mixing current and stale entries
//     apply only the current ones, flags in input order; a claim is
//     finalized at most once.
//   - Complete: SUCCEEDED stores result, result type and FinishedAt and keeps
//     the attempt count; RETRY leaves the job PENDING at RetryAt with the
//     attempt count and error, no owner and no finish time, claimable again
//     at RetryAt with the next claim sequence; FAILED stores attempts, error
//     and FinishedAt and is never claimed. A completion does not change the
//     claim sequence (only claims, releases and recoveries advance it).
//   - Release: PENDING due at now, attempts and crash count unchanged, no
//     owner, claim sequence advanced so the old owner is fenced out.
//   - RetryFailed: the exact reset (PENDING, no error, attempts and crash
//     count zero, due at now, no finish time, no owner), ErrInvalidState for
//     a job that is not FAILED (unchanged), ErrNotFound for an unknown id.
//   - Cancel: PENDING becomes CANCELLED and is never claimed; any other state
//     wraps spi.ErrInvalidState (unchanged); unknown ids spi.ErrNotFound.
//   - Recovery: with synthetic heartbeats, a fresh node keeps its jobs; a
//     heartbeat strictly older than now − grace makes its RUNNING jobs (and
//     only those) orphans, as does a missing node row or naming the node in
//     RecoverParams.Nodes; orphans go back to PENDING due at now with the
//     crash count + 1, no owner and the claim sequence advanced, and the
//     node row is deleted; with a budget of 3 the fourth crash fails the job
//     with RecoverParams.LastError, a budget of 0 fails the first; the report
//     names job, task, node, new state and crash count; DeregisterNode
//     removes the row.
//   - Corrupt (only with [Harness.Corrupt]): GetJob of a damaged row returns
//     an error wrapping spi.ErrCorruptJob that names the job id; ListJobs
//     over it returns an error wrapping spi.ErrCorruptJob rather than leaving
//     the job out (the contract promises the jobs of the page, and skipping
//     would hide a job, for example from the dead-letter view, without a
//     trace); other jobs and other statuses are unaffected; ClaimJobs does
//     not panic (and if it fails, wraps spi.ErrCorruptJob).
//   - Close: a second Close is harmless (nil or spi.ErrClosed); GetJob,
//     InsertJobs and ClaimJobs after Close wrap spi.ErrClosed.
//
// # The kit's own tests
//
// The kit is tested like a store would be: its tests run it against a small
// reference store, which must pass, and against dozens of variants of that
// store, each with one deliberate defect (a completion that ignores the claim
// sequence, a claim that ignores priority or aging, a claim that is not
// atomic, a recovery that ignores the crash budget, ...), each of which must
// fail the cases meant to catch it.
package tck
