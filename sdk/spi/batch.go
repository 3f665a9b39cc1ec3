package spi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// BatchOutcome is how a batch ended: SUCCEEDED when every child succeeded,
// FAILED when every child finished and some did not succeed, CANCELLED
// when it was cancelled. The empty outcome means the batch is open.
type BatchOutcome string

// The batch outcomes.
const (
	BatchSucceeded BatchOutcome = "SUCCEEDED"
	BatchFailed    BatchOutcome = "FAILED"
	BatchCancelled BatchOutcome = "CANCELLED"
)

// MaxBatchNameBytes is the longest batch name, in bytes, that every store
// keeps.
const MaxBatchNameBytes = 255

// BatchParam is the param that a batch's callback job carries: the id of
// its batch, so that the callback's body can read the batch's counts.
const BatchParam = "ratchet.batch"

// ErrBatchOffset reports a batch chunk written at an offset that is not
// the batch's persisted count: a chunk already written (a retry whose
// first try committed) or one that skips items. Nothing is written. It
// wraps ErrInvalidState.
var ErrBatchOffset = fmt.Errorf("%w: batch chunk offset is not the persisted count", ErrInvalidState)

// Batch is a batch as a store keeps it: many children submitted as one
// unit, possibly in chunks (a streaming batch), and the callbacks of its
// end. Its children are jobs whose WorkflowID is the batch's id, with no
// dependencies and no idempotency key; nothing on the batch changes when a
// child finishes (no counter row that every completion would write).
type Batch struct {
	ID        uuid.UUID
	Name      string // for people; may be empty
	CreatedAt time.Time
	// OnSuccess and OnFailure are the callback jobs inserted, in the same
	// atomic step as the batch's end, when it ends SUCCEEDED or FAILED
	// (none when it is cancelled). Each has its id set by the creator, so
	// that a store whose end takes several steps inserts it once. Nil for
	// none.
	OnSuccess, OnFailure *Job

	// Persisted is the number of children written so far (the offset of
	// the next chunk), Sealed whether the last chunk was written (no more
	// children come), Outcome empty while the batch is open, FinishedAt
	// when it ended and CallbackID the callback inserted then (zero for
	// none). Reads fill them; a create ignores them.
	Persisted  int64
	Sealed     bool
	Outcome    BatchOutcome
	FinishedAt time.Time
	CallbackID uuid.UUID
}

// BatchChunk is one write of a batch's children.
type BatchChunk struct {
	// BatchID is the batch written to.
	BatchID uuid.UUID
	// Create, when set, creates the batch (whose ID is BatchID) in the same
	// atomic step as this chunk, whose Offset must be 0.
	Create *Batch
	// Offset must equal the batch's persisted count (ErrBatchOffset
	// otherwise); the count becomes Offset + len(Children).
	Offset int64
	// Children are the jobs written, each with WorkflowID BatchID.
	Children []*Job
	// Seal closes the batch: no chunk may follow, and the batch ends once
	// every child has finished.
	Seal bool
}

// FinishedBatch names a batch that FinishBatches ended.
type FinishedBatch struct {
	ID      uuid.UUID
	Name    string
	Outcome BatchOutcome
	// Callback is the callback job inserted, nil for none.
	Callback *Job
}

// BatchStore is implemented by stores that keep batches.
//
// Such a store also extends Store's methods: ArchiveJobs leaves the
// children of an open batch in place, so that the batch's end sees them
// all; a batch's children are listed with ListParams.WorkflowID.
type BatchStore interface {
	// AddBatchChunk writes a chunk of children (ValidateBatchChunk) and
	// advances the batch's persisted count, in one atomic step, and returns
	// the new count. Nothing is written when the batch is unknown (wraps
	// ErrNotFound), sealed or finished (wraps ErrInvalidState), created
	// again (wraps ErrInvalidState), or when the offset is not its count
	// (ErrBatchOffset).
	AddBatchChunk(ctx context.Context, c BatchChunk) (int64, error)
	// GetBatch returns the batch; an unknown id wraps ErrNotFound.
	GetBatch(ctx context.Context, id uuid.UUID) (*Batch, error)
	// CountBatch counts the batch's live children by status (archived
	// children are not counted: Persisted minus the sum). An unknown id
	// wraps ErrNotFound.
	CountBatch(ctx context.Context, id uuid.UUID) (map[Status]int, error)
	// CancelBatch ends an open batch CANCELLED at now (sealing it, so that
	// no chunk follows, and inserting no callback) and cancels its
	// unfinished children as CancelWorkflow does; on a batch already
	// cancelled it cancels the children again (a retry after a crash). It
	// returns how many children it cancelled. An unknown id wraps
	// ErrNotFound; a batch that ended otherwise wraps ErrInvalidState.
	CancelBatch(ctx context.Context, id uuid.UUID, now time.Time) (int, error)
	// FinishBatches ends, at now, up to limit sealed open batches whose
	// children have all finished: SUCCEEDED when all succeeded, FAILED
	// otherwise, inserting the matching callback. Each end is one write
	// guarded on the batch being still open, so a batch ends once however
	// many nodes call it at the same instant. It returns the batches it
	// ended.
	FinishBatches(ctx context.Context, now time.Time, limit int) ([]FinishedBatch, error)
}

