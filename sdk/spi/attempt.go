package spi

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// AttemptOutcome is how one run of a job ended, named as the engine's
// event kinds where one exists.
type AttemptOutcome string

// The outcomes of a run. A failed run may have been retried; the job's
// status says whether it was the last.
const (
	// AttemptSucceeded: the body returned nil; the job SUCCEEDED.
	AttemptSucceeded AttemptOutcome = "succeeded"
	// AttemptFailed: the body returned an error (retried or not).
	AttemptFailed AttemptOutcome = "failed"
	// AttemptTimedOut: the run went past its run timeout (ErrTimeout).
	AttemptTimedOut AttemptOutcome = "timed-out"
	// AttemptSnoozed: the body snoozed (ratchet.Snooze, ratchet.Sleep).
	AttemptSnoozed AttemptOutcome = "snoozed"
	// AttemptWaiting: the body waits for a signal (ratchet.WaitSignal);
	// the job is WAITING.
	AttemptWaiting AttemptOutcome = "waiting"
	// AttemptCancelled: the job was cancelled while the run went on.
	AttemptCancelled AttemptOutcome = "cancelled"
	// AttemptCrashed: the run's node died; orphan recovery took the job
	// back (a redelivery, or a failure past the crash budget).
	AttemptCrashed AttemptOutcome = "crashed"
	// AttemptReleased: the run's node stopped before it ended and gave
	// the job back.
	AttemptReleased AttemptOutcome = "released"
	// AttemptExpired: the job was claimed after its start-by deadline;
	// its body did not run (ErrExpired).
	AttemptExpired AttemptOutcome = "expired"
)

// AttemptsKept is how many runs of a job keep their records: the records
// of the runs whose claim sequence is AttemptsKept or more below the
// newest recorded one are deleted when a record is written.
const AttemptsKept = 25

// Attempt is the record of one run of a job.
type Attempt struct {
	JobID uuid.UUID
	// ClaimSeq is the run's claim (Job.ClaimSeq while it ran): the
	// record's key, ascending from run to run.
	ClaimSeq int64
	// Node is the node the run ran on.
	Node string
	// StartedAt is when the run's claim was made; FinishedAt when the run
	// ended (zero for a run still going).
	StartedAt, FinishedAt time.Time
	// Outcome is how it ended; empty for a run still going.
	Outcome AttemptOutcome
	// Error is the run's sanitized error (the job's LastError then);
	// empty for a success, a snooze, a wait, a release or a cancel.
	Error string
}

// AttemptStore is implemented by stores that keep a record of every run
// of a job, outside the job's row.
//
// Such a store writes the records in the same atomic write as the
// transitions that end a run, the run's record (from the job's row: its
// claim sequence, owner and claim time) with them:
//
//   - CompleteJobs: a completion's Record, for every outcome but a
//     success;
//   - ReleaseJobs: AttemptReleased;
//   - RecoverOrphans: AttemptCrashed;
//   - CancelJob, CancelWorkflow, the cancel of a batch and a bulk cancel
//     of a RUNNING job: AttemptCancelled.
//
// A run that ends its job SUCCEEDED writes no record, so that the hot path
// pays nothing: the job's row (claim sequence, owner, claim and finish
// times) is its record, which AttemptsOf adds. Writing a record deletes
// the job's records of AttemptsKept or more claims before it. The records
// outlive an archive move, as the job logs do, and go with the job when it
// is deleted or purged.
type AttemptStore interface {
	// JobAttempts returns the stored records of job id's runs, in claim
	// sequence order: none for a job without any (unknown, or whose runs
	// all succeeded), not an error.
	JobAttempts(ctx context.Context, id uuid.UUID) ([]Attempt, error)
}

// Record is the attempt record that c writes beside its change, and
// whether it writes one: every completion of a run (Completion.Attempt
// set) but a success.
func (c Completion) Record() (Attempt, bool) {
	if c.Attempt == "" || c.Attempt == AttemptSucceeded {
		return Attempt{}, false
	}
	a := Attempt{JobID: c.JobID, ClaimSeq: c.ClaimSeq, Node: c.Node, StartedAt: c.StartedAt,
		FinishedAt: c.FinishedAt, Outcome: c.Attempt}
	if c.Outcome == OutcomeRetry || c.Outcome == OutcomeFailed {
		a.Error = c.LastError
	}
	return a, true
}

// RunRecord is the record of the run of j, a RUNNING job as read before
// the transition that ends its run at now with outcome (a release, a
// recovery, a cancel).
func RunRecord(j *Job, outcome AttemptOutcome, now time.Time) Attempt {
	return Attempt{JobID: j.ID, ClaimSeq: j.ClaimSeq, Node: j.OwnerNode, StartedAt: j.ClaimedAt,
		FinishedAt: now, Outcome: outcome}
}

// AttemptsPruned is the claim sequence at or below which a job's records
// are deleted when the record of claim seq is written (none below 1).
func AttemptsPruned(seq int64) int64 { return seq - AttemptsKept }

// KeepAttempts returns the records of one job, in claim order, without
// those that the newest one prunes (AttemptsPruned).
func KeepAttempts(as []Attempt) []Attempt {
	if len(as) == 0 {
		return as
	}
	cut := AttemptsPruned(as[len(as)-1].ClaimSeq)
	i := 0
	for i < len(as) && as[i].ClaimSeq <= cut {
		i++
	}
	return as[i:]
}

// AttemptsOf is the history of job j's runs: its stored records and the
// run its row records, a success (AttemptSucceeded) or a run still going
// (RUNNING: no outcome, no finish), unless a stored record has its claim
// already.
func AttemptsOf(j *Job, stored []Attempt) []Attempt {
	out := stored
	if j == nil || j.ClaimSeq == 0 || (len(stored) > 0 && stored[len(stored)-1].ClaimSeq >= j.ClaimSeq) {
		return out
	}
	switch j.Status {
	case StatusSucceeded:
		return append(out, Attempt{JobID: j.ID, ClaimSeq: j.ClaimSeq, Node: j.OwnerNode, StartedAt: j.ClaimedAt,
			FinishedAt: j.FinishedAt, Outcome: AttemptSucceeded})
	case StatusRunning:
		return append(out, Attempt{JobID: j.ID, ClaimSeq: j.ClaimSeq, Node: j.OwnerNode, StartedAt: j.ClaimedAt})
	}
	return out
}
