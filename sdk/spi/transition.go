package spi

import (
	"bytes"
	"fmt"
	"slices"
	"time"
)

// The job state machine. Every write that moves a job from one state to
// another is a Change, built by one of the functions below: what the job
// must be in for the change to apply, and the fields it writes. A store
// only turns a Change into its own write (an UPDATE's SET list and status
// guard, a document update, an assignment to a struct) and makes it atomic
// with the fence it checks; it never decides itself what a transition
// writes. A new transition is one function here and no code in any store.
//
// Changes apply to a job row alone. What a transition does to other rows
// (the dependents a finished job releases, the permit a claim frees, the
// signal row a wake resolves) is each store's, in the same atomic write
// where its database allows (see the store's documentation).

// Field is a column of a job's row that a transition writes.
type Field uint8

// The fields a transition writes.
const (
	FieldStatus Field = iota + 1
	FieldScheduledAt
	FieldFinishedAt
	FieldClaimedAt
	FieldOwner
	FieldAttempts
	FieldCrashCount
	FieldLastError
	FieldResult
	FieldResultType
	FieldClaimSeq
	FieldSnoozes
)

// Op is how a transition writes a field.
type Op uint8

// The ways a transition writes a field.
const (
	// OpSet writes the Write's value of the field's type.
	OpSet Op = iota
	// OpClear writes the field's zero value: NULL in SQL, an absent field
	// in a document.
	OpClear
	// OpIncrement adds one to the field.
	OpIncrement
)

// Write is one field a transition writes. The value of an OpSet is in
// the member of the field's type: Time for the times, Int for the
// attempts and the crash count, Bytes for the result, Text for the
// status, the owner, the last error and the result type. (Typed members,
// not an interface, so that building a change allocates no boxes: it is
// on the path of every claim and completion.)
type Write struct {
	Field Field
	Op    Op
	Time  time.Time
	Int   int
	Bytes []byte
	Text  string
}

// Change is one transition of one job: the states it applies in (empty:
// any) and the fields it writes, the status among them. A store applies
// it in one atomic write, guarded by From and, for an owner's write, by
// the claim sequence.
type Change struct {
	From   []Status
	Writes []Write
}

// To is the status the change moves the job to.
func (c Change) To() Status {
	for _, w := range c.Writes {
		if w.Field == FieldStatus {
			return Status(w.Text)
		}
	}
	return ""
}

// Applies reports whether the change applies to a job in state s.
func (c Change) Applies(s Status) bool {
	return len(c.From) == 0 || slices.Contains(c.From, s)
}

// Apply writes the change to j, whatever its state.
func (c Change) Apply(j *Job) {
	for _, w := range c.Writes {
		if w.Op == OpIncrement {
			switch w.Field {
			case FieldAttempts:
				j.Attempts++
			case FieldCrashCount:
				j.CrashCount++
			case FieldClaimSeq:
				j.ClaimSeq++
			case FieldSnoozes:
				j.Snoozes++
			}
			continue
		}
		if w.Op == OpClear {
			w = Write{Field: w.Field}
		}
		switch w.Field {
		case FieldStatus:
			j.Status = Status(w.Text)
		case FieldScheduledAt:
			j.ScheduledAt = w.Time
		case FieldFinishedAt:
			j.FinishedAt = w.Time
		case FieldClaimedAt:
			j.ClaimedAt = w.Time
		case FieldOwner:
			j.OwnerNode = w.Text
		case FieldAttempts:
			j.Attempts = w.Int
		case FieldCrashCount:
			j.CrashCount = w.Int
		case FieldSnoozes:
			j.Snoozes = w.Int
		case FieldLastError:
			j.LastError = w.Text
		case FieldResult:
			j.Result = bytes.Clone(w.Bytes)
		case FieldResultType:
			j.ResultType = w.Text
		}
	}
}

