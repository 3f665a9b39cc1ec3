package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// step is one event of a breaker's life: calls that end with an outcome
// (ok: admitted or not), a wait, a call admitted now and ended later.
type step struct {
	rule  string // the spec's rule the step checks
	at    time.Duration
	calls int             // this many calls, each admitted and counted at once
	out   spi.CallOutcome // their outcome
	admit bool            // whether they are admitted
	want  breaker.State   // the state after the step
}

func TestBreakerFollowsTheSpec(t *testing.T) {
	small := spi.CircuitBreakerConfig{FailureRateThreshold: 50, SlidingWindowSize: 10, WaitDuration: time.Minute,
		PermittedCallsInHalfOpen: 3, MinimumCalls: 4}
	ok, fail, skip := spi.CallSucceeded, spi.CallFailed, spi.CallNotCounted
	cases := []struct {
		name  string
		cfg   spi.CircuitBreakerConfig
		steps []step
	}{
		{"opens at the threshold once the minimum calls are counted", small, []step{
			{"failures below the minimum calls do not open", 0, 3, fail, true, breaker.Closed},
			{"the minimum reached with 4 of 4 failed: open", 0, 1, fail, true, breaker.Open},
			{"open refuses every call", time.Second, 5, ok, false, breaker.Open},
		}},
		{"the rate is over the window, not since the start", small, []step{
			{"ten successes fill the window", 0, 10, ok, true, breaker.Closed},
			{"four failures: 4 of 10 in the window, under 50 %", 0, 4, fail, true, breaker.Closed},
			{"a fifth: 5 of 10 reaches 50 %", 0, 1, fail, true, breaker.Open},
		}},
		{"old calls leave the window", spi.CircuitBreakerConfig{SlidingWindowSize: 10, MinimumCalls: 10}, []step{
			{"four failures", 0, 4, fail, true, breaker.Closed},
			{"six successes: 4 of 10", 0, 6, ok, true, breaker.Closed},
			{"four successes push the failures out: 0 of 10", 0, 4, ok, true, breaker.Closed},
			{"four failures: 4 of 10", 0, 4, fail, true, breaker.Closed},
			{"a fifth: 5 of 10 in the window (9 of 19 since the start would not open)", 0, 1, fail, true, breaker.Open},
		}},
		{"ignored and unmatched errors count as neither", small, []step{
			{"not counted: the minimum is not reached", 0, 20, skip, true, breaker.Closed},
			{"three failures: 3 of 3 counted, under the minimum", 0, 3, fail, true, breaker.Closed},
			{"one success: 3 of 4, open", 0, 1, ok, true, breaker.Open},
		}},
		{"half-open after the wait lets the permitted calls through", small, []step{
			{"open", 0, 4, fail, true, breaker.Open},
			{"still open just before the wait ends", time.Minute - time.Nanosecond, 1, ok, false, breaker.Open},
			{"after the wait: half-open, two trial successes", time.Minute, 2, ok, true, breaker.HalfOpen},
			{"the third and last trial success closes it", time.Minute, 1, ok, true, breaker.Closed},
			{"closed with a fresh window: three failures do not open", time.Minute, 3, fail, true, breaker.Closed},
		}},
		{"half-open trials that fail open it again", small, []step{
			{"open", 0, 4, fail, true, breaker.Open},
			{"one trial success", time.Minute, 1, ok, true, breaker.HalfOpen},
			{"two trial failures: 2 of 3 failed, open again", time.Minute, 2, fail, true, breaker.Open},
			{"the wait starts over", time.Minute + 30*time.Second, 1, ok, false, breaker.Open},
			{"half-open again a wait later", 2 * time.Minute, 1, ok, true, breaker.HalfOpen},
		}},
		{"a not-counted trial gives its permit back", small, []step{
			{"open", 0, 4, fail, true, breaker.Open},
			{"five trials ignored: each permit comes back", time.Minute, 5, skip, true, breaker.HalfOpen},
			{"three successes close it", time.Minute, 3, ok, true, breaker.Closed},
		}},
		{"defaults: 100 calls, 50 %", spi.CircuitBreakerConfig{}, []step{
			{"99 failures are under the minimum of 100", 0, 99, fail, true, breaker.Closed},
			{"the 100th opens", 0, 1, fail, true, breaker.Open},
			{"open for 60 s", 59 * time.Second, 1, ok, false, breaker.Open},
			{"10 trials", time.Minute, 10, ok, true, breaker.Closed},
		}},
		{"the minimum counts successes too", small, []step{
			{"three failures", 0, 3, fail, true, breaker.Closed},
			{"a success: 3 of 4 failed, open", 0, 1, ok, true, breaker.Open},
		}},
		{"a minimum above the window counts as the window", spi.CircuitBreakerConfig{SlidingWindowSize: 5, MinimumCalls: 50}, []step{
			{"five failures fill the window: open", 0, 5, fail, true, breaker.Open},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var moves []string
			b, err := breaker.New(c.cfg, func(from, to breaker.State) { moves = append(moves, from.String()+">"+to.String()) })
			require.NoError(t, err)
			for i, s := range c.steps {
				now := t0.Add(s.at)
				for n := range s.calls {
					p, admitted := b.Allow(now)
					require.Equal(t, s.admit, admitted, "step %d (%s), call %d: admitted", i, s.rule, n)
					if admitted {
						p.Done(now, s.out)
					}
				}
				require.Equal(t, s.want, b.State(now), "step %d: %s (moves %v)", i, s.rule, moves)
			}
		})
	}
}

