package memory

import (
	"context"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.StatsReader = (*Store)(nil)

// JobStats implements spi.StatsReader: it counts the live jobs, always
// exactly.
func (s *Store) JobStats(_ context.Context, now time.Time) (spi.JobStats, error) {
	if err := s.lock(); err != nil {
		return spi.JobStats{}, err
	}
	defer s.unlock()
	type key struct {
		status spi.Status
		task   string
		p      spi.Priority
	}
	counts := map[key]int64{}
	var st spi.JobStats
	for _, j := range s.jobs {
		k := key{j.Status, j.TaskName, j.Priority}
		if s.bug("JobStats groups by status and task only") {
			k.p = spi.PriorityNormal
		}
		counts[k]++
		due := j.Status == spi.StatusPending || s.bug("JobStats takes the oldest due time of any status")
		if due && !j.ScheduledAt.After(now) && (st.OldestDue.IsZero() || j.ScheduledAt.Before(st.OldestDue)) {
			st.OldestDue = j.ScheduledAt
		}
	}
	for k, n := range counts {
		st.Counts = append(st.Counts, spi.JobCount{Status: k.status, Task: k.task, Priority: k.p, N: n})
	}
	return st, nil
}