// Holds reports whether j shows every field the change sets or clears, as
// a store keeps it (times to the microsecond, an empty result as none):
// the change, or one that writes the same, has applied. Increments are not
// compared.
func (c Change) Holds(j *Job) bool {
	var probe Job
	c.Apply(&probe)
	same := func(a, b time.Time) bool {
		return a.UTC().Truncate(time.Microsecond).Equal(b.UTC().Truncate(time.Microsecond))
	}
	for _, w := range c.Writes {
		if w.Op == OpIncrement {
			continue
		}
		var ok bool
		switch w.Field {
		case FieldStatus:
			ok = j.Status == probe.Status
		case FieldScheduledAt:
			ok = same(j.ScheduledAt, probe.ScheduledAt)
		case FieldFinishedAt:
			ok = same(j.FinishedAt, probe.FinishedAt)
		case FieldClaimedAt:
			ok = same(j.ClaimedAt, probe.ClaimedAt)
		case FieldOwner:
			ok = j.OwnerNode == probe.OwnerNode
		case FieldAttempts:
			ok = j.Attempts == probe.Attempts
		case FieldCrashCount:
			ok = j.CrashCount == probe.CrashCount
		case FieldSnoozes:
			ok = j.Snoozes == probe.Snoozes
		case FieldLastError:
			ok = j.LastError == probe.LastError
		case FieldResult:
			ok = bytes.Equal(j.Result, probe.Result)
		case FieldResultType:
			ok = j.ResultType == probe.ResultType
		}
		if !ok {
			return false
		}
	}
	return true
}

func setTime(f Field, t time.Time) Write { return Write{Field: f, Time: t} }
func setInt(f Field, n int) Write        { return Write{Field: f, Int: n} }
func setText(f Field, v string) Write    { return Write{Field: f, Text: v} }
func setStatus(st Status) Write          { return Write{Field: FieldStatus, Text: string(st)} }
func unset(f Field) Write                { return Write{Field: f, Op: OpClear} }
func bump(f Field) Write                 { return Write{Field: f, Op: OpIncrement} }

// Change is what the completion writes to its RUNNING job: a success its
// finish time, result and result type; a retry the due time, attempts and
// error, and no owner; a snooze the due time and snooze count, and no
// owner (attempts and error as they were); a failure the finish time,
// attempts and error; a skip or a cancel the finish time and the reason.
// A completion leaves the
// claim sequence as it is (the claim's own fence). It fails for an
// unknown outcome.
func (c Completion) Change() (Change, error) {
	ch := Change{From: []Status{StatusRunning}}
	switch c.Outcome {
	case OutcomeSucceeded:
		res := Write{Field: FieldResult, Bytes: c.Result}
		if c.Result == nil {
			res = unset(FieldResult)
		}
		rtype := setText(FieldResultType, c.ResultType)
		if c.ResultType == "" {
			rtype = unset(FieldResultType)
		}
		ch.Writes = []Write{setStatus(StatusSucceeded), setTime(FieldFinishedAt, c.FinishedAt), res, rtype}
	case OutcomeRetry:
		ch.Writes = []Write{setStatus(StatusPending), setTime(FieldScheduledAt, c.RetryAt),
			setInt(FieldAttempts, c.Attempts), errorWrite(c.LastError), unset(FieldOwner)}
	case OutcomeFailed:
		ch.Writes = []Write{setStatus(StatusFailed), setTime(FieldFinishedAt, c.FinishedAt),
			setInt(FieldAttempts, c.Attempts), errorWrite(c.LastError)}
	case OutcomeSnoozed:
		ch.Writes = []Write{setStatus(StatusPending), setTime(FieldScheduledAt, c.RetryAt),
			setInt(FieldSnoozes, c.Snoozes), unset(FieldOwner)}
	case OutcomeWaiting:
		if c.Signal == nil || c.Signal.Name == "" {
			return Change{}, fmt.Errorf("job %s: a waiting outcome without the signal it waits for", c.JobID)
		}
		ch.Writes = []Write{setStatus(StatusWaiting), setInt(FieldSnoozes, c.Snoozes), unset(FieldOwner)}
	case OutcomeSkipped, OutcomeCancelled:
		ch.Writes = []Write{setStatus(c.Outcome.Status()), setTime(FieldFinishedAt, c.FinishedAt), errorWrite(c.LastError)}
	default:
		return Change{}, fmt.Errorf("job %s: unknown outcome %d", c.JobID, c.Outcome)
	}
	return ch, nil
}

// errorWrite writes a job's last error; none clears it.
func errorWrite(msg string) Write {
	if msg == "" {
		return unset(FieldLastError)
	}
	return setText(FieldLastError, msg)
}

// Claimed is a claim of a PENDING job by node at now: RUNNING, owned, its
// claim sequence one more (the new claim's fence).
func Claimed(node string, now time.Time) Change {
	return Change{From: []Status{StatusPending}, Writes: []Write{setStatus(StatusRunning),
		setText(FieldOwner, node), bump(FieldClaimSeq), setTime(FieldClaimedAt, now)}}
}

