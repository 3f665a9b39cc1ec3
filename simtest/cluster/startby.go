package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/simtest/internal/simtime"
)

// startBySweep is one pass of a node's start-by sweeper (with its signal
// sweeper): the engine's own (nodecore.StartBySweep), in pages of 3,
// through a store that checks each expiry against the model; then every
// PENDING job past both its first run's deadline and its own must have
// been failed (start-by).
func (w *world) startBySweep(n *node) error {
	sw := spi.CapabilitiesOf(w.store).StartBy
	if sw == nil {
		return nil
	}
	p := &nodecore.StartBySweep{Store: startByCheck{StartBySweeper: sw, w: w, n: n}, Limit: 3, Sanitizer: sanitizer}
	now := w.now()
	if err := nodecore.Drain(now, func(now time.Time) (bool, error) { return p.Pass(w.ctx, now) }); err != nil {
		if errors.Is(err, errCaught) {
			return nil
		}
		return err
	}
	for _, j := range w.pending {
		if by := j.deadline(); !j.firstBy.IsZero() && now.After(j.firstBy) && now.After(by) {
			w.check(invStartBy)
			w.fail(invStartBy, []*sjob{j}, []*node{n}, "%s's start-by sweep at %s left %s PENDING, past its deadline %s (first run's %s)",
				n.id, simtime.Offset(now.Sub(w.start)), j.label, simtime.Offset(by.Sub(w.start)), simtime.Offset(j.firstBy.Sub(w.start)))
			return nil
		}
	}
	return nil
}

// startByCheck is the store as a node's start-by sweeper sees it: each
// expiry it writes is checked against the model (a PENDING job under the
// claim read, past its deadline, failed with ErrExpired) and applied to
// it.
type startByCheck struct {
	spi.StartBySweeper
	w *world
	n *node
}

func (c startByCheck) ExpireJobs(ctx context.Context, es []spi.Expiry, now time.Time) ([]bool, error) {
	w := c.w
	for _, e := range es {
		j := w.byID[e.JobID]
		if j == nil {
			w.fail(invNothingLost, nil, []*node{c.n}, "the start-by sweep of %s expires job %s, which was never submitted", c.n.id, e.JobID)
			return nil, errCaught
		}
		w.check(invStartBy)
		if by := j.deadline(); by.IsZero() || !now.After(by) || !strings.Contains(e.LastError, ratchet.ErrExpired.Error()) {
			w.fail(invStartBy, []*sjob{j}, []*node{c.n}, "the start-by sweep of %s at %s expires %s (deadline %s) with %q",
				c.n.id, simtime.Offset(now.Sub(w.start)), j.label, fmtDeadline(w, by), e.LastError)
			return nil, errCaught
		}
	}
	got, err := c.StartBySweeper.ExpireJobs(ctx, es, now)
	if err != nil {
		return nil, w.storeErr("ExpireJobs", err)
	}
	for i, e := range es {
		j := w.byID[e.JobID]
		w.check(invFence)
		current := j.status == spi.StatusPending && j.seq == e.ClaimSeq
		if i >= len(got) || got[i] != current {
			w.fail(invFence, []*sjob{j}, []*node{c.n}, "the start-by sweep of %s: the expiry of %s under claim %d applied=%v, but the job is %s with claim %d",
				c.n.id, j.label, e.ClaimSeq, i < len(got) && got[i], j.status, j.seq)
			return nil, errCaught
		}
		if !current {
			continue
		}
		w.tracef([]*sjob{j}, []*node{c.n}, "%s start-by sweep fails %s, unstarted past %s", c.n.id, j.label, fmtDeadline(w, j.deadline()))
		w.setStatus(j, spi.StatusFailed)
		j.finishedAt, j.lastErr = now, e.LastError
		w.report.Swept++
		w.flowFinished(j, now)
		w.touch(j)
	}
	return got, nil
}

// fmtDeadline writes a deadline as an offset of the run, or "none".
func fmtDeadline(w *world, by time.Time) string {
	if by.IsZero() {
		return "none"
	}
	return fmt.Sprint(simtime.Offset(by.Sub(w.start)))
}
