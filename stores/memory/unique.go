package memory

import (
	"context"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.UniqueStore = (*Store)(nil)

// admitUnique decides a new job's unique key, with s.mu held: when the
// key's holder is in one of the job's unique states, it returns the
// holder's id and dup; otherwise the job becomes the key's holder.
func (s *Store) admitUnique(j *spi.Job) (holder uuid.UUID, dup bool) {
	u := j.Unique
	if u == nil || s.bug("unique keys ignored") {
		return uuid.Nil, false
	}
	if h, ok := s.uniques[u.Key]; ok {
		if hj := s.jobs[h]; hj != nil && (u.Holds(hj.Status) || s.bug("a unique key is held in every state")) {
			return h, true
		}
	}
	if s.bug("a uniqueness checked by a read") {
		s.uniqueRace()
	}
	if old, ok := s.uniques[u.Key]; ok {
		delete(s.uniqueOf, old)
	}
	s.uniques[u.Key], s.uniqueOf[j.ID] = j.ID, u.Key
	return uuid.Nil, false
}

// releaseUnique lets the deleted or archived job id go of its unique key,
// with s.mu held.
func (s *Store) releaseUnique(id uuid.UUID) {
	if k, ok := s.uniqueOf[id]; ok {
		delete(s.uniqueOf, id)
		if s.uniques[k] == id {
			delete(s.uniques, k)
		}
	}
}

// UniqueHolder implements spi.UniqueStore.
func (s *Store) UniqueHolder(_ context.Context, key string) (uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return uuid.Nil, err
	}
	defer s.unlock()
	return s.uniques[key], nil
}
