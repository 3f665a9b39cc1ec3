package memory

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.StartBySweeper = (*Store)(nil)

// UnstartedJobs implements spi.StartBySweeper.
func (s *Store) UnstartedJobs(_ context.Context, before time.Time, after spi.StartByCursor, limit int) ([]*spi.Job, spi.StartByCursor, error) {
	if err := s.lock(); err != nil {
		return nil, spi.StartByCursor{}, err
	}
	defer s.unlock()
	cut := spi.FormatStartBy(before)
	var found []spi.StartByCursor
	for id, p := range s.props {
		v, ok := p[spi.StartByProperty]
		j := s.jobs[id]
		if !ok || v >= cut || j == nil || j.Status != spi.StatusPending {
			continue
		}
		if c := cmpCursor(spi.StartByCursor{Value: v, ID: id}, after); c > 0 {
			found = append(found, spi.StartByCursor{Value: v, ID: id})
		}
	}
	slices.SortFunc(found, cmpCursor)
	limit = max(limit, 1)
	var next spi.StartByCursor
	if len(found) > limit {
		found = found[:limit]
		next = found[limit-1]
	}
	out := make([]*spi.Job, len(found))
	for i, c := range found {
		out[i] = s.copyOut(s.jobs[c.ID])
	}
	return out, next, nil
}

// cmpCursor orders start-by cursors: by the property's text, then id.
func cmpCursor(a, b spi.StartByCursor) int {
	return cmp.Or(cmp.Compare(a.Value, b.Value), bytes.Compare(a.ID[:], b.ID[:]))
}

// ExpireJobs implements spi.StartBySweeper.
func (s *Store) ExpireJobs(_ context.Context, es []spi.Expiry, now time.Time) ([]bool, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	out := make([]bool, len(es))
	for i, e := range es {
		j := s.jobs[e.JobID]
		if j == nil || j.Status != spi.StatusPending || (j.ClaimSeq != e.ClaimSeq && !s.bug("ExpireJobs ignores the claim sequence")) {
			continue
		}
		s.dequeue(j.ID)
		spi.Failed(spi.StatusPending, e.LastError, now).Apply(j)
		s.finished(j, now)
		out[i] = true
	}
	return out, nil
}
