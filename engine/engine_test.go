package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/nodecore"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type rig struct {
	t      *testing.T
	store  *memory.Store
	clock  *clockwork.FakeClock
	eng    *engine.Engine
	client *ratchet.Client
	events <-chan engine.Event
	seen   map[uuid.UUID][]engine.Event // events read while waiting for another job
}

// start builds and starts an engine on a memory store and a fake clock.
func start(t *testing.T, opts engine.Options, tasks ...ratchet.Definition) *rig {
	t.Helper()
	r := &rig{t: t, store: memory.New(), clock: clockwork.NewFakeClockAt(t0), seen: map[uuid.UUID][]engine.Event{}}
	if opts.NodeID == "" {
		opts.NodeID = "n1"
	}
	opts.Client.Clock = r.clock
	opts.Client.Logger = quiet
	eng, err := engine.New(r.store, opts, tasks...)
	require.NoError(t, err)
	r.eng, r.client = eng, eng.Client()
	ev, unsub := eng.Subscribe(10000)
	r.events = ev
	require.NoError(t, eng.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = eng.Stop(ctx)
		unsub()
	})
	return r
}

// next waits for the next event of job id.
func (r *rig) next(id uuid.UUID) engine.Event {
	r.t.Helper()
	if q := r.seen[id]; len(q) > 0 {
		r.seen[id] = q[1:]
		return q[0]
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-r.events:
			if ev.JobID == id {
				return ev
			}
			r.seen[ev.JobID] = append(r.seen[ev.JobID], ev)
		case <-timeout:
			r.t.Fatalf("no event for job %s within 10s", id)
		}
	}
}

func (r *rig) job(id uuid.UUID) *spi.Job {
	r.t.Helper()
	j, err := r.client.GetJob(context.Background(), id)
	require.NoError(r.t, err)
	return j
}

// advanceTo moves the fake clock to at and wakes the poller.
func (r *rig) advanceTo(at time.Time) {
	r.clock.Advance(at.Sub(r.clock.Now()))
	r.eng.NotifyNewWork(ratchet.PriorityNormal)
}

type args struct {
	N int    `json:"n"`
	S string `json:"s,omitempty"`
}

var errBoom = errors.New("boom")

func TestRetryPathFAQExample(t *testing.T) {
	var calls atomic.Int32
	task := ratchet.NewVoidTask("refund", func(ctx context.Context, a args) error {
		calls.Add(1)
		return errBoom
	})
	r := start(t, engine.Options{}, task)
	id, err := task.Submit(context.Background(), r.client, args{N: 1},
		ratchet.WithMaxRetries(3), ratchet.WithBackoff(ratchet.BackoffExponential, time.Second))
	require.NoError(t, err)

	at := t0
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		ev := r.next(id)
		require.Equal(t, engine.EventRetrying, ev.Kind, "attempt %d", i+1)
		assert.Equal(t, i+1, ev.Run)
		assert.Equal(t, at, ev.At)
		assert.Equal(t, want, ev.RetryAt.Sub(ev.At), "delay after attempt %d", i+1)
		j := r.job(id)
		assert.Equal(t, spi.StatusPending, j.Status)
		assert.Equal(t, ev.RetryAt, j.ScheduledAt)
		assert.Equal(t, "boom", j.LastError)
		at = ev.RetryAt
		r.advanceTo(at)
	}
	ev := r.next(id)
	require.Equal(t, engine.EventFailed, ev.Kind)
	assert.Equal(t, 4, ev.Run)
	assert.Equal(t, t0.Add(7*time.Second), ev.At)
	j := r.job(id)
	assert.Equal(t, spi.StatusFailed, j.Status)
	assert.Equal(t, 4, j.Attempts)
	assert.Equal(t, int32(4), calls.Load())
	assert.Equal(t, t0.Add(7*time.Second), j.FinishedAt)
}

