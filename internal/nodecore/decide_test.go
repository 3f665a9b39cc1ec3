package nodecore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestPollPolicyNext(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := PollPolicy{Slots: 16, Batch: 8, Gather: 100 * time.Millisecond, HeartbeatInterval: time.Second}
	fresh := t0.Add(-time.Second)
	cases := []struct {
		name string
		s    PollState
		want PollDecision
	}{
		{"no free slot", PollState{Free: 0, Now: t0, LastBeat: fresh}, PollDecision{Action: PollIdle}},
		{"too few free: start gathering", PollState{Free: 1, Now: t0, LastBeat: fresh}, PollDecision{Action: PollGather, Wait: 100 * time.Millisecond}},
		{"gathering: wait the rest", PollState{Free: 1, Now: t0, GatherStart: t0.Add(-30 * time.Millisecond), LastBeat: fresh},
			PollDecision{Action: PollGather, Wait: 70 * time.Millisecond}},
		{"gathered long enough", PollState{Free: 1, Now: t0, GatherStart: t0.Add(-100 * time.Millisecond), LastBeat: fresh},
			PollDecision{Action: PollClaim, Limit: 1}},
		{"enough free: claim them", PollState{Free: 2, Now: t0, LastBeat: fresh}, PollDecision{Action: PollClaim, Limit: 2}},
		{"capped at a batch", PollState{Free: 16, Now: t0, LastBeat: fresh}, PollDecision{Action: PollClaim, Limit: 8}},
		{"stale beat first", PollState{Free: 16, Now: t0, LastBeat: t0.Add(-2 * time.Second)}, PollDecision{Action: PollBeat}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, p.Next(c.s), c.name)
	}
	var zero PollPolicy
	assert.Equal(t, PollDecision{Action: PollClaim, Limit: 1}, zero.Next(PollState{Free: 3, Now: t0}), "the zero policy claims one at a time and never beats")
}

func TestStopOrder(t *testing.T) {
	assert.Equal(t, []StopStep{StopClaiming, DrainAndRelease, FlushCompletions, StopHeartbeats, Deregister}, StopOrder())
	var names []string
	for _, s := range StopOrder() {
		names = append(names, s.String())
	}
	assert.Equal(t, []string{"stop claiming", "drain and release", "flush completions", "stop heartbeats", "deregister"}, names)
}

func TestNextBatch(t *testing.T) {
	b, rest := NextBatch([]int{1, 2, 3, 4, 5}, 2)
	assert.Equal(t, []int{1, 2}, b)
	assert.Equal(t, []int{3, 4, 5}, rest)
	b = append(b, 9) // the batch has no spare capacity over the rest
	assert.Equal(t, []int{3, 4, 5}, rest)
	b, rest = NextBatch([]int{1}, 5)
	assert.Equal(t, []int{1}, b)
	assert.Nil(t, rest)
	b, rest = NextBatch[int](nil, 5)
	assert.Empty(t, b)
	assert.Nil(t, rest)
}

func TestCompletionOf(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	j := &spi.Job{ID: uuid.New(), ClaimSeq: 7, Attempts: 1, MaxRetries: 2, Backoff: spi.BackoffFixed, BackoffParam: time.Second,
		OwnerNode: "node-a", ClaimedAt: now.Add(-time.Minute)}
	c := CompletionOf(j, nil, DefaultRetryPolicy{}, ratchet.DefaultSanitizer{}, now)
	assert.Equal(t, spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: 7}, FinishedAt: now, Outcome: spi.OutcomeSucceeded, Attempts: 2,
		Attempt: spi.AttemptSucceeded, Node: "node-a", StartedAt: now.Add(-time.Minute)}, c, "the run's record: its node and start")

	c = CompletionOf(j, errors.New("boom"), DefaultRetryPolicy{}, ratchet.DefaultSanitizer{}, now)
	assert.Equal(t, spi.OutcomeRetry, c.Outcome)
	assert.Equal(t, now.Add(time.Second), c.RetryAt)
	assert.Equal(t, 2, c.Attempts)
	assert.Equal(t, int64(7), c.ClaimSeq, "the write is fenced by the claim it ends")

	j.Attempts = 2 // the last retry is spent
	c = CompletionOf(j, errors.New("boom"), DefaultRetryPolicy{}, ratchet.DefaultSanitizer{}, now)
	assert.Equal(t, spi.OutcomeFailed, c.Outcome)
	assert.Equal(t, 3, c.Attempts)
	assert.Contains(t, c.LastError, "boom")
}

// Each way a run ends names its attempt record's outcome.
func TestAttemptOutcomeOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want spi.AttemptOutcome
	}{
		{nil, spi.AttemptSucceeded},
		{errors.New("boom"), spi.AttemptFailed},
		{ratchet.DoNotRetry(errors.New("bad input")), spi.AttemptFailed},
		{ratchet.Snooze(time.Second), spi.AttemptSnoozed},
		{fmt.Errorf("%w after 2s", ratchet.ErrTimeout), spi.AttemptTimedOut},
		{ratchet.DoNotRetry(fmt.Errorf("%w: not started by then", ratchet.ErrExpired)), spi.AttemptExpired},
	} {
		assert.Equal(t, c.want, AttemptOutcomeOf(c.err), "%v", c.err)
	}
	j := &spi.Job{ID: uuid.New(), ClaimSeq: 1, Snoozes: 1, Params: map[string]string{spi.MaxSnoozesParam: "1"}}
	c := CompletionOf(j, ratchet.Snooze(time.Second), DefaultRetryPolicy{}, ratchet.DefaultSanitizer{}, time.Now())
	assert.Equal(t, spi.AttemptFailed, c.Attempt, "a snooze past its bound is a failure")
}

func TestCompletionOfCarriesDependents(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	parent := &spi.Job{ID: uuid.New(), ClaimSeq: 3, MaxRetries: 0, Dependents: 2}
	for _, err := range []error{nil, errors.New("boom")} {
		c := CompletionOf(parent, err, DefaultRetryPolicy{}, ratchet.DefaultSanitizer{}, now)
		if !c.HasDependents {
			t.Errorf("completion of a job with dependents (err %v) does not say so", err)
		}
	}
	if c := CompletionOf(&spi.Job{ID: uuid.New()}, nil, DefaultRetryPolicy{}, ratchet.DefaultSanitizer{}, now); c.HasDependents {
		t.Error("completion of a plain job claims dependents")
	}
}

// Jittered draws a retry's delay from [delay·(1−fraction), delay]; it
// leaves a completion that is no retry, and a zero fraction, alone.
func TestJittered(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	retry := spi.Completion{Outcome: spi.OutcomeRetry, RetryAt: now.Add(10 * time.Second)}
	assert.Equal(t, now.Add(10*time.Second), Jittered(retry, now, 0.5, 0).RetryAt, "u = 0: the whole delay")
	assert.Equal(t, now.Add(7500*time.Millisecond), Jittered(retry, now, 0.5, 0.5).RetryAt)
	late := Jittered(retry, now, 0.5, 0.999999).RetryAt
	assert.True(t, !late.Before(now.Add(5*time.Second)) && late.Before(now.Add(5001*time.Millisecond)), "u near 1: half the delay, %s", late.Sub(now))
	assert.Equal(t, retry, Jittered(retry, now, 0, 0.7), "fraction 0: exact")
	failed := spi.Completion{Outcome: spi.OutcomeFailed}
	assert.Equal(t, failed, Jittered(failed, now, 1, 0.7))
}