// A call admitted in one state that ends in another is not counted.
func TestBreakerIgnoresCallsOfAnEarlierState(t *testing.T) {
	b, err := breaker.New(spi.CircuitBreakerConfig{SlidingWindowSize: 4, MinimumCalls: 4, PermittedCallsInHalfOpen: 2, WaitDuration: time.Minute}, nil)
	require.NoError(t, err)
	slow, ok := b.Allow(t0)
	require.True(t, ok)
	for range 4 {
		p, _ := b.Allow(t0)
		p.Done(t0, spi.CallFailed)
	}
	require.Equal(t, breaker.Open, b.State(t0))
	later := t0.Add(time.Minute)
	trial, ok := b.Allow(later)
	require.True(t, ok)
	slow.Done(later, spi.CallSucceeded) // admitted while CLOSED: not a trial
	trial.Done(later, spi.CallSucceeded)
	assert.Equal(t, breaker.HalfOpen, b.State(later), "one trial of two counted")
	second, ok := b.Allow(later)
	require.True(t, ok)
	_, ok = b.Allow(later)
	assert.False(t, ok, "two trials are out or counted: a third is refused")
	second.Done(later, spi.CallSucceeded)
	assert.Equal(t, breaker.Closed, b.State(later))
}

func TestConfigChecked(t *testing.T) {
	for _, c := range []spi.CircuitBreakerConfig{
		{FailureRateThreshold: 101}, {FailureRateThreshold: -1}, {SlidingWindowSize: -1},
		{WaitDuration: -time.Second}, {PermittedCallsInHalfOpen: -2}, {MinimumCalls: -3},
	} {
		_, err := breaker.New(c, nil)
		assert.Error(t, err, "%+v", c)
	}
}

var errDown = errors.New("service down")

type rateLimited struct{ retryIn time.Duration }

func (e *rateLimited) Error() string { return fmt.Sprintf("rate limited for %s", e.retryIn) }

