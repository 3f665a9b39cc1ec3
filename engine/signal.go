package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/nodecore"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

const (
	// DefaultSignalSweepInterval is the time between passes of the signal
	// sweeper: a wait times out at most this long after its deadline.
	DefaultSignalSweepInterval = time.Second
	// signalSweepLease is the lease of the sweeper; signalSweepBatch how
	// many waits one call times out at most.
	signalSweepLease = "ratchet-signal-sweeper"
	signalSweepBatch = 1000
)

// signalSweeper is the signal sweeper service: nodecore.SignalSweep every
// interval, counting and publishing each wait it timed out.
func signalSweeper(store spi.SignalStore, interval time.Duration, metrics spi.MetricsCollector, woke func(ratchet.Priority), events func(Event)) Service {
	sm, _ := metrics.(spi.SignalMetrics)
	return &passService{name: "signal-sweeper", interval: interval, pass: func(ctx context.Context, log *slog.Logger) func(time.Time) (bool, error) {
		p := nodecore.SignalSweep{Store: store, Limit: signalSweepBatch, Woke: woke, TimedOut: func(r spi.ResolvedSignal, now time.Time) {
			log.Debug("signal wait timed out", "job_id", r.JobID, "signal", r.Name)
			if sm != nil {
				sm.SignalTimedOut(ctx, r.JobID, r.TaskName, r.Name)
			}
			events(Event{Kind: EventSignalResolved, JobID: r.JobID, Task: r.TaskName, Name: r.Name, Outcome: string(spi.SignalTimedOut), At: now})
		}}
		return func(now time.Time) (bool, error) { return p.Pass(ctx, now) }
	}}
}

// signalOf reads the signal wait of a job from store (for
// ratchet.JobContextOptions.Signal): GetJob fills it.
func signalOf(store spi.Store) func(ctx context.Context, id uuid.UUID) (*spi.SignalWait, error) {
	return func(ctx context.Context, id uuid.UUID) (*spi.SignalWait, error) {
		j, err := store.GetJob(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("engine: read the signal of job %s: %w", id, err)
		}
		return j.Signal, nil
	}
}
