package simtest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/simtest"
	"github.com/ratchet-go/ratchet/stores/memory"
)

var t0 = simtest.DefaultStart

type chargeArgs struct {
	Order  string `json:"order"`
	Amount int    `json:"amount"`
}

type receipt struct {
	Order string `json:"order"`
	Total int    `json:"total"`
}

var errBoom = errors.New("boom")

func chargeTask(fn func(context.Context, chargeArgs) (receipt, error)) *ratchet.Task[chargeArgs, receipt] {
	if fn == nil {
		fn = func(_ context.Context, a chargeArgs) (receipt, error) {
			return receipt{Order: a.Order, Total: a.Amount}, nil
		}
	}
	return ratchet.NewTask("charge", fn)
}

// The acceptance test of the environment: a job with EXPONENTIAL backoff
// from a 1 s base and 10 retries reaches the DLQ in well under a second of
// wall time, each attempt at its exact simulated time.
func TestExponentialBackoffToDLQInSimulatedTime(t *testing.T) {
	ctx := context.Background()
	task := ratchet.NewVoidTask("flaky", func(context.Context, chargeArgs) error { return errBoom })
	env := simtest.NewEnv(t, simtest.EnvOptions{}, task)
	id, err := task.Submit(ctx, env.Client(), chargeArgs{Order: "o-1"},
		ratchet.WithMaxRetries(10), ratchet.WithBackoff(ratchet.BackoffExponential, time.Second))
	require.NoError(t, err)

	wall := time.Now()
	env.RunUntilIdle()
	elapsed := time.Since(wall)
	assert.Less(t, elapsed, time.Second, "a day-scale retry schedule runs in milliseconds of wall time")

	calls := env.Calls("flaky")
	require.Len(t, calls, 11, "the first attempt and 10 retries")
	at, delay := t0, time.Second
	for k, c := range calls {
		assert.Equal(t, k+1, c.Run)
		assert.Equal(t, at, c.Start, "attempt %d at t0 + %s", k+1, at.Sub(t0))
		assert.Equal(t, "boom", c.Err)
		at, delay = at.Add(delay), delay*2
	}
	// attempt k ran at t0 + (1 + 2 + ... + 2^(k-2)) s = t0 + (2^(k-1) - 1) s
	assert.Equal(t, t0.Add(1023*time.Second), calls[10].Start)

	j := env.Job(id)
	assert.Equal(t, ratchet.StatusFailed, j.Status)
	assert.Equal(t, 11, j.Attempts)
	assert.Equal(t, "boom", j.LastError)
	assert.Equal(t, t0.Add(1023*time.Second), j.FinishedAt)
	dlq := env.DLQ()
	require.Len(t, dlq, 1)
	assert.Equal(t, id, dlq[0].ID)
	assert.Equal(t, t0.Add(1023*time.Second), env.Now(), "the clock stops where the last thing happened")

	var retrying, failed int
	for _, ev := range env.Events() {
		switch ev.Kind {
		case simtest.EventRetrying:
			retrying++
		case simtest.EventFailed:
			failed++
			assert.Equal(t, 1023*time.Second, ev.Offset)
		}
	}
	assert.Equal(t, 10, retrying)
	assert.Equal(t, 1, failed)
}

func TestMockReturnsTypedResult(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{}, charge)
	env.MockTask(charge).Return(receipt{Order: "mocked", Total: 99})
	id, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "o-7", Amount: 5})
	require.NoError(t, err)
	env.RunUntilIdle()

	j := env.Job(id)
	require.Equal(t, ratchet.StatusSucceeded, j.Status)
	got, err := charge.Result(env.Client(), j)
	require.NoError(t, err)
	assert.Equal(t, receipt{Order: "mocked", Total: 99}, got)
	env.AssertCalledTimes("charge", 1)
	env.AssertCalledWith("charge", chargeArgs{Order: "o-7", Amount: 5})
	calls := env.Calls("charge")
	require.Len(t, calls, 1)
	assert.True(t, calls[0].Mocked)
	a, err := simtest.CallArgs[chargeArgs](calls[0])
	require.NoError(t, err)
	assert.Equal(t, "o-7", a.Order)
}

