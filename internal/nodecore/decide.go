package nodecore

import (
	"errors"
	"fmt"
	"slices"
	"time"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// PollPolicy decides the poller's next step. The engine builds it from its
// Options; its zero value claims one job at a time, never gathers and
// never refreshes the heartbeat itself.
type PollPolicy struct {
	// Slots is the pool's size, Batch the most jobs one claim takes.
	Slots, Batch int
	// Gather is how long a mostly busy pool waits for more free slots
	// before it claims the few it has; zero or negative: never.
	Gather time.Duration
	// HeartbeatInterval is the node's beat period: a beat older than twice
	// that is refreshed before a claim. Zero or negative: no refresh.
	HeartbeatInterval time.Duration
}

// PollState is what the poller knows when it decides.
type PollState struct {
	// Free is the number of free slots.
	Free int
	// Now is the engine clock's time.
	Now time.Time
	// GatherStart is when the poller began waiting for more free slots;
	// zero when it is not waiting.
	GatherStart time.Time
	// LastBeat is when the node's heartbeat last succeeded.
	LastBeat time.Time
}

// PollAction is what the poller does next.
type PollAction int

// The poller's actions.
const (
	// PollIdle: no slot is free; wait until a body finishes.
	PollIdle PollAction = iota
	// PollGather: too few slots are free to be worth a round trip; wait
	// up to PollDecision.Wait (or until more free up) and decide again.
	PollGather
	// PollBeat: the heartbeat is stale; write it before claiming (after a
	// stall, peers may have recovered the node's jobs and deleted its row,
	// and jobs claimed under a stale row would look orphaned at once).
	PollBeat
	// PollClaim: claim PollDecision.Limit jobs.
	PollClaim
)

// PollDecision is the poller's next step.
type PollDecision struct {
	Action PollAction
	// Limit is the claim's size (PollClaim).
	Limit int
	// Wait is the longest wait before deciding again (PollGather).
	Wait time.Duration
}

// Fresh reports whether a heartbeat that last succeeded at lastBeat is
// fresh enough at now for a claim: younger than two intervals (always
// without a HeartbeatInterval).
func (p PollPolicy) Fresh(now, lastBeat time.Time) bool {
	if bug("skip-fresh-beat") { // planted: claims under a stale heartbeat
		return true
	}
	return p.HeartbeatInterval <= 0 || now.Sub(lastBeat) < 2*p.HeartbeatInterval
}

// MinClaim is the fewest free slots worth a claim while the pool is busy:
// claiming a handful of slots at a time costs a round trip each, so the
// poller waits for a quarter of the pool (or of a batch) to free up, or for
// the gather timeout.
func (p PollPolicy) MinClaim() int { return max(1, min(p.Slots, p.Batch)/4) }

// Next decides the poller's next step. A claim never asks for more than the
// free slots nor more than a batch.
func (p PollPolicy) Next(s PollState) PollDecision {
	if s.Free <= 0 {
		return PollDecision{Action: PollIdle}
	}
	if s.Free < p.MinClaim() && p.Gather > 0 {
		if s.GatherStart.IsZero() {
			return PollDecision{Action: PollGather, Wait: p.Gather}
		}
		if waited := s.Now.Sub(s.GatherStart); waited < p.Gather {
			return PollDecision{Action: PollGather, Wait: p.Gather - waited}
		}
	}
	if !p.Fresh(s.Now, s.LastBeat) {
		return PollDecision{Action: PollBeat}
	}
	d := PollDecision{Action: PollClaim, Limit: max(1, min(s.Free, p.Batch))}
	if bug("claim-past-free-slots") { // planted: one job more than the free slots
		d.Limit++
	}
	return d
}

// StopStep is one step of the graceful stop.
type StopStep int

// The steps of the graceful stop, in StopOrder's order.
const (
	// StopClaiming stops the poller and the services.
	StopClaiming StopStep = iota + 1
	// DrainAndRelease waits for the running bodies up to the shutdown
	// timeout and releases (fenced, uncharged) the claims still running.
	DrainAndRelease
	// FlushCompletions writes what finished.
	FlushCompletions
	// StopHeartbeats ends the heartbeats and the claim check.
	StopHeartbeats
	// Deregister deletes the node's row.
	Deregister
)

var stopStepNames = map[StopStep]string{StopClaiming: "stop claiming", DrainAndRelease: "drain and release",
	FlushCompletions: "flush completions", StopHeartbeats: "stop heartbeats", Deregister: "deregister"}

// String names the step, as the engine's stop logs it.
func (s StopStep) String() string {
	if n, ok := stopStepNames[s]; ok {
		return n
	}
	return "unknown stop step"
}

// StopOrder is the graceful stop (invariant 4) in the one order that loses
// nothing: claiming stops first; the drain waits for the bodies and
// releases those still running when it times out; what finished is then
// flushed; heartbeats stop only after that, so that no peer recovers (and
// charges) a draining node's jobs; the node's row goes last.
func StopOrder() []StopStep {
	if bug("heartbeats-before-drain") { // planted: a long drain has its jobs recovered
		return []StopStep{StopClaiming, StopHeartbeats, DrainAndRelease, FlushCompletions, Deregister}
	}
	return []StopStep{StopClaiming, DrainAndRelease, FlushCompletions, StopHeartbeats, Deregister}
}

// CompletionOf is the owner write that ends the execution of j, claimed
// under j.ClaimSeq (the fence), whose body returned err at now: success, a
// snooze (Snoozed), a retry at the time DecideRetry gives, or the
// dead-letter queue, with the error sanitized. The caller adds a
// success's result. A job with dependents (in a workflow) says so, so
// that the store releases them in the same write.
func CompletionOf(j *spi.Job, err error, policy spi.RetryPolicy, s spi.ErrorSanitizer, now time.Time) spi.Completion {
	c := spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, FinishedAt: now, HasDependents: j.Dependents > 0,
		Attempt: AttemptOutcomeOf(err), Node: j.OwnerNode, StartedAt: j.ClaimedAt}
	if bug("ignore-fence") { // planted: a write not fenced by its claim
		c.ClaimSeq = 0
	}
	if err == nil {
		c.Outcome = spi.OutcomeSucceeded
		c.Attempts = j.Attempts + 1 // reported in events; not written on success
		return c
	}
	var wait *ratchet.WaitError
	if errors.As(err, &wait) {
		if err = Waited(&c, j, wait); err == nil {
			return c
		}
		c.Attempt = spi.AttemptFailed // past its bound: a failure, not a wait
	} else if delay, ok := ratchet.SnoozeOf(err); ok {
		if err = Snoozed(&c, j, delay, now); err == nil {
			return c
		}
		c.Attempt = spi.AttemptFailed // past its bound: a failure, not a snooze
	}
	d := DecideRetry(j, err, policy, now)
	c.Attempts, c.LastError = d.Attempt, s.Sanitize(err)
	if d.Retry {
		c.Outcome, c.RetryAt = spi.OutcomeRetry, d.RetryAt
	} else {
		c.Outcome = spi.OutcomeFailed
	}
	return c
}

