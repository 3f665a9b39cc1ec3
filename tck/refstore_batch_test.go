package tck

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The reference store's batches: a map of batches; children are found by
// their WorkflowID with a scan.

// The defects of batches the self-test plants.
const (
	bugChunkIgnoresOffset       bug = "AddBatchChunk ignores the offset"
	bugFinishUnsealed           bug = "FinishBatches ends batches that are not sealed"
	bugFinishNotAtomic          bug = "FinishBatches checks and ends in two steps"
	bugFinishIgnoresFailure     bug = "FinishBatches ends every batch SUCCEEDED"
	bugCancelBatchKeepsChildren bug = "CancelBatch leaves the children running"
	bugArchiveOpenBatch         bug = "ArchiveJobs archives the children of open batches"
	bugChunkUnchecked           bug = "AddBatchChunk writes bad chunks"
)

// inOpenBatchLocked reports whether j is a child of a batch that has not
// ended.
func (s *refStore) inOpenBatchLocked(j *spi.Job) bool {
	b := s.batches[j.WorkflowID]
	return b != nil && b.Outcome == ""
}

// batchChildrenLocked returns the live children of batch id.
func (s *refStore) batchChildrenLocked(id uuid.UUID) []*spi.Job {
	var out []*spi.Job
	for _, jid := range s.order {
		if j := s.rows[jid].job; j.WorkflowID == id {
			out = append(out, j)
		}
	}
	return out
}

func (s *refStore) AddBatchChunk(_ context.Context, c spi.BatchChunk) (int64, error) {
	if err := spi.ValidateBatchChunk(c); err != nil {
		return 0, err
	}
	for _, j := range c.Children {
		if !j.Priority.Valid() {
			return 0, fmt.Errorf("job %s: priority %d out of range", j.ID, j.Priority)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	b := s.batches[c.BatchID]
	switch {
	case c.Create != nil && b != nil:
		return 0, fmt.Errorf("%w: batch %s exists", spi.ErrInvalidState, c.BatchID)
	case c.Create == nil && b == nil:
		return 0, fmt.Errorf("%w: batch %s", spi.ErrNotFound, c.BatchID)
	case b != nil && (b.Sealed || b.Outcome != ""):
		return 0, fmt.Errorf("%w: batch %s is sealed", spi.ErrInvalidState, c.BatchID)
	case b != nil && c.Offset != b.Persisted:
		return 0, fmt.Errorf("batch %s: %w", c.BatchID, spi.ErrBatchOffset)
	}
	if _, err := s.insertLocked(c.Children); err != nil {
		return 0, err
	}
	if b == nil {
		b = c.Create.Clone()
		b.Persisted, b.Sealed, b.Outcome, b.FinishedAt, b.CallbackID = 0, false, "", time.Time{}, uuid.Nil
		s.batches[b.ID] = b
	}
	b.Persisted += int64(len(c.Children))
	b.Sealed = c.Seal
	return b.Persisted, nil
}

func (s *refStore) GetBatch(_ context.Context, id uuid.UUID) (*spi.Batch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	b := s.batches[id]
	if b == nil {
		return nil, fmt.Errorf("%w: batch %s", spi.ErrNotFound, id)
	}
	return b.Clone(), nil
}

func (s *refStore) CountBatch(_ context.Context, id uuid.UUID) (map[spi.Status]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.batches[id] == nil {
		return nil, fmt.Errorf("%w: batch %s", spi.ErrNotFound, id)
	}
	out := map[spi.Status]int{}
	for _, j := range s.batchChildrenLocked(id) {
		out[j.Status]++
	}
	return out, nil
}

func (s *refStore) CancelBatch(_ context.Context, id uuid.UUID, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	b := s.batches[id]
	switch {
	case b == nil:
		return 0, fmt.Errorf("%w: batch %s", spi.ErrNotFound, id)
	case b.Outcome != "" && b.Outcome != spi.BatchCancelled:
		return 0, fmt.Errorf("%w: batch %s ended %s", spi.ErrInvalidState, id, b.Outcome)
	case b.Outcome == "":
		b.Outcome, b.FinishedAt, b.Sealed = spi.BatchCancelled, now, true
	}
	return s.cancelWorkflowLocked(id, now), nil
}

func (s *refStore) FinishBatches(_ context.Context, now time.Time, limit int) ([]spi.FinishedBatch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	var open []*spi.Batch
	for _, b := range s.batches {
		if b.Sealed && b.Outcome == "" {
			open = append(open, b)
		}
	}
	slices.SortFunc(open, func(a, b *spi.Batch) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	var out []spi.FinishedBatch
	for _, b := range open {
		if len(out) >= limit {
			break
		}
		done, ok := true, true
		for _, j := range s.batchChildrenLocked(b.ID) {
			done = done && j.Status.Terminal()
			ok = ok && j.Status == spi.StatusSucceeded
		}
		if !done {
			continue
		}
		if s.bug == bugFinishNotAtomic {
			// Checked; lets go of the lock while another finisher runs,
			// then ends the batch anyway.
			s.mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			s.mu.Lock()
		} else if b.Outcome != "" {
			continue
		}
		fb := spi.FinishedBatch{ID: b.ID, Name: b.Name, Outcome: spi.BatchOutcomeOf(ok)}
		if cb := b.Callback(fb.Outcome); cb != nil {
			cb = spi.BatchCallbackJob(cb, now)
			if _, ok := s.rows[cb.ID]; !ok || s.bug == bugFinishNotAtomic {
				if _, err := s.insertLocked([]*spi.Job{cb}); err != nil {
					return out, err
				}
			}
			fb.Callback, b.CallbackID = cb, cb.ID
		}
		b.Outcome, b.FinishedAt = fb.Outcome, now
		out = append(out, fb)
	}
	return out, nil
}

var _ spi.BatchStore = (*refStore)(nil)