func TestDecideRetry(t *testing.T) {
	deep := fmt.Errorf("level 1: %w", fmt.Errorf("level 2: %w", fmt.Errorf("level 3: %w", ratchet.DoNotRetry(errBoom))))
	job := func(attempts, maxRetries int, kind spi.BackoffKind, base time.Duration) *spi.Job {
		return &spi.Job{Attempts: attempts, MaxRetries: maxRetries, Backoff: kind, BackoffParam: base}
	}
	cases := []struct {
		name    string
		job     *spi.Job
		err     error
		policy  spi.RetryPolicy
		retry   bool
		delay   time.Duration
		attempt int
	}{
		{"first failure exponential", job(0, 3, spi.BackoffExponential, time.Second), errBoom, nil, true, time.Second, 1},
		{"third failure exponential", job(2, 3, spi.BackoffExponential, time.Second), errBoom, nil, true, 4 * time.Second, 3},
		{"retries exhausted", job(3, 3, spi.BackoffExponential, time.Second), errBoom, nil, false, 0, 4},
		{"max retries zero", job(0, 0, spi.BackoffNone, 0), errBoom, nil, false, 0, 1},
		{"none is immediate", job(1, 5, spi.BackoffNone, time.Minute), errBoom, nil, true, 0, 2},
		{"fixed", job(3, 5, spi.BackoffFixed, 30*time.Second), errBoom, nil, true, 30 * time.Second, 4},
		{"exponential capped at 24h", job(29, 40, spi.BackoffExponential, time.Second), errBoom, nil, true, 24 * time.Hour, 30},
		{"exponential just under the cap", job(16, 40, spi.BackoffExponential, time.Second), errBoom, nil, true, 65536 * time.Second, 17},
		{"do not retry three levels deep", job(0, 10, spi.BackoffFixed, time.Second), deep, nil, false, 0, 1},
		{"policy refuses", job(0, 10, spi.BackoffFixed, time.Second), errBoom, policy{refuseFrom: 1}, false, 0, 1},
		{"policy sets the delay", job(1, 10, spi.BackoffFixed, time.Second), errBoom, policy{delay: 7 * time.Second}, true, 7 * time.Second, 2},
		{"policy zero delay defers to backoff", job(1, 10, spi.BackoffFixed, time.Second), errBoom, policy{}, true, time.Second, 2},
		{"policy yes still honours max retries", job(2, 2, spi.BackoffFixed, time.Second), errBoom, policy{}, false, 0, 3},
		{"policy cannot override do not retry", job(0, 10, spi.BackoffFixed, time.Second), deep, policy{}, false, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.policy
			if p == nil {
				p = nodecore.DefaultRetryPolicy{}
			}
			d := nodecore.DecideRetry(tc.job, tc.err, p, t0)
			assert.Equal(t, tc.retry, d.Retry)
			assert.Equal(t, tc.attempt, d.Attempt)
			if tc.retry {
				assert.Equal(t, tc.delay, d.RetryAt.Sub(t0))
			}
		})
	}
}

type policy struct {
	refuseFrom int // refuse retries from this attempt on; 0 never
	delay      time.Duration
}

func (p policy) ShouldRetry(attempt int, err error) bool {
	return p.refuseFrom == 0 || attempt < p.refuseFrom
}
func (p policy) Delay(int) time.Duration { return p.delay }

func TestDoNotRetryDeepGoesToDLQ(t *testing.T) {
	task := ratchet.NewVoidTask("validate", func(ctx context.Context, a args) error {
		return fmt.Errorf("handler: %w", fmt.Errorf("service: %w", fmt.Errorf("repo: %w", ratchet.DoNotRetry(errBoom))))
	})
	r := start(t, engine.Options{}, task)
	id, err := task.Submit(context.Background(), r.client, args{}, ratchet.WithMaxRetries(10))
	require.NoError(t, err)
	ev := r.next(id)
	require.Equal(t, engine.EventFailed, ev.Kind)
	j := r.job(id)
	assert.Equal(t, spi.StatusFailed, j.Status)
	assert.Equal(t, 1, j.Attempts)
	assert.Contains(t, j.LastError, "do not retry: boom")
}

func TestCustomRetryPolicyOverridesDelayAndDecision(t *testing.T) {
	task := ratchet.NewVoidTask("flaky", func(ctx context.Context, a args) error { return errBoom })
	r := start(t, engine.Options{RetryPolicy: policy{refuseFrom: 3, delay: 7 * time.Second}}, task)
	id, err := task.Submit(context.Background(), r.client, args{}, ratchet.WithMaxRetries(10),
		ratchet.WithBackoff(ratchet.BackoffFixed, time.Hour))
	require.NoError(t, err)
	for i := 1; i <= 2; i++ {
		ev := r.next(id)
		require.Equal(t, engine.EventRetrying, ev.Kind)
		assert.Equal(t, 7*time.Second, ev.RetryAt.Sub(ev.At), "policy delay wins over the job's FIXED 1h")
		r.advanceTo(ev.RetryAt)
	}
	ev := r.next(id)
	assert.Equal(t, engine.EventFailed, ev.Kind, "policy refuses from attempt 3 although max retries is 10")
	assert.Equal(t, 3, ev.Run)
}

