package engine

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// heartbeaterDeps are the heartbeater's dependencies.
type heartbeaterDeps struct {
	clock    clockwork.Clock
	log      *slog.Logger
	interval time.Duration
	// write writes the node's heartbeat at now (with its tasks where the
	// store records them).
	write func(ctx context.Context, now time.Time) error
	// claims checks whether running claims are still the current ones;
	// nil where the store cannot tell.
	claims spi.ClaimChecker
	// running lists the executions in progress.
	running func() []*execution
	// superseded is told of a running job whose claim was taken away.
	superseded func(ctx context.Context, j *spi.Job)
}

// heartbeater keeps the node's row fresh and, at each beat, stops the
// bodies of jobs that were taken away from the node (recovered while it
// stalled, for instance): their writes would be superseded anyway.
type heartbeater struct {
	heartbeaterDeps
	last atomic.Int64 // unix nanoseconds of the last successful beat
}

func newHeartbeater(d heartbeaterDeps) *heartbeater { return &heartbeater{heartbeaterDeps: d} }

func (h *heartbeater) now() time.Time { return h.clock.Now().UTC().Truncate(time.Microsecond) }

// register writes the first beat; Start fails when it does.
func (h *heartbeater) register(ctx context.Context) error {
	now := h.now()
	if err := h.write(ctx, now); err != nil {
		return err
	}
	h.last.Store(now.UnixNano())
	return nil
}

// beat writes the heartbeat and remembers when it succeeded.
func (h *heartbeater) beat(ctx context.Context) bool {
	now := h.now()
	if err := h.write(ctx, now); err != nil {
		if ctx.Err() == nil {
			h.log.Warn("heartbeat failed", "err", err)
		}
		return false
	}
	h.last.Store(now.UnixNano())
	return true
}

// lastBeat is when the last beat succeeded.
func (h *heartbeater) lastBeat() time.Time { return time.Unix(0, h.last.Load()) }

// tick is one beat and, where the store can tell, the claim check.
func (h *heartbeater) tick(ctx context.Context) {
	h.beat(ctx)
	if h.claims == nil {
		return
	}
	execs := h.running()
	if len(execs) == 0 {
		return
	}
	refs := make([]spi.ClaimRef, len(execs))
	for i, x := range execs {
		refs[i] = spi.ClaimRef{JobID: x.job.ID, ClaimSeq: x.job.ClaimSeq}
	}
	current, err := h.claims.CheckClaims(ctx, refs)
	if err != nil {
		if ctx.Err() == nil {
			h.log.Warn("checking claims failed", "err", err)
		}
		return
	}
	for i, ok := range current {
		if !ok {
			x := execs[i]
			h.superseded(ctx, x.job)
			h.log.Warn("claim superseded while running: the job was recovered by another node; cancelling its body",
				"job_id", x.job.ID, "task", x.job.TaskName, "claim_seq", x.job.ClaimSeq)
			x.cancel()
		}
	}
}

// run beats at every tick of t until ctx ends. The ticker is made by the
// caller at start, not here: beats count from Start however late this
// goroutine runs (a fake clock may move on before it does).
func (h *heartbeater) run(ctx context.Context, t clockwork.Ticker) { every(ctx, t, h.tick) }

// every runs fn at each tick of t until ctx ends, and then stops t.
func every(ctx context.Context, t clockwork.Ticker, fn func(context.Context)) {
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.Chan():
			fn(ctx)
		}
	}
}
