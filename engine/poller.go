package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// jobClaimer is what the poller needs of the store.
type jobClaimer interface {
	ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error)
}

// pollerDeps are the poller's dependencies.
type pollerDeps struct {
	store jobClaimer
	clock clockwork.Clock
	log   *slog.Logger
	// params are the claims' fixed parameters (node, tasks, tags, aging);
	// the poller sets Limit and Now.
	params spi.ClaimParams
	// policy decides each step: idle, gather, refresh the beat, claim.
	policy nodecore.PollPolicy
	// strategy decides the waits between claims.
	strategy spi.PollDelayStrategy
	// free returns the free slots; dispatch starts a claimed job.
	free     func() int
	dispatch func(*spi.Job)
	// limited, when not nil, gives the tasks a claim may take now and
	// its limit (the per-task limits), admit splits claimed jobs into
	// those that run and those over their task's limit, and giveBack
	// releases the latter.
	limited  func(tasks []string) ([]string, int)
	admit    func([]*spi.Job) (run, over []*spi.Job)
	giveBack func(context.Context, []*spi.Job)
	// lastBeat is when the node's heartbeat last succeeded; beat writes it
	// now and reports whether it succeeded.
	lastBeat func() time.Time
	beat     func(ctx context.Context) bool
	// rejected is told of what an admission gate turned away (metrics):
	// spi.GateTaskLimit, spi.GatePollerBreaker, spi.GateStaleHeartbeat.
	rejected func(ctx context.Context, gate string, n int)
	// claimed and failed are told of each claim's outcome (metrics).
	claimed func(ctx context.Context, n int)
	failed  func(ctx context.Context, err error)
	// breaker, when not nil, stops the claims while the store keeps
	// failing them (the poller breaker). While it is open, one claim a
	// probeEvery probes the store (breaker.Probe): the first that
	// succeeds closes the breaker, so that a node is back at work within
	// about probeEvery of the store's return instead of the breaker's
	// whole wait; probeEvery zero probes never.
	breaker    *breaker.Breaker
	probeEvery time.Duration
	// adopter, when not nil, finds the jobs of the claims whose answer was
	// lost (spi.ClaimAdopter): a claim that failed may have been applied.
	// The poller remembers the Now of each claim that failed and adopts
	// their jobs with its next claim that succeeds.
	adopter spi.ClaimAdopter
	// answered, when not nil, is told when a claim succeeds after one
	// failed: the store answers again (the completer retries at once).
	answered func()
	// signals are its wakeups; nil makes its own.
	signals *pollSignals
	// claimers is how many claims may be at the store at once (0 means
	// 1). Above 1, limited must be nil: the per-task room is read before
	// a claim and does not count the claims in flight.
	claimers int
}

// poller claims due jobs up to the free slots and dispatches them, waking
// on submissions (poke), on freed slots while it waits for slots (freed),
// or after its strategy's delay.
type poller struct {
	pollerDeps
	wake  chan struct{} // new work (poke)
	slots chan struct{} // a slot freed up (freed)
	// lastProbe is when the last probe of the open breaker started (Unix
	// nanoseconds), for the claimers to share the pace.
	lastProbe atomic.Int64
	// lastNow is the Now of the latest claim (Unix microseconds): each
	// claim of the node gets a later one, so that a claim's Now names it.
	lastNow atomic.Int64
	// unsure are the Nows of the claims that failed, to adopt; anyUnsure
	// says whether there are any, so that a claim after no failure takes
	// no lock.
	unsureMu  sync.Mutex
	unsure    []time.Time
	anyUnsure atomic.Bool
	// failing is true from a claim that failed to the next that succeeds.
	failing atomic.Bool
}

