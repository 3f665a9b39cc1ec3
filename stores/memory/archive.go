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

var _ spi.JobArchiver = (*Store)(nil)

// archived is an archived job: the job with its properties, and its state.
type archived struct {
	job    *spi.Job
	states map[string]spi.VersionedState
}

// ArchiveJobs implements spi.JobArchiver.
func (s *Store) ArchiveJobs(_ context.Context, before time.Time, limit int) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	var moved []uuid.UUID
	for _, id := range s.order {
		if len(moved) >= limit {
			break
		}
		j := s.jobs[id]
		if j.Status.Terminal() && j.FinishedAt.Before(before) && !s.hasLiveDependents(j) && !s.inOpenBatch(j) {
			moved = append(moved, id)
		}
	}
	for _, id := range moved {
		j := s.jobs[id]
		a := archived{job: j.Clone(), states: map[string]spi.VersionedState{}}
		if p := s.props[id]; len(p) > 0 {
			a.job.Properties = p
		}
		for k, v := range s.states {
			if k.id == id {
				a.states[k.ns] = v
				delete(s.states, k)
			}
		}
		s.archive[id] = a
		s.unlink(j)
		delete(s.jobs, id)
		delete(s.props, id)
		if j.IdempotencyKey != "" && s.byKey[j.IdempotencyKey] == id {
			delete(s.byKey, j.IdempotencyKey)
		}
	}
	if len(moved) > 0 {
		gone := make(map[uuid.UUID]bool, len(moved))
		for _, id := range moved {
			gone[id] = true
		}
		s.order = slices.DeleteFunc(s.order, func(id uuid.UUID) bool { return gone[id] })
		s.arcIDs = append(s.arcIDs, moved...)
		slices.SortFunc(s.arcIDs, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	}
	return len(moved), nil
}

// GetArchivedJob implements spi.JobArchiver.
func (s *Store) GetArchivedJob(_ context.Context, id uuid.UUID) (*spi.Job, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	a, ok := s.archive[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s (not archived)", spi.ErrNotFound, id)
	}
	return a.job.Clone(), nil
}

// ListArchivedJobs implements spi.JobArchiver.
func (s *Store) ListArchivedJobs(_ context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return nil, uuid.Nil, err
	}
	defer s.mu.Unlock()
	return page(s.arcIDs, p, func(id uuid.UUID) *spi.Job { return s.archive[id].job }, func(j *spi.Job) bool {
		v, ok := j.Properties[p.PropertyKey]
		return p.Matches(j) && (p.PropertyKey == "" || (ok && v == p.PropertyValue))
	})
}