func TestMockTimesFallsThroughToNextMockThenRealTask(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{}, charge)
	first := env.MockTask(charge).Times(2).ReturnError(errBoom)
	second := env.Mock("charge").Once().ReturnError(errors.New("still down"))
	id, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "o-1", Amount: 3},
		ratchet.WithBackoff(ratchet.BackoffFixed, time.Minute))
	require.NoError(t, err)
	env.RunUntilIdle()

	assert.Equal(t, 2, first.Calls())
	assert.Equal(t, 1, second.Calls())
	calls := env.Calls("charge")
	require.Len(t, calls, 4)
	assert.Equal(t, []string{"boom", "boom", "still down", ""}, []string{calls[0].Err, calls[1].Err, calls[2].Err, calls[3].Err})
	assert.Equal(t, []bool{true, true, true, false}, []bool{calls[0].Mocked, calls[1].Mocked, calls[2].Mocked, calls[3].Mocked})
	for i, c := range calls {
		assert.Equal(t, t0.Add(time.Duration(i)*time.Minute), c.Start, "FIXED backoff of a minute")
	}
	j := env.Job(id)
	require.Equal(t, ratchet.StatusSucceeded, j.Status)
	got, err := charge.Result(env.Client(), j)
	require.NoError(t, err)
	assert.Equal(t, receipt{Order: "o-1", Total: 3}, got, "the real task ran the fourth attempt")
	assert.Equal(t, 3, j.Attempts, "a success keeps the count of failed attempts")
}

func TestMockByNameWithoutRegisteredTask(t *testing.T) {
	ctx := context.Background()
	// The client side knows the task; the environment only mocks it.
	email := ratchet.NewVoidTask("send-email", func(context.Context, string) error {
		panic("the real body must not run")
	})
	env := simtest.NewEnv(t, simtest.EnvOptions{})
	env.Mock("send-email").Return(nil)
	_, err := email.Submit(ctx, env.Client(), "ada@example.com")
	require.NoError(t, err)
	env.RunUntilIdle()
	env.AssertCalledWith("send-email", "ada@example.com")
	require.Len(t, env.Jobs(ratchet.StatusSucceeded), 1)
}

func TestMockDoNotRetryGoesToDLQ(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{}, charge)
	env.MockTask(charge).ReturnDoNotRetry(errors.New("card declined"))
	id, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "o-2"}, ratchet.WithMaxRetries(5))
	require.NoError(t, err)
	env.RunUntilIdle()
	j := env.Job(id)
	assert.Equal(t, ratchet.StatusFailed, j.Status)
	assert.Equal(t, 1, j.Attempts)
	assert.Equal(t, "do not retry: card declined", j.LastError)
	env.AssertCalledTimes("charge", 1)
}

func TestMockFuncAndWhen(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{}, charge)
	simtest.MockFunc(env, charge, func(ctx context.Context, a chargeArgs) (receipt, error) {
		jc, ok := ratchet.JobFromContext(ctx)
		if !ok {
			return receipt{}, errors.New("no job context")
		}
		return receipt{Order: a.Order + "/" + jc.Param("tenant"), Total: a.Amount * 2}, nil
	}).When(func(c simtest.Call) bool {
		a, err := simtest.CallArgs[chargeArgs](c)
		return err == nil && a.Amount > 10
	})
	big, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "big", Amount: 50}, ratchet.WithParam("tenant", "acme"))
	require.NoError(t, err)
	small, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "small", Amount: 5})
	require.NoError(t, err)
	env.RunUntilIdle()
	r, err := charge.Result(env.Client(), env.Job(big))
	require.NoError(t, err)
	assert.Equal(t, receipt{Order: "big/acme", Total: 100}, r)
	r, err = charge.Result(env.Client(), env.Job(small))
	require.NoError(t, err)
	assert.Equal(t, receipt{Order: "small", Total: 5}, r, "not matched: the real task ran")
}

