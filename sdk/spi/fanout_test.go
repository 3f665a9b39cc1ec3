package spi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// recorder counts the callbacks it hears, the optional ones included.
type recorder struct {
	spi.NoOpMetrics
	started, wakeups, callbacks, dropped, snoozed int
}

func (r *recorder) JobStarted(context.Context, uuid.UUID, string, spi.Priority) { r.started++ }
func (r *recorder) LocalWakeup(context.Context, string)                         { r.wakeups++ }
func (r *recorder) CallbackFailed(context.Context, uuid.UUID, string, error, int) {
	r.callbacks++
}
func (r *recorder) EventsDropped(context.Context, string, string) { r.dropped++ }
func (r *recorder) JobSnoozed(context.Context, uuid.UUID, string, time.Duration) {
	r.snoozed++
}

// timer also times store operations.
type timer struct {
	recorder
	ops int
}

func (t *timer) StoreOperation(context.Context, string, string, string, time.Duration) { t.ops++ }

// coreOnly implements the required callbacks alone.
type coreOnly struct{ started int }

func (c *coreOnly) JobStarted(context.Context, uuid.UUID, string, spi.Priority)  { c.started++ }
func (*coreOnly) JobCompleted(context.Context, uuid.UUID, string, time.Duration) {}
func (*coreOnly) JobFailed(context.Context, uuid.UUID, string, error, int)       {}
func (*coreOnly) JobsClaimed(context.Context, string, int)                       {}
func (*coreOnly) ClaimTransientFailure(context.Context, string, error)           {}
func (*coreOnly) WriteSuperseded(context.Context, uuid.UUID, string)             {}
func (*coreOnly) JobsRecovered(context.Context, string, int)                     {}
func (*coreOnly) CircuitBreakerState(context.Context, string, string, string)    {}
func (*coreOnly) PollerBreakerState(context.Context, string, string)             {}

func TestFanout(t *testing.T) {
	ctx := context.Background()
	a, b, c := &recorder{}, &timer{}, &coreOnly{}
	f := spi.Fanout(a, nil, b, c)
	f.JobStarted(ctx, uuid.New(), "t", spi.PriorityNormal)
	f.(spi.WakeupMetrics).LocalWakeup(ctx, "n1")
	f.(spi.CallbackMetrics).CallbackFailed(ctx, uuid.New(), "t", errors.New("x"), 1)
	f.(spi.EventMetrics).EventsDropped(ctx, "n1", "started")
	f.(spi.SnoozeMetrics).JobSnoozed(ctx, uuid.New(), "t", time.Second)
	sm, timed := f.(spi.StoreMetrics)
	assert.True(t, timed, "a fanout with a timing collector times")
	sm.StoreOperation(ctx, "ClaimJobs", "memory", "ok", time.Millisecond)
	assert.Equal(t, []int{1, 1, 1}, []int{a.started, b.started, c.started}, "every collector hears the required callbacks")
	assert.Equal(t, []int{1, 1}, []int{a.wakeups, b.wakeups}, "those that implement an optional callback hear it")
	assert.Equal(t, []int{1, 1}, []int{a.callbacks, b.callbacks})
	assert.Equal(t, []int{1, 1}, []int{a.dropped, b.dropped})
	assert.Equal(t, []int{1, 1}, []int{a.snoozed, b.snoozed})
	assert.Equal(t, 1, b.ops)

	_, timed = spi.Fanout(a, c).(spi.StoreMetrics)
	assert.False(t, timed, "without a timing collector the fanout does not time: the engine pays nothing")
}
