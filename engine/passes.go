package engine

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/sdk/cronexpr"
)

// passLeaseTTL is the lease of a singleton service that passes every
// interval: ten intervals, from 10 s to a minute, so that when the node
// holding it dies another takes the service over within that (the signal
// sweeper's timeouts and the batch finisher's callbacks are late by at
// most so much), while the lease is renewed every third of it.
func passLeaseTTL(interval time.Duration) time.Duration {
	return min(max(10*interval, 10*time.Second), time.Minute)
}

// passEvery is the loop of the maintenance services that work in passes
// (the batch finisher, the signal sweeper, the workflow repairer, the
// recurring scheduler): pass runs at once and then again after each wait
// on the host's clock, counted from the start of the pass before it, with
// the store's time of the moment (UTC, to the microsecond), until ctx
// ends. A wait is interval less a random tenth of it at most (passWait),
// so that the nodes running one service do not pass in step while no pass
// is ever later than interval. A pass that reports
// more (a full batch: there may be more to do) runs again at once. A
// pass's error ends the service, for the supervisor to log it and run the
// service again after a backoff, unless ctx has ended (then it returns
// nil).
func passEvery(ctx context.Context, h ServiceHost, interval time.Duration, pass func(now time.Time) (more bool, err error)) error {
	draw := h.draw
	if draw == nil {
		draw = rand.Float64
	}
	for {
		// The wait starts with the pass, as a ticker's would: a test that
		// moves a fake clock while a pass runs does not move it past a
		// timer that does not exist yet.
		t := h.Clock.NewTimer(passWait(interval, draw()))
		if err := nodecore.Drain(h.Clock.Now().UTC().Truncate(time.Microsecond), pass); err != nil {
			t.Stop()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.Chan():
		}
	}
}

// passService is a maintenance service that is its pass: run every
// interval (passEvery), or at each slot of a cron schedule (atSlots),
// again at once while it reports more. Every maintenance service of the
// engine is one.
type passService struct {
	name string
	// interval, or slots when not nil, is when it passes.
	interval time.Duration
	slots    *cronexpr.Schedule
	// pass returns the pass of one run of the service, which logs on log.
	pass func(ctx context.Context, log *slog.Logger) func(now time.Time) (more bool, err error)
}

func (s *passService) Name() string { return s.name }

// Run passes until ctx ends: at once and then every interval, or at each
// slot of the schedule.
func (s *passService) Run(ctx context.Context, h ServiceHost) error {
	pass := s.pass(ctx, h.Logger)
	if s.slots != nil {
		return atSlots(ctx, h, s.slots, func() error {
			return nodecore.Drain(h.Clock.Now().UTC().Truncate(time.Microsecond), pass)
		})
	}
	return passEvery(ctx, h, s.interval, pass)
}

// passWait is the wait of passEvery between passes for a uniform draw u in
// [0, 1): interval less u tenths of it, in (0.9, 1] times interval.
func passWait(interval time.Duration, u float64) time.Duration {
	return interval - time.Duration(u*float64(interval)/10)
}

// The services that run at the slots of a cron schedule (the archiver,
// log retention) wait for each slot instead.

// atSlots runs fn at every slot of sched, on the host's clock, until ctx
// ends (nil) or fn fails (its error).
func atSlots(ctx context.Context, h ServiceHost, sched *cronexpr.Schedule, fn func() error) error {
	for {
		now := h.Clock.Now()
		next := sched.Next(now)
		if next.IsZero() {
			<-ctx.Done()
			return nil
		}
		t := h.Clock.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.Chan():
		}
		if err := fn(); err != nil {
			return err
		}
	}
}