func TestMockAfterTakesSimulatedTime(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{}, charge)
	env.MockTask(charge).After(10 * time.Minute).Return(receipt{Total: 1})
	ids, err := charge.SubmitMany(ctx, env.Client(), []chargeArgs{{Order: "a"}, {Order: "b"}})
	require.NoError(t, err)
	env.RunUntilIdle()
	ex := env.Executions()
	require.Len(t, ex, 2)
	// One slot (the default concurrency): the second waits for the first.
	assert.Equal(t, t0, ex[0].Start)
	assert.Equal(t, t0.Add(10*time.Minute), ex[0].End)
	assert.Equal(t, t0.Add(10*time.Minute), ex[1].Start)
	assert.Equal(t, t0.Add(20*time.Minute), ex[1].End)
	assert.Equal(t, t0.Add(20*time.Minute), env.Job(ids[1]).FinishedAt)
}

func TestConcurrentJobsSleepInParallel(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{Engine: engine.Options{Concurrency: 4}}, charge)
	env.MockTask(charge).After(time.Hour)
	ids, err := charge.SubmitMany(ctx, env.Client(), make([]chargeArgs, 4))
	require.NoError(t, err)
	env.RunUntilIdle()
	for _, id := range ids {
		j := env.Job(id)
		assert.Equal(t, ratchet.StatusSucceeded, j.Status)
		assert.Equal(t, t0.Add(time.Hour), j.FinishedAt, "four slots: all four ran at once")
	}
	assert.Equal(t, t0.Add(time.Hour), env.Now())
}

func TestManySlotsWithSimulatedDelays(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{Engine: engine.Options{Concurrency: 16}}, charge)
	env.MockTask(charge).After(time.Minute)
	ids, err := charge.SubmitMany(ctx, env.Client(), make([]chargeArgs, 20))
	require.NoError(t, err)
	env.RunUntilIdle()
	ends := map[time.Duration]int{}
	for _, id := range ids {
		ends[env.Job(id).FinishedAt.Sub(t0)]++
	}
	assert.Equal(t, map[time.Duration]int{time.Minute: 16, 2 * time.Minute: 4}, ends, "16 slots: 16 jobs in the first minute, 4 in the second")
}

func TestSleepInARealTaskBody(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var seen []time.Time
	env := (*simtest.Env)(nil)
	task := ratchet.NewVoidTask("poll-until-ready", func(ctx context.Context, n int) error {
		for range n {
			if err := simtest.Sleep(ctx, 30*time.Second); err != nil {
				return err
			}
			mu.Lock()
			seen = append(seen, env.Now())
			mu.Unlock()
		}
		return nil
	})
	env = simtest.NewEnv(t, simtest.EnvOptions{}, task)
	_, err := task.Submit(ctx, env.Client(), 3)
	require.NoError(t, err)
	env.RunUntilIdle()
	assert.Equal(t, []time.Time{t0.Add(30 * time.Second), t0.Add(time.Minute), t0.Add(90 * time.Second)}, seen)
}

func TestAdvanceRunsEachThingAtItsTime(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{}, charge)
	a, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "a"}, ratchet.WithDelay(10*time.Second))
	require.NoError(t, err)
	b, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "b"}, ratchet.WithDelay(20*time.Second))
	require.NoError(t, err)

	assert.Equal(t, ratchet.StatusPending, env.Status(a), "nothing runs before time is driven")
	env.Advance(15 * time.Second)
	assert.Equal(t, t0.Add(15*time.Second), env.Now())
	assert.Equal(t, ratchet.StatusSucceeded, env.Status(a))
	assert.Equal(t, t0.Add(10*time.Second), env.Job(a).FinishedAt, "a ran at its due time, not at the end of the advance")
	assert.Equal(t, ratchet.StatusPending, env.Status(b))

	env.Advance(5 * time.Second)
	assert.Equal(t, ratchet.StatusSucceeded, env.Status(b), "a job due exactly at the end of an advance runs")
	env.Advance(0)
	assert.Equal(t, t0.Add(20*time.Second), env.Now())
}

