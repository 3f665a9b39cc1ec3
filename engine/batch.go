package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

const (
	// DefaultBatchFinishInterval is the time between passes of the batch
	// finisher: a batch ends at most this long after its last child
	// finished.
	DefaultBatchFinishInterval = time.Second
	// batchFinishLease is the lease of the finisher; batchFinishLimit how
	// many batches one call ends at most.
	batchFinishLease = "ratchet-batch-finisher"
	batchFinishLimit = 100
)

// batchFinisher is the batch finisher service: nodecore.BatchFinish every
// interval, logging and publishing each batch it ended.
func batchFinisher(store spi.BatchStore, interval time.Duration, woke func(ratchet.Priority), events func(Event)) Service {
	return &passService{name: "batch-finisher", interval: interval, pass: func(ctx context.Context, log *slog.Logger) func(time.Time) (bool, error) {
		p := nodecore.BatchFinish{Store: store, Limit: batchFinishLimit, Woke: woke, Ended: func(b spi.FinishedBatch, now time.Time) {
			log.Debug("batch ended", "batch", b.ID, "name", b.Name, "outcome", string(b.Outcome))
			events(Event{Kind: EventBatchFinished, JobID: b.ID, Name: b.Name, Outcome: string(b.Outcome), At: now})
		}}
		return func(now time.Time) (bool, error) { return p.Pass(ctx, now) }
	}}
}