// ValidateBatchChunk reports what no store may write of a chunk: a
// missing batch id, a create whose id differs or at an offset other than
// 0, a name over MaxBatchNameBytes, a callback without its id, a negative
// offset, or a child that is nil, of another batch (WorkflowID), has
// dependencies or dependents, or carries an idempotency key (a duplicate
// would not be a child).
func ValidateBatchChunk(c BatchChunk) error {
	switch {
	case c.BatchID == uuid.Nil:
		return errors.New("batch chunk without a batch id")
	case c.Offset < 0:
		return fmt.Errorf("batch %s: negative offset %d", c.BatchID, c.Offset)
	}
	if b := c.Create; b != nil {
		switch {
		case b.ID != c.BatchID:
			return fmt.Errorf("batch chunk of %s creates batch %s", c.BatchID, b.ID)
		case c.Offset != 0:
			return fmt.Errorf("batch %s: created with a chunk at offset %d, not 0", c.BatchID, c.Offset)
		case len(b.Name) > MaxBatchNameBytes:
			return fmt.Errorf("batch %s: name %.40q... is %d bytes, over the limit of %d", b.ID, b.Name, len(b.Name), MaxBatchNameBytes)
		}
		for _, cb := range []*Job{b.OnSuccess, b.OnFailure} {
			switch {
			case cb == nil:
			case cb.ID == uuid.Nil:
				return fmt.Errorf("batch %s: a callback job without an id", b.ID)
			case cb.WorkflowID != uuid.Nil || len(cb.Dependencies) > 0 || cb.Dependents > 0 || cb.Signal != nil:
				return fmt.Errorf("batch %s: callback job %s is part of a workflow or awaits a signal", b.ID, cb.ID)
			}
		}
	}
	for _, j := range c.Children {
		switch {
		case j == nil:
			return fmt.Errorf("batch %s: a nil child", c.BatchID)
		case j.WorkflowID != c.BatchID:
			return fmt.Errorf("batch %s: child %s belongs to %s", c.BatchID, j.ID, j.WorkflowID)
		case len(j.Dependencies) > 0 || j.Dependents > 0:
			return fmt.Errorf("batch %s: child %s has workflow dependencies", c.BatchID, j.ID)
		case j.IdempotencyKey != "":
			return fmt.Errorf("batch %s: child %s carries an idempotency key; batch children cannot", c.BatchID, j.ID)
		case j.Unique != nil:
			return fmt.Errorf("batch %s: child %s has a unique key; batch children cannot", c.BatchID, j.ID)
		case j.Sequence != nil:
			return fmt.Errorf("batch %s: child %s has a sequence key; batch children cannot", c.BatchID, j.ID)
		}
	}
	return nil
}

// BatchOutcomeOf is the outcome of a batch whose children all finished,
// from whether every one succeeded.
func BatchOutcomeOf(allSucceeded bool) BatchOutcome {
	if allSucceeded {
		return BatchSucceeded
	}
	return BatchFailed
}

// Callback returns the callback job of outcome o (nil for none).
func (b *Batch) Callback(o BatchOutcome) *Job {
	switch o {
	case BatchSucceeded:
		return b.OnSuccess
	case BatchFailed:
		return b.OnFailure
	}
	return nil
}

// Clone returns a deep copy of b.
func (b *Batch) Clone() *Batch {
	c := *b
	if b.OnSuccess != nil {
		c.OnSuccess = b.OnSuccess.Clone()
	}
	if b.OnFailure != nil {
		c.OnFailure = b.OnFailure.Clone()
	}
	return &c
}

// EncodeBatchCallback is the bytes a store keeps of a batch's callback job
// (nil for none), read back by DecodeBatchCallback: one encoding for every
// store.
func EncodeBatchCallback(j *Job) ([]byte, error) {
	if j == nil {
		return nil, nil
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("encode batch callback %s: %w", j.ID, err)
	}
	return b, nil
}

// DecodeBatchCallback reads what EncodeBatchCallback wrote; nil or empty
// bytes are no callback. Bytes that are not a callback wrap ErrCorruptJob.
func DecodeBatchCallback(b []byte) (*Job, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var j Job
	if err := json.Unmarshal(b, &j); err != nil || j.ID == uuid.Nil {
		return nil, fmt.Errorf("%w: batch callback: %v", ErrCorruptJob, err)
	}
	return &j, nil
}

// BatchCallbackJob is callback cb as a batch's end at now inserts it: a
// copy created at now and due at the later of its ScheduledAt and now.
func BatchCallbackJob(cb *Job, now time.Time) *Job {
	j := cb.Clone()
	j.CreatedAt = now
	if j.ScheduledAt.Before(now) {
		j.ScheduledAt = now
	}
	return j
}
