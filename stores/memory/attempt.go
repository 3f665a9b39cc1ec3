package memory

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.AttemptStore = (*Store)(nil)

// JobAttempts implements spi.AttemptStore.
func (s *Store) JobAttempts(_ context.Context, id uuid.UUID) ([]spi.Attempt, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	return slices.Clone(s.attempts[id]), nil
}

// record writes the attempt record a, pruning the job's records it
// outdates (spi.KeepAttempts). The caller holds the lock.
func (s *Store) record(a spi.Attempt) {
	if s.bug("runs write no attempt record") {
		return
	}
	as := append(s.attempts[a.JobID], a)
	if !s.bug("attempt records are never pruned") {
		as = spi.KeepAttempts(as)
	}
	s.attempts[a.JobID] = as
}

// recordRun writes the record of the run of RUNNING job j, as it is
// before the transition that ends the run at now with outcome.
func (s *Store) recordRun(j *spi.Job, outcome spi.AttemptOutcome, now time.Time) {
	s.record(spi.RunRecord(j, outcome, now))
}
