package memory

import (
	"bytes"
	"context"
	"fmt"
	"maps"
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
	defer s.unlock()
	var moved []uuid.UUID
	for _, id := range s.order {
		if len(moved) >= limit {
			break
		}
		j := s.jobs[id]
		if (j.FinishedAt.Before(before) || s.bug("ArchiveJobs ignores the cutoff")) &&
			(s.leavable(j) || (s.bug("ArchiveJobs archives jobs that are not finished") && !j.Status.Terminal())) {
			moved = append(moved, id)
		}
	}
	for _, id := range moved {
		a := archived{job: s.jobs[id].Clone(), states: map[string]spi.VersionedState{}}
		if p := s.props[id]; len(p) > 0 && !s.bug("ArchiveJobs loses the properties") {
			a.job.Properties = p
		}
		for k, v := range s.states {
			if k.id == id {
				a.states[k.ns] = v
			}
		}
		s.archive[id] = a
	}
	if len(moved) > 0 {
		if !s.bug("ArchiveJobs copies without removing the live job") {
			s.removeLive(moved)
		}
		s.arcIDs = append(s.arcIDs, moved...)
		slices.SortFunc(s.arcIDs, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	}
	return len(moved), nil
}

// leavable reports whether finished job j may leave the live jobs
// (archived or deleted): none of its dependents is unfinished and it is
// not the child of an open batch. The caller holds s.mu.
func (s *Store) leavable(j *spi.Job) bool {
	return j.Status.Terminal() && !s.hasLiveDependents(j) && !s.inOpenBatch(j)
}

// removeLive takes the jobs of ids out of the live jobs with their
// dependencies, workflow membership, properties, states, key and wait.
// The caller holds s.mu.
func (s *Store) removeLive(ids []uuid.UUID) {
	gone := make(map[uuid.UUID]bool, len(ids))
	for _, id := range ids {
		j := s.jobs[id]
		s.unlink(j)
		delete(s.jobs, id)
		delete(s.props, id)
		delete(s.waits, id)
		if j.IdempotencyKey != "" && s.byKey[j.IdempotencyKey] == id {
			delete(s.byKey, j.IdempotencyKey)
		}
		s.releaseUnique(id)
		gone[id] = true
	}
	for k := range s.states {
		if gone[k.id] {
			delete(s.states, k)
		}
	}
	s.order = slices.DeleteFunc(s.order, func(id uuid.UUID) bool { return gone[id] })
}

// PurgeArchivedJobs implements spi.JobArchiver.
func (s *Store) PurgeArchivedJobs(_ context.Context, before time.Time, limit int) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.unlock()
	var old []*spi.Job
	for _, a := range s.archive {
		if a.job.FinishedAt.Before(before) || s.bug("PurgeArchivedJobs ignores the cutoff") {
			old = append(old, a.job)
		}
	}
	slices.SortFunc(old, func(a, b *spi.Job) int {
		if c := a.FinishedAt.Compare(b.FinishedAt); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	old = old[:min(len(old), max(limit, 1))]
	gone := make(map[uuid.UUID]bool, len(old))
	for _, j := range old {
		delete(s.archive, j.ID)
		delete(s.logs, j.ID)
		delete(s.attempts, j.ID)
		gone[j.ID] = true
	}
	s.arcIDs = slices.DeleteFunc(s.arcIDs, func(id uuid.UUID) bool { return gone[id] })
	if s.bug("PurgeArchivedJobs deletes live jobs") {
		var live []uuid.UUID
		for id, j := range s.jobs {
			if j.Status.Terminal() && j.FinishedAt.Before(before) {
				live = append(live, id)
			}
		}
		s.removeLive(live)
	}
	return len(old), nil
}

var _ spi.JobDeleter = (*Store)(nil)

// DeleteJobs implements spi.JobDeleter.
func (s *Store) DeleteJobs(_ context.Context, ids []uuid.UUID) ([]bool, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	out := make([]bool, len(ids))
	var del []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for i, id := range ids {
		if j, ok := s.jobs[id]; ok && (seen[id] || s.deletable(j)) {
			out[i] = true
			if !seen[id] {
				del = append(del, id)
			}
			seen[id] = true
		}
	}
	keys := maps.Clone(s.byKey)
	if s.removeLive(del); s.bug("DeleteJobs keeps the idempotency key") {
		s.byKey = keys
	}
	for _, id := range del {
		delete(s.logs, id)
		delete(s.attempts, id)
	}
	return out, nil
}

// deletable reports whether DeleteJobs may delete j: as leavable.
func (s *Store) deletable(j *spi.Job) bool {
	return (j.Status.Terminal() || s.bug("DeleteJobs deletes unfinished jobs")) &&
		(!s.hasLiveDependents(j) || s.bug("DeleteJobs deletes a parent whose dependents have not finished")) && !s.inOpenBatch(j)
}

// GetArchivedJob implements spi.JobArchiver.
func (s *Store) GetArchivedJob(_ context.Context, id uuid.UUID) (*spi.Job, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
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
	defer s.unlock()
	return s.page(s.arcIDs, p, func(id uuid.UUID) *spi.Job { return s.archive[id].job }, func(j *spi.Job) bool {
		v, ok := j.Properties[p.PropertyKey]
		return p.Matches(j) && (p.PropertyKey == "" || (ok && v == p.PropertyValue))
	})
}
