package engine

import (
	"context"

	"github.com/jonboulle/clockwork"
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