func newPoller(d pollerDeps) *poller {
	if d.rejected == nil {
		d.rejected = func(context.Context, string, int) {}
	}
	if d.signals == nil {
		d.signals = newPollSignals(d.limited != nil)
	}
	d.claimers = max(d.claimers, 1)
	return &poller{pollerDeps: d, wake: d.signals.wake, slots: d.signals.slots}
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
	if len(p.params.Tasks) == 0 {
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
	fl := inFlight{done: make(chan claimOutcome, p.claimers)}
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
				fl.done <- p.claimOnce(ctx, limit) // buffered: never blocks
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
	done        chan claimOutcome
	// full says that the last claim to come back got all it asked for:
	// a backlog, which the next claims may share.
	full bool
}

// finished is the channel of the claims' outcomes while some are in
// flight, nil (never ready) otherwise.
func (fl *inFlight) finished() <-chan claimOutcome {
	if fl.n == 0 {
		return nil
	}
	return fl.done
}

// settle accounts for a claim that came back and returns the wait before
// the next: a gate's, or the strategy's (0 or less: none). A claim that
// ctx ended waits for nothing: the loop ends.
func (p *poller) settle(fl *inFlight, o claimOutcome) time.Duration {
	fl.n--
	fl.reserved -= o.asked
	fl.full = !o.stopped && !o.gated && o.res.Err == nil && o.res.Asked > 0 && o.res.Claimed >= o.res.Asked
	switch {
	case o.stopped:
		return 0
	case o.gated:
		return o.gateWait
	}
	return p.strategy.Next(o.res)
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
	var done <-chan claimOutcome // nil, never ready, without claims in flight
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

// claimOutcome is how one claim went: the slots it asked for, its result
// for the strategy, or that a gate kept it from the store (gateWait: how
// long before the next try; 0 until a wakeup), or that ctx ended.
type claimOutcome struct {
	asked    int
	res      spi.PollResult
	gated    bool
	gateWait time.Duration
	stopped  bool
}

// claim claims up to limit jobs, dispatches them and waits as the strategy
// (or the gate that kept it from claiming) says; false when ctx ends.
func (p *poller) claim(ctx context.Context, limit int) bool {
	o := p.claimOnce(ctx, limit)
	switch {
	case o.stopped:
		return false
	case o.gated:
		return p.waitWake(ctx, o.gateWait)
	}
	d := p.strategy.Next(o.res)
	return d <= 0 || p.waitWake(ctx, d)
}

// claimOnce claims up to limit jobs and dispatches them, unless a gate
// (every task at its limit, the open poller breaker) says to wait.
func (p *poller) claimOnce(ctx context.Context, limit int) claimOutcome {
	cp := p.params
	cp.Limit, cp.Now = limit, p.claimTime()
	if p.limited != nil {
		var room int
		if cp.Tasks, room = p.limited(cp.Tasks); len(cp.Tasks) == 0 || room <= 0 {
			return claimOutcome{asked: limit, gated: true} // every task at its limit: wait for a slot
		}
		cp.Limit = min(cp.Limit, room)
	}
	var permit breaker.Permit
	if p.breaker != nil {
		var ok bool
		if permit, ok = p.breaker.Allow(p.clock.Now()); !ok {
			permit, ok = p.probe()
		}
		if !ok {
			// Open: no claim until the next probe or the end of its
			// wait (a wakeup only asks again).
			p.rejected(ctx, spi.GatePollerBreaker, 1)
			return claimOutcome{asked: limit, gated: true, gateWait: p.untilProbe()}
		}
	}
	jobs, err := p.store.ClaimJobs(ctx, cp)
	if p.breaker != nil {
		out := spi.CallSucceeded
		switch {
		case err != nil && ctx.Err() != nil:
			out = spi.CallNotCounted
		case err != nil:
			out = spi.CallFailed
		}
		permit.Done(p.clock.Now(), out)
	}
	if err != nil {
		if ctx.Err() != nil {
			return claimOutcome{asked: limit, stopped: true}
		}
		p.failed(ctx, err)
		p.log.Warn("claim failed; backing off", "err", err)
		p.remember(cp.Now)
		p.failing.Store(true)
	} else {
		if p.failing.Load() && p.failing.Swap(false) && p.answered != nil {
			p.answered()
		}
		jobs = append(jobs, p.adopt(ctx)...)
	}
	if err == nil && len(jobs) > 0 {
		p.claimed(ctx, len(jobs))
		var over []*spi.Job
		if p.admit != nil {
			jobs, over = p.admit(jobs)
		}
		for _, j := range jobs {
			p.dispatch(j)
		}
		if len(over) > 0 {
			p.rejected(ctx, spi.GateTaskLimit, len(over))
			p.giveBack(ctx, over)
		}
	}
	return claimOutcome{asked: limit, res: spi.PollResult{Asked: limit, Claimed: len(jobs), Err: err}}
}

// claimTime returns the Now of a claim: the clock's time to the
// microsecond (the stores' precision), after the Now of every earlier
// claim of the node.
func (p *poller) claimTime() time.Time {
	now := p.clock.Now().UTC().Truncate(time.Microsecond).UnixMicro()
	for {
		last := p.lastNow.Load()
		next := max(now, last+1)
		if p.lastNow.CompareAndSwap(last, next) {
			return time.UnixMicro(next).UTC()
		}
	}
}

// remember keeps the Now of a claim that failed, for adopt.
func (p *poller) remember(now time.Time) {
	if p.adopter == nil {
		return
	}
	p.unsureMu.Lock()
	p.unsure = append(p.unsure, now)
	p.anyUnsure.Store(true)
	p.unsureMu.Unlock()
}

// adopt returns the jobs of the claims that failed but were applied
// (RUNNING under this node, claimed at their Now), once the store answers
// again; when the store fails to tell, it tries again with the next claim.
func (p *poller) adopt(ctx context.Context) []*spi.Job {
	if !p.anyUnsure.Load() {
		return nil
	}
	p.unsureMu.Lock()
	unsure := p.unsure
	p.unsure = nil
	p.anyUnsure.Store(false)
	p.unsureMu.Unlock()
	if len(unsure) == 0 {
		return nil
	}
	jobs, err := p.adopter.AdoptClaims(ctx, p.params.NodeID, unsure)
	if err != nil {
		p.unsureMu.Lock()
		p.unsure = append(p.unsure, unsure...)
		p.anyUnsure.Store(true)
		p.unsureMu.Unlock()
		p.log.Warn("reading the jobs of the claims that failed failed; trying again with the next claim", "claims", len(unsure), "err", err)
		return nil
	}
	if len(jobs) > 0 {
		p.log.Info("adopted the jobs of claims whose answer was lost", "jobs", len(jobs), "claims", len(unsure))
	}
	return jobs
}

// probe admits a claim through the open breaker when probeEvery has
// passed since the last probe (see pollerDeps.breaker).
func (p *poller) probe() (breaker.Permit, bool) {
	if p.probeEvery <= 0 {
		return breaker.Permit{}, false
	}
	now := p.clock.Now()
	last := p.lastProbe.Load()
	if now.Sub(time.Unix(0, last)) < p.probeEvery || !p.lastProbe.CompareAndSwap(last, now.UnixNano()) {
		return breaker.Permit{}, false
	}
	return p.breaker.Probe(now)
}

// untilProbe is how long a claim the open breaker refused waits: until
// the next probe is due or the breaker's wait is over, at least 1 ms.
func (p *poller) untilProbe() time.Duration {
	now := p.clock.Now()
	d := p.breaker.OpenFor(now)
	if p.probeEvery > 0 {
		d = min(d, p.probeEvery-now.Sub(time.Unix(0, p.lastProbe.Load())))
	}
	return max(d, time.Millisecond)
}

// waitWake waits for a wakeup, or for d when d > 0. It returns false when
// ctx ends.
func (p *poller) waitWake(ctx context.Context, d time.Duration) bool {
	return p.wait(ctx, d, nil, false)
}
