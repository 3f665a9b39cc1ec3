package engine

import (
	"context"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/internal/nodecore"
)

// every runs fn at each tick of t until ctx ends, and then stops t: the
// loop of the heartbeats and the orphan scans (nodecore.Heartbeater.Tick,
// nodecore.Rescuer.Recover). The ticker is made by the caller at start,
// not here: ticks count from Start however late this goroutine runs (a
// fake clock may move on before it does).
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

// beatLoop runs the heartbeater's Tick at each tick of t, and its claim
// check alone at each signal of check (a wakeup saying that claims were
// taken away), until ctx ends; then it stops t. One goroutine runs both,
// so a beat's check and a wakeup's never overlap.
func beatLoop(ctx context.Context, t clockwork.Ticker, check <-chan struct{}, h *nodecore.Heartbeater) {
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.Chan():
			h.Tick(ctx)
		case <-check:
			h.Check(ctx)
		}
	}
}
