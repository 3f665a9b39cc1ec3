package engine

import (
	"context"
	"time"

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

// batchFinisher is the maintenance service that ends the sealed batches
// whose children have all finished (spi.BatchStore.FinishBatches) and
// submits their callbacks. The store guards each end on the batch being
// still open, so a finisher on every node (without leases) still ends
// each batch once.
type batchFinisher struct {
	store    spi.BatchStore
	interval time.Duration
	woke     func(ratchet.Priority)
	events   func(Event) // nil: none
}

func (s *batchFinisher) Name() string { return "batch-finisher" }

// Run finishes at once and then every interval, until ctx ends; a full
// call is followed by the next one at once.
func (s *batchFinisher) Run(ctx context.Context, h ServiceHost) error {
	return passEvery(ctx, h, s.interval, func(now time.Time) (bool, error) {
		ended, err := s.store.FinishBatches(ctx, now, batchFinishLimit)
		if err != nil {
			return false, err
		}
		top, callbacks := ratchet.PriorityLowest, 0
		for _, b := range ended {
			h.Logger.Debug("batch ended", "batch", b.ID, "name", b.Name, "outcome", string(b.Outcome))
			if s.events != nil {
				s.events(Event{Kind: EventBatchFinished, JobID: b.ID, Name: b.Name, Outcome: string(b.Outcome), At: now})
			}
			if b.Callback != nil {
				top, callbacks = max(top, b.Callback.Priority), callbacks+1
			}
		}
		if callbacks > 0 {
			s.woke(top)
		}
		return len(ended) == batchFinishLimit, nil
	})
}
