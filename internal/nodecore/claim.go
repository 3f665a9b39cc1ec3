package nodecore

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// jobClaimer is what a claim needs of the store.
type jobClaimer interface {
	ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error)
}

// ClaimerDeps are the claim step's dependencies.
type ClaimerDeps struct {
	Store jobClaimer
	Clock clockwork.Clock
	Log   *slog.Logger
	// Params are the claims' fixed parameters (node, tasks, tags, aging);
	// each claim sets Limit and Now.
	Params spi.ClaimParams
	// Dispatch starts a claimed job.
	Dispatch func(*spi.Job)
	// Limited, when not nil, gives the tasks a claim may take now and its
	// limit (the per-task limits), Admit splits claimed jobs into those
	// that run and those over their task's limit, and GiveBack releases
	// the latter.
	Limited  func(tasks []string) ([]string, int)
	Admit    func([]*spi.Job) (run, over []*spi.Job)
	GiveBack func(context.Context, []*spi.Job)
	// Rejected is told of what an admission gate turned away (metrics):
	// spi.GateTaskLimit, spi.GatePollerBreaker; nil for none.
	Rejected func(ctx context.Context, gate string, n int)
	// Claimed and Failed, when not nil, are told of each claim's outcome
	// (metrics).
	Claimed func(ctx context.Context, n int)
	Failed  func(ctx context.Context, err error)
	// Breaker, when not nil, stops the claims while the store keeps
	// failing them (the poller breaker). While it is open, one claim a
	// ProbeEvery probes the store (breaker.Probe): the first that
	// succeeds closes the breaker, so that a node is back at work within
	// about ProbeEvery of the store's return instead of the breaker's
	// whole wait; ProbeEvery zero probes never.
	Breaker    *breaker.Breaker
	ProbeEvery time.Duration
	// Adopter, when not nil, finds the jobs of the claims whose answer was
	// lost (spi.ClaimAdopter): a claim that failed may have been applied.
	// The claimer remembers the Now of each claim that failed and adopts
	// their jobs with its next claim that succeeds.
	Adopter spi.ClaimAdopter
	// Answered, when not nil, is told when a claim succeeds after one
	// failed: the store answers again (the completer retries at once).
	Answered func()
	// Fresh, when not nil, reports whether the node's heartbeat is fresh
	// enough for a claim (PollPolicy.Fresh): checked again as the claim
	// leaves, since a claim in flight may leave long after its decision
	// (a stall, a clock jump), and a claim under a stale row would have
	// its jobs recovered at once.
	Fresh func() bool
}

// Claimer is a node's claim step: its gates (the per-task limits, the
// poller breaker), the store's claim, the adoption of the jobs of claims
// whose answer was lost, the dispatch of what it claimed and the give-back
// of what is over a task's limit. Claims may run at once.
type Claimer struct {
	ClaimerDeps
	// lastProbe is when the last probe of the open breaker started (Unix
	// nanoseconds), for the claims to share the pace.
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

// NewClaimer returns the claim step on d.
func NewClaimer(d ClaimerDeps) *Claimer {
	if d.Rejected == nil {
		d.Rejected = func(context.Context, string, int) {}
	}
	if d.Claimed == nil {
		d.Claimed = func(context.Context, int) {}
	}
	if d.Failed == nil {
		d.Failed = func(context.Context, error) {}
	}
	return &Claimer{ClaimerDeps: d}
}

// ClaimOutcome is how one claim went: the slots it asked for, its result
// for the poll strategy, or that a gate kept it from the store (GateWait:
// how long before the next try; 0 until a wakeup), or that ctx ended.
type ClaimOutcome struct {
	Asked    int
	Res      spi.PollResult
	Gated    bool
	GateWait time.Duration
	Stopped  bool
}

// ClaimOnce claims up to limit jobs and dispatches them, unless a gate
// (every task at its limit, the open poller breaker) says to wait. The
// engine's poller calls it from its loop, up to Claimers at once; the
// cluster simulator from its event loop.
func (p *Claimer) ClaimOnce(ctx context.Context, limit int) ClaimOutcome {
	cp := p.Params
	cp.Limit, cp.Now = limit, p.claimTime()
	if p.Limited != nil {
		var room int
		if cp.Tasks, room = p.Limited(cp.Tasks); len(cp.Tasks) == 0 || room <= 0 {
			return ClaimOutcome{Asked: limit, Gated: true} // every task at its limit: wait for a slot
		}
		cp.Limit = min(cp.Limit, room)
	}
	if p.Fresh != nil && !p.Fresh() {
		p.Rejected(ctx, spi.GateStaleHeartbeat, 1)
		return ClaimOutcome{Asked: limit, Gated: true, GateWait: time.Millisecond} // decide again: refresh the beat
	}
	var permit breaker.Permit
	if p.Breaker != nil {
		var ok bool
		if permit, ok = p.Breaker.Allow(p.Clock.Now()); !ok {
			permit, ok = p.probe()
		}
		if !ok {
			// Open: no claim until the next probe or the end of its
			// wait (a wakeup only asks again).
			p.Rejected(ctx, spi.GatePollerBreaker, 1)
			return ClaimOutcome{Asked: limit, Gated: true, GateWait: p.untilProbe()}
		}
	}
	// The jobs of the claims whose answer was lost hold slots of this
	// claim, which takes only the rest: adopted after it, they would run
	// past the free slots.
	adopted := p.adopt(ctx)
	cp.Limit -= len(adopted)
	var jobs []*spi.Job
	var err error
	var held spi.ClaimHeld
	cp.Held = &held
	if cp.Limit > 0 {
		jobs, err = p.Store.ClaimJobs(ctx, cp)
	}
	if held.Jobs > 0 && err == nil {
		p.Rejected(ctx, spi.GateRateLimit, held.Jobs)
	}
	if p.Breaker != nil {
		out := spi.CallSucceeded
		switch {
		case cp.Limit <= 0 || (err != nil && ctx.Err() != nil):
			out = spi.CallNotCounted
		case err != nil:
			out = spi.CallFailed
		}
		permit.Done(p.Clock.Now(), out)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ClaimOutcome{Asked: limit, Stopped: true}
		}
		p.Failed(ctx, err)
		p.Log.Warn("claim failed; backing off", "err", err)
		p.remember(cp.Now)
		p.failing.Store(true)
	} else if p.failing.Load() && p.failing.Swap(false) && p.Answered != nil {
		p.Answered()
	}
	jobs = append(adopted, jobs...)
	if len(jobs) > 0 {
		p.Claimed(ctx, len(jobs))
		var over []*spi.Job
		if p.Admit != nil {
			jobs, over = p.Admit(jobs)
		}
		for _, j := range jobs {
			p.Dispatch(j)
		}
		if len(over) > 0 {
			p.Rejected(ctx, spi.GateTaskLimit, len(over))
			p.GiveBack(ctx, over)
		}
	}
	return ClaimOutcome{Asked: limit, Res: spi.PollResult{Asked: limit, Claimed: len(jobs), Err: err, Room: held.Room}}
}

