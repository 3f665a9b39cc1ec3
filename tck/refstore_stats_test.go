package tck

import (
	"context"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The reference store's gauges, counted over its rows.

// The defects of the gauges the self-test plants.
const (
	bugStatsMergesPriority bug = "JobStats groups by status and task only"
	bugStatsOldestRunning  bug = "JobStats takes the oldest due time of any status"
)

// JobStats implements spi.StatsReader.
func (s *refStore) JobStats(_ context.Context, now time.Time) (spi.JobStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts := map[spi.JobCount]int64{}
	var st spi.JobStats
	for _, id := range s.order {
		j := s.rows[id].job
		k := spi.JobCount{Status: j.Status, Task: j.TaskName, Priority: j.Priority}
		counts[k]++
		if j.Status == spi.StatusPending && !j.ScheduledAt.After(now) && (st.OldestDue.IsZero() || j.ScheduledAt.Before(st.OldestDue)) {
			st.OldestDue = j.ScheduledAt
		}
	}
	for k, n := range counts {
		k.N = n
		st.Counts = append(st.Counts, k)
	}
	return st, nil
}
