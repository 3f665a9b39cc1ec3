package memory

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.FairShareStore = (*Store)(nil)

// sequence links a new job c of sequence q to the key's tail, with s.mu
// held, as the SQL stores do (spi.Sequence): c waits BLOCKED on the tail
// while the tail has not finished (or failed, when c holds on failure),
// and becomes the tail. The tails live in s.uniques, under their keys.
func (s *Store) sequence(c *spi.Job, q *spi.Sequence) {
	if q == nil {
		return
	}
	c.Dependents = 1
	tail := s.sequenceTail(q.Key)
	s.hold(q.Key, c.ID, time.Time{})
	if tail == nil {
		return
	}
	links := q.Links(tail.Status)
	if s.bug("a sequence lets a later job pass a running one") && tail.Status == spi.StatusRunning {
		links = false
	}
	if !links || (q.Fair && s.bug("a fairness key puts all its jobs in the line")) {
		return
	}
	s.deps[c.ID] = []spi.Dependency{{ParentID: tail.ID, Allow: q.Allow()}}
	s.children[tail.ID] = append(s.children[tail.ID], c.ID)
	c.DependencyCount, c.Waiting, c.Status = 1, 1, spi.StatusBlocked
}

// sequenceTail is the job the next job of sequence key waits on: the
// key's tail, or, for a tail cancelled while it waited, the job it waited
// on (and so on back); nil for none.
func (s *Store) sequenceTail(key string) *spi.Job {
	h, ok := s.uniques[key]
	if !ok {
		return nil
	}
	t := s.jobs[h.id]
	for t != nil && t.Status == spi.StatusCancelled {
		before := s.waitedOn(t.ID)
		if before == uuid.Nil {
			break
		}
		t = s.jobs[before]
	}
	return t
}

// waitedOn is the job that id waits on through its sequence's link, when
// that link has not finished; the zero id otherwise.
func (s *Store) waitedOn(id uuid.UUID) uuid.UUID {
	for _, d := range s.deps[id] {
		if d.Allow&spi.AllowSequence != 0 && d.ParentStatus == "" {
			return d.ParentID
		}
	}
	return uuid.Nil
}

// leaveSequence hands the successor of BLOCKED job c, about to be
// cancelled, to the job c waits on through its sequence's link (see
// spi.SequenceStore), with s.mu held; a successor that does not hold on
// its new predecessor's failure is released at once.
func (s *Store) leaveSequence(c *spi.Job, now time.Time) {
	before := s.waitedOn(c.ID)
	if c.Status != spi.StatusBlocked || before == uuid.Nil || s.bug("a cancelled job of a sequence releases its successor") {
		return
	}
	var kept []uuid.UUID
	for _, kid := range s.children[c.ID] {
		deps := s.deps[kid]
		moved := false
		for i := range deps {
			if deps[i].ParentID == c.ID && deps[i].ParentStatus == "" && deps[i].Allow&spi.AllowSequence != 0 {
				deps[i].ParentID, moved = before, true
			}
		}
		if !moved {
			kept = append(kept, kid)
			continue
		}
		s.children[before] = append(s.children[before], kid)
	}
	s.children[c.ID] = kept
	if p := s.jobs[before]; p != nil && p.Status.Terminal() {
		s.finished(p, now)
	}
}

// passTurns lets go the successors of the fairness keys' jobs of claimed,
// just claimed at now, with s.mu held (spi.FairShareStore): each link of
// Allow TurnAllow on one of them records TurnPassed, and its child is
// released when that was its last link.
func (s *Store) passTurns(claimed []*spi.Job, now time.Time) {
	if s.bug("a claim passes no fair turns") {
		return
	}
	for _, j := range claimed {
		if j.Dependents > 0 {
			s.resolveLinks(j, spi.TurnPassed, now)
		}
	}
}

// FairTurns implements spi.FairShareStore: claims pass turns.
func (s *Store) FairTurns() bool { return true }

// SequenceTail implements spi.SequenceStore.
func (s *Store) SequenceTail(_ context.Context, key string) (uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return uuid.Nil, err
	}
	defer s.unlock()
	return s.uniques[key].id, nil
}
