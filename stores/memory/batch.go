package memory

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.BatchStore = (*Store)(nil)

// AddBatchChunk implements spi.BatchStore.
func (s *Store) AddBatchChunk(_ context.Context, c spi.BatchChunk) (int64, error) {
	if err := spi.ValidateBatchChunk(c); err != nil && !s.bug("AddBatchChunk writes bad chunks") {
		return 0, fmt.Errorf("memory: batch chunk: %w", err)
	}
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.unlock()
	b := s.batches[c.BatchID]
	switch {
	case c.Create != nil && b != nil:
		return 0, fmt.Errorf("memory: batch %s: %w: it exists already", c.BatchID, spi.ErrInvalidState)
	case c.Create == nil && b == nil:
		return 0, fmt.Errorf("memory: batch %s: %w", c.BatchID, spi.ErrNotFound)
	case b != nil && (b.Sealed || b.Outcome != ""):
		return 0, fmt.Errorf("memory: batch %s: %w: it is sealed", c.BatchID, spi.ErrInvalidState)
	case b != nil && c.Offset != b.Persisted && !s.bug("AddBatchChunk ignores the offset"):
		return 0, fmt.Errorf("memory: batch %s at offset %d, persisted %d: %w", c.BatchID, c.Offset, b.Persisted, spi.ErrBatchOffset)
	}
	if s.bug("AddBatchChunk writes bad chunks") {
		s.writeLocked(c.Children)
	} else if _, err := s.insertLocked(c.Children); err != nil {
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

// GetBatch implements spi.BatchStore.
func (s *Store) GetBatch(_ context.Context, id uuid.UUID) (*spi.Batch, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	b := s.batches[id]
	if b == nil {
		return nil, fmt.Errorf("memory: batch %s: %w", id, spi.ErrNotFound)
	}
	return b.Clone(), nil
}

// CountBatch implements spi.BatchStore.
func (s *Store) CountBatch(_ context.Context, id uuid.UUID) (map[spi.Status]int, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	if s.batches[id] == nil {
		return nil, fmt.Errorf("memory: batch %s: %w", id, spi.ErrNotFound)
	}
	out := map[spi.Status]int{}
	for _, jid := range s.flows[id] {
		if j := s.jobs[jid]; j != nil {
			out[j.Status]++
		}
	}
	return out, nil
}

// CancelBatch implements spi.BatchStore.
func (s *Store) CancelBatch(_ context.Context, id uuid.UUID, now time.Time) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.unlock()
	b := s.batches[id]
	switch {
	case b == nil:
		return 0, fmt.Errorf("memory: cancel batch %s: %w", id, spi.ErrNotFound)
	case b.Outcome != "" && b.Outcome != spi.BatchCancelled:
		return 0, fmt.Errorf("memory: cancel batch %s: %w: it ended %s", id, spi.ErrInvalidState, b.Outcome)
	case b.Outcome == "":
		b.Outcome, b.FinishedAt, b.Sealed = spi.BatchCancelled, now, true
	}
	if s.bug("CancelBatch leaves the children running") {
		return 0, nil
	}
	return s.cancelWorkflow(id, now), nil
}

// FinishBatches implements spi.BatchStore.
func (s *Store) FinishBatches(_ context.Context, now time.Time, limit int) ([]spi.FinishedBatch, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	ids := make([]uuid.UUID, 0, len(s.batches))
	for id, b := range s.batches {
		if (b.Sealed || s.bug("FinishBatches ends batches that are not sealed")) && b.Outcome == "" {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	var out []spi.FinishedBatch
	for _, id := range ids {
		if len(out) >= limit {
			break
		}
		done, ok := true, true
		for _, jid := range s.flows[id] {
			j := s.jobs[jid]
			if j == nil {
				continue
			}
			done = done && j.Status.Terminal()
			ok = ok && (j.Status == spi.StatusSucceeded || s.bug("FinishBatches ends every batch SUCCEEDED"))
		}
		if !done {
			continue
		}
		b := s.batches[id]
		if s.bug("FinishBatches checks and ends in two steps") {
			s.pause()
		}
		fb := spi.FinishedBatch{ID: id, Name: b.Name, Outcome: spi.BatchOutcomeOf(ok)}
		if cb := b.Callback(fb.Outcome); cb != nil {
			cb = spi.BatchCallbackJob(cb, now)
			if _, err := s.insertLocked([]*spi.Job{cb}); err != nil {
				return out, fmt.Errorf("memory: finish batch %s: %w", id, err)
			}
			fb.Callback, b.CallbackID = cb, cb.ID
		}
		b.Outcome, b.FinishedAt = fb.Outcome, now
		out = append(out, fb)
	}
	return out, nil
}

// inOpenBatch reports whether j is a child of a batch that has not ended:
// the archive leaves it in place.
func (s *Store) inOpenBatch(j *spi.Job) bool {
	b := s.batches[j.WorkflowID]
	return b != nil && b.Outcome == "" && !s.bug("ArchiveJobs archives the children of open batches")
}
