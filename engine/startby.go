package engine

import (
	"context"

	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/nodecore"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

const (
	// defaultStartBySweepInterval is the time between passes of the
	// start-by sweeper (Options.StartBySweepInterval): a job no node
	// claimed fails at most this long after its start-by deadline.
	defaultStartBySweepInterval = time.Second
	// startBySweepLease is the lease of the sweeper; startBySweepBatch how
	// many jobs one call reads at most.
	startBySweepLease = "ratchet-start-by-sweeper"
	startBySweepBatch = 500
)

// startBySweeper is the start-by sweeper service: nodecore.StartBySweep
// every interval, counting (spi.StartByMetrics) and publishing
// (EventFailed) each job it failed, and waking the WaitJob calls that
// watch it (finished).
func startBySweeper(store spi.StartBySweeper, interval time.Duration, sanitizer spi.ErrorSanitizer, metrics spi.MetricsCollector,
	events func(Event), finished func(uuid.UUID)) Service {
	sm, _ := metrics.(spi.StartByMetrics)
	return &passService{name: "start-by-sweeper", interval: interval, pass: func(ctx context.Context, log *slog.Logger) func(time.Time) (bool, error) {
		p := &nodecore.StartBySweep{Store: store, Limit: startBySweepBatch, Sanitizer: sanitizer, Failed: func(j *spi.Job, msg string, now time.Time) {
			log.Info("job expired unstarted", "job_id", j.ID, "task", j.TaskName, "err", msg)
			if sm != nil {
				sm.JobExpired(ctx, j.ID, j.TaskName)
			}
			events(Event{Kind: EventFailed, JobID: j.ID, Task: j.TaskName, Error: msg, At: now})
			finished(j.ID)
		}}
		return func(now time.Time) (bool, error) { return p.Pass(ctx, now) }
	}}
}