// AttemptOutcomeOf names how a run whose body returned err ended, for its
// attempt record: succeeded, snoozed, timed out (ratchet.ErrTimeout),
// expired (ratchet.ErrExpired: the node wrote it in place of the body) or
// failed.
func AttemptOutcomeOf(err error) spi.AttemptOutcome {
	if err == nil {
		return spi.AttemptSucceeded
	}
	switch _, snoozed := ratchet.SnoozeOf(err); {
	case waiting(err):
		return spi.AttemptWaiting
	case snoozed:
		return spi.AttemptSnoozed
	case errors.Is(err, ratchet.ErrExpired):
		return spi.AttemptExpired
	case errors.Is(err, ratchet.ErrTimeout):
		if bug("timeout-recorded-as-failure") { // planted: a timed-out run's record says failed
			return spi.AttemptFailed
		}
		return spi.AttemptTimedOut
	}
	return spi.AttemptFailed
}

// waiting reports whether err holds a ratchet.WaitError: the body waits
// for a signal (ratchet.WaitSignal).
func waiting(err error) bool {
	var wait *ratchet.WaitError
	return errors.As(err, &wait)
}

// Snoozed makes c the snooze of j's run for delay at now: PENDING again,
// due at now+delay, its snooze count one more, its attempts and last error
// as they were (c.Attempts is the run's number, for the events). It
// returns nil, or, when j has snoozed as many times as it may
// (spi.MaxSnoozes), leaves c alone and returns the final failure that
// takes the snooze's place, wrapping ratchet.ErrTooManySnoozes.
func Snoozed(c *spi.Completion, j *spi.Job, delay time.Duration, now time.Time) error {
	if err := snoozeBound(j); err != nil {
		return err
	}
	c.Outcome, c.RetryAt, c.Snoozes, c.Attempts = spi.OutcomeSnoozed, now.Add(delay), j.Snoozes+1, j.Attempts+1
	if bug("snooze-spends-attempt") { // planted: a snooze charged as a failed attempt
		c.Outcome = spi.OutcomeRetry
	}
	return nil
}