func TestPayloadLimit(t *testing.T) {
	task := ratchet.NewVoidTask("big", func(ctx context.Context, s string) error { return nil })
	r := start(t, engine.Options{Client: ratchet.ClientOptions{MaxPayloadBytes: 1000}}, task)
	ctx := context.Background()
	// A JSON string of 998 bytes of x serializes to exactly 1000 bytes.
	id, err := task.Submit(ctx, r.client, strings.Repeat("x", 998))
	require.NoError(t, err)
	assert.Len(t, r.job(id).Payload, 1000)

	_, err = task.Submit(ctx, r.client, strings.Repeat("x", 999))
	var tooBig *ratchet.PayloadTooLargeError
	require.ErrorAs(t, err, &tooBig)
	assert.Equal(t, 1001, tooBig.Size)
	assert.Equal(t, 1000, tooBig.Limit)
	assert.Equal(t, "big", tooBig.Task)
	page, err := r.client.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, page.Jobs, 1, "the oversize job was not written")

	// SubmitMany with one oversize element writes none of them.
	_, err = task.SubmitMany(ctx, r.client, []string{"a", strings.Repeat("x", 999), "b"})
	require.ErrorAs(t, err, &tooBig)
	page, err = r.client.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, page.Jobs, 1)
}

func TestDefaultPayloadLimitIs100KiB(t *testing.T) {
	c, err := ratchet.NewClient(memory.New(), ratchet.ClientOptions{})
	require.NoError(t, err)
	assert.Equal(t, 100*1024, c.MaxPayloadBytes())
}

func TestIdempotentSubmission(t *testing.T) {
	task := ratchet.NewVoidTask("once", func(ctx context.Context, a args) error { return nil })
	r := start(t, engine.Options{}, task)
	ctx := context.Background()
	id1, err := task.Submit(ctx, r.client, args{N: 1}, ratchet.WithIdempotencyKey("order-42"), ratchet.WithDelay(time.Hour))
	require.NoError(t, err)
	id2, err := task.Submit(ctx, r.client, args{N: 2}, ratchet.WithIdempotencyKey("order-42"))
	require.NoError(t, err)
	assert.Equal(t, id1, id2)
	page, err := r.client.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 1)
	assert.JSONEq(t, `{"n":1}`, string(page.Jobs[0].Payload), "the first submission's payload is kept")
}

func TestDLQRetryResets(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	task := ratchet.NewVoidTask("dlq", func(ctx context.Context, a args) error {
		if fail.Load() {
			return errBoom
		}
		return nil
	})
	r := start(t, engine.Options{}, task)
	ctx := context.Background()
	id, err := task.Submit(ctx, r.client, args{}, ratchet.WithMaxRetries(1), ratchet.WithBackoff(ratchet.BackoffFixed, time.Minute))
	require.NoError(t, err)
	ev := r.next(id)
	require.Equal(t, engine.EventRetrying, ev.Kind)
	r.advanceTo(ev.RetryAt)
	require.Equal(t, engine.EventFailed, r.next(id).Kind)
	require.Equal(t, 2, r.job(id).Attempts)

	fail.Store(false)
	r.clock.Advance(time.Hour)
	err = r.client.RetryJob(ctx, id)
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	j := r.job(id)
	assert.Equal(t, spi.StatusSucceeded, j.Status)
	assert.Equal(t, 0, j.Attempts, "attempts reset by the DLQ retry")
	assert.Empty(t, j.LastError)
	assert.Equal(t, t0.Add(time.Minute+time.Hour), j.ScheduledAt, "due time reset to the retry's now")

	require.ErrorIs(t, r.client.RetryJob(ctx, id), ratchet.ErrInvalidState, "only FAILED jobs can be retried")
	require.ErrorIs(t, r.client.RetryJob(ctx, uuid.New()), ratchet.ErrNotFound)
}

