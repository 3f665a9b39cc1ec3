package spi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Allow is the set of terminal states of a parent in which a dependency
// lets its child run. The zero value means AllowSucceeded.
type Allow uint8

// The states a dependency may allow, and SkipUnlessAllowed.
const (
	AllowSucceeded Allow = 1 << iota
	AllowFailed
	AllowCancelled
	AllowSkipped
	// SkipUnlessAllowed makes a parent that ended in a state the
	// dependency does not allow skip the child (status SKIPPED) instead of
	// cancelling it: the rule of callbacks (an OnSuccess callback of a job
	// that failed is skipped, not cancelled).
	SkipUnlessAllowed
)

// allowBits are the bits of Allow that name states.
const allowBits = AllowSucceeded | AllowFailed | AllowCancelled | AllowSkipped

// Allows reports whether a parent that ended in status lets the child run.
func (a Allow) Allows(status Status) bool {
	if a&allowBits == 0 {
		a |= AllowSucceeded
	}
	switch status {
	case StatusSucceeded:
		return a&AllowSucceeded != 0
	case StatusFailed:
		return a&AllowFailed != 0
	case StatusCancelled:
		return a&AllowCancelled != 0
	case StatusSkipped:
		return a&AllowSkipped != 0
	}
	return false
}

// Dependency is one edge of a workflow: the job that carries it (the child)
// waits in BLOCKED until its parent has finished.
type Dependency struct {
	// ParentID is the job waited for. At insert it names a job earlier in
	// the same batch.
	ParentID uuid.UUID
	// Allow is the set of the parent's terminal states that let the child
	// run; zero means SUCCEEDED only.
	Allow Allow
	// Condition, when not empty, names a registered workflow condition
	// (a predicate over the parent's result) that must hold too; its
	// arguments are ConditionArgs, already through the payload pipeline.
	Condition     string
	ConditionArgs []byte
	// ParentStatus is the state the parent finished in, recorded in the
	// same atomic write as its finish; empty while it has not finished.
	// Reads fill it; inserts ignore it.
	ParentStatus Status
}

// DependencyCancelPrefix begins the last error of a job that the engine
// cancelled or skipped because of a dependency (see Decide):
// RetryFailedJob of the parent revives such jobs, and only those (not one
// cancelled by hand, nor one whose condition said no).
const DependencyCancelPrefix = "ratchet: dependency "

// Decision is what the engine does with a claimed job whose dependencies
// have all finished.
type Decision int

// The decisions of [Decide].
const (
	// DecideRun runs the job (after its conditions, see Decide).
	DecideRun Decision = iota + 1
	// DecideSkip finishes it SKIPPED.
	DecideSkip
	// DecideCancel finishes it CANCELLED.
	DecideCancel
)

// Decide is the one rule of what a job does once its dependencies have
// finished, from the states its parents finished in and what each
// dependency allows: a parent in an allowed state lets it run; one in a
// state not allowed cancels it when that state is FAILED or CANCELLED
// (unless the dependency has SkipUnlessAllowed), and skips it otherwise (a
// skip propagates). A cancel wins over a skip. reason names the first
// dependency that decided, for the job's last error. Conditions are the
// caller's to evaluate, after DecideRun. A dependency whose parent has not
// finished (no ParentStatus) cancels the job: the store released it too
// early, which Decide reports rather than run it. A fairness key's link
// passed by its parent's claim (TurnPassed) lets it run.
func Decide(deps []Dependency) (d Decision, reason string) {
	d = DecideRun
	for _, dep := range deps {
		st := dep.ParentStatus
		switch {
		case st == TurnPassed && dep.Allow&AllowTurn != 0: // a fair turn passed by its parent's claim
		case st == "" || !st.Terminal():
			return DecideCancel, fmt.Sprintf("%s%s had not finished (%q) when the job was released", DependencyCancelPrefix, dep.ParentID, st)
		case dep.Allow.Allows(st):
		case dep.Allow&SkipUnlessAllowed == 0 && (st == StatusFailed || st == StatusCancelled):
			return DecideCancel, fmt.Sprintf("%s%s ended %s", DependencyCancelPrefix, dep.ParentID, st)
		case d == DecideRun:
			d, reason = DecideSkip, fmt.Sprintf("%s%s ended %s", DependencyCancelPrefix, dep.ParentID, st)
		}
	}
	return d, reason
}

// CancelledByDependency reports whether lastError is the mark of a job that
// Decide cancelled (see DependencyCancelPrefix).
func CancelledByDependency(lastError string) bool {
	return strings.HasPrefix(lastError, DependencyCancelPrefix)
}

