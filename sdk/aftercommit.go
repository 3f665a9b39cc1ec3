package ratchet

import "sync"

// AfterCommitRegistrar defers an action until the application's transaction
// commits: the spec's AfterCommitRegistrar. A submission made with InTx and
// WithAfterCommit registers its wakeup with it, so the node that will run
// the job wakes when the transaction commits rather than at its next poll,
// and a rollback wakes nobody.
//
// Implement it over your transaction framework's own after-commit hook, or
// use AfterCommit where there is none.
type AfterCommitRegistrar interface {
	// RegisterAfterCommit arranges for action to run once the transaction
	// has committed, after the actions registered before it.
	RegisterAfterCommit(action func()) AfterCommitResult
}

// AfterCommitResult is the answer of RegisterAfterCommit, as in the spec.
type AfterCommitResult int

// The answers of RegisterAfterCommit.
const (
	// AfterCommitRegistered: the registrar owns the action and runs it
	// after the commit, in registration order.
	AfterCommitRegistered AfterCommitResult = iota + 1
	// AfterCommitNoTransaction: no transaction is active; the caller runs
	// the action at once.
	AfterCommitNoTransaction
	// AfterCommitRollbackOnly: the transaction will not commit; the action
	// is dropped.
	AfterCommitRollbackOnly
	// AfterCommitRegistrationFailed: the action could not be registered,
	// although the transaction may still commit. The client logs it: the
	// job then starts at the next poll.
	AfterCommitRegistrationFailed
)

// String names the result as the spec does.
func (r AfterCommitResult) String() string {
	switch r {
	case AfterCommitRegistered:
		return "REGISTERED"
	case AfterCommitNoTransaction:
		return "NO_ACTIVE_TRANSACTION"
	case AfterCommitRollbackOnly:
		return "ROLLBACK_ONLY"
	case AfterCommitRegistrationFailed:
		return "REGISTRATION_FAILED"
	}
	return "AfterCommitResult(?)"
}

// AfterCommit is an AfterCommitRegistrar for code that commits its own
// transactions: it collects the actions of the submissions made in the
// transaction, and Committed runs them once the commit has succeeded. After
// a rollback, drop it (or call Discard). The zero value is ready to use; it
// is safe for concurrent use.
//
//	var after ratchet.AfterCommit
//	_, err := task.Submit(ctx, client, args, ratchet.InTx(tx), ratchet.WithAfterCommit(&after))
//	...
//	if err := tx.Commit(); err != nil { ... }
//	after.Committed() // the job starts now, not at the next poll
type AfterCommit struct {
	mu      sync.Mutex
	actions []func()
	ended   bool
}

// RegisterAfterCommit adds action; after Committed or Discard it answers
// AfterCommitNoTransaction, so the caller runs the action itself.
func (a *AfterCommit) RegisterAfterCommit(action func()) AfterCommitResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended {
		return AfterCommitNoTransaction
	}
	a.actions = append(a.actions, action)
	return AfterCommitRegistered
}

// Committed runs the registered actions in registration order, once. Call
// it after the transaction committed.
func (a *AfterCommit) Committed() {
	for _, fn := range a.end() {
		fn()
	}
}

// Discard drops the registered actions without running them: the
// transaction rolled back.
func (a *AfterCommit) Discard() { a.end() }

func (a *AfterCommit) end() []func() {
	a.mu.Lock()
	defer a.mu.Unlock()
	fns := a.actions
	a.actions, a.ended = nil, true
	return fns
}