func TestDLQRetryResetFields(t *testing.T) {
	// Directly on the store state, as the FAQ states it.
	s := memory.New()
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Clock: clockwork.NewFakeClockAt(t0)})
	require.NoError(t, err)
	task := ratchet.NewVoidTask("x", func(context.Context, args) error { return nil })
	ctx := context.Background()
	id, err := task.Submit(ctx, c, args{})
	require.NoError(t, err)
	jobs, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 1, Now: t0})
	require.NoError(t, err)
	_, err = s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: spi.ClaimRef{JobID: id, ClaimSeq: jobs[0].ClaimSeq},
		Outcome: spi.OutcomeFailed, Attempts: 4, LastError: "boom", FinishedAt: t0}})
	require.NoError(t, err)
	require.NoError(t, c.RetryJob(ctx, id))
	j, err := c.GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, j.Status)
	assert.Empty(t, j.LastError)
	assert.Zero(t, j.Attempts)
	assert.Zero(t, j.CrashCount)
	assert.Equal(t, t0, j.ScheduledAt)
	assert.True(t, j.FinishedAt.IsZero())
}

func TestGracefulStopReleasesClaims(t *testing.T) {
	started := make(chan struct{}, 10)
	task := ratchet.NewVoidTask("slow", func(ctx context.Context, a args) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	// A real clock: the drain timeout is what ends these bodies.
	s := memory.New()
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, NodeID: "n1", ShutdownTimeout: 100 * time.Millisecond}, task)
	require.NoError(t, err)
	require.NoError(t, eng.Start(context.Background()))
	ctx := context.Background()
	ids, err := task.SubmitMany(ctx, eng.Client(), []args{{N: 1}, {N: 2}, {N: 3}})
	require.NoError(t, err)
	for range ids {
		<-started
	}
	require.NoError(t, eng.Stop(ctx))
	for _, id := range ids {
		j, err := s.GetJob(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusPending, j.Status)
		assert.Zero(t, j.Attempts, "release charges no attempt")
		assert.Zero(t, j.CrashCount, "release charges no crash")
		assert.Equal(t, int64(2), j.ClaimSeq, "release fences the old claim")
		assert.Empty(t, j.OwnerNode)
	}
	// The node row is gone and nothing is left RUNNING: a recovery scan finds nothing.
	rec, err := s.RecoverOrphans(ctx, spi.RecoverParams{Now: time.Now().Add(time.Hour), Grace: time.Minute, MaxCrashRedeliveries: 3})
	require.NoError(t, err)
	assert.Empty(t, rec)
}

func TestGracefulStopWaitsForRunningJobs(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	task := ratchet.NewVoidTask("wait", func(ctx context.Context, a args) error {
		close(started)
		<-release
		return nil
	})
	clock := clockwork.NewFakeClockAt(t0)
	s := memory.New()
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Clock: clock, Logger: quiet}, NodeID: "n1"}, task)
	require.NoError(t, err)
	require.NoError(t, eng.Start(context.Background()))
	ctx := context.Background()
	id, err := task.Submit(ctx, eng.Client(), args{})
	require.NoError(t, err)
	<-started
	stopped := make(chan error)
	go func() { stopped <- eng.Stop(ctx) }()
	close(release)
	require.NoError(t, <-stopped)
	j, err := s.GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusSucceeded, j.Status, "a job that finishes within the drain is completed")
}

func TestStoredJobsThatCannotRun(t *testing.T) {
	task := ratchet.NewVoidTask("typed", func(ctx context.Context, a args) error { return nil })
	r := start(t, engine.Options{}, task)
	ctx := context.Background()
	insert := func(name, payload string) uuid.UUID {
		id := uuid.Must(uuid.NewV7())
		_, err := r.store.InsertJobs(ctx, []*spi.Job{{ID: id, TaskName: name, Payload: []byte(payload), Status: spi.StatusPending,
			Priority: spi.PriorityNormal, ScheduledAt: t0, CreatedAt: t0, MaxRetries: 5, Backoff: spi.BackoffNone}}, spi.InsertOptions{})

		require.NoError(t, err)
		r.eng.NotifyNewWork(spi.PriorityNormal)
		return id
	}
	cases := []struct{ name, task, payload, wantErr string }{
		{"payload of the wrong shape", "typed", `{"n":"not a number"}`, `does not decode: `},
		{"payload not JSON", "typed", `{{{`, `does not decode: `},
		{"empty payload", "typed", ``, `empty payload`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := insert(tc.task, tc.payload)
			ev := r.next(id)
			require.Equal(t, engine.EventFailed, ev.Kind, "no retries for a job that can never run")
			j := r.job(id)
			assert.Equal(t, spi.StatusFailed, j.Status)
			assert.Contains(t, j.LastError, tc.wantErr)
		})
	}
}