func TestDelayedCallbackCancelsAJob(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{}, charge)
	id, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "late"}, ratchet.WithDelay(time.Hour))
	require.NoError(t, err)
	env.RegisterDelayedCallback(30*time.Minute, func() {
		assert.Equal(t, t0.Add(30*time.Minute), env.Now())
		require.NoError(t, env.Client().CancelJob(ctx, id))
	})
	env.RunUntilIdle()
	assert.Equal(t, ratchet.StatusCancelled, env.Status(id))
	env.AssertNotCalled("charge")
	assert.Equal(t, t0.Add(30*time.Minute), env.Now(), "nothing left after the cancel")
}

func TestDelayedCallbackRetriesFromDLQ(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{}, charge)
	env.MockTask(charge).Once().ReturnDoNotRetry(errBoom)
	id, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "x", Amount: 1})
	require.NoError(t, err)
	env.RegisterDelayedCallback(time.Hour, func() {
		require.Len(t, env.DLQ(), 1)
		require.NoError(t, env.Client().RetryJob(ctx, id))
	})
	env.RunUntilIdle()
	j := env.Job(id)
	assert.Equal(t, ratchet.StatusSucceeded, j.Status)
	assert.Equal(t, t0.Add(time.Hour), j.FinishedAt)
	assert.Contains(t, env.EventLog(), "dlq-retry")
}

func TestClaimOrderFollowsPriority(t *testing.T) {
	ctx := context.Background()
	task := ratchet.NewVoidTask("p", func(context.Context, string) error { return nil })
	env := simtest.NewEnv(t, simtest.EnvOptions{}, task)
	for _, p := range []struct {
		name string
		prio ratchet.Priority
	}{{"low", ratchet.PriorityLow}, {"normal", ratchet.PriorityNormal}, {"critical", ratchet.PriorityCritical}, {"high", ratchet.PriorityHigh}} {
		_, err := task.Submit(ctx, env.Client(), p.name, ratchet.WithPriority(p.prio))
		require.NoError(t, err)
	}
	env.RunUntilIdle()
	var order []string
	for _, c := range env.Executions() {
		a, err := simtest.CallArgs[string](c)
		require.NoError(t, err)
		order = append(order, a)
	}
	assert.Equal(t, []string{"critical", "high", "normal", "low"}, order)
}

// The same test gives the same event log, job for job and instant for
// instant, although the engine runs on goroutines.
func TestEventLogIsDeterministic(t *testing.T) {
	scenario := func(t *testing.T) string {
		ctx := context.Background()
		charge := chargeTask(nil)
		env := simtest.NewEnv(t, simtest.EnvOptions{}, charge)
		env.MockTask(charge).Times(3).ReturnError(errBoom)
		env.MockTask(charge).After(2 * time.Second).Return(receipt{Total: 1})
		for i := range 5 {
			_, err := charge.Submit(ctx, env.Client(), chargeArgs{Amount: i},
				ratchet.WithPriority(ratchet.Priority(i%5)), ratchet.WithBackoff(ratchet.BackoffNone, 0),
				ratchet.WithDelay(time.Duration(i%2)*time.Second))
			require.NoError(t, err)
		}
		env.RegisterDelayedCallback(3*time.Second, func() {
			_, err := charge.Submit(ctx, env.Client(), chargeArgs{Amount: 100}, ratchet.WithPriority(ratchet.PriorityCritical))
			require.NoError(t, err)
		})
		env.RunUntilIdle()
		return env.EventLog()
	}
	first := scenario(t)
	for range 5 {
		assert.Equal(t, first, scenario(t))
	}
	assert.Contains(t, first, "retrying")
	t.Log("\n" + first)
}

// recorder stands in for a *testing.T to catch the failures an Env reports.
type recorder struct {
	simtest.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) errors() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

