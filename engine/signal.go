package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

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

// signalSweeper is the maintenance service that times out the signal waits
// whose deadline has passed (spi.SignalStore.ExpireSignals): each becomes
// PENDING, its wait TIMED_OUT, and runs next. A timeout racing a delivery
// or a cancel is resolved by the store: exactly one of them wins.
type signalSweeper struct {
	store    spi.SignalStore
	interval time.Duration
	metrics  spi.MetricsCollector
	woke     func(ratchet.Priority)
	events   func(Event) // nil: none
}

func (s *signalSweeper) Name() string { return "signal-sweeper" }

// Run sweeps at once and then every interval, until ctx ends; a full batch
// is followed by the next one at once.
func (s *signalSweeper) Run(ctx context.Context, h ServiceHost) error {
	sm, _ := s.metrics.(spi.SignalMetrics)
	return passEvery(ctx, h, s.interval, func(now time.Time) (bool, error) {
		rs, err := s.store.ExpireSignals(ctx, now, signalSweepBatch)
		if err != nil {
			return false, err
		}
		if len(rs) > 0 {
			h.Logger.Debug("signal waits timed out", "jobs", len(rs))
			for _, r := range rs {
				if sm != nil {
					sm.SignalTimedOut(ctx, r.JobID, r.TaskName, r.Name)
				}
				if s.events != nil {
					s.events(Event{Kind: EventSignalResolved, JobID: r.JobID, Task: r.TaskName, Name: r.Name, Outcome: string(spi.SignalTimedOut), At: now})
				}
			}
			s.woke(ratchet.PriorityCritical) // their priorities are not read back
		}
		return len(rs) == signalSweepBatch, nil
	})
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
