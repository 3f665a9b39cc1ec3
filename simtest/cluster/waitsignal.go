package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/simtest/internal/simtime"
)

// Waits inside a body (ratchet.WaitSignal). Where signals are on, about
// one ordinary job in twelve that does not snooze is a waiter (and records
// no durable step): at the end of each run its body calls the SDK's own
// WaitSignal for the signal "go" (under a key, now and then with a
// timeout) once or twice in a row, and returns the wait's error. The
// completion the engine builds (nodecore.CompletionOf) makes the job
// WAITING with that wait; from then on the signal workload delivers to
// it, times it out or cancels it as any wait, and its next run resumes.
//
// The invariant, wait-resume: the model predicts what each WaitSignal
// returns from the job's step log as the model keeps it. A wait reached
// for the first time is recorded, under a current claim only, with the
// deadline its timeout gives; one recorded by a run that ended before its
// job became WAITING (a crash, a release) is waited for again, with its
// recorded deadline, and not answered by an older wait of the job's; one
// whose job waited and was woken returns its outcome and time, recorded
// by the first current run that reads it; a run that lost its claim can
// record nothing. The waiting completion is WAITING for exactly the
// recorded wait, its snooze count one more and its attempts as they were.
const invWaitResume = "wait-resume"

// swait is one wait of a waiter's step log, in the model.
type swait struct {
	deadline time.Time // zero: none
	// snoozes is the job's snooze count when the wait was recorded: a run
	// that finds the job's count above it knows the job waited.
	snoozes int
	// waited: the wait's completion applied (the job became WAITING for
	// it); outcome and at how it ended, once it did; settled: a run read
	// the outcome and recorded it in the log.
	waited  bool
	outcome spi.SignalOutcome
	at      time.Time
	settled bool
}

// simClock is the world's clock, as a body's JobContext reads it.
type simClock struct{ w *world }

func (c simClock) Now() time.Time { return c.w.now() }

// drawWaiter makes s, an ordinary job's spec, a waiter now and then.
func (w *world) drawWaiter(s *jobSpec) {
	if !w.signalsOn() || s.poison || s.snoozes > 0 || !w.chance(0.08) {
		return
	}
	s.steps = false // the waits are the body's step log
	s.waits = 1 + w.rng.IntN(2)
	s.waitKey = signalKeys[w.rng.IntN(len(signalKeys))]
	if w.chance(0.6) {
		s.waitTimeout = w.randDur(time.Second, 15*time.Second)
	}
}

// bodyWaits runs the waits of x's body, through the SDK's WaitSignal, and
// checks each return against the model. It returns the error the body
// returns (a wait's, or ErrSuperseded), nil once every wait of the plan
// returned its outcome; and the attempt outcome the model expects of it.
func (w *world) bodyWaits(n *node, x *exec) (error, spi.AttemptOutcome, error) {
	ss := spi.CapabilitiesOf(w.store)
	j := x.job
	current := j.status == spi.StatusRunning && j.seq == x.ref.ClaimSeq
	signalOf := func(ctx context.Context, id uuid.UUID) (*spi.SignalWait, error) {
		g, err := w.store.GetJob(ctx, id)
		if err != nil {
			return nil, err
		}
		return g.Signal, nil
	}
	jc := ratchet.NewJobContextWith(x.snap, ratchet.JobContextOptions{State: ss.State, Signal: signalOf, Clock: simClock{w},
		Logger: slog.New(slog.DiscardHandler)})
	ctx := ratchet.ContextWithJob(w.ctx, jc)
	var opts []ratchet.WaitOption
	if j.waitKey != "" {
		opts = append(opts, ratchet.WaitKey(j.waitKey))
	}
	for k := 1; k <= j.waitPlan; k++ {
		res, err := ratchet.WaitSignal(ctx, signalName, j.waitTimeout, opts...)
		var we *ratchet.WaitError
		isWait := errors.As(err, &we)
		if err != nil && !isWait && !errors.Is(err, ratchet.ErrSuperseded) {
			if errors.Is(err, spi.ErrInvalidState) {
				w.check(invWaitResume)
				w.fail(invWaitResume, []*sjob{j}, []*node{n}, "wait %d of %s's run under claim %d failed: %v", k, j.label, x.ref.ClaimSeq, err)
				return nil, "", nil
			}
			return nil, "", w.storeErr("WaitSignal", err)
		}
		w.check(invWaitResume)
		var e *swait
		if k <= len(j.waitLog) {
			e = j.waitLog[k-1]
		}
		bad := func(want string) {
			got := "error " + fmt.Sprint(err)
			if res != nil {
				got = fmt.Sprintf("%s at %s", res.Outcome, simtime.Offset(res.At.Sub(w.start)))
			}
			w.fail(invWaitResume, []*sjob{j}, []*node{n}, "wait %d of %s's run under claim %d (snoozes %d, current %v) returned %s; expected %s",
				k, j.label, x.ref.ClaimSeq, x.snap.Snoozes, current, got, want)
		}
		switch {
		case e == nil: // reached for the first time: recorded under a current claim
			deadline := time.Time{}
			if j.waitTimeout > 0 {
				deadline = w.now().Add(j.waitTimeout).UTC().Truncate(time.Microsecond)
			}
			switch {
			case current && (!isWait || !we.Deadline.Equal(deadline) || we.Name != signalName || we.Key != j.waitKey):
				bad(fmt.Sprintf("a new wait, deadline %s", describeDeadline(w, deadline)))
			case !current && !errors.Is(err, ratchet.ErrSuperseded):
				bad("ErrSuperseded: a run that lost its claim records no wait")
			case current:
				j.waitLog = append(j.waitLog, &swait{deadline: deadline, snoozes: x.snap.Snoozes})
				w.tracef([]*sjob{j}, []*node{n}, "%s run %s/%d records wait %d", n.id, j.label, x.ref.ClaimSeq, k)
			}
			return err, waitOutcome(err), nil
		case !e.settled && x.snap.Snoozes <= e.snoozes:
			// Recorded by a run that ended before its job waited (or the
			// job's count was reset by a dead-letter retry): wait now,
			// the record taking the job's count (a write, when it moved).
			switch {
			case !current && x.snap.Snoozes != e.snoozes:
				if !errors.Is(err, ratchet.ErrSuperseded) {
					bad("ErrSuperseded: a run that lost its claim cannot record its wait again")
				}
				return err, spi.AttemptFailed, nil
			case !isWait || !we.Deadline.Equal(e.deadline):
				bad(fmt.Sprintf("the recorded wait again, deadline %s", describeDeadline(w, e.deadline)))
				return nil, "", nil
			case current:
				e.snoozes, e.waited, e.outcome, e.at = x.snap.Snoozes, false, "", time.Time{}
				w.tracef([]*sjob{j}, []*node{n}, "%s run %s/%d waits again for wait %d", n.id, j.label, x.ref.ClaimSeq, k)
			}
			return err, spi.AttemptWaiting, nil
		case !e.settled && !current:
			if !errors.Is(err, ratchet.ErrSuperseded) {
				bad("ErrSuperseded: a run that lost its claim cannot record how its wait ended")
			}
			return err, spi.AttemptFailed, nil
		case e.outcome == "":
			bad("nothing: the model has this wait unresolved")
			return nil, "", nil
		default:
			if res == nil || res.Outcome != e.outcome || !res.At.Equal(e.at) {
				bad(fmt.Sprintf("%s at %s", e.outcome, simtime.Offset(e.at.Sub(w.start))))
				return nil, "", nil
			}
			if !e.settled {
				e.settled = true
				w.tracef([]*sjob{j}, []*node{n}, "%s run %s/%d reads wait %d: %s", n.id, j.label, x.ref.ClaimSeq, k, e.outcome)
			}
		}
	}
	return nil, "", nil
}

