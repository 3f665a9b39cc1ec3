package nodecore

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Run is an execution in progress: its job as the claim returned it, and
// how to cancel its body.
type Run struct {
	Job    *spi.Job
	Cancel context.CancelFunc
	// expired: the run went past its timeout and its owner write was
	// made then (Runs.Expire); guarded by its Runs' lock.
	expired bool
}

// HeartbeaterDeps are the heartbeater's dependencies.
type HeartbeaterDeps struct {
	Clock clockwork.Clock
	Log   *slog.Logger
	// Write writes the node's heartbeat at now (with its tasks where the
	// store records them).
	Write func(ctx context.Context, now time.Time) error
	// Claims checks whether running claims are still the current ones;
	// nil where the store cannot tell.
	Claims spi.ClaimChecker
	// Running lists the executions in progress.
	Running func() []*Run
	// Superseded is told of a running job whose claim was taken away,
	// before its body is cancelled.
	Superseded func(ctx context.Context, j *spi.Job)
}

// Heartbeater keeps the node's row fresh and, at each beat, stops the
// bodies of jobs that were taken away from the node (recovered while it
// stalled, for instance): their writes would be superseded anyway. The
// engine ticks it on a ticker; the cluster simulator on its event loop.
type Heartbeater struct {
	HeartbeaterDeps
	last atomic.Int64 // unix nanoseconds of the last successful beat
}

// NewHeartbeater returns a heartbeater on d.
func NewHeartbeater(d HeartbeaterDeps) *Heartbeater { return &Heartbeater{HeartbeaterDeps: d} }

func (h *Heartbeater) now() time.Time { return h.Clock.Now().UTC().Truncate(time.Microsecond) }

// Register writes the first beat; a node does not start when it fails.
func (h *Heartbeater) Register(ctx context.Context) error {
	now := h.now()
	if err := h.Write(ctx, now); err != nil {
		return err
	}
	h.last.Store(now.UnixNano())
	return nil
}

// Beat writes the heartbeat and remembers when it succeeded.
func (h *Heartbeater) Beat(ctx context.Context) bool {
	now := h.now()
	if err := h.Write(ctx, now); err != nil {
		if ctx.Err() == nil {
			h.Log.Warn("heartbeat failed", "err", err)
		}
		return false
	}
	h.last.Store(now.UnixNano())
	return true
}

// LastBeat is when the last beat succeeded.
func (h *Heartbeater) LastBeat() time.Time { return time.Unix(0, h.last.Load()) }

// Tick is one beat and, where the store can tell, the claim check: the
// bodies of the jobs whose claims are no longer current are cancelled. The
// check runs even when the beat failed.
func (h *Heartbeater) Tick(ctx context.Context) {
	h.Beat(ctx)
	h.Check(ctx)
}

// Check is the claim check alone: the bodies of the jobs whose claims are
// no longer current (recovered, or cancelled while running) are cancelled.
// The engine runs it at each beat, and at once when a wakeup says claims
// were taken away (spi.WakeupHint.CheckClaims).
func (h *Heartbeater) Check(ctx context.Context) {
	if h.Claims == nil {
		return
	}
	runs := h.Running()
	if len(runs) == 0 {
		return
	}
	refs := make([]spi.ClaimRef, len(runs))
	for i, x := range runs {
		refs[i] = spi.ClaimRef{JobID: x.Job.ID, ClaimSeq: x.Job.ClaimSeq}
	}
	current, err := h.Claims.CheckClaims(ctx, refs)
	if err != nil {
		if ctx.Err() == nil {
			h.Log.Warn("checking claims failed", "err", err)
		}
		return
	}
	for i, ok := range current {
		if !ok && !bug("claim-check-keeps-body") { // planted: a cancelled job's body runs on
			x := runs[i]
			h.Superseded(ctx, x.Job)
			h.Log.Warn("claim superseded while running: the job was cancelled, or recovered by another node; cancelling its body",
				"job_id", x.Job.ID, "task", x.Job.TaskName, "claim_seq", x.Job.ClaimSeq)
			x.Cancel()
		}
	}
}
