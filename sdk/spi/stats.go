package spi

import (
	"context"
	"time"
)

// StatsReader is implemented by stores that report the gauges of their
// jobs in one read: the number of live (not archived) jobs by status, task
// and priority, and the due time of the oldest PENDING job that is due. A
// metrics adapter calls it once per scrape, so it must stay cheap at any
// table size: a store may answer from its planner's statistics instead of
// counting once its table is large, and says so in Estimated.
type StatsReader interface {
	JobStats(ctx context.Context, now time.Time) (JobStats, error)
}

// JobStats is what StatsReader.JobStats read. Its zero value is an empty
// store.
type JobStats struct {
	// Counts holds one entry per status, task and priority that has jobs,
	// in no particular order.
	Counts []JobCount
	// OldestDue is the due time of the oldest PENDING job due at the
	// time asked (RunAt at or before it), zero when none is due. It is
	// always exact.
	OldestDue time.Time
	// Estimated reports that Counts are the store's estimates (for
	// example PostgreSQL's statistics of a large table, refreshed by
	// autoanalyze) rather than a count.
	Estimated bool
}

// JobCount is the number of live jobs of one status, task and priority.
type JobCount struct {
	Status   Status
	Task     string
	Priority Priority
	N        int64
}
