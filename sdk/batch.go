package ratchet

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Batches: many children submitted as one unit, with progress counts and
// the callbacks of its end (the spec's batch and streamingBatch builders).
// A batch's children are ordinary jobs of the batch's id (Job.WorkflowID,
// ListOptions.WorkflowID); they run as any job does, retries and DLQ
// included. Nothing on the batch is written when a child finishes, so a
// batch of any size costs its children's completions nothing: its counts
// are read from the children (Client.Batch), and its end is found by the
// engine's batch finisher, which ends a sealed batch once every child has
// finished — SUCCEEDED when all succeeded, FAILED otherwise — and inserts
// the matching callback (BatchSpec.OnSuccess, OnFailure) in the same step,
// exactly once however many nodes look at the same instant. A child that
// finished FAILED and is retried from the DLQ before the batch ended runs
// again in the batch; one retried after the end does not reopen it.
//
// SubmitBatch writes a batch whose children are in memory in one atomic
// step. StreamBatch writes children from an iterator too large to hold, in
// chunks (BatchSpec.ChunkSize), each chunk and the batch's persisted count
// in one atomic step, and seals the batch when the iterator ends; only a
// sealed batch ends. When a chunk's write fails, StreamBatch reports it to
// BatchSpec.OnChunkFailure and returns the error; the batch stays open
// with the chunks written before. ResumeBatch returns how many items were
// persisted, and StreamBatch with the same BatchSpec.ID and the caller's
// iterator restarted at that item continues the batch with no duplicate
// child: a chunk written at an offset that is not the persisted count is
// refused (ErrBatchOffset), so two submitters cannot both write it.

// SurfaceBatchChild is a batch child's arguments, as the payload pipeline
// sees them: each child is measured against the payload limit on its own.
const SurfaceBatchChild Surface = "batch-child"

// DefaultBatchChunkSize is the number of children StreamBatch writes per
// chunk when BatchSpec.ChunkSize is zero.
const DefaultBatchChunkSize = 1000

// BatchOutcome is how a batch ended; empty while it is open.
type BatchOutcome = spi.BatchOutcome

// The batch outcomes.
const (
	BatchSucceeded = spi.BatchSucceeded
	BatchFailed    = spi.BatchFailed
	BatchCancelled = spi.BatchCancelled
)

// ErrBatchOffset reports a chunk of a streaming batch written at an offset
// that is not the batch's persisted count (a second submitter, or an
// iterator that did not restart where ResumeBatch said). It wraps
// ErrInvalidState.
var ErrBatchOffset = spi.ErrBatchOffset

// BatchSpec describes a batch. The zero value is a batch with a new id, no
// name, no callbacks, chunks of DefaultBatchChunkSize.
type BatchSpec struct {
	// ID names the batch: zero makes a new one. StreamBatch with the id of
	// an open batch continues it.
	ID uuid.UUID
	// Name is for people (Client.Batch, logs); at most 255 bytes.
	Name string
	// OnSuccess is called (a job submitted) when every child succeeded,
	// OnFailure when every child finished and some did not succeed; nil
	// for none. Neither is called for a cancelled batch. The callback's
	// body finds its batch with JobContext.BatchID.
	OnSuccess, OnFailure *Call
	// Options are the default options of every child, before the child's
	// own (Task.With's); InTx, idempotency keys, callbacks and AwaitSignal
	// are not for batch children.
	Options []SubmitOption
	// ChunkSize is how many children StreamBatch writes per chunk; zero
	// means DefaultBatchChunkSize. SubmitBatch writes one chunk.
	ChunkSize int
	// OnChunkFailure, when set, is told of a chunk whose write failed,
	// before StreamBatch returns the error (the spec's
	// BatchChunkFailureEvent).
	OnChunkFailure func(BatchChunkFailure)
}

// BatchChunkFailure reports a chunk of a streaming batch whose write
// failed: nothing of it was written, and the batch holds Offset children.
type BatchChunkFailure struct {
	BatchID uuid.UUID
	// Offset is the number of items persisted before the chunk, Size the
	// number of items in it.
	Offset int64
	Size   int
	Err    error
}

