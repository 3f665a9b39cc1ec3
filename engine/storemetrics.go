package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// timedStore is the engine's store when its metrics time store operations
// (spi.StoreMetrics): each core Store call is reported with its outcome
// and duration. Its capabilities are the inner store's, untimed.
type timedStore struct {
	spi.Store
	m     spi.StoreMetrics
	name  string
	clock clockwork.Clock
}

// timed wraps store when metrics implements spi.StoreMetrics (which
// NoOpMetrics does not: a node without metrics pays nothing).
func timed(store spi.Store, metrics spi.MetricsCollector, clock clockwork.Clock) spi.Store {
	sm, ok := metrics.(spi.StoreMetrics)
	if !ok {
		return store
	}
	return &timedStore{Store: store, m: sm, name: storeName(store), clock: clock}
}

// storeName is the store's package name: "postgres" of *postgres.Store.
func storeName(s spi.Store) string {
	name := strings.TrimPrefix(fmt.Sprintf("%T", s), "*")
	if pkg, _, ok := strings.Cut(name, "."); ok {
		return pkg
	}
	return name
}

// Capabilities forwards the inner store's.
func (t *timedStore) Capabilities() spi.Capabilities { return spi.CapabilitiesOf(t.Store) }

func (t *timedStore) done(ctx context.Context, op string, start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	t.m.StoreOperation(ctx, op, t.name, outcome, t.clock.Since(start))
}

func (t *timedStore) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	start := t.clock.Now()
	res, err := t.Store.InsertJobs(ctx, jobs, o)
	t.done(ctx, "InsertJobs", start, err)
	return res, err
}

func (t *timedStore) GetJob(ctx context.Context, id uuid.UUID) (j *spi.Job, err error) {
	start := t.clock.Now()
	j, err = t.Store.GetJob(ctx, id)
	t.done(ctx, "GetJob", start, err)
	return j, err
}

func (t *timedStore) ListJobs(ctx context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	start := t.clock.Now()
	jobs, next, err := t.Store.ListJobs(ctx, p)
	t.done(ctx, "ListJobs", start, err)
	return jobs, next, err
}

func (t *timedStore) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	start := t.clock.Now()
	jobs, err := t.Store.ClaimJobs(ctx, p)
	t.done(ctx, "ClaimJobs", start, err)
	return jobs, err
}

func (t *timedStore) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	start := t.clock.Now()
	ok, err := t.Store.CompleteJobs(ctx, cs)
	t.done(ctx, "CompleteJobs", start, err)
	return ok, err
}

func (t *timedStore) ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	start := t.clock.Now()
	ok, err := t.Store.ReleaseJobs(ctx, refs, now)
	t.done(ctx, "ReleaseJobs", start, err)
	return ok, err
}

func (t *timedStore) RetryFailedJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	start := t.clock.Now()
	err := t.Store.RetryFailedJob(ctx, id, now)
	t.done(ctx, "RetryFailedJob", start, err)
	return err
}

func (t *timedStore) CancelJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	start := t.clock.Now()
	err := t.Store.CancelJob(ctx, id, now)
	t.done(ctx, "CancelJob", start, err)
	return err
}

func (t *timedStore) Heartbeat(ctx context.Context, nodeID string, now time.Time) error {
	start := t.clock.Now()
	err := t.Store.Heartbeat(ctx, nodeID, now)
	t.done(ctx, "Heartbeat", start, err)
	return err
}

func (t *timedStore) DeregisterNode(ctx context.Context, nodeID string) error {
	start := t.clock.Now()
	err := t.Store.DeregisterNode(ctx, nodeID)
	t.done(ctx, "DeregisterNode", start, err)
	return err
}

func (t *timedStore) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	start := t.clock.Now()
	out, err := t.Store.RecoverOrphans(ctx, p)
	t.done(ctx, "RecoverOrphans", start, err)
	return out, err
}