func TestUnhandledCallsFailTheTest(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	rec := &recorder{TB: t}
	env := simtest.NewEnv(rec, simtest.EnvOptions{})
	env.MockTask(charge).Once().Return(receipt{})
	orphanTask := ratchet.NewVoidTask("nobody-handles-me", func(context.Context, int) error { return nil })
	a, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "first"})
	require.NoError(t, err)
	b, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "second"})
	require.NoError(t, err)
	c, err := orphanTask.Submit(ctx, env.Client(), 1)
	require.NoError(t, err)
	env.RunUntilIdle()

	assert.Equal(t, ratchet.StatusSucceeded, env.Status(a))
	assert.Equal(t, ratchet.StatusFailed, env.Status(b), "the mock was used up and no task is registered")
	assert.Equal(t, ratchet.StatusPending, env.Status(c), "the engine does not claim a job of a task it lacks")
	msgs := rec.errors()
	assert.Contains(t, msgs, `task "charge" ran with args {"order":"second","amount":0}, but no mock matched it`)
	assert.Contains(t, msgs, `task "nobody-handles-me" is due, but no task of that name is registered and no mock matches it`)
	assert.Equal(t, 1, strings.Count(msgs, `"nobody-handles-me" is due`), "reported once")
	env.RunUntilIdle()
	assert.Equal(t, 1, strings.Count(rec.errors(), `"nobody-handles-me" is due`), "reported once, not at every run")
}

func TestAssertionsReportFailures(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	rec := &recorder{TB: t}
	env := simtest.NewEnv(rec, simtest.EnvOptions{}, charge)
	_, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "o"})
	require.NoError(t, err)
	env.RunUntilIdle()
	assert.True(t, env.AssertCalled("charge"))
	assert.False(t, env.AssertNotCalled("charge"))
	assert.False(t, env.AssertCalledTimes("charge", 2))
	assert.False(t, env.AssertCalledWith("charge", chargeArgs{Order: "other"}))
	assert.False(t, env.AssertCalled("refund"))
	msgs := rec.errors()
	assert.Contains(t, msgs, `task "charge" was called 1 times, expected never`)
	assert.Contains(t, msgs, `task "charge" was called 1 times, expected 2`)
	assert.Contains(t, msgs, `task "charge" was never called with {"order":"other","amount":0}; it was called with: {"order":"o","amount":0}`)
	assert.Contains(t, msgs, `task "refund" was never called`)
}

func TestNothingRunsOutsideAdvance(t *testing.T) {
	ctx := context.Background()
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{}, charge)
	env.Engine() // started: its poller is live, but claims wait for the test
	id, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "o"})
	require.NoError(t, err)
	assert.Equal(t, ratchet.StatusPending, env.Status(id))
	env.Advance(0)
	assert.Equal(t, ratchet.StatusSucceeded, env.Status(id))
	assert.Equal(t, t0, env.Now())
}

func TestEnvStartTimeAndEventLog(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2031, 6, 1, 12, 0, 0, 0, time.UTC)
	charge := chargeTask(nil)
	env := simtest.NewEnv(t, simtest.EnvOptions{Start: start}, charge)
	env.MockTask(charge).Once().ReturnError(errBoom)
	id, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "o"}, ratchet.WithBackoff(ratchet.BackoffFixed, 5*time.Second))
	require.NoError(t, err)
	env.RunUntilIdle()
	assert.Equal(t, start.Add(5*time.Second), env.Job(id).FinishedAt)
	want := []simtest.EventKind{
		simtest.EventSubmitted, simtest.EventClaimed, simtest.EventStarted, simtest.EventRetrying,
		simtest.EventClaimed, simtest.EventStarted, simtest.EventSucceeded,
	}
	var kinds []simtest.EventKind
	for _, ev := range env.Events() {
		kinds = append(kinds, ev.Kind)
		assert.Equal(t, 1, ev.Job)
		assert.Equal(t, "charge", ev.Task)
	}
	assert.Equal(t, want, kinds)
	assert.Equal(t, `   +0.000s submitted   #1 charge: NORMAL, due +0.000s
   +0.000s claimed     #1 charge run 1: claim 1
   +0.000s started     #1 charge run 1
   +0.000s retrying    #1 charge run 1: boom; retry at +5.000s
   +5.000s claimed     #1 charge run 2: claim 2
   +5.000s started     #1 charge run 2
   +5.000s succeeded   #1 charge run 2
`, env.EventLog())
}