// WorkflowStore is implemented by stores that keep workflows: jobs that
// wait for other jobs (docs/architecture.md, "Workflows").
//
// Such a store also extends Store's methods:
//
//   - InsertJobs writes a job with Dependencies as BLOCKED, with its
//     dependencies, in the same atomic step as the batch; every parent is
//     a job earlier in the batch ([ValidateWorkflowBatch]), and each job's
//     Dependents is the number of jobs of the batch that depend on it.
//   - Every write that finishes a job with dependents (CompleteJobs with
//     HasDependents set, RecoverOrphans failing it, CancelJob) records its
//     terminal status on each of its dependencies and releases the
//     children whose last dependency that was (BLOCKED → PENDING, due at
//     the later of their due time and now), in the same atomic write.
//   - CompleteJobs accepts OutcomeSkipped and OutcomeCancelled.
//   - CancelJob also cancels a BLOCKED job.
//   - RetryFailedJob revives the dependents that the job's failure
//     cancelled (see [DependencyCancelPrefix]), and theirs: back to
//     BLOCKED, waiting for the retried job again.
//   - ArchiveJobs leaves a job in place while one of its dependents has
//     not finished, so a child can always read its parents.
//
// A store whose database has no multi-document atomic write (MongoDB)
// does the release in steps that RepairWorkflows completes; it documents
// where it does so.
type WorkflowStore interface {
	// Dependencies returns the dependencies of job id in the order they
	// were inserted, with the status each parent finished in. A job
	// without dependencies has none; an unknown one wraps ErrNotFound.
	Dependencies(ctx context.Context, id uuid.UUID) ([]Dependency, error)
	// WorkflowJobs returns the live jobs of workflow id (not the archived
	// ones), in id order, up to limit after the cursor, and the cursor of
	// the next page (the zero UUID at the end).
	WorkflowJobs(ctx context.Context, id, after uuid.UUID, limit int) ([]*Job, uuid.UUID, error)
	// CancelWorkflow cancels every job of the workflow that has not
	// finished, at now: BLOCKED and PENDING ones, and RUNNING ones with
	// their claim sequence advanced and their owner cleared, so that the
	// owner's later writes are superseded. It returns how many it
	// cancelled.
	CancelWorkflow(ctx context.Context, id uuid.UUID, now time.Time) (int, error)
	// RepairWorkflows releases, at now, up to limit BLOCKED jobs whose
	// parents have all finished (a parent that no longer exists counts as
	// CANCELLED), recording the parents' states on their dependencies: a
	// release that a crash or a fault cut short. It returns how many it
	// released; a store whose release is atomic finds none.
	RepairWorkflows(ctx context.Context, now time.Time, limit int) (int, error)
}

// ValidateWorkflowBatch reports the first job of a batch whose workflow
// fields no store may write: a dependency on a job that is not earlier in
// the batch (so also a cycle) or on itself, the same parent twice, an
// unknown Allow bit, a condition's arguments without its name, a job with
// dependencies or dependents that carries an idempotency key (a duplicate
// would leave its dependents waiting for a job that was never written),
// Dependents that does not count the batch's dependencies on the job, or a
// job with dependencies and no workflow id.
func ValidateWorkflowBatch(jobs []*Job) error {
	pos := make(map[uuid.UUID]int, len(jobs))
	dependents := make(map[uuid.UUID]int)
	for i, j := range jobs {
		if j == nil {
			continue
		}
		seen := make(map[uuid.UUID]bool, len(j.Dependencies))
		for _, d := range j.Dependencies {
			_, ok := pos[d.ParentID]
			switch {
			case d.ParentID == j.ID:
				return fmt.Errorf("job %s depends on itself", j.ID)
			case !ok:
				return fmt.Errorf("job %s depends on %s, which is not a job earlier in the same insert", j.ID, d.ParentID)
			case seen[d.ParentID]:
				return fmt.Errorf("job %s depends on %s twice", j.ID, d.ParentID)
			case d.Allow&^(allowBits|SkipUnlessAllowed) != 0:
				return fmt.Errorf("job %s: dependency on %s has unknown allow bits %#x", j.ID, d.ParentID, uint8(d.Allow))
			case d.Condition == "" && len(d.ConditionArgs) > 0:
				return fmt.Errorf("job %s: dependency on %s has condition arguments but no condition", j.ID, d.ParentID)
			}
			seen[d.ParentID] = true
			dependents[d.ParentID]++
		}
		if len(j.Dependencies) > 0 && j.WorkflowID == uuid.Nil {
			return fmt.Errorf("job %s has dependencies but no workflow id", j.ID)
		}
		pos[j.ID] = i
	}
	for _, j := range jobs {
		if j == nil {
			continue
		}
		if n := dependents[j.ID]; n != j.Dependents {
			return fmt.Errorf("job %s: Dependents is %d, but %d jobs of the insert depend on it", j.ID, j.Dependents, n)
		}
		if j.IdempotencyKey != "" && (len(j.Dependencies) > 0 || j.Dependents > 0) {
			return fmt.Errorf("job %s is part of a workflow and carries an idempotency key; workflow jobs cannot", j.ID)
		}
	}
	return nil
}

// WorkflowBatch reports whether a batch has any workflow edge, so that a
// store can keep the plain insert's path for the others.
func WorkflowBatch(jobs []*Job) bool {
	for _, j := range jobs {
		if j != nil && (len(j.Dependencies) > 0 || j.Dependents > 0) {
			return true
		}
	}
	return false
}
