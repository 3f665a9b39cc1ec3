package engine

import (
	"context"

	"github.com/jonboulle/clockwork"
)

// every runs fn at each tick of t, and also at each signal of also (nil:
// none) its own function onAlso, until ctx ends, and then stops t: the
// loop of the heartbeats with their claim checks on a wakeup
// (nodecore.Heartbeater.Tick and Check), and of the orphan scans
// (nodecore.Rescuer.Recover). One goroutine runs both, so a tick's work
// and a signal's never overlap. The ticker is made by the caller at
// start, not here: ticks count from Start however late this goroutine
// runs (a fake clock may move on before it does).
func every(ctx context.Context, t clockwork.Ticker, fn func(context.Context), also <-chan struct{}, onAlso func(context.Context)) {
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.Chan():
			fn(ctx)
		case <-also:
			onAlso(ctx)
		}
	}
}
