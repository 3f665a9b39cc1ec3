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
// cases are skipped with a message saying so. [Harness.Reopen] is optional
// too: it returns a second handle on the same data, as another process would
// open it (Open on the same file, or on the same DSN and schema); the wakeup
// case then listens on one handle while inserting through the other, and the
// concurrency cases of permits, leases and state spread their goroutines
// over both.
//
// The optional interfaces of package spi ([spi.ClaimChecker],
// [spi.LeaseStore], [spi.JobStateStore], [spi.JobPropertyStore],
// [spi.NodeTaskStore], [spi.WakeupListener]) are checked when the store returned by Open
// advertises them, as [spi.CapabilitiesOf] finds them (the lookup the engine
// and the client use: a store that wraps another reports the inner store's
// through [spi.CapabilityReporter]); otherwise their cases are skipped with a
// message naming the interface. Tag filters and resource permits are part of
// [spi.Store.ClaimJobs] and always checked.
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
//     jobs; GetJob of an unknown id wraps spi.ErrNotFound; a batch with a
//     nil job, the zero id, a priority out of range or a resource limit
//     below 1 fails and writes nothing of the batch. Fields that only
//     transitions set (attempts, crash count, claim sequence, owner, claim
//     and finish times, error, result) are checked by the later groups.
//   - Idempotency: an existing key returns the existing id with Duplicate
//     and writes nothing, across calls, inside one batch and for a finished
//     job; jobs without a key never clash; eight writers (on two handles
//     with Harness.Reopen) racing on one key write one job, and all get its
//     id.
//   - List: ordering by id whatever the insertion order, status filter,
//     paging with the returned cursor (25 jobs in pages of 10 give 10, 10, 5
//     and a zero cursor at the end; with a status filter the filter applies
//     before the limit), an exclusive After cursor, Limit, the default
//     of 100 for a limit of zero or less, and the task and creation-range
//     filters (From inclusive, Before exclusive) combined with the status
//     and the cursor (Properties checks the property filter).
//   - Count ([spi.JobCounter]): the count of a listing's filters from a
//     cursor on, stopping at its limit.
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
//     finalized at most once. A batch sent again after it applied (its
//     answer lost) reports each completion whose job already shows exactly
//     what it writes as applied, and changes nothing; a retry replayed after
//     the job was claimed again is superseded. A batch of 300 completions of every
//     outcome, stale ones among them, in reverse id order, applies exactly
//     the current ones; a batch with an unknown outcome fails and writes
//     nothing; empty batches return empty results.
//   - Complete: SUCCEEDED stores result, result type and FinishedAt and keeps
//     the attempt count; RETRY leaves the job PENDING at RetryAt with the
//     attempt count and error, no owner and no finish time, claimable again
//     at RetryAt with the next claim sequence; FAILED stores attempts, error
//     and FinishedAt and is never claimed. A completion does not change the
//     claim sequence (only claims, releases and recoveries advance it).
//   - Release: PENDING due at now, attempts and crash count unchanged, no
//     owner, claim sequence advanced so the old owner is fenced out.
//   - Snooze: a snooze leaves the job PENDING at RetryAt with its snooze
//     count written and its attempts and error as they were, no owner;
//     the claim carries the count; a replay counts as applied; a batch
//     mixing snoozes with other outcomes writes each its own; a
//     dead-letter retry resets the count.
//   - RetryFailed: the exact reset (PENDING, no error, attempts, crash
//     and snooze counts zero, due at now, no finish time, no owner), ErrInvalidState for
//     a job that is not FAILED (unchanged), ErrNotFound for an unknown id.
//   - Cancel: PENDING becomes CANCELLED and is never claimed; any other state
//     wraps spi.ErrInvalidState (unchanged); unknown ids spi.ErrNotFound.
//   - Recovery: with synthetic heartbeats, a fresh node keeps its jobs; a
//     heartbeat strictly older than now − grace makes its RUNNING jobs (and
//     only those) orphans, as does a missing node row or naming the node in
//     RecoverParams.Nodes; orphans go back to PENDING due at now with the
//     crash count + 1, no owner and the claim sequence advanced, and the
//     node row is deleted; with a budget of 3 the fourth crash fails the job
//     with RecoverParams.LastError, a budget of 0 fails the first (FAILED,
//     FinishedAt = now, no owner, attempts kept, claim sequence advanced);
//     the report names job, task, node, new state and crash count and is
//     ordered by job id; the rows of stale nodes are deleted even when they
//     run nothing, and those of the nodes named in RecoverParams.Nodes
//     however fresh; DeregisterNode removes the row.
//   - Tags: ClaimParams.Tags with All, Any and None, alone and combined
//   - NodeTasks: the tasks a node records with its heartbeat (replaced at
//     each, dropped with the node), the node's report (spi.NodeReportStore:
//     version, concurrency, running jobs, start time and breakers round-trip,
//     replaced by the next report, kept by a plain heartbeat, dropped with
//     the node), LiveNodes' boundary, and the pending jobs per task that
//     PendingTasks counts
//   - Tasks: ClaimParams.Tasks (a node of a mixed fleet claims only the jobs
//     of its tasks, in the contract's order, unblocked by other tasks' jobs)
//     (every subset of four tags against six filters, [spi.TagFilter.Match]
//     as the oracle); untagged jobs pass None and the zero filter and fail
//     All and Any; tags match whole and exactly (no case folding, substrings,
//     LIKE wildcards or list separators); jobs failing the filter are
//     skipped, not blocking: 30 old CRITICAL jobs failing it and 5 LOW jobs
//     passing it, limit 5, give the 5 LOW jobs; among the jobs passing the
//     filter the claim order is the contract's, aging included.
//   - Permits: Resource and ResourceLimit round-trip; a job with a Resource
//     and a ResourceLimit below 1 is refused and nothing is written (not its
//     idempotency key, nor the other jobs of its batch); 10 due jobs of R
//     with limit 2 are claimed two at a time (the first two in the order),
//     the others staying PENDING; a permit is freed by exactly one job
//     leaving RUNNING through success, retry, failure, ReleaseJobs, recovery
//     to PENDING and recovery to FAILED; 50 jobs of a full resource on top
//     of the order do not hold back 5 plain jobs (nor inside one claim);
//     resources are independent; 8 goroutines claiming and completing 200
//     jobs of R with limit 3 never have more than 3 running (counted from
//     their claims and completions) and claim every job exactly once.
//   - ClaimCheck ([spi.ClaimChecker]): a current claim is true, in any
//     order and repeated; after success, retry, failure, release or
//     recovery it is false; older, future and zero sequences and unknown
//     jobs are false.
//   - Lease ([spi.LeaseStore]): a free lease is granted, a held one refused
//     to other owners; a renewal runs to renewal + ttl; a lease granted at
//     now for ttl is expired exactly at now + ttl (held 1 µs before) and
//     then taken over, the old owner refused; a release by another owner
//     does nothing, the owner's frees it at once; 8 owners racing for a
//     free lease at the same now: exactly one wins, ten times over.
//   - State ([spi.JobStateStore]): no state is ok = false; InitState by the
//     owner gives version 0, again VERSION_CONFLICT; UpdateState with the
//     current version increments it, with any other VERSION_CONFLICT, and
//     of a namespace never initialized VERSION_CONFLICT; fenced writes with
//     another claim sequence, or on a job that is not RUNNING (even with
//     its last sequence), are SUPERSEDED, whatever the version, and change
//     nothing; the unfenced writes work in every state; namespaces and jobs
//     are independent; unknown jobs wrap spi.ErrNotFound; JSON comes back
//     byte for byte; 8 goroutines (half fenced, half unfenced) doing 25
//     read-modify-write increments each, retrying on VERSION_CONFLICT, end
//     at 200, version 200.
//   - Properties ([spi.JobPropertyStore]): put and get, non-ASCII; write-once
//     (the same value again is fine, another fails wrapping
//     spi.ErrPropertyExists and keeps the first), in any job state; prefix
//     queries return exactly the keys starting with the prefix (case and
//     %, _ taken literally); FindJobsByProperty matches the value exactly
//     and returns ids ascending, cut to the limit; unknown jobs wrap
//     spi.ErrNotFound.
//   - Wakeup ([spi.WakeupListener]): inserts made with
//     spi.InsertOptions{Source: node} reach a listener (on the Reopen
//     handle when there is one) as wakeups whose Source is node, for two
//     nodes in turn; ListenWakeups returns its context's error when the
//     context ends. A listener may start late, so the case inserts again
//     whenever no wakeup came within a growing wait (channels and timers,
//     no sleeps), for up to 20 s.
//   - Signals ([spi.SignalStore]): a job inserted with a Signal is WAITING
//     (listed by that status, never claimed) and reads its wait back;
//     DeliverSignal, DeliverSignalByKey (limit, id order, each job once),
//     ExpireSignals (deadline not after now, deadline order, limit) and
//     CancelJob each resolve a wait once, to PENDING due at now (CANCELLED
//     for a cancel) with the outcome, payload and time; a second
//     resolution, another signal's name or a job not WAITING wraps
//     spi.ErrInvalidState; racing resolutions on two handles resolve each
//     wait exactly once; bad waits (empty name, name or key over 255 bytes,
//     with dependencies) fail the whole insert.
//   - StatsSamples ([spi.StatsSampleStore]): one sample per minute (the
//     first of a minute kept, a second not, a time off UTC filed under its
//     minute in UTC), counts up to 2^40 read back whole, zero counts
//     optional; StatsSamples from since's minute, oldest first, cut to the
//     limit; a sample exactly spi.StatsSampleRetention older than the
//     latest recorded is kept, an older one dropped.
//   - Faults (only with [Harness.BreakConnections]): connections die before
//     claims and before completions; each call either succeeds (the store
//     retried) or returns an error, and after the caller's retries and a
//     recovery of the node's jobs every job is SUCCEEDED, none lost or
//     duplicated, with at most one completion reported applied per job.
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
// The kit is tested like a store would be: its tests run it against its
// reference store, memory.Store, which must pass, and against 168 variants
// of that store (guards in the memory store's code that only a build with
// the tag ratchet_bugs compiles), each with one deliberate defect (a completion that ignores the claim
// sequence, a claim that ignores priority or aging, a claim that is not
// atomic, a recovery that ignores the crash budget, a claim that ignores the
// tag filter or the permits or applies them after the limit, permits kept
// on retry, a lease that never expires, a state update that ignores the
// version, a fenced state write that ignores the claim sequence, properties
// that are not write-once, ...), each of which must fail the cases meant to
// catch it. The reference store implements every optional interface; the
// self-test also runs the kit with them hidden (their cases must skip) and
// without Harness.Reopen.
package tck