// batches returns the store's BatchStore, or ErrUnsupported.
func (c *Client) batches(op string) (spi.BatchStore, error) {
	bs := spi.CapabilitiesOf(c.store).Batches
	if bs == nil {
		return nil, fmt.Errorf("ratchet: %s: %w: store %T keeps no batches", op, ErrUnsupported, c.store)
	}
	return bs, nil
}

// SubmitBatch writes a batch of calls as one unit, sealed, in one atomic
// step (all or nothing), and returns its id. Nothing is written when a
// call is invalid, a payload is over its limit (each child and callback is
// measured on its own), a task is unknown to a client with
// ClientOptions.Tasks, the id exists already, or the store keeps no
// batches (ErrUnsupported). An empty batch ends SUCCEEDED at the
// finisher's next pass.
func (c *Client) SubmitBatch(ctx context.Context, spec BatchSpec, calls []Call) (uuid.UUID, error) {
	bs, err := c.batches("submit batch")
	if err != nil {
		return uuid.Nil, err
	}
	b, err := c.newBatch(ctx, spec)
	if err != nil {
		return uuid.Nil, fmt.Errorf("ratchet: submit batch: %w", err)
	}
	w := batchWriter{c: c, bs: bs, spec: spec, id: b.ID, create: b}
	for _, call := range calls {
		if err := w.add(ctx, call); err != nil {
			return uuid.Nil, fmt.Errorf("ratchet: submit batch: %w", err)
		}
	}
	if _, err := w.flush(ctx, true); err != nil {
		return uuid.Nil, err
	}
	return b.ID, nil
}

// StreamBatch writes a batch from items, chunk by chunk, and seals it when
// items ends; it returns the batch's id and how many items it persisted in
// all. An item's error stops the stream with that error, the batch open
// with what was written before the item's chunk. With spec.ID naming an
// open batch it continues that batch at its persisted count: items must
// then begin at that item (see ResumeBatch), and spec's name and callbacks
// are the batch's own already (those given are ignored). Memory stays
// flat: one chunk of jobs is held at a time.
func (c *Client) StreamBatch(ctx context.Context, spec BatchSpec, items iter.Seq2[Call, error]) (uuid.UUID, int64, error) {
	fail := func(id uuid.UUID, n int64, err error) (uuid.UUID, int64, error) {
		return id, n, fmt.Errorf("ratchet: stream batch %s: %w", id, err)
	}
	bs, err := c.batches("stream batch")
	if err != nil {
		return uuid.Nil, 0, err
	}
	w := batchWriter{c: c, bs: bs, spec: spec, id: spec.ID}
	continued := false
	if spec.ID != uuid.Nil {
		b, err := bs.GetBatch(ctx, spec.ID)
		switch {
		case errors.Is(err, spi.ErrNotFound):
		case err != nil:
			return fail(spec.ID, 0, err)
		case b.Sealed || b.Outcome != "":
			return fail(spec.ID, b.Persisted, fmt.Errorf("%w: the batch is sealed (%d items); it takes no more", ErrInvalidState, b.Persisted))
		default:
			w.offset, continued = b.Persisted, true
		}
	}
	if !continued {
		// A new batch: create it at once, empty, so that ResumeBatch
		// finds it even if the first chunk never lands.
		b, err := c.newBatch(ctx, spec)
		if err != nil {
			return fail(spec.ID, 0, err)
		}
		w.id, w.create = b.ID, b
		if _, err := w.flush(ctx, false); err != nil {
			return w.id, 0, err
		}
	}
	size := spec.ChunkSize
	if size <= 0 {
		size = DefaultBatchChunkSize
	}
	for call, err := range items {
		if err != nil {
			return fail(w.id, w.offset, fmt.Errorf("item %d: %w", w.offset+int64(len(w.jobs)), err))
		}
		if err := w.add(ctx, call); err != nil {
			return fail(w.id, w.offset, err)
		}
		if len(w.jobs) >= size {
			if _, err := w.flush(ctx, false); err != nil {
				return w.id, w.offset, err
			}
		}
	}
	if _, err := w.flush(ctx, true); err != nil {
		return w.id, w.offset, err
	}
	return w.id, w.offset, nil
}

