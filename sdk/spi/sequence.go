package spi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Sequence puts a job in a FIFO sequence (a SequenceStore,
// ratchet.WithSequenceKey): the jobs of one key start one at a time, in
// the order their inserts committed, each once the one before it has
// finished.
//
// The store keeps a sequence as a chain of dependencies: in the insert's
// transaction it locks the key's row (the unique keys' table, under
// SequenceKey), reads the key's last job (its tail) with a lock on the
// tail's row, and, when the tail has not finished (or failed, with Hold),
// writes the new job BLOCKED with one dependency on the tail, whose Allow
// is SequenceAllow(Hold). The new job becomes the tail. From there the
// workflows' machinery (WorkflowStore) releases it: whatever finishes the
// tail (a completion, a cancel, a recovery, an expiry) releases its
// successor in the same write. Reads leave Job.Sequence nil.
type Sequence struct {
	// Key is the sequence's key, 1 to MaxUniqueKeyBytes bytes (the client
	// derives it from the caller's key: see SequenceKey).
	Key string
	// Hold makes a failure of the job's predecessor hold the job (BLOCKED)
	// until the predecessor is retried and finishes otherwise; without it
	// the job runs after its predecessor however that ended.
	Hold bool
	// Fair makes the key a fairness key's lane (ratchet.WithFairnessKey,
	// a FairShareStore): a job waits only while its predecessor is in the
	// line of due jobs (PENDING or BLOCKED), and its link, of Allow
	// TurnAllow, passes when the predecessor leaves the line: when a claim
	// takes it, in the claim's transaction or in a write right after it,
	// or when it finishes without running. The job let go by a claim at
	// now becomes PENDING, due at the later of its due time and now: it
	// joins the back of the line, so the keys of a task and priority take
	// the line's places in turn. Its key begins with FairKeyPrefix, and
	// Hold is false.
	Fair bool
}

// The Allow bits of a sequence's link (SequenceAllow). A store writes
// them; a workflow batch carries neither (ValidateWorkflowBatch).
const (
	// AllowSequence marks the link of a sequence: a cancel of the child
	// while it waits hands its successor to its own predecessor (see
	// SequenceStore), so that no later job passes an earlier one.
	AllowSequence Allow = 1 << 5
	// AllowTurn marks the link of a fairness key's lane (Sequence.Fair,
	// with AllowSequence): a claim of its parent lets the child go. A
	// store tells it by AllowTurn <= allow_mask < HoldOnFailure.
	AllowTurn Allow = 1 << 6
	// HoldOnFailure leaves the dependency waiting when its parent ends
	// FAILED: the finish records nothing on it, and the parent's retry
	// (RetryFailedJob) and next finish release the child. It is the
	// highest Allow bit: a store tells a held link by allow_mask >=
	// HoldOnFailure.
	HoldOnFailure Allow = 1 << 7
)

// TurnAllow is the Allow of a fairness key's link: any end of the parent
// lets the child run, and so does its claim.
const TurnAllow = allowBits | AllowSequence | AllowTurn

// TurnPassed is the ParentStatus a store records on a fairness key's link
// that a claim of its parent passed (the parent RUNNING).
const TurnPassed = StatusRunning

// Links reports whether a new job of q waits for the key's tail in state
// tail: for a sequence, while the tail has not finished, and after its
// failure with Hold (SequenceLinks); for a fairness key, while the tail
// is in the line (PENDING or BLOCKED).
func (q *Sequence) Links(tail Status) bool {
	if q.Fair {
		return tail == StatusPending || tail == StatusBlocked
	}
	return SequenceLinks(tail, q.Hold)
}

// Allow is the Allow of q's link: TurnAllow or SequenceAllow(Hold).
func (q *Sequence) Allow() Allow {
	if q.Fair {
		return TurnAllow
	}
	return SequenceAllow(q.Hold)
}

// SequenceAllow is the Allow of a sequence's link: any end of the parent
// lets the child run, except, with hold, a failure, which holds it.
func SequenceAllow(hold bool) Allow {
	a := allowBits | AllowSequence
	if hold {
		a |= HoldOnFailure
	}
	return a
}

// Holds reports whether a dependency with a's bits waits on past a parent
// that ended in status (a held failure).
func (a Allow) Holds(status Status) bool {
	return status == StatusFailed && a&HoldOnFailure != 0
}

// SequenceLinks reports whether a new job of a sequence, with hold, waits
// for the key's tail in state tail: while the tail has not finished, and
// after its failure with hold.
func SequenceLinks(tail Status, hold bool) bool {
	return !tail.Terminal() || (hold && tail == StatusFailed)
}

// SequenceKeyPrefix begins every Sequence.Key of a sequence, and
// FairKeyPrefix every one of a fairness key's lane, so that their rows in
// the unique keys' table never meet a unique key's or each other's.
const (
	SequenceKeyPrefix = "s1:"
	FairKeyPrefix     = "f1:"
)

// FairShareStore is implemented by a SequenceStore whose claims pass the
// turns of fairness keys (Sequence.Fair): every claim that moves a job to
// RUNNING lets the job's BLOCKED successor of a fairness key go, PENDING
// and due at the later of its due time and the claim's now, and records
// TurnPassed on their link, in the claim's transaction or in a write of
// its own right after it (until that write, the successor waits on its
// predecessor's finish, which releases it as any link).
type FairShareStore interface {
	SequenceStore
	// FairTurns reports whether the claims pass turns; a store that
	// wraps another says what the wrapped store does.
	FairTurns() bool
}

// SequenceStore is implemented by a store that keeps FIFO sequences
// (Job.Sequence) in its WorkflowStore: InsertJobs (and InsertJobsTx)
// link each new job of a key (not a duplicate of an idempotency key: it
// writes nothing) to the key's tail as Sequence says, taking
// turns with the other inserts of the key and with the tail's own writes
// (the tail's row lock), so that no finish slips between the read of the
// tail's state and the link. Each job of a sequence counts one dependent
// (Job.Dependents == 1) from its insert on, its successor present or to
// come, so that every write that finishes it releases the successor.
//
// CancelJob (and CancelJobs) of a job that waits on its sequence's link
// first hands its successor's link to its own predecessor, and the key's
// tail too when it was the tail: a cancelled job leaves the sequence
// without letting the next one pass the one before it.
type SequenceStore interface {
	// SequenceTail returns the last job of sequence key, whatever its
	// state, or the zero id when the key has none (a deleted or archived
	// tail lets go of it).
	SequenceTail(ctx context.Context, key string) (uuid.UUID, error)
}

// validateSequence checks the sequence a job is inserted with.
func validateSequence(j *Job) error {
	q := j.Sequence
	switch {
	case q == nil:
		return nil
	case q.Fair && q.Hold:
		return fmt.Errorf("job %s: a fairness key's job does not hold on failure", j.ID)
	case q.Fair && (!strings.HasPrefix(q.Key, FairKeyPrefix) || len(q.Key) == len(FairKeyPrefix)):
		return fmt.Errorf("job %s: fairness key %q does not begin with %q and a name", j.ID, q.Key, FairKeyPrefix)
	case !q.Fair && (!strings.HasPrefix(q.Key, SequenceKeyPrefix) || len(q.Key) == len(SequenceKeyPrefix)):
		return fmt.Errorf("job %s: sequence key %q does not begin with %q and a name", j.ID, q.Key, SequenceKeyPrefix)
	case len(q.Key) > MaxUniqueKeyBytes:
		return fmt.Errorf("job %s: sequence key of %d bytes, over the limit of %d", j.ID, len(q.Key), MaxUniqueKeyBytes)
	case j.Unique != nil:
		return fmt.Errorf("job %s has both a sequence key and a unique key; give one", j.ID)
	case len(j.Dependencies) > 0 || j.Dependents > 0 || j.WorkflowID != uuid.Nil:
		return fmt.Errorf("job %s is part of a workflow or a batch and has a sequence key; such jobs cannot", j.ID)
	case j.Signal != nil:
		return fmt.Errorf("job %s awaits a signal from its insert and has a sequence key; such jobs cannot", j.ID)
	}
	return nil
}

// SequenceOrder returns the indexes of the jobs of a batch that carry a
// sequence key, grouped by key in the order of their keys (the order in
// which an insert locks the keys' rows, as UniqueOrder's) and, within a
// key, in batch order (the order they join the sequence).
func SequenceOrder(jobs []*Job) []int {
	var out []int
	for i, j := range jobs {
		if j != nil && j.Sequence != nil {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return strings.Compare(jobs[a].Sequence.Key, jobs[b].Sequence.Key) })
	return out
}