// The filter rules of the spec, through the chain of wrapped errors.
func TestErrorFilterClassifies(t *testing.T) {
	wrapped := fmt.Errorf("charge: %w", errDown)
	limited := fmt.Errorf("charge: %w", &rateLimited{time.Second})
	cases := []struct {
		rule   string
		filter spi.ErrorFilter
		err    error
		want   spi.CallOutcome
	}{
		{"no error is a success", spi.ErrorFilter{}, nil, spi.CallSucceeded},
		{"no record list nor predicate: every error is recorded", spi.ErrorFilter{}, wrapped, spi.CallFailed},
		{"ignored through the chain", spi.ErrorFilter{Ignore: []spi.ErrorMatcher{spi.ErrorIs(errDown)}}, wrapped, spi.CallNotCounted},
		{"ignore wins over record", spi.ErrorFilter{Record: []spi.ErrorMatcher{spi.ErrorIs(errDown)}, Ignore: []spi.ErrorMatcher{spi.ErrorIs(errDown)}}, wrapped, spi.CallNotCounted},
		{"a record match by type through the chain", spi.ErrorFilter{Record: []spi.ErrorMatcher{spi.ErrorAs[*rateLimited]()}}, limited, spi.CallFailed},
		{"with a record list an unmatched error counts as neither", spi.ErrorFilter{Record: []spi.ErrorMatcher{spi.ErrorAs[*rateLimited]()}}, wrapped, spi.CallNotCounted},
		{"a predicate that accepts records", spi.ErrorFilter{Predicate: func(err error) bool { return errors.Is(err, errDown) }}, wrapped, spi.CallFailed},
		{"a predicate that refuses: neither", spi.ErrorFilter{Predicate: func(error) bool { return false }}, wrapped, spi.CallNotCounted},
		{"a predicate that panics records a failure", spi.ErrorFilter{Predicate: func(error) bool { panic("bad predicate") }}, wrapped, spi.CallFailed},
		{"an ignored error never reaches the predicate", spi.ErrorFilter{Ignore: []spi.ErrorMatcher{spi.ErrorIs(fs.ErrNotExist)}, Predicate: func(error) bool { panic("no") }},
			fmt.Errorf("x: %w", fs.ErrNotExist), spi.CallNotCounted},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.filter.Classify(c.err), c.rule)
	}
	merged := spi.ErrorFilter{Record: []spi.ErrorMatcher{spi.ErrorIs(errDown)}}.Merge(spi.ErrorFilter{Predicate: func(err error) bool { return errors.As(err, new(*rateLimited)) }})
	assert.Equal(t, spi.CallFailed, merged.Classify(wrapped), "merged: the lists are united")
	assert.Equal(t, spi.CallFailed, merged.Classify(limited), "merged: the predicates are OR'ed")
	assert.Equal(t, spi.CallNotCounted, merged.Classify(errors.New("other")))
}

type configs map[string]spi.CircuitBreakerConfig

func (c configs) Enabled() bool                                                  { return true }
func (c configs) ConfigFor(p spi.CircuitBreakerProfile) spi.CircuitBreakerConfig { return c[p.Name] }