// waitOutcome is the attempt outcome of a body that returned err from a
// WaitSignal: waiting, or failed (ErrSuperseded).
func waitOutcome(err error) spi.AttemptOutcome {
	var we *ratchet.WaitError
	if errors.As(err, &we) {
		return spi.AttemptWaiting
	}
	return spi.AttemptFailed
}

func describeDeadline(w *world, d time.Time) string {
	if d.IsZero() {
		return "none"
	}
	return simtime.Offset(d.Sub(w.start))
}

// checkWait checks the engine's completion c of a run of j (claimed as
// snap) whose body returned the wait we: WAITING for the wait the model's
// log holds last, its snooze count one more, no attempt spent.
func (w *world) checkWait(j *sjob, snap *spi.Job, we *ratchet.WaitError, c spi.Completion) {
	w.check(invWaitResume)
	want := fmt.Sprintf("waiting for %q key %q until %s, snooze %d, attempts still %d", signalName, j.waitKey, describeDeadline(w, we.Deadline), snap.Snoozes+1, snap.Attempts)
	if c.Outcome != spi.OutcomeWaiting || c.Signal == nil || c.Signal.Name != signalName || c.Signal.Key != j.waitKey ||
		!c.Signal.Deadline.Equal(we.Deadline) || c.Snoozes != snap.Snoozes+1 || c.Attempt != spi.AttemptWaiting {
		w.fail(invWaitResume, []*sjob{j}, nil, "the body of %s returned a wait: the engine decided %s; expected %s", j.label, w.describeCompletion(c), want)
	}
}

// applyWait applies an applied waiting completion c of j to the model: the
// job WAITING for the last wait of its log.
func (w *world) applyWait(j *sjob, c spi.Completion) {
	e := j.waitLog[len(j.waitLog)-1]
	e.waited = true
	w.setStatus(j, spi.StatusWaiting)
	j.snoozes, j.owner = c.Snoozes, ""
	j.sig = &ssig{key: j.waitKey, deadline: e.deadline}
	if w.phase == phaseHeal { // the heal's client delivers to it too
		w.schedule(w.randDur(0, time.Second), &event{kind: evHealSignal, node: -1})
	}
}

// wokenWait records on j's log how the wait it waited for ended (a
// delivery or a timeout): its next run reads it.
func (w *world) wokenWait(j *sjob, o spi.SignalOutcome, now time.Time) {
	if len(j.waitLog) == 0 {
		return // a wait the job was submitted with
	}
	if e := j.waitLog[len(j.waitLog)-1]; e.waited && e.outcome == "" {
		e.outcome, e.at = o, now
	}
}
