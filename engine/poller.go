package engine

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// pollerDeps are the poller's dependencies.
type pollerDeps struct {
	clock clockwork.Clock
	log   *slog.Logger
	// claims are the claim step's (nodecore.Claimer): the store, the
	// claims' fixed parameters, the dispatch, the gates.
	claims nodecore.ClaimerDeps
	// policy decides each step: idle, gather, refresh the beat, claim.
	policy nodecore.PollPolicy
	// strategy decides the waits between claims.
	strategy spi.PollDelayStrategy
	// free returns the free slots.
	free func() int
	// lastBeat is when the node's heartbeat last succeeded; beat writes it
	// now and reports whether it succeeded.
	lastBeat func() time.Time
	beat     func(ctx context.Context) bool
	// rejected is told of what an admission gate turned away (metrics):
	// spi.GateTaskLimit, spi.GatePollerBreaker, spi.GateStaleHeartbeat.
	rejected func(ctx context.Context, gate string, n int)
	// signals are its wakeups; nil makes its own.
	signals *pollSignals
	// claimers is how many claims may be at the store at once (0 means
	// 1). Above 1, the claims' Limited must be nil: the per-task room is
	// read before a claim and does not count the claims in flight.
	claimers int
}

// poller claims due jobs up to the free slots and dispatches them, waking
// on submissions (poke), on freed slots while it waits for slots (freed),
// or after its strategy's delay.
type poller struct {
	pollerDeps
	claimer *nodecore.Claimer
	wake    chan struct{} // new work (poke)
	slots   chan struct{} // a slot freed up (freed)
}

func newPoller(d pollerDeps) *poller {
	if d.rejected == nil {
		d.rejected = func(context.Context, string, int) {}
	}
	if d.signals == nil {
		d.signals = newPollSignals(d.claims.Limited != nil)
	}
	d.claimers = max(d.claimers, 1)
	d.claims.Rejected = d.rejected
	return &poller{pollerDeps: d, claimer: nodecore.NewClaimer(d.claims), wake: d.signals.wake, slots: d.signals.slots}
}

// pollSignals are the poller's wakeups, made before the parts that send
// them (the executor, the completer, the engine) and the poller that
// receives them.
type pollSignals struct {
	wake  chan struct{} // new work (poke)
	slots chan struct{} // a slot freed up (freed)
	// perTask: the node has per-task limits (see freed).
	perTask bool
}

func newPollSignals(perTask bool) *pollSignals {
	return &pollSignals{wake: make(chan struct{}, 1), slots: make(chan struct{}, 1), perTask: perTask}
}

// poke wakes the poller: there may be new work.
func (s *pollSignals) poke() { nodecore.Signal(s.wake) }

// freed tells the poller that a slot freed up. It wakes the poller only
// while it waits for slots: no slot free (PollIdle) or too few
// (PollGather). After a claim that got less than it asked for, a freed
// slot brings no new due job, so the poller waits for new work or its
// strategy's delay, instead of claiming again (and, at a steady rate,
// mostly finding nothing) each time a body finishes. Under per-task limits
// a claim that got less may have left out the tasks at their limit, which
// a freed slot of theirs makes claimable again: there every freed slot
// wakes the poller.
func (s *pollSignals) freed() {
	if s.perTask {
		s.poke()
		return
	}
	nodecore.Signal(s.slots)
}

// poke wakes the poller: there may be new work.
func (p *poller) poke() { p.signals.poke() }