// TestMixedFleet checks a rolling deploy that adds a task: the node that
// lacks the task leaves its jobs PENDING and untouched (no unknown-task
// failure), and the node that has it runs them.
func TestMixedFleet(t *testing.T) {
	ctx := context.Background()
	known := ratchet.NewVoidTask("known", func(ctx context.Context, a args) error { return nil })
	added := ratchet.NewVoidTask("added", func(ctx context.Context, a args) error { return nil })
	old := start(t, engine.Options{NodeID: "old"}, known)
	newer, err := added.Submit(ctx, old.client, args{N: 1})
	require.NoError(t, err)
	// The old node claims after the job of the added task exists: it
	// runs its own job and leaves the other.
	mine, err := known.Submit(ctx, old.client, args{N: 2})
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, old.next(mine).Kind)
	j := old.job(newer)
	assert.Equal(t, spi.StatusPending, j.Status, "a job of a task this node lacks waits for a node that runs it")
	assert.Zero(t, j.Attempts)
	assert.Zero(t, j.ClaimSeq, "never claimed")
	// The client sees that no live node runs it.
	unrunnable, err := old.client.UnrunnableTasks(ctx, time.Minute)
	require.NoError(t, err)
	require.Len(t, unrunnable, 1, "%+v", unrunnable)
	assert.Equal(t, "added", unrunnable[0].Task)
	assert.Equal(t, int64(1), unrunnable[0].Pending)
	assert.True(t, unrunnable[0].Earliest.Equal(j.ScheduledAt))

	// The new node, on the same store, runs it.
	eng, err := engine.New(old.store, engine.Options{Client: ratchet.ClientOptions{Clock: old.clock, Logger: quiet}, NodeID: "new"}, known, added)
	require.NoError(t, err)
	ev, unsub := eng.Subscribe(100)
	defer unsub()
	require.NoError(t, eng.Start(ctx))
	defer func() { _ = eng.Stop(ctx) }()
	timeout := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case e := <-ev:
			done = e.JobID == newer && e.Kind == engine.EventSucceeded
		case <-timeout:
			t.Fatalf("the new node did not run the job of the added task within 10s")
		}
	}
	assert.Equal(t, spi.StatusSucceeded, old.job(newer).Status)
	unrunnable, err = old.client.UnrunnableTasks(ctx, time.Minute)
	require.NoError(t, err)
	assert.Empty(t, unrunnable)

	// Jobs of a task that a node ran but that is gone count again once
	// its heartbeat is older than liveWithin.
	_, err = added.Submit(ctx, old.client, args{N: 3}, ratchet.WithDelay(time.Hour))
	require.NoError(t, err)
	require.NoError(t, eng.Stop(ctx))
	unrunnable, err = old.client.UnrunnableTasks(ctx, time.Minute)
	require.NoError(t, err)
	require.Len(t, unrunnable, 1, "the node that ran the task deregistered at its stop: %+v", unrunnable)
	assert.Equal(t, "added", unrunnable[0].Task)

	_, err = old.client.UnrunnableTasks(ctx, 0)
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	plain, err := ratchet.NewClient(struct{ spi.Store }{old.store}, ratchet.ClientOptions{})
	require.NoError(t, err)
	_, err = plain.UnrunnableTasks(ctx, time.Minute)
	require.ErrorIs(t, err, errors.ErrUnsupported, "a store that does not record the tasks of its nodes")
}

// countingStore counts the claims made through it.
type countingStore struct {
	spi.Store
	claims atomic.Int32
}

func (s *countingStore) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	s.claims.Add(1)
	return s.Store.ClaimJobs(ctx, p)
}

// TestEngineWithoutTasksClaimsNothing checks that a node without tasks
// (say a process that only submits) leaves every job to the others
// instead of claiming them as unknown tasks.
func TestEngineWithoutTasksClaimsNothing(t *testing.T) {
	ctx := context.Background()
	s := &countingStore{Store: memory.New()}
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, NodeID: "submitter", MinPollInterval: time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, eng.Start(ctx))
	task := ratchet.NewVoidTask("work", func(ctx context.Context, a args) error { return nil })
	id, err := task.Submit(ctx, eng.Client(), args{})
	require.NoError(t, err)
	eng.NotifyNewWork(spi.PriorityNormal)
	require.NoError(t, eng.Stop(ctx))
	assert.Zero(t, s.claims.Load(), "no claim without tasks")
	j, err := s.GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, j.Status)
}