// The strategy keeps a breaker per service: an open one refuses with
// ErrCircuitOpen and the retry delay, without running the call.
func TestStrategyPerService(t *testing.T) {
	now := t0
	var moves []string
	s := breaker.NewStrategy(breaker.Options{
		Configs: configs{"payments": {SlidingWindowSize: 2, MinimumCalls: 2, WaitDuration: time.Minute, PermittedCallsInHalfOpen: 1}},
		Now:     func() time.Time { return now },
		Changed: func(svc string, from, to breaker.State) { moves = append(moves, svc+":"+from.String()+">"+to.String()) },
	})
	ctx := context.Background()
	ran := 0
	failing := func(context.Context) (any, error) { ran++; return nil, errDown }
	for range 2 {
		_, err := s.Execute(ctx, "payments", spi.ErrorFilter{}, failing)
		assert.ErrorIs(t, err, errDown, "the call's own error comes back unchanged")
	}
	assert.False(t, s.ServiceAvailable("payments"))
	assert.True(t, s.ServiceAvailable("email"), "another service has its own breaker")
	_, err := s.Execute(ctx, "payments", spi.ErrorFilter{}, failing)
	var open *spi.CircuitOpenError
	require.ErrorAs(t, err, &open)
	assert.ErrorIs(t, err, spi.ErrCircuitOpen)
	assert.Equal(t, spi.DefaultRetryDelay, open.RetryAfter)
	assert.Equal(t, 2, ran, "a refused call does not run")

	now = now.Add(time.Minute)
	res, err := s.Execute(ctx, "payments", spi.ErrorFilter{}, func(context.Context) (any, error) { return "paid", nil })
	require.NoError(t, err)
	assert.Equal(t, "paid", res)
	assert.Equal(t, []string{"payments:CLOSED>OPEN", "payments:OPEN>HALF_OPEN", "payments:HALF_OPEN>CLOSED"}, moves)

	// The call's filter merges with the configured one: an ignored error
	// does not count.
	for range 5 {
		_, _ = s.Execute(ctx, "payments", spi.ErrorFilter{Ignore: []spi.ErrorMatcher{spi.ErrorIs(errDown)}}, failing)
	}
	assert.True(t, s.ServiceAvailable("payments"))

	// A panic counts as a failure and goes on up.
	for range 2 {
		assert.Panics(t, func() {
			_, _ = s.Execute(ctx, "payments", spi.ErrorFilter{}, func(context.Context) (any, error) { panic("boom") })
		})
	}
	assert.False(t, s.ServiceAvailable("payments"))

	_, err = breaker.NewStrategy(breaker.Options{Configs: configs{"bad": {FailureRateThreshold: 200}}}).Execute(ctx, "bad", spi.ErrorFilter{}, failing)
	var ce *breaker.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "bad", ce.Service)
}

// BenchmarkStrategyExecute is the cost of a call through a closed
// breaker.
func BenchmarkStrategyExecute(b *testing.B) {
	s := breaker.NewStrategy(breaker.Options{})
	ctx := context.Background()
	fn := func(context.Context) (any, error) { return nil, nil }
	b.ReportAllocs()
	for b.Loop() {
		_, _ = s.Execute(ctx, "svc", spi.ErrorFilter{}, fn)
	}
}

// A probe goes through an OPEN breaker before its wait is over, one at a
// time: its success closes the breaker, its failure opens it again from
// then, and one that is not counted changes nothing.
func TestProbe(t *testing.T) {
	var moves []string
	b, err := breaker.New(spi.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitDuration: time.Minute},
		func(from, to breaker.State) { moves = append(moves, from.String()+">"+to.String()) })
	require.NoError(t, err)
	_, ok := b.Probe(t0)
	assert.False(t, ok, "no probe of a CLOSED breaker")
	for range 2 {
		p, ok := b.Allow(t0)
		require.True(t, ok)
		p.Done(t0, spi.CallFailed)
	}
	require.Equal(t, breaker.Open, b.State(t0))

	p, ok := b.Probe(t0.Add(time.Second))
	require.True(t, ok)
	_, again := b.Probe(t0.Add(time.Second))
	assert.False(t, again, "one probe out at a time")
	p.Done(t0.Add(2*time.Second), spi.CallNotCounted)
	assert.Equal(t, time.Minute-time.Second, b.OpenFor(t0.Add(time.Second)), "a probe not counted changes nothing")

	p, ok = b.Probe(t0.Add(3 * time.Second))
	require.True(t, ok)
	p.Done(t0.Add(4*time.Second), spi.CallFailed)
	assert.Equal(t, time.Minute, b.OpenFor(t0.Add(4*time.Second)), "a failed probe opens the breaker again from then")

	_, ok = b.Probe(t0.Add(4*time.Second + time.Minute))
	assert.False(t, ok, "no probe once the wait is over: Allow admits the HALF_OPEN trials")

	p, ok = b.Probe(t0.Add(5 * time.Second))
	require.True(t, ok)
	p.Done(t0.Add(6*time.Second), spi.CallSucceeded)
	assert.Equal(t, breaker.Closed, b.State(t0.Add(6*time.Second)), "a probe that succeeded closes the breaker")
	assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>CLOSED"}, moves)
}
