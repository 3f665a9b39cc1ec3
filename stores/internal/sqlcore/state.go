package sqlcore

import (
	"context"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// StateWrite is one write of spi.JobStateStore: an init (Init, creating
// version 0) or a compare-and-set update of version Expected, fenced by the
// claim sequence *Fence (the job must be RUNNING with it) unless Fence is
// nil. State is never nil.
type StateWrite struct {
	JobID     uuid.UUID
	Namespace string
	State     []byte
	Expected  int64
	Init      bool
	Fence     *int64
}

// StateMethods implements the four write methods of spi.JobStateStore over
// one function that applies a StateWrite, so every store documents and
// shapes them once. A store embeds it (under a local alias, so the field
// stays unexported) and sets Apply when it builds itself.
type StateMethods struct {
	Apply func(ctx context.Context, w StateWrite) (spi.StateWriteResult, error)
}

func (m StateMethods) write(ctx context.Context, w StateWrite) (spi.StateWriteResult, error) {
	if w.State == nil {
		w.State = []byte{}
	}
	return m.Apply(ctx, w)
}

// InitState creates the namespace's state at version 0 while the job is
// RUNNING with claimSeq: StateSuperseded otherwise, StateVersionConflict
// when the state exists. It implements [spi.JobStateStore].
func (m StateMethods) InitState(ctx context.Context, jobID uuid.UUID, namespace string, state []byte, claimSeq int64) (spi.StateWriteResult, error) {
	return m.write(ctx, StateWrite{JobID: jobID, Namespace: namespace, State: state, Init: true, Fence: &claimSeq})
}

// UpdateState replaces the namespace's state and increments its version
// when the version is expectedVersion and the job is RUNNING with claimSeq:
// StateSuperseded when the fence fails, StateVersionConflict when the
// version differs or the state does not exist. It implements
// [spi.JobStateStore].
func (m StateMethods) UpdateState(ctx context.Context, jobID uuid.UUID, namespace string, state []byte, expectedVersion, claimSeq int64) (spi.StateWriteResult, error) {
	return m.write(ctx, StateWrite{JobID: jobID, Namespace: namespace, State: state, Expected: expectedVersion, Fence: &claimSeq})
}

// InitStateUnfenced is InitState for a writer that owns no claim. It
// implements [spi.JobStateStore].
func (m StateMethods) InitStateUnfenced(ctx context.Context, jobID uuid.UUID, namespace string, state []byte) (spi.StateWriteResult, error) {
	return m.write(ctx, StateWrite{JobID: jobID, Namespace: namespace, State: state, Init: true})
}

// UpdateStateUnfenced is UpdateState for a writer that owns no claim. It
// implements [spi.JobStateStore].
func (m StateMethods) UpdateStateUnfenced(ctx context.Context, jobID uuid.UUID, namespace string, state []byte, expectedVersion int64) (spi.StateWriteResult, error) {
	return m.write(ctx, StateWrite{JobID: jobID, Namespace: namespace, State: state, Expected: expectedVersion})
}
