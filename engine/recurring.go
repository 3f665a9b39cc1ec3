package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
)

// The recurring scheduler: a maintenance service that every node runs.
// Each pass reads the schedules due now and fires each in one atomic step
// of the store (spi.ScheduleStore.FireSchedule): the slots' jobs, under
// their unique slot keys, and the schedule's advance, a compare-and-set on
// its version. Two nodes that fire the same schedule at once race on the
// version, and a slot whose job exists is a duplicate, not a second job:
// each slot fires exactly once, by construction.

// Defaults of the recurring scheduler.
const (
	// DefaultScheduleInterval is the time between scheduler passes.
	DefaultScheduleInterval = time.Second
	// DefaultMisfireThreshold is how late a slot may be fired and still be
	// on time; a later one is a misfire, handled by its schedule's policy.
	DefaultMisfireThreshold = time.Minute
)

// scheduler is the recurring scheduler service: nodecore.RecurringPass at
// every interval. A pass that fails is logged; the next tries again.
func scheduler(deps nodecore.Recurring, interval time.Duration) Service {
	return &passService{name: "recurring scheduler", interval: interval, pass: func(ctx context.Context, log *slog.Logger) func(time.Time) (bool, error) {
		d := deps
		d.Logger = log
		return func(now time.Time) (bool, error) {
			if err := nodecore.RecurringPass(ctx, d, now); err != nil && ctx.Err() == nil {
				log.Warn("recurring scheduler pass failed", "err", err)
			}
			return false, nil
		}
	}}
}