// ChannelCalls adapts a channel of calls to StreamBatch's items: the
// stream takes calls until ch is closed, then asks failed (when not nil)
// whether the producer stopped on an error. An error stops the stream
// with it, the batch open with what was written (resume it, or cancel
// it); nil ends the items, and StreamBatch seals the batch.
func ChannelCalls(ch <-chan Call, failed func() error) iter.Seq2[Call, error] {
	return func(yield func(Call, error) bool) {
		for c := range ch {
			if !yield(c, nil) {
				return
			}
		}
		if failed != nil {
			if err := failed(); err != nil {
				yield(Call{}, err)
			}
		}
	}
}

// ResumeBatch returns how many items of open batch id are persisted: the
// item at which the caller's iterator restarts, to continue the batch with
// StreamBatch and the same id. An unknown batch wraps ErrNotFound; a sealed
// or ended one ErrInvalidState (it takes no more items).
func (c *Client) ResumeBatch(ctx context.Context, id uuid.UUID) (int64, error) {
	bs, err := c.batches("resume batch")
	if err != nil {
		return 0, err
	}
	b, err := bs.GetBatch(ctx, id)
	switch {
	case err != nil:
		return 0, fmt.Errorf("ratchet: resume batch %s: %w", id, err)
	case b.Sealed || b.Outcome != "":
		return b.Persisted, fmt.Errorf("ratchet: resume batch %s: %w: it is sealed with %d items", id, ErrInvalidState, b.Persisted)
	}
	return b.Persisted, nil
}

// BatchStatus is a batch and its progress.
type BatchStatus struct {
	ID        uuid.UUID
	Name      string
	CreatedAt time.Time
	// Persisted is the number of children written; Sealed whether the
	// last chunk was (no more come).
	Persisted int64
	Sealed    bool
	// Counts counts the live children by status; Archived is the number
	// of children archived since the batch ended (Persisted minus the
	// counts).
	Counts   map[Status]int
	Archived int64
	// Outcome is empty while the batch is open; FinishedAt when it ended,
	// CallbackID the callback job its end submitted (zero for none).
	Outcome    BatchOutcome
	FinishedAt time.Time
	CallbackID uuid.UUID
}

// Done reports whether the batch has ended.
func (s *BatchStatus) Done() bool { return s.Outcome != "" }

// Batch returns the status of batch id: its counts by status, read from
// its children. An unknown id wraps ErrNotFound.
func (c *Client) Batch(ctx context.Context, id uuid.UUID) (*BatchStatus, error) {
	bs, err := c.batches("batch")
	if err != nil {
		return nil, err
	}
	b, err := bs.GetBatch(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ratchet: batch %s: %w", id, err)
	}
	counts, err := bs.CountBatch(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ratchet: batch %s: %w", id, err)
	}
	return batchStatus(b, counts), nil
}

// batchStatus is the status of batch b whose live children counts are.
func batchStatus(b *spi.Batch, counts map[Status]int) *BatchStatus {
	if counts == nil {
		counts = map[Status]int{}
	}
	st := &BatchStatus{ID: b.ID, Name: b.Name, CreatedAt: b.CreatedAt, Persisted: b.Persisted, Sealed: b.Sealed,
		Counts: counts, Archived: b.Persisted, Outcome: b.Outcome, FinishedAt: b.FinishedAt, CallbackID: b.CallbackID}
	for _, n := range counts {
		st.Archived -= int64(n)
	}
	st.Archived = max(st.Archived, 0)
	return st
}

// CancelBatch cancels open batch id: it ends CANCELLED (sealed, so that a
// stream writing it stops with ErrInvalidState, and with no callback), and
// its unfinished children are cancelled (RUNNING ones fenced out, as
// CancelWorkflow does). It returns how many children it cancelled; again
// on a cancelled batch it cancels what a crash left. An unknown batch
// wraps ErrNotFound; one that ended SUCCEEDED or FAILED ErrInvalidState.
func (c *Client) CancelBatch(ctx context.Context, id uuid.UUID) (int, error) {
	bs, err := c.batches("cancel batch")
	if err != nil {
		return 0, err
	}
	n, err := bs.CancelBatch(ctx, id, c.now())
	if err != nil {
		return 0, fmt.Errorf("ratchet: cancel batch %s: %w", id, err)
	}
	if n > 0 {
		c.claimsChanged(ctx)
	}
	return n, nil
}