func TestPanicIsRetriedLikeAnError(t *testing.T) {
	var calls atomic.Int32
	task := ratchet.NewTask("panicky", func(ctx context.Context, a args) (int, error) {
		if calls.Add(1) == 1 {
			panic("kaboom")
		}
		return 42, nil
	})
	r := start(t, engine.Options{}, task)
	id, err := task.Submit(context.Background(), r.client, args{}, ratchet.WithBackoff(ratchet.BackoffNone, 0))
	require.NoError(t, err)
	ev := r.next(id)
	require.Equal(t, engine.EventRetrying, ev.Kind)
	assert.Contains(t, ev.Error, "task panicked: kaboom")
	r.eng.NotifyNewWork(0)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
}

type Receipt struct {
	Total int    `json:"total"`
	Note  string `json:"note"`
}

func TestResults(t *testing.T) {
	ok := ratchet.NewTask("receipt", func(ctx context.Context, a args) (Receipt, error) {
		return Receipt{Total: a.N * 2, Note: "ok"}, nil
	})
	unencodable := ratchet.NewTask("chan", func(ctx context.Context, a args) (chan int, error) {
		return make(chan int), nil
	})
	void := ratchet.NewVoidTask("void", func(ctx context.Context, a args) error { return nil })
	r := start(t, engine.Options{}, ok, unencodable, void)
	ctx := context.Background()

	id, err := ok.Submit(ctx, r.client, args{N: 21})
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	j := r.job(id)
	assert.JSONEq(t, `{"total":42,"note":"ok"}`, string(j.Result))
	assert.Equal(t, "github.com/ratchet-go/ratchet/engine_test.Receipt", j.ResultType)
	got, err := ok.Result(r.client, j)
	require.NoError(t, err)
	assert.Equal(t, Receipt{Total: 42, Note: "ok"}, got)

	id, err = unencodable.Submit(ctx, r.client, args{})
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind, "a result that does not encode does not fail the job")
	j = r.job(id)
	assert.Nil(t, j.Result)
	assert.Empty(t, j.ResultType)

	id, err = void.Submit(ctx, r.client, args{})
	require.NoError(t, err)
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	assert.Nil(t, r.job(id).Result)
}

func TestJobContext(t *testing.T) {
	got := make(chan *ratchet.JobContext, 1)
	task := ratchet.NewVoidTask("ctx", func(ctx context.Context, a args) error {
		jc, ok := ratchet.JobFromContext(ctx)
		if !ok {
			return errors.New("no job context")
		}
		got <- jc
		return nil
	})
	r := start(t, engine.Options{}, task)
	id, err := task.Submit(context.Background(), r.client, args{}, ratchet.WithParam("tenant", "acme"),
		ratchet.WithPriority(ratchet.PriorityHigh))
	require.NoError(t, err)
	jc := <-got
	assert.Equal(t, id, jc.ID)
	assert.Equal(t, "ctx", jc.TaskName)
	assert.Equal(t, 1, jc.Run)
	assert.Equal(t, "acme", jc.Param("tenant"))
	assert.Equal(t, "", jc.Param("missing"))
	assert.Equal(t, ratchet.PriorityHigh, jc.Priority)
	assert.NotNil(t, jc.Logger)
	_, ok := ratchet.JobFromContext(context.Background())
	assert.False(t, ok)
}

func TestConcurrencyLimit(t *testing.T) {
	var running, peak atomic.Int32
	gate := make(chan struct{})
	var startedOnce sync.WaitGroup
	startedOnce.Add(3)
	var n atomic.Int32
	task := ratchet.NewVoidTask("limited", func(ctx context.Context, a args) error {
		cur := running.Add(1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		if n.Add(1) <= 3 {
			startedOnce.Done()
		}
		<-gate
		running.Add(-1)
		return nil
	})
	r := start(t, engine.Options{Concurrency: 3}, task)
	ids, err := task.SubmitMany(context.Background(), r.client, make([]args, 10))
	require.NoError(t, err)
	startedOnce.Wait()
	close(gate)
	for _, id := range ids {
		require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	}
	assert.Equal(t, int32(3), peak.Load())
}

func TestDelayedJobRunsWhenDue(t *testing.T) {
	task := ratchet.NewVoidTask("later", func(ctx context.Context, a args) error { return nil })
	r := start(t, engine.Options{}, task)
	ctx := context.Background()
	id, err := task.Submit(ctx, r.client, args{}, ratchet.WithDelay(90*time.Second))
	require.NoError(t, err)
	assert.Equal(t, t0.Add(90*time.Second), r.job(id).ScheduledAt)
	r.advanceTo(t0.Add(90*time.Second - time.Millisecond))
	assert.Equal(t, spi.StatusPending, r.job(id).Status)
	r.advanceTo(t0.Add(90 * time.Second))
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)

	at := t0.Add(time.Hour)
	id, err = task.Submit(ctx, r.client, args{}, ratchet.At(at))
	require.NoError(t, err)
	assert.Equal(t, at, r.job(id).ScheduledAt)
}