// Waited makes c the wait of j's run for the signal of w
// (ratchet.WaitSignal): WAITING for it, its snooze count one more, its
// attempts and last error as they were. Past the snooze bound it leaves c
// alone and returns the final failure that takes the wait's place, as
// Snoozed does.
func Waited(c *spi.Completion, j *spi.Job, w *ratchet.WaitError) error {
	if err := snoozeBound(j); err != nil {
		return err
	}
	c.Outcome, c.Snoozes, c.Attempts = spi.OutcomeWaiting, j.Snoozes+1, j.Attempts+1
	c.Signal = &spi.SignalWait{Name: w.Name, Key: w.Key, Deadline: w.Deadline}
	return nil
}

// snoozeBound is the final failure of a run of j that would snooze or
// wait past the job's bound (spi.MaxSnoozes), wrapping
// ratchet.ErrTooManySnoozes; nil within it.
func snoozeBound(j *spi.Job) error {
	if limit := spi.MaxSnoozes(j); j.Snoozes >= limit {
		return ratchet.DoNotRetry(fmt.Errorf("%w: the job snoozed %d times, its bound (ratchet.WithMaxSnoozes: %d); "+
			"raise the bound, or fail the run instead of snoozing", ratchet.ErrTooManySnoozes, j.Snoozes, limit))
	}
	return nil
}

// Decide is the gate's decision for a released workflow job from its
// dependencies (spi.Decide): run it, skip it or cancel it, and why.
func Decide(ds []spi.Dependency) (spi.Decision, string) {
	if bug("run-after-failed-parent") { // planted: a plain dependency read as allowing FAILED
		ds = slices.Clone(ds)
		for i := range ds {
			if ds[i].Allow&spi.SkipUnlessAllowed == 0 {
				ds[i].Allow |= spi.AllowSucceeded | spi.AllowFailed
			}
		}
	}
	if bug("callback-as-dependency") { // planted: a callback's unmet condition cancels instead of skipping
		ds = slices.Clone(ds)
		for i := range ds {
			ds[i].Allow &^= spi.SkipUnlessAllowed
		}
	}
	return spi.Decide(ds)
}

// GateCompletion is the owner write of a released workflow job j (claimed
// under j.ClaimSeq) that its dependencies or a condition decided not to
// run (decision DecideSkip or DecideCancel, from spi.Decide): SKIPPED or
// CANCELLED at now, with reason as its last error, releasing its own
// dependents in the same write.
func GateCompletion(j *spi.Job, decision spi.Decision, reason string, now time.Time) spi.Completion {
	c := spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, Outcome: spi.OutcomeCancelled,
		FinishedAt: now, LastError: reason, HasDependents: j.Dependents > 0}
	if decision == spi.DecideSkip {
		c.Outcome = spi.OutcomeSkipped
	}
	return c
}

// Jittered returns c with its retry delay (RetryAt − now) drawn from
// [delay·(1−fraction), delay] by u, a uniform draw in [0, 1): the delay
// less u·fraction of it. A completion that is no retry, and a fraction of
// zero, are returned as they are.
func Jittered(c spi.Completion, now time.Time, fraction, u float64) spi.Completion {
	if c.Outcome != spi.OutcomeRetry || fraction <= 0 {
		return c
	}
	delay := c.RetryAt.Sub(now)
	if delay <= 0 {
		return c
	}
	c.RetryAt = c.RetryAt.Add(-time.Duration(float64(delay) * fraction * u)).Truncate(time.Microsecond)
	return c
}

// NextBatch splits the completer's queue into the next write (at most size
// completions, in queue order) and what stays queued.
func NextBatch[T any](queue []T, size int) (batch, rest []T) {
	n := min(len(queue), max(1, size))
	batch, rest = queue[:n:n], queue[n:]
	if len(rest) == 0 {
		rest = nil
	}
	return batch, rest
}
