package memory

import (
	"bytes"
	"context"
	"slices"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var (
	_ spi.WorkflowLister = (*Store)(nil)
	_ spi.BatchLister    = (*Store)(nil)
)

// ListWorkflows implements spi.WorkflowLister. It scans every workflow:
// fine for tests and simulations.
func (s *Store) ListWorkflows(_ context.Context, p spi.SummaryParams) ([]spi.WorkflowSummary, uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return nil, uuid.Nil, err
	}
	defer s.unlock()
	var ids []uuid.UUID
	for id := range s.flows {
		if s.batches[id] != nil && !s.bug("ListWorkflows lists the batches too") {
			continue
		}
		ids = append(ids, id)
	}
	var out []spi.WorkflowSummary
	next := uuid.Nil
	for _, id := range s.newestFirst(ids, p.Before) {
		sum := spi.WorkflowSummary{ID: id, Counts: s.liveCounts(id)}
		if len(sum.Counts) == 0 {
			continue // every job archived or deleted
		}
		if len(out) == p.PageSize() {
			next = out[len(out)-1].ID
			break
		}
		var root *spi.Job
		for _, jid := range s.flows[id] {
			if j := s.jobs[jid]; j != nil && (root == nil || bytes.Compare(j.ID[:], root.ID[:]) < 0) {
				root = j
			}
		}
		sum.RootTask, sum.CreatedAt = root.TaskName, root.CreatedAt
		out = append(out, sum)
	}
	return out, next, nil
}

// ListBatches implements spi.BatchLister.
func (s *Store) ListBatches(_ context.Context, p spi.SummaryParams) ([]spi.BatchSummary, uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return nil, uuid.Nil, err
	}
	defer s.unlock()
	ids := make([]uuid.UUID, 0, len(s.batches))
	for id := range s.batches {
		ids = append(ids, id)
	}
	ids = s.newestFirst(ids, p.Before)
	var out []spi.BatchSummary
	next := uuid.Nil
	if len(ids) > p.PageSize() {
		ids, next = ids[:p.PageSize()], ids[p.PageSize()-1]
	}
	for _, id := range ids {
		counts := s.liveCounts(id)
		if s.bug("ListBatches counts the children as they were at creation") {
			counts = map[spi.Status]int{spi.StatusPending: int(s.batches[id].Persisted)}
		}
		out = append(out, spi.BatchSummary{Batch: s.batches[id].Clone(), Counts: counts})
	}
	return out, next, nil
}

// newestFirst sorts ids in descending order and drops those not below
// before (unless it is zero).
func (s *Store) newestFirst(ids []uuid.UUID, before uuid.UUID) []uuid.UUID {
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(b[:], a[:]) })
	if s.bug("ListWorkflows and ListBatches list oldest first") {
		slices.Reverse(ids)
	}
	if before == uuid.Nil {
		return ids
	}
	return slices.DeleteFunc(ids, func(id uuid.UUID) bool { return bytes.Compare(id[:], before[:]) >= 0 })
}

// liveCounts counts the live jobs of workflow (or batch) id by status.
func (s *Store) liveCounts(id uuid.UUID) map[spi.Status]int {
	out := map[spi.Status]int{}
	for _, jid := range s.flows[id] {
		if j := s.jobs[jid]; j != nil {
			out[j.Status]++
		}
	}
	return out
}
