package nodecore

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

// RecoveryMessage is the error a job dead-lettered by a crash carries.
const RecoveryMessage = "crash budget exhausted: the job's node died while running it"

// Rescuer recovers the jobs of nodes whose heartbeat went stale, charging
// their crash budget (invariant 3). The engine scans on a ticker, and once
// for its own node at start; the cluster simulator on its event loop.
type Rescuer struct {
	Store orphanRecoverer
	Clock clockwork.Clock
	Log   *slog.Logger
	// Grace is how stale a heartbeat may be; MaxCrash the crash budget
	// (a negative one, the engine's FailOnFirstCrash, is none).
	Grace    time.Duration
	MaxCrash int
	// Recovered, when not nil, is told the jobs a scan recovered.
	Recovered func(ctx context.Context, rec []spi.RecoveredJob)
}

// Recover runs one scan: of the given nodes' jobs whatever their heartbeat
// (a node's own jobs at start), or of every stale node when nodes is nil.
func (r Rescuer) Recover(ctx context.Context, nodes []string) ([]spi.RecoveredJob, error) {
	p := spi.RecoverParams{
		Now: r.Clock.Now().UTC().Truncate(time.Microsecond), Grace: r.Grace,
		MaxCrashRedeliveries: max(r.MaxCrash, 0), // the store's 0 is FailOnFirstCrash
		Nodes:                nodes, LastError: RecoveryMessage,
	}
	switch {
	case bug("rescue-ignores-grace"): // planted: live nodes' jobs taken away
		p.Grace = 0
	case bug("rescue-forgets-own-jobs"): // planted: a restart leaves its own jobs RUNNING
		p.Nodes = nil
	case bug("crash-budget-off-by-one"): // planted: one crash redelivery too many
		p.MaxCrashRedeliveries++
	}
	rec, err := r.Store.RecoverOrphans(ctx, p)
	if err != nil {
		if ctx.Err() == nil {
			r.Log.Warn("orphan scan failed", "err", err)
		}
		return nil, err
	}
	if len(rec) > 0 {
		if r.Recovered != nil {
			r.Recovered(ctx, rec)
		}
		for _, j := range rec {
			r.Log.Warn("recovered orphaned job", "job_id", j.JobID, "task", j.TaskName, "from_node", j.FromNode,
				"status", j.NewStatus, "crash_count", j.CrashCount)
		}
	}
	return rec, nil
}
