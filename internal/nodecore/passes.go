package nodecore

import (
	"context"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The passes of the maintenance services that work in batches: each is one
// call to its store that reports whether it was full (there may be more to
// do), with its side effects (wakeups, events) on callbacks. The engine
// runs each at its interval; the cluster simulator runs the same pass on
// its event loop, through a store that checks every call against its
// model.

// Drain runs pass at now until it reports that it was not full, and
// returns its first error.
func Drain(now time.Time, pass func(now time.Time) (more bool, err error)) error {
	for {
		more, err := pass(now)
		if err != nil || !more {
			return err
		}
	}
}

// BatchFinish is the batch finisher's pass: it ends the sealed batches
// whose children have all finished (spi.BatchStore.FinishBatches), which
// inserts their callbacks. The store guards each end on the batch being
// still open, so a finisher on every node still ends each batch once.
type BatchFinish struct {
	Store spi.BatchStore
	// Limit is the most batches one call ends.
	Limit int
	// Ended, when not nil, is told of each batch ended (logs, events).
	Ended func(b spi.FinishedBatch, now time.Time)
	// Woke, when not nil, is told of the most urgent callback submitted.
	Woke func(ratchet.Priority)
}

// Pass ends at most Limit batches at now; more reports a full call.
func (p BatchFinish) Pass(ctx context.Context, now time.Time) (more bool, err error) {
	ended, err := p.Store.FinishBatches(ctx, now, p.Limit)
	if err != nil {
		return false, err
	}
	top, callbacks := ratchet.PriorityLowest, 0
	for _, b := range ended {
		if p.Ended != nil {
			p.Ended(b, now)
		}
		if b.Callback != nil {
			top, callbacks = max(top, b.Callback.Priority), callbacks+1
		}
	}
	if callbacks > 0 && p.Woke != nil {
		p.Woke(top)
	}
	return len(ended) == p.Limit, nil
}

// SignalSweep is the signal sweeper's pass: it times out the signal waits
// whose deadline has passed (spi.SignalStore.ExpireSignals); each job
// becomes PENDING, its wait TIMED_OUT. A timeout racing a delivery or a
// cancel is resolved by the store: exactly one of them wins.
type SignalSweep struct {
	Store spi.SignalStore
	// Limit is the most waits one call times out.
	Limit int
	// TimedOut, when not nil, is told of each wait timed out (metrics,
	// events).
	TimedOut func(r spi.ResolvedSignal, now time.Time)
	// Woke, when not nil, is told when waits timed out: their jobs are
	// due (at CRITICAL: their priorities are not read back).
	Woke func(ratchet.Priority)
}

// Pass times out at most Limit waits at now; more reports a full call.
func (p SignalSweep) Pass(ctx context.Context, now time.Time) (more bool, err error) {
	at := now
	if bug("sweep-ahead-of-time") { // planted: waits time out 5 s early
		at = now.Add(5 * time.Second)
	}
	rs, err := p.Store.ExpireSignals(ctx, at, p.Limit)
	if err != nil {
		return false, err
	}
	if p.TimedOut != nil {
		for _, r := range rs {
			p.TimedOut(r, now)
		}
	}
	if len(rs) > 0 && p.Woke != nil {
		p.Woke(ratchet.PriorityCritical)
	}
	return len(rs) == p.Limit, nil
}

// WorkflowRepair is the workflow repairer's pass: it releases the blocked
// jobs whose parents have all finished (spi.WorkflowStore.RepairWorkflows),
// which a release cut short by a crash left behind.
type WorkflowRepair struct {
	Store spi.WorkflowStore
	// Limit is the most jobs one call releases.
	Limit int
	// Repaired, when not nil, is told how many jobs a call released, when
	// it released any.
	Repaired func(n int)
}

// Pass releases at most Limit jobs at now; more reports a full call.
func (p WorkflowRepair) Pass(ctx context.Context, now time.Time) (more bool, err error) {
	n, err := p.Store.RepairWorkflows(ctx, now, p.Limit)
	if err != nil {
		return false, err
	}
	if n > 0 && p.Repaired != nil {
		p.Repaired(n)
	}
	return n == p.Limit, nil
}