// BatchID returns the batch whose callback the running job is (its
// BatchSpec.OnSuccess or OnFailure), or the zero id. A batch's children
// find theirs in JobContext.WorkflowID.
func (j *JobContext) BatchID() uuid.UUID {
	id, err := uuid.Parse(j.params[spi.BatchParam])
	if err != nil {
		return uuid.Nil
	}
	return id
}

// newBatch builds the batch of spec (not written): its id, name and
// callback jobs, each through the pipeline.
func (c *Client) newBatch(ctx context.Context, spec BatchSpec) (*spi.Batch, error) {
	now := c.now()
	if len(spec.Name) > spi.MaxBatchNameBytes {
		return nil, invalidArg("batch name %.40q... is %d bytes, over the limit of %d", spec.Name, len(spec.Name), spi.MaxBatchNameBytes)
	}
	b := &spi.Batch{ID: spec.ID, Name: spec.Name, CreatedAt: now}
	if b.ID == uuid.Nil {
		b.ID = c.ids.next(now)
	}
	for _, cb := range []struct {
		call *Call
		dst  **spi.Job
		name string
	}{{spec.OnSuccess, &b.OnSuccess, "OnSuccess"}, {spec.OnFailure, &b.OnFailure, "OnFailure"}} {
		if cb.call == nil {
			continue
		}
		j, err := c.stepJob(ctx, *cb.call, SurfaceCallback, nil, now)
		if err != nil {
			return nil, fmt.Errorf("batch %s callback (task %q): %w", cb.name, cb.call.task, err)
		}
		j.Params = maps.Clone(j.Params)
		if j.Params == nil {
			j.Params = map[string]string{}
		}
		j.Params[spi.BatchParam] = b.ID.String()
		*cb.dst = j
	}
	return b, nil
}

// batchWriter builds a batch's children and writes them chunk by chunk.
type batchWriter struct {
	c      *Client
	bs     spi.BatchStore
	spec   BatchSpec
	id     uuid.UUID
	create *spi.Batch // the batch to create with the next chunk; nil once it exists
	offset int64      // items persisted
	jobs   []*spi.Job // the chunk being built
}

// add builds the child of call into the chunk.
func (w *batchWriter) add(ctx context.Context, call Call) error {
	j, err := w.c.stepJob(ctx, call, SurfaceBatchChild, w.spec.Options, w.c.now())
	if err != nil {
		return fmt.Errorf("item %d (task %q): %w", w.offset+int64(len(w.jobs)), call.task, err)
	}
	j.WorkflowID = w.id
	w.jobs = append(w.jobs, j)
	return nil
}

// flush writes the chunk built (sealing the batch when seal), through the
// insert middleware, wakes the nodes, and starts the next chunk.
func (w *batchWriter) flush(ctx context.Context, seal bool) (int64, error) {
	if len(w.jobs) == 0 && !seal && w.create == nil {
		return w.offset, nil
	}
	c := w.c
	chunk := spi.BatchChunk{BatchID: w.id, Create: w.create, Offset: w.offset, Seal: seal}
	var persisted int64
	insert := func(ctx context.Context, jobs []*Job) ([]spi.InsertResult, error) {
		chunk.Children = jobs
		n, err := w.bs.AddBatchChunk(ctx, chunk)
		if err != nil {
			return nil, err
		}
		persisted = n
		res := make([]spi.InsertResult, len(jobs))
		for i, j := range jobs {
			res[i] = spi.InsertResult{ID: j.ID}
		}
		return res, nil
	}
	if len(c.inserts) > 0 {
		insert = ChainInsert(insert, c.inserts...)
	}
	if _, err := insert(ctx, w.jobs); err != nil {
		err = fmt.Errorf("ratchet: batch %s: chunk at item %d (%d items): %w", w.id, w.offset, len(w.jobs), err)
		if w.spec.OnChunkFailure != nil {
			w.spec.OnChunkFailure(BatchChunkFailure{BatchID: w.id, Offset: w.offset, Size: len(w.jobs), Err: err})
		}
		return w.offset, err
	}
	top, wrote := PriorityLowest, len(w.jobs) > 0
	for _, j := range w.jobs {
		top = max(top, j.Priority)
	}
	w.offset, w.create = persisted, nil
	clear(w.jobs)
	w.jobs = w.jobs[:0]
	if wrote && c.notifier != nil {
		c.wake(top, nil, false)
	}
	return persisted, nil
}
