package nodecore

import (
	"errors"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// PollLoop is a node's poll loop, its state and its decisions: the gather
// in progress, the claims in flight and the slots they reserve, and
// whether the last claim back found a backlog. The engine's poller drives
// it from its goroutine with channels and timers, the cluster simulator
// from its event loop: each asks Next what to do and reports what came of
// it (Settle, Waited, BeatFailed).
type PollLoop struct {
	Policy   PollPolicy
	Strategy spi.PollDelayStrategy
	// Claimers is how many claims may be in flight at once (0 means 1):
	// while there is a backlog (the last claim back got all it asked
	// for), the next claim starts, on the slots the running ones have not
	// reserved, while they are still at the store.
	Claimers int

	gatherStart        time.Time
	inFlight, reserved int
	full               bool
}

// PollStepKind is what a poll loop does next.
type PollStepKind int

// The steps of a poll loop.
const (
	// StepIdle: no slot is free; wait for a freed slot, a wakeup or a
	// claim in flight.
	StepIdle PollStepKind = iota
	// StepGather: too few slots are free to be worth a claim; wait up to
	// Wait for more to free up (or a wakeup, or a claim in flight). A
	// gather's one timer lasts across its wakeups: NewGather says that
	// this one begins.
	StepGather
	// StepBeat: the heartbeat is stale; refresh it before a claim, and
	// wait BeatFailed when that failed.
	StepBeat
	// StepClaim: claim Limit jobs now (one claimer), then wait Waited.
	StepClaim
	// StepStartClaim: start a claim of Limit jobs in flight (several
	// claimers), and decide again at once; its outcome goes to Settle.
	StepStartClaim
	// StepAwaitClaim: every claimer is at the store, or one is and the
	// last claim back found less than it asked for (no backlog to share);
	// wait for a claim in flight to come back (Settle).
	StepAwaitClaim
)

// PollStep is a poll loop's next step.
type PollStep struct {
	Kind      PollStepKind
	Limit     int           // StepClaim, StepStartClaim: the claim's size
	Wait      time.Duration // StepGather: the longest wait
	NewGather bool          // StepGather: a gather begins
}

// Next decides the loop's next step at now, with free slots and the last
// heartbeat that succeeded. A claim never asks for more than the free
// slots less those the claims in flight reserved, nor more than a batch.
func (l *PollLoop) Next(now time.Time, free int, lastBeat time.Time) PollStep {
	d := l.Policy.Next(PollState{Free: free - l.reserved, Now: now, GatherStart: l.gatherStart, LastBeat: lastBeat})
	switch d.Action {
	case PollIdle:
		l.gatherStart = time.Time{}
		return PollStep{Kind: StepIdle}
	case PollGather:
		st := PollStep{Kind: StepGather, Wait: d.Wait}
		if l.gatherStart.IsZero() {
			l.gatherStart, st.NewGather = now, true
		}
		return st
	case PollBeat:
		return PollStep{Kind: StepBeat}
	}
	l.gatherStart = time.Time{}
	switch {
	case l.Claimers <= 1:
		return PollStep{Kind: StepClaim, Limit: d.Limit}
	case l.inFlight == l.Claimers || (l.inFlight > 0 && !l.full):
		return PollStep{Kind: StepAwaitClaim}
	}
	l.inFlight++
	if !bug("claims-overlap-slots") { // planted: a second claim takes the slots the first reserved
		l.reserved += d.Limit
	}
	return PollStep{Kind: StepStartClaim, Limit: d.Limit}
}

// InFlight is how many claims are in flight.
func (l *PollLoop) InFlight() int { return l.inFlight }

// Settle accounts for a claim in flight that came back and returns the
// wait before the next decision (0 or less: none).
func (l *PollLoop) Settle(o ClaimOutcome) time.Duration {
	l.inFlight--
	if !bug("claims-overlap-slots") {
		l.reserved -= o.Asked
	}
	l.full = !o.Stopped && !o.Gated && o.Res.Err == nil && o.Res.Asked > 0 && o.Res.Claimed >= o.Res.Asked
	if o.Gated {
		return o.GateWait
	}
	return l.Waited(o)
}

// Waited is the strategy's wait after a claim that went to the store (0
// or less: none; none after a claim that the end of its context stopped).
func (l *PollLoop) Waited(o ClaimOutcome) time.Duration {
	if o.Stopped {
		return 0
	}
	return l.Strategy.Next(o.Res)
}

// errStaleHeartbeat is the poll result of a claim skipped because the
// heartbeat could not be refreshed.
var errStaleHeartbeat = errors.New("heartbeat stale and not refreshed")

// BeatFailed is the wait after a heartbeat that the loop refreshed before
// a claim failed to write.
func (l *PollLoop) BeatFailed() time.Duration {
	return l.Strategy.Next(spi.PollResult{Err: errStaleHeartbeat})
}