// Released gives a RUNNING job back: PENDING due at now, no owner, its
// claim sequence one more (fencing the claim it ends), no attempt or crash
// charged.
func Released(now time.Time) Change {
	return Change{From: []Status{StatusRunning}, Writes: []Write{setStatus(StatusPending),
		setTime(FieldScheduledAt, now), unset(FieldOwner), bump(FieldClaimSeq)}}
}

// Recovered is the recovery of a RUNNING job whose node died, having been
// recovered crashes times before, under a budget of maxRedeliveries
// (CrashOutcome): a redelivery is Released with one crash more; past the
// budget the job fails with lastError at now.
func Recovered(crashes, maxRedeliveries int, lastError string, now time.Time) Change {
	if st, _ := CrashOutcome(crashes, maxRedeliveries); st == StatusPending {
		return Redelivered(now)
	}
	return Failed(StatusRunning, lastError, now)
}

// Redelivered is a RUNNING job whose node died given back for another
// run: Released, with one crash more charged to its budget.
func Redelivered(now time.Time) Change {
	ch := Released(now)
	ch.Writes = append(ch.Writes, bump(FieldCrashCount))
	return ch
}

// Failed fails a job in state from with msg at now, ending its claim (no
// owner, the claim sequence one more) when it is RUNNING: a recovery past
// its crash budget, a row the store cannot decode.
func Failed(from Status, msg string, now time.Time) Change {
	ch := Change{From: []Status{from}, Writes: []Write{setStatus(StatusFailed),
		errorWrite(msg), setTime(FieldFinishedAt, now), unset(FieldOwner)}}
	if from == StatusRunning {
		ch.Writes = append(ch.Writes, bump(FieldClaimSeq))
	}
	return ch
}

// Retried is the retry of a FAILED job (a dead letter): PENDING due at
// now, its attempts, crash count, snooze count, error and finish time
// reset.
func Retried(now time.Time) Change {
	return Change{From: []Status{StatusFailed}, Writes: []Write{setStatus(StatusPending),
		unset(FieldLastError), setInt(FieldAttempts, 0), setInt(FieldCrashCount, 0), setInt(FieldSnoozes, 0), setTime(FieldScheduledAt, now),
		unset(FieldFinishedAt), unset(FieldOwner)}}
}

// Cancelled cancels a job that has not started at now: PENDING, BLOCKED,
// or WAITING (whose wait the store resolves CANCELLED in the same write).
func Cancelled(now time.Time) Change {
	return Change{From: []Status{StatusPending, StatusBlocked, StatusWaiting},
		Writes: []Write{setStatus(StatusCancelled), setTime(FieldFinishedAt, now)}}
}

// Woken ends the wait of a WAITING job at now: PENDING due at now for a
// delivered or timed-out signal, CANCELLED for a cancelled one.
func Woken(o SignalOutcome, now time.Time) Change {
	if o == SignalCancelled {
		return Change{From: []Status{StatusWaiting}, Writes: []Write{setStatus(StatusCancelled), setTime(FieldFinishedAt, now)}}
	}
	return Change{From: []Status{StatusWaiting}, Writes: []Write{setStatus(StatusPending), setTime(FieldScheduledAt, now)}}
}

// Aborted cancels a RUNNING job at now (CancelJob, or its workflow or
// batch was cancelled): CANCELLED, its claim ended (no owner, the claim sequence
// one more) so that its body's later writes are fenced out.
func Aborted(now time.Time) Change {
	return Change{From: []Status{StatusRunning}, Writes: []Write{setStatus(StatusCancelled),
		setTime(FieldFinishedAt, now), unset(FieldOwner), bump(FieldClaimSeq)}}
}

// Unblocked releases a BLOCKED job whose last parent finished at now:
// PENDING, due at the later of its due time and now.
func Unblocked(due, now time.Time) Change {
	return Change{From: []Status{StatusBlocked}, Writes: []Write{setStatus(StatusPending),
		setTime(FieldScheduledAt, laterOf(due, now))}}
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Revived makes a dependent wait again for a parent that a dead-letter
// retry runs again: BLOCKED, with the finish time and reason of a cancel
// or skip its dependencies caused cleared. It applies to a dependent that
// has not run (BLOCKED, PENDING) and to one its dependencies cancelled or
// skipped (the caller checks CancelledByDependency).
func Revived() Change {
	return Change{From: []Status{StatusBlocked, StatusPending, StatusCancelled, StatusSkipped},
		Writes: []Write{setStatus(StatusBlocked), unset(FieldFinishedAt), unset(FieldLastError)}}
}
