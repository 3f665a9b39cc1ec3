package tck

import (
	"context"
	"slices"

	"github.com/google/uuid"
)

// The reference store's deletion of finished jobs.

// The defects of DeleteJobs the self-test plants.
const (
	bugDeleteRunning  bug = "DeleteJobs deletes unfinished jobs"
	bugDeleteParents  bug = "DeleteJobs deletes a parent whose dependents have not finished"
	bugDeleteKeepsKey bug = "DeleteJobs keeps the idempotency key"
)

// DeleteJobs implements spi.JobDeleter.
func (s *refStore) DeleteJobs(_ context.Context, ids []uuid.UUID) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	out := make([]bool, len(ids))
	gone := map[uuid.UUID]bool{}
	for i, id := range ids {
		r, ok := s.rows[id]
		if gone[id] {
			out[i] = true
			continue
		}
		if !ok {
			continue
		}
		j := r.job
		if !j.Status.Terminal() || s.liveDependentsLocked(id) || s.inOpenBatchLocked(j) {
			continue
		}
		out[i], gone[id] = true, true
		delete(s.deps, id)
		delete(s.rows, id)
		delete(s.props, id)
		delete(s.logs, id)
		if k := j.IdempotencyKey; k != "" && s.keys[k] == id {
			delete(s.keys, k)
		}
		for k := range s.states {
			if k.id == id {
				delete(s.states, k)
			}
		}
	}
	s.order = slices.DeleteFunc(s.order, func(o uuid.UUID) bool { return gone[o] })
	return out, nil
}