// The Env's engine sees the capabilities of the store under it: leases for
// its StartupCoordinator, and claim checks in its heartbeat, which stop the
// body of a job taken away from the node (here recovered as another node's
// orphan scan would).
func TestEnvEngineSeesTheStoreCapabilities(t *testing.T) {
	ctx := context.Background()
	inner := memory.New()
	stopped := make(chan error, 1)
	task := ratchet.NewVoidTask("long", func(ctx context.Context, _ int) error {
		err := simtest.Sleep(ctx, 3*time.Hour)
		if err != nil {
			stopped <- err
		}
		return err
	})
	env := simtest.NewEnv(t, simtest.EnvOptions{Store: inner}, task)
	sc, err := env.Engine().StartupCoordinator()
	require.NoError(t, err, "leases reach the Env's engine")
	held, err := sc.TryAcquire(ctx, "migrate", time.Minute)
	require.NoError(t, err)
	assert.True(t, held)

	_, err = task.Submit(ctx, env.Client(), 1)
	require.NoError(t, err)
	env.Advance(0) // claimed; the body sleeps
	rec, err := inner.RecoverOrphans(ctx, spi.RecoverParams{Now: env.Now(), Grace: time.Minute, MaxCrashRedeliveries: 3, Nodes: []string{"simtest"}})
	require.NoError(t, err)
	require.Len(t, rec, 1)
	env.Advance(time.Hour) // the heartbeat (every hour in an Env) checks the claim
	select {
	case err := <-stopped:
		assert.ErrorIs(t, err, context.Canceled, "the heartbeat's claim check cancelled the body")
	case <-time.After(10 * time.Second):
		t.Fatal("the body of the recovered job was not cancelled: the heartbeat did not check claims")
	}
}

// A recurring schedule in an Env: Advance steps through its slots in
// order, each slot's job runs at its slot, and RunUntilIdle does not wait
// for the next one.
func TestRecurringScheduleInEnv(t *testing.T) {
	var (
		mu  sync.Mutex
		ran []time.Time
		env *simtest.Env
	)
	task := ratchet.NewVoidTask("hourly", func(ctx context.Context, _ int) error {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, env.Now())
		return nil
	})
	env = simtest.NewEnv(t, simtest.EnvOptions{Engine: engine.Options{
		Schedules: []ratchet.Recurring{task.Recurring("hourly", "@hourly", 1)},
	}}, task)
	env.Advance(5*time.Hour + time.Minute)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, ran, 5, "five slots in five hours, none a misfire")
	for i, at := range ran {
		assert.Equal(t, simtest.DefaultStart.Truncate(time.Hour).Add(time.Duration(i+1)*time.Hour), at, "slot %d runs at its time", i+1)
	}
	mu.Unlock()
	env.RunUntilIdle()
	mu.Lock()
	assert.Len(t, ran, 5, "RunUntilIdle does not wait for the next slot")
	info, err := env.Client().GetSchedule(context.Background(), "hourly")
	require.NoError(t, err)
	assert.Zero(t, info.Skipped)
}

// A task's circuit breaker works in an Env as on a node, on the Env's fake
// clock: two failing calls open it, a job meanwhile goes back to PENDING
// without an attempt charged, and after the breaker's wait one trial call
// that succeeds closes it.
func TestEnvKeepsTheTaskBreaker(t *testing.T) {
	charge := ratchet.NewTask("charge", func(ctx context.Context, a chargeArgs) (receipt, error) {
		return receipt{Order: a.Order}, nil
	}, ratchet.WithMaxRetries(10), ratchet.WithBackoff(ratchet.BackoffFixed, time.Second)).ProtectedBy("payments", spi.ErrorFilter{})
	env := simtest.NewEnv(t, simtest.EnvOptions{Engine: engine.Options{Breakers: engine.BreakerOptions{
		Config: spi.CircuitBreakerConfig{SlidingWindowSize: 2, MinimumCalls: 2, WaitDuration: time.Minute, PermittedCallsInHalfOpen: 1}}}}, charge)
	env.MockTask(charge).Times(2).ReturnError(errors.New("503 from the gateway"))
	state := func() string {
		for _, b := range env.Engine().Breakers() {
			if b.Service == "payments" {
				return b.State.String()
			}
		}
		return "no breaker of the service payments"
	}
	ctx := context.Background()
	a, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "A-1"})
	require.NoError(t, err)
	env.Advance(0)
	require.NoError(t, err)
	b, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "A-2"})
	require.NoError(t, err)
	env.Advance(0)
	assert.Equal(t, "OPEN", state(), "two failures of two calls open the breaker")
	assert.Equal(t, 1, env.Job(a).Attempts)
	assert.Equal(t, 1, env.Job(b).Attempts)

	c, err := charge.Submit(ctx, env.Client(), chargeArgs{Order: "A-3"})
	require.NoError(t, err)
	env.Advance(0)
	j := env.Job(c)
	assert.Equal(t, ratchet.StatusPending, j.Status, "refused by the open breaker: back to PENDING")
	assert.Equal(t, 0, j.Attempts, "no attempt charged")
	assert.Equal(t, t0.Add(spi.DefaultRetryDelay), j.ScheduledAt.UTC(), "due again after the breaker's retry delay")

	env.Advance(time.Minute) // the wait is over: HALF_OPEN, and the trial call succeeds
	assert.Equal(t, "CLOSED", state(), "a successful trial call closes the breaker")
	env.RunUntilIdle()
	for _, id := range []uuid.UUID{a, b, c} {
		assert.Equal(t, ratchet.StatusSucceeded, env.Status(id))
	}
}