func TestInvalidInput(t *testing.T) {
	task := ratchet.NewVoidTask("v", func(ctx context.Context, a args) error { return nil })
	r := start(t, engine.Options{}, task)
	ctx := context.Background()
	for name, opt := range map[string]ratchet.SubmitOption{
		"negative delay":        ratchet.WithDelay(-time.Second),
		"priority too high":     ratchet.WithPriority(5),
		"priority negative":     ratchet.WithPriority(-1),
		"negative max retries":  ratchet.WithMaxRetries(-1),
		"unknown backoff":       ratchet.WithBackoff("LINEAR", time.Second),
		"empty tag":             ratchet.WithTags("ok", ""),
		"empty idempotency key": ratchet.WithIdempotencyKey(""),
	} {
		_, err := task.Submit(ctx, r.client, args{}, opt)
		assert.ErrorIs(t, err, ratchet.ErrInvalidArgument, name)
	}
	var nilTask *ratchet.Task[args, ratchet.Void]
	_, err := nilTask.Submit(ctx, r.client, args{})
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	page, err := r.client.ListJobs(ctx, ratchet.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, page.Jobs, "nothing written by rejected submissions")

	_, err = engine.New(memory.New(), engine.Options{}, nil)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	_, err = engine.New(memory.New(), engine.Options{}, nilTask)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	_, err = engine.New(memory.New(), engine.Options{}, task, task)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	_, err = engine.New(memory.New(), engine.Options{Concurrency: -1}, task)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
	_, err = engine.New(nil, engine.Options{}, task)
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

func TestCancelPendingJob(t *testing.T) {
	task := ratchet.NewVoidTask("c", func(ctx context.Context, a args) error { return nil })
	r := start(t, engine.Options{}, task)
	ctx := context.Background()
	id, err := task.Submit(ctx, r.client, args{}, ratchet.WithDelay(time.Minute))
	require.NoError(t, err)
	require.NoError(t, r.client.CancelJob(ctx, id))
	assert.Equal(t, spi.StatusCancelled, r.job(id).Status)
	r.advanceTo(t0.Add(2 * time.Minute))
	assert.Equal(t, spi.StatusCancelled, r.job(id).Status)
	assert.ErrorIs(t, r.client.CancelJob(ctx, id), ratchet.ErrInvalidState)
	assert.ErrorIs(t, r.client.CancelJob(ctx, uuid.New()), ratchet.ErrNotFound)
}

func TestRestartUnderSameNodeRecoversItsRunningJobs(t *testing.T) {
	s := memory.New()
	clock := clockwork.NewFakeClockAt(t0)
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Clock: clock})
	require.NoError(t, err)
	task := ratchet.NewVoidTask("r", func(ctx context.Context, a args) error { return nil })
	ctx := context.Background()
	id, err := task.Submit(ctx, c, args{})
	require.NoError(t, err)
	// A previous run of node n1 claimed the job and died.
	require.NoError(t, s.Heartbeat(ctx, "n1", t0))
	_, err = s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n1", Limit: 1, Now: t0})
	require.NoError(t, err)

	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Clock: clock, Logger: quiet}, NodeID: "n1"}, task)
	require.NoError(t, err)
	ev, unsub := eng.Subscribe(10)
	defer unsub()
	require.NoError(t, eng.Start(ctx))
	defer func() { _ = eng.Stop(ctx) }()
	e := <-ev
	assert.Equal(t, id, e.JobID)
	assert.Equal(t, engine.EventSucceeded, e.Kind)
	j, err := s.GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, 1, j.CrashCount)
	assert.Equal(t, int64(3), j.ClaimSeq, "claimed, recovered, claimed again")
}