// claimTime returns the Now of a claim: the clock's time to the
// microsecond (the stores' precision), after the Now of every earlier
// claim of the node.
func (p *Claimer) claimTime() time.Time {
	now := p.Clock.Now().UTC().Truncate(time.Microsecond).UnixMicro()
	for {
		last := p.lastNow.Load()
		next := max(now, last+1)
		if p.lastNow.CompareAndSwap(last, next) {
			return time.UnixMicro(next).UTC()
		}
	}
}

// remember keeps the Now of a claim that failed, for adopt.
func (p *Claimer) remember(now time.Time) {
	if bug("lost-claim-forgotten") { // planted: a claim whose answer was lost is never adopted
		return
	}
	if p.Adopter == nil {
		return
	}
	p.unsureMu.Lock()
	p.unsure = append(p.unsure, now)
	p.anyUnsure.Store(true)
	p.unsureMu.Unlock()
}

// Lost returns the jobs of the node's claims whose answer was lost and that
// no claim adopted yet (still RUNNING under the node).
func (p *Claimer) Lost(ctx context.Context) []*spi.Job { return p.adopt(ctx) }

// GiveBackLost gives the Lost jobs back to PENDING at now (GiveBack), at a
// stop: they never started, and orphan recovery would charge each a crash.
// It returns how many went back, and the store's error.
func (p *Claimer) GiveBackLost(ctx context.Context, store jobReleaser, now time.Time) (int, error) {
	lost := p.Lost(ctx)
	if len(lost) == 0 {
		return 0, nil
	}
	kept, err := GiveBack(ctx, store, now, lost)
	return len(lost) - len(kept), err
}

// adopt returns the jobs of the claims that failed but were applied
// (RUNNING under this node, claimed at their Now), once the store answers
// again; when the store fails to tell, it tries again with the next claim.
func (p *Claimer) adopt(ctx context.Context) []*spi.Job {
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
	jobs, err := p.Adopter.AdoptClaims(ctx, p.Params.NodeID, unsure)
	if err != nil {
		p.unsureMu.Lock()
		p.unsure = append(p.unsure, unsure...)
		p.anyUnsure.Store(true)
		p.unsureMu.Unlock()
		p.Log.Warn("reading the jobs of the claims that failed failed; trying again with the next claim", "claims", len(unsure), "err", err)
		return nil
	}
	if len(jobs) > 0 {
		p.Log.Info("adopted the jobs of claims whose answer was lost", "jobs", len(jobs), "claims", len(unsure))
	}
	if bug("adopt-drops-jobs") { // planted: adopted jobs never run
		return nil
	}
	return jobs
}

// probe admits a claim through the open breaker when probeEvery has
// passed since the last probe (see ClaimerDeps.Breaker).
func (p *Claimer) probe() (breaker.Permit, bool) {
	if p.ProbeEvery <= 0 {
		return breaker.Permit{}, false
	}
	now := p.Clock.Now()
	last := p.lastProbe.Load()
	if now.Sub(time.Unix(0, last)) < p.ProbeEvery || !p.lastProbe.CompareAndSwap(last, now.UnixNano()) {
		return breaker.Permit{}, false
	}
	return p.Breaker.Probe(now)
}

// untilProbe is how long a claim the open breaker refused waits: until
// the next probe is due or the breaker's wait is over, at least 1 ms.
func (p *Claimer) untilProbe() time.Duration {
	now := p.Clock.Now()
	d := p.Breaker.OpenFor(now)
	if p.ProbeEvery > 0 {
		d = min(d, p.ProbeEvery-now.Sub(time.Unix(0, p.lastProbe.Load())))
	}
	return max(d, time.Millisecond)
}
