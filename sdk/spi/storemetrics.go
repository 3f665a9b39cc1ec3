package spi

import (
	"context"
	"time"
)

// StoreMetrics is implemented by a MetricsCollector that also times the
// store's operations (the spec's storeOperation): the engine reports each
// call of the core Store methods it and its client make (ClaimJobs,
// CompleteJobs, InsertJobs, Heartbeat, ...), with the store's name, the
// outcome ("ok" or "error") and how long it took on the engine's clock.
// Unlike the other optional callbacks, NoOpMetrics does not implement it:
// the engine times its store only for a collector that defines
// StoreOperation itself, so that one embedding NoOpMetrics pays nothing.
type StoreMetrics interface {
	StoreOperation(ctx context.Context, op, store, outcome string, elapsed time.Duration)
}
