package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/ratchet-go/ratchet/sdk/cronexpr"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// ArchiveOptions configure the archiver: a maintenance service that, on one
// node of the fleet at a time (it holds the lease "ratchet-archiver"),
// moves jobs finished longer than Retention ago to the store's archive
// (spi.JobArchiver) at every slot of Cron, at most BatchSize per run, each
// run one atomic step of the store (a crash loses nothing; the next run
// goes on). With PurgeAfter set, each run then deletes for good the
// archived jobs finished longer than PurgeAfter ago. The zero value
// archives with the spec's defaults and keeps archived jobs forever.
type ArchiveOptions struct {
	// Disabled turns archiving off (RATCHET_JOB_ARCHIVE_ENABLED=false).
	Disabled bool
	// Retention is how long after it finished a job stays live; default
	// DefaultArchiveRetention, 90 days (RATCHET_JOB_RETENTION_DAYS).
	Retention time.Duration
	// Cron is when the archiver runs, an expression of package cronexpr in
	// UTC; default DefaultArchiveCron, "0 0 1 * * ?": 1 AM daily
	// (RATCHET_JOB_ARCHIVE_CRON).
	Cron string
	// BatchSize is the most jobs one run archives, and the most archived
	// jobs it purges; default DefaultArchiveBatchSize, 1000
	// (RATCHET_JOB_ARCHIVE_BATCH_SIZE).
	BatchSize int
	// PurgeAfter is how long after it finished an archived job is kept
	// before the archiver deletes it for good, with its tags, properties,
	// state and log lines (spi.JobArchiver's PurgeArchivedJobs), oldest
	// first, at most BatchSize per run, after the run's move. 0, the
	// default, keeps archived jobs forever; otherwise it must be at least
	// Retention (RATCHET_JOB_ARCHIVE_RETENTION_DAYS, in days).
	PurgeAfter time.Duration
}

// The archiver's defaults, the spec's.
const (
	DefaultArchiveRetention = 90 * 24 * time.Hour
	DefaultArchiveCron      = "0 0 1 * * ?"
	DefaultArchiveBatchSize = 1000
	archiverLease           = "ratchet-archiver"
	archiverLeaseTTL        = time.Minute
)

// archiver is the archiving service (run inside Singleton): at each slot
// of sched it archives one batch of the jobs finished longer than the
// retention ago, then, with PurgeAfter set, purges one batch of the
// archive.
func archiver(store spi.JobArchiver, sched *cronexpr.Schedule, o ArchiveOptions) Service {
	return &passService{name: "archiver", slots: sched, pass: func(ctx context.Context, log *slog.Logger) func(time.Time) (bool, error) {
		return func(now time.Time) (bool, error) {
			cutoff := now.Add(-o.Retention)
			n, err := store.ArchiveJobs(ctx, cutoff, o.BatchSize)
			if err != nil {
				return false, err // the supervisor logs it and runs the service again after a backoff
			}
			log.Info("archived finished jobs", "jobs", n, "finished_before", cutoff, "batch", o.BatchSize)
			if o.PurgeAfter <= 0 {
				return false, nil
			}
			cutoff = now.Add(-o.PurgeAfter)
			if n, err = store.PurgeArchivedJobs(ctx, cutoff, o.BatchSize); err != nil {
				return false, err
			}
			log.Info("purged archived jobs", "jobs", n, "finished_before", cutoff, "batch", o.BatchSize)
			return false, nil
		}
	}}
}