// Retry jitter spreads the retries of jobs that failed together: with the
// node's RetryJitter of 0.5, the retries of a FIXED 10 s backoff fall
// between 5 s and 10 s and not all at one instant; a task whose own
// RetryJitter is 0 keeps its delays exact.
func TestRetryJitterSpreadsRetries(t *testing.T) {
	spread := ratchet.NewVoidTask("spread", func(context.Context, int) error { return nil },
		ratchet.WithBackoff(ratchet.BackoffFixed, 10*time.Second))
	exact := ratchet.NewVoidTask("exact", func(context.Context, int) error { return nil },
		ratchet.WithBackoff(ratchet.BackoffFixed, 10*time.Second)).RetryJitter(0)
	env := simtest.NewEnv(t, simtest.EnvOptions{Engine: engine.Options{RetryJitter: 0.5}}, spread, exact)
	env.MockTask(spread).Times(20).ReturnError(errors.New("gateway down"))
	env.MockTask(exact).Times(20).ReturnError(errors.New("gateway down"))
	ctx := context.Background()
	args := make([]int, 20)
	spreadIDs, err := spread.SubmitMany(ctx, env.Client(), args)
	require.NoError(t, err)
	exactIDs, err := exact.SubmitMany(ctx, env.Client(), args)
	require.NoError(t, err)
	env.Advance(0) // every job runs once and fails
	retries := map[time.Time]bool{}
	for _, id := range spreadIDs {
		j := env.Job(id)
		require.Equal(t, ratchet.StatusPending, j.Status)
		delay := j.ScheduledAt.Sub(t0)
		assert.True(t, delay >= 5*time.Second && delay <= 10*time.Second, "a retry of spread after %s", delay)
		retries[j.ScheduledAt] = true
	}
	assert.Greater(t, len(retries), 10, "20 retries at %d instants", len(retries))
	for _, id := range exactIDs {
		assert.Equal(t, t0.Add(10*time.Second), env.Job(id).ScheduledAt.UTC(), "exact keeps its delay")
	}
	env.RunUntilIdle()
	for _, id := range append(spreadIDs, exactIDs...) {
		assert.Equal(t, ratchet.StatusSucceeded, env.Status(id))
	}
}

// A jitter outside [0, 1] is refused, the node's and a task's.
func TestRetryJitterChecked(t *testing.T) {
	noop := ratchet.NewVoidTask("noop", func(context.Context, int) error { return nil })
	_, err := engine.New(memory.New(), engine.Options{RetryJitter: 1.5}, noop)
	assert.ErrorContains(t, err, "RetryJitter 1.5 is not a fraction in [0, 1]")
	_, err = engine.New(memory.New(), engine.Options{}, ratchet.NewVoidTask("bad", func(context.Context, int) error { return nil }).RetryJitter(-0.1))
	assert.ErrorContains(t, err, "retry jitter -0.1 is not a fraction in [0, 1]")
}
