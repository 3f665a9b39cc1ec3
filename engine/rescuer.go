package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// orphanRecoverer is what the rescuer needs of the store.
type orphanRecoverer interface {
	RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error)
}

// recoveryMessage is the error a job dead-lettered by a crash carries.
const recoveryMessage = "crash budget exhausted: the job's node died while running it"

// rescuerDeps are the rescuer's dependencies.
type rescuerDeps struct {
	store orphanRecoverer
	clock clockwork.Clock
	log   *slog.Logger
	// grace is how stale a heartbeat may be; maxCrash the crash budget
	// (FailOnFirstCrash for none).
	grace    time.Duration
	maxCrash int
	// recovered is told the jobs a scan recovered.
	recovered func(ctx context.Context, rec []spi.RecoveredJob)
}

// rescuer recovers the jobs of nodes whose heartbeat went stale, charging
// their crash budget (invariant 3).
type rescuer struct{ rescuerDeps }

// recover runs one scan: of the given nodes' jobs whatever their
// heartbeat (a node's own jobs at start), or of every stale node when nodes
// is nil.
func (r rescuer) recover(ctx context.Context, nodes []string) ([]spi.RecoveredJob, error) {
	rec, err := r.store.RecoverOrphans(ctx, spi.RecoverParams{
		Now: r.clock.Now().UTC().Truncate(time.Microsecond), Grace: r.grace,
		MaxCrashRedeliveries: max(r.maxCrash, 0), // the store's 0 is FailOnFirstCrash
		Nodes:                nodes, LastError: recoveryMessage,
	})
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("orphan scan failed", "err", err)
		}
		return nil, err
	}
	if len(rec) > 0 {
		r.recovered(ctx, rec)
		for _, j := range rec {
			r.log.Warn("recovered orphaned job", "job_id", j.JobID, "task", j.TaskName, "from_node", j.FromNode,
				"status", j.NewStatus, "crash_count", j.CrashCount)
		}
	}
	return rec, nil
}

// run scans at every tick of t until ctx ends.
func (r rescuer) run(ctx context.Context, t clockwork.Ticker) {
	every(ctx, t, func(ctx context.Context) { _, _ = r.recover(ctx, nil) })
}
