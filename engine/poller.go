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
	loop    *nodecore.PollLoop
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
	return &poller{pollerDeps: d, loop: &nodecore.PollLoop{Policy: d.policy, Strategy: d.strategy, Claimers: d.claimers},
		claimer: nodecore.NewClaimer(d.claims), wake: d.signals.wake, slots: d.signals.slots}
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

// run claims and dispatches jobs until ctx ends, one decision of its
// nodecore.PollLoop at a time. With claimers above 1, a claim runs on a
// goroutine of its own and the loop goes on deciding: while there is a
// backlog, the next claim starts, on the slots the running ones have not
// reserved, while they are still at the store. run returns once the claims
// it started have dispatched what they claimed.
func (p *poller) run(ctx context.Context) {
	if len(p.claims.Params.Tasks) == 0 {
		return // a node without tasks runs nothing: it only heartbeats and recovers orphans
	}
	// One gather's one timer, kept across the wakeups of freed slots (one
	// per finishing body) instead of a timer per wakeup.
	var gather clockwork.Timer
	endGather := func() {
		if gather != nil {
			gather.Stop()
			gather = nil
		}
	}
	defer endGather()
	fl := inFlight{done: make(chan nodecore.ClaimOutcome, p.claimers)}
	defer fl.claims.Wait()
	for ctx.Err() == nil {
		st := p.loop.Next(p.clock.Now(), p.free(), p.lastBeat())
		if st.Kind != nodecore.StepGather && st.Kind != nodecore.StepBeat {
			endGather()
		}
		switch st.Kind {
		case nodecore.StepIdle:
			if !p.wait(ctx, 0, &fl, true) {
				return
			}
		case nodecore.StepGather:
			if gather == nil {
				gather = p.clock.NewTimer(st.Wait)
			}
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			case <-p.slots:
			case <-gather.Chan():
			case o := <-fl.finished(p.loop):
				if !p.after(ctx, p.loop.Settle(o), &fl) {
					return
				}
			}
		case nodecore.StepBeat:
			if p.beat(ctx) {
				continue
			}
			p.rejected(ctx, spi.GateStaleHeartbeat, 1)
			if !p.wait(ctx, p.loop.BeatFailed(), &fl, false) {
				return
			}
		case nodecore.StepClaim:
			if !p.claim(ctx, st.Limit) {
				return
			}
		case nodecore.StepAwaitClaim:
			// A wakeup stays pending meanwhile.
			select {
			case <-ctx.Done():
				return
			case o := <-fl.done:
				if !p.after(ctx, p.loop.Settle(o), &fl) {
					return
				}
			}
		case nodecore.StepStartClaim:
			fl.claims.Add(1)
			go func(limit int) {
				defer fl.claims.Done()
				fl.done <- p.claimer.ClaimOnce(ctx, limit) // buffered: never blocks
			}(st.Limit)
		}
	}
}

// inFlight is what the loop of run keeps of the claims running on
// goroutines of their own: their goroutines, and the channel of their
// outcomes (room for one per claimer).
type inFlight struct {
	claims sync.WaitGroup
	done   chan nodecore.ClaimOutcome
}

// finished is the channel of the claims' outcomes while some are in
// flight, nil (never ready) otherwise.
func (fl *inFlight) finished(l *nodecore.PollLoop) <-chan nodecore.ClaimOutcome {
	if l.InFlight() == 0 {
		return nil
	}
	return fl.done
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
		done = fl.finished(p.loop)
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
		return p.after(ctx, p.loop.Settle(o), fl)
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
	d := p.loop.Waited(o)
	return d <= 0 || p.waitWake(ctx, d)
}

// waitWake waits for a wakeup, or for d when d > 0. It returns false when
// ctx ends.
func (p *poller) waitWake(ctx context.Context, d time.Duration) bool {
	return p.wait(ctx, d, nil, false)
}
