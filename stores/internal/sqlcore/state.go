package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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

// StateRead implements spi.JobStateStore.GetState for the database/sql
// stores over the dialect's statement. A store embeds it (under a local
// alias) and fills it when it builds itself.
type StateRead struct {
	Gate *Gate
	DB   Querier
	// Fail wraps an error with the operation's name, as the store does.
	Fail func(op string, err error) error
	// SQL reads the namespace's (state_json, version) LEFT JOINed to the
	// job: no row means no job, a NULL version no state.
	SQL func(jobID uuid.UUID, namespace string) (string, []any)
}

// GetState returns the state of the job's namespace and whether it exists.
// It wraps spi.ErrNotFound for an unknown job. It implements
// [spi.JobStateStore].
func (r StateRead) GetState(ctx context.Context, jobID uuid.UUID, namespace string) (spi.VersionedState, bool, error) {
	done, err := r.Gate.Enter()
	if err != nil {
		return spi.VersionedState{}, false, err
	}
	defer done()
	var state []byte
	var version sql.NullInt64
	query, args := r.SQL(jobID, namespace)
	err = r.DB.QueryRowContext(ctx, query, args...).Scan(&state, &version)
	if errors.Is(err, sql.ErrNoRows) {
		return spi.VersionedState{}, false, r.Fail("get state", fmt.Errorf("%w: %s", spi.ErrNotFound, jobID))
	}
	if err != nil {
		return spi.VersionedState{}, false, r.Fail("get state of job "+jobID.String(), err)
	}
	if !version.Valid {
		return spi.VersionedState{}, false, nil
	}
	if len(state) == 0 {
		state = nil
	}
	return spi.VersionedState{JSON: state, Version: version.Int64}, true, nil
}
