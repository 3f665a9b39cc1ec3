package memory

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.UniqueStore = (*Store)(nil)

// uniqueHold is a unique key's holder and the end of its window (zero for
// none).
type uniqueHold struct {
	id    uuid.UUID
	until time.Time
}

// admitUnique decides a new job's unique key, with s.mu held: when the
// key's holder is in one of the job's unique states, it returns the
// holder's id and dup; otherwise the job becomes the key's holder.
func (s *Store) admitUnique(j *spi.Job) (holder uuid.UUID, dup bool) {
	u := j.Unique
	if u == nil || s.bug("unique keys ignored") {
		return uuid.Nil, false
	}
	if h, ok := s.uniques[u.Key]; ok {
		until := h.until
		if s.bug("a debounce window never closes") {
			until = time.Time{}
		}
		if hj := s.jobs[h.id]; hj != nil && (u.Holds(j, hj.Status, until) || s.bug("a unique key is held in every state")) {
			if u.Replace && hj.Status == spi.StatusPending && !s.bug("a debounce keeps the first arguments") {
				hj.Payload = slices.Clone(j.Payload)
			}
			return h.id, true
		}
	}
	if s.bug("a uniqueness checked by a read") {
		s.uniqueRace()
	}
	s.hold(u.Key, j.ID, u.Until)
	return uuid.Nil, false
}

// hold makes job id the holder of key (a unique key, or a sequence's
// tail), with the end of its window until, with s.mu held.
func (s *Store) hold(key string, id uuid.UUID, until time.Time) {
	if old, ok := s.uniques[key]; ok {
		delete(s.uniqueOf, old.id)
	}
	s.uniques[key], s.uniqueOf[id] = uniqueHold{id, until}, key
}

// releaseUnique lets the deleted or archived job id go of its unique key,
// with s.mu held.
func (s *Store) releaseUnique(id uuid.UUID) {
	if k, ok := s.uniqueOf[id]; ok {
		delete(s.uniqueOf, id)
		if s.uniques[k].id == id {
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
	return s.uniques[key].id, nil
}