// run claims and dispatches jobs until ctx ends, one PollPolicy decision
// at a time. With claimers above 1, a claim runs on a goroutine of its own
// and the loop goes on deciding: while there is a backlog (the last claim
// to come back got all it asked for), the next claim starts, on the slots
// the running ones have not reserved, while they are still at the store.
// run returns once the claims it started have dispatched what they
// claimed.
func (p *poller) run(ctx context.Context) {
	if len(p.claims.Params.Tasks) == 0 {
		return // a node without tasks runs nothing: it only heartbeats and recovers orphans
	}
	// One gather: its start, for the policy, and its one timer, kept
	// across the wakeups of freed slots (one per finishing body) instead
	// of a timer per wakeup.
	var gatherStart time.Time
	var gather clockwork.Timer
	endGather := func() {
		if gather != nil {
			gather.Stop()
			gather = nil
		}
		gatherStart = time.Time{}
	}
	defer endGather()
	fl := inFlight{done: make(chan nodecore.ClaimOutcome, p.claimers)}
	defer fl.claims.Wait()
	for ctx.Err() == nil {
		now := p.clock.Now()
		d := p.policy.Next(nodecore.PollState{Free: p.free() - fl.reserved, Now: now, GatherStart: gatherStart, LastBeat: p.lastBeat()})
		switch d.Action {
		case nodecore.PollIdle:
			endGather()
			if !p.wait(ctx, 0, &fl, true) {
				return
			}
		case nodecore.PollGather:
			if gather == nil {
				gatherStart, gather = now, p.clock.NewTimer(d.Wait)
			}
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			case <-p.slots:
			case <-gather.Chan():
			case o := <-fl.finished():
				if !p.after(ctx, p.settle(&fl, o), &fl) {
					return
				}
			}
		case nodecore.PollBeat:
			if p.beat(ctx) {
				continue
			}
			p.rejected(ctx, spi.GateStaleHeartbeat, 1)
			if !p.wait(ctx, p.strategy.Next(spi.PollResult{Err: errStaleHeartbeat}), &fl, false) {
				return
			}
		case nodecore.PollClaim:
			endGather()
			if p.claimers <= 1 {
				if !p.claim(ctx, d.Limit) {
					return
				}
				continue
			}
			if fl.n == p.claimers || (fl.n > 0 && !fl.full) {
				// Every claimer is at the store, or one is and the last
				// claim found less than it asked for (no backlog to
				// share: a second claim would only compete for the same
				// few jobs): wait for one to come back (a wakeup stays
				// pending meanwhile).
				select {
				case <-ctx.Done():
					return
				case o := <-fl.done:
					if !p.after(ctx, p.settle(&fl, o), &fl) {
						return
					}
				}
				continue
			}
			fl.n++
			fl.reserved += d.Limit
			fl.claims.Add(1)
			go func(limit int) {
				defer fl.claims.Done()
				fl.done <- p.claimer.ClaimOnce(ctx, limit) // buffered: never blocks
			}(d.Limit)
		}
	}
}

// inFlight is what the loop of run knows of the claims running on
// goroutines of their own: how many, the slots they reserved (their
// limits), their goroutines, and the channel of their outcomes (room for
// one per claimer).
type inFlight struct {
	n, reserved int
	claims      sync.WaitGroup
	done        chan nodecore.ClaimOutcome
	// full says that the last claim to come back got all it asked for:
	// a backlog, which the next claims may share.
	full bool
}

// finished is the channel of the claims' outcomes while some are in
// flight, nil (never ready) otherwise.
func (fl *inFlight) finished() <-chan nodecore.ClaimOutcome {
	if fl.n == 0 {
		return nil
	}
	return fl.done
}

// settle accounts for a claim that came back and returns the wait before
// the next: a gate's, or the strategy's (0 or less: none). A claim that
// ctx ended waits for nothing: the loop ends.
func (p *poller) settle(fl *inFlight, o nodecore.ClaimOutcome) time.Duration {
	fl.n--
	fl.reserved -= o.Asked
	fl.full = !o.Stopped && !o.Gated && o.Res.Err == nil && o.Res.Asked > 0 && o.Res.Claimed >= o.Res.Asked
	switch {
	case o.Stopped:
		return 0
	case o.Gated:
		return o.GateWait
	}
	return p.strategy.Next(o.Res)
}

// wait waits for a wakeup (with forSlots, a freed slot's too), for d when
// d > 0, or, with fl, for a claim in flight to come back, whose own wait
// then follows. It returns false when ctx ends.
func (p *poller) wait(ctx context.Context, d time.Duration, fl *inFlight, forSlots bool) bool {
	var tc <-chan time.Time
	if d > 0 {
		t := p.clock.NewTimer(d)
		defer t.Stop()
		tc = t.Chan()
	}
	var done <-chan nodecore.ClaimOutcome // nil, never ready, without claims in flight
	if fl != nil {
		done = fl.finished()
	}
	var slots chan struct{} // nil, never ready, unless waiting for slots
	if forSlots {
		slots = p.slots
	}
	select {
	case <-ctx.Done():
		return false
	case <-p.wake:
	case <-slots:
	case <-tc:
	case o := <-done:
		return p.after(ctx, p.settle(fl, o), fl)
	}
	return true
}

// after waits d, the wait a claim that came back asks for (see wait),
// when d > 0; else it returns at once, for the loop to decide again. It
// returns false when ctx ends.
func (p *poller) after(ctx context.Context, d time.Duration, fl *inFlight) bool {
	return d <= 0 || p.wait(ctx, d, fl, false)
}

// claim claims up to limit jobs, dispatches them and waits as the strategy
// (or the gate that kept it from claiming) says; false when ctx ends.
func (p *poller) claim(ctx context.Context, limit int) bool {
	o := p.claimer.ClaimOnce(ctx, limit)
	switch {
	case o.Stopped:
		return false
	case o.Gated:
		return p.waitWake(ctx, o.GateWait)
	}
	d := p.strategy.Next(o.Res)
	return d <= 0 || p.waitWake(ctx, d)
}

// waitWake waits for a wakeup, or for d when d > 0. It returns false when
// ctx ends.
func (p *poller) waitWake(ctx context.Context, d time.Duration) bool {
	return p.wait(ctx, d, nil, false)
}