func TestListJobsPaging(t *testing.T) {
	task := ratchet.NewVoidTask("p", func(ctx context.Context, a args) error { return nil })
	s := memory.New()
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Clock: clockwork.NewFakeClockAt(t0)})
	require.NoError(t, err)
	ctx := context.Background()
	ids, err := task.SubmitMany(ctx, c, make([]args, 25), ratchet.WithDelay(time.Hour))
	require.NoError(t, err)
	var seen []uuid.UUID
	var after uuid.UUID
	for {
		page, err := c.ListJobs(ctx, ratchet.ListOptions{Status: ratchet.StatusPending, After: after, Limit: 10})
		require.NoError(t, err)
		for _, j := range page.Jobs {
			seen = append(seen, j.ID)
		}
		if page.Next == uuid.Nil {
			break
		}
		after = page.Next
	}
	assert.Equal(t, ids, seen, "pages cover every job once, in submission order")
	_, err = c.ListJobs(ctx, ratchet.ListOptions{Status: "BOGUS"})
	assert.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

// gatedRelease holds ReleaseJobs until a completion was written for the job
// or a moment has passed: with bodies cancelled before the release, the
// cancelled body's failure would be written first.
type gatedRelease struct {
	*memory.Store
	written <-chan struct{}
}

func (s gatedRelease) ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	select {
	case <-s.written:
	case <-time.After(200 * time.Millisecond):
	}
	return s.Store.ReleaseJobs(ctx, refs, now)
}

func TestDrainTimeoutNeverChargesTheReleasedJob(t *testing.T) {
	started := make(chan struct{})
	task := ratchet.NewVoidTask("stubborn", func(ctx context.Context, a args) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	})
	written := make(chan struct{})
	s := gatedRelease{Store: memory.New(), written: written}
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, NodeID: "n1", ShutdownTimeout: 50 * time.Millisecond}, task)
	require.NoError(t, err)
	events, unsub := eng.Subscribe(10)
	defer unsub()
	go func() {
		for ev := range events {
			if ev.Kind != engine.EventSuperseded {
				close(written)
				return
			}
		}
	}()
	require.NoError(t, eng.Start(context.Background()))
	ctx := context.Background()
	id, err := task.Submit(ctx, eng.Client(), args{}, ratchet.WithMaxRetries(0))
	require.NoError(t, err)
	<-started
	require.NoError(t, eng.Stop(ctx))
	j, err := s.GetJob(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, j.Status, "released, not failed: %s", j.LastError)
	assert.Zero(t, j.Attempts)
	assert.Empty(t, j.LastError)
}

// failingCompletes makes CompleteJobs fail once fail is set.
type failingCompletes struct {
	*memory.Store
	fail atomic.Bool
}

func (s *failingCompletes) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	if s.fail.Load() {
		return nil, errors.New("database unreachable")
	}
	return s.Store.CompleteJobs(ctx, cs)
}

// A Stop deadline shorter than the drain releases the running jobs and
// still writes what finished; it reports no error, since nothing was left
// RUNNING. Only completions the store really refused are reported.
func TestStopWithShortDeadlineReportsWhatHappened(t *testing.T) {
	started := make(chan struct{}, 10)
	slow := ratchet.NewVoidTask("slow", func(ctx context.Context, a args) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	finish := make(chan struct{})
	late := ratchet.NewVoidTask("late", func(ctx context.Context, a args) error {
		started <- struct{}{}
		<-finish
		return nil
	})
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprintf("store fails=%v", broken), func(t *testing.T) {
			s := &failingCompletes{Store: memory.New()}
			eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, NodeID: "n1", ShutdownTimeout: time.Hour}, slow, late)
			require.NoError(t, err)
			require.NoError(t, eng.Start(context.Background()))
			ctx := context.Background()
			ids, err := slow.SubmitMany(ctx, eng.Client(), []args{{N: 1}, {N: 2}, {N: 3}})
			require.NoError(t, err)
			lateID, err := late.Submit(ctx, eng.Client(), args{})
			require.NoError(t, err)
			for range 4 {
				<-started
			}
			s.fail.Store(broken)
			// The late job finishes within the drain; its completion is
			// queued when the deadline passes.
			stopCtx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			finish <- struct{}{}
			err = eng.Stop(stopCtx)
			for _, id := range ids {
				j, gerr := s.GetJob(ctx, id)
				require.NoError(t, gerr)
				assert.Equal(t, spi.StatusPending, j.Status, "released at the deadline")
				assert.Zero(t, j.Attempts)
			}
			j, gerr := s.GetJob(ctx, lateID)
			require.NoError(t, gerr)
			if !broken {
				require.NoError(t, err, "every job was released or finished")
				assert.Equal(t, spi.StatusSucceeded, j.Status)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "1 completions not written")
			assert.Equal(t, spi.StatusRunning, j.Status, "the one unwritten completion leaves its job RUNNING, as Stop says")
		})
	}
}
