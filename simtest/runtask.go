package simtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// RunTaskOptions describe the fake job that RunTask runs a task body as.
// The zero value is the first run of a NORMAL job with no params.
type RunTaskOptions struct {
	// JobID is the job's id; default a new UUIDv7.
	JobID uuid.UUID
	// Run is the run number the body sees (ratchet.JobContext.Run), from
	// 1; default 1. The job's Attempts (failed executions) is Run − 1.
	Run int
	// CrashCount is the crash count the body sees.
	CrashCount int
	// Priority is the priority the body sees; nil means NORMAL.
	Priority *ratchet.Priority
	// ScheduledAt defaults to DefaultStart.
	ScheduledAt time.Time
	// Params are the submission params the body reads with
	// JobContext.Param.
	Params map[string]string
	// Properties are the job's properties (ratchet.WithProperty), which
	// the body reads with JobContext.Property and Properties.
	Properties map[string]string
	// State is the job's state as the body finds it and as it leaves it:
	// namespace to encoded state (JSON with the default serializer). The
	// body reads and writes it with JobContext.State, InitState and
	// UpdateState, fenced by the run's claim as under the engine; RunTask
	// writes what the body left back into the map when it returns. Nil
	// gives the body an empty state and keeps nothing.
	State map[string][]byte
	// Logger receives the body's job logs; nil discards them.
	Logger *slog.Logger
	// Serializer encodes the args as a submission would and decodes them
	// as the engine does; nil means JSON.
	Serializer spi.PayloadSerializer
	// Clock is the time a durable ratchet.Sleep reads; nil means
	// ScheduledAt. Keep State across calls, and move Clock past a sleep's
	// end, to run a durable body's next run: its recorded steps
	// (ratchet.RunStep) return their results without running again.
	Clock ratchet.Clock
}

// fixedClock is a clock that stays at one time.
type fixedClock time.Time

// Now returns the clock's time.
func (c fixedClock) Now() time.Time { return time.Time(c) }

// RunTask runs one task body with args, as the engine would run it but with
// no engine, store or clock: the args go through the serializer (so
// arguments that would not survive a submission fail here too), the body's
// context carries a JobContext built from opts, and a panic comes back as a
// *ratchet.PanicError. Sleep inside the body returns at once. The job's
// properties and state live in a private memory store that holds the job
// as RUNNING. It returns the body's result or error: the counterpart of
// River's rivertest.Worker.
func RunTask[A, R any](ctx context.Context, task *ratchet.Task[A, R], args A, opts RunTaskOptions) (res R, err error) {
	if err := task.Validate(); err != nil {
		return res, err
	}
	ser := opts.Serializer
	if ser == nil {
		ser = ratchet.JSONSerializer{}
	}
	payload, err := ser.Marshal(args)
	if err != nil {
		return res, fmt.Errorf("simtest: encode arguments of task %q: %w", task.Name(), err)
	}
	if opts.Run <= 0 {
		opts.Run = 1
	}
	if opts.JobID == uuid.Nil {
		opts.JobID = uuid.Must(uuid.NewV7())
	}
	if opts.ScheduledAt.IsZero() {
		opts.ScheduledAt = DefaultStart
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	prio := ratchet.PriorityNormal
	if opts.Priority != nil {
		prio = *opts.Priority
	}
	job := &spi.Job{
		ID: opts.JobID, TaskName: task.Name(), Payload: payload, Status: spi.StatusPending, Priority: prio,
		ScheduledAt: opts.ScheduledAt.UTC(), CreatedAt: opts.ScheduledAt.UTC(), Attempts: opts.Run - 1,
		CrashCount: opts.CrashCount, Params: opts.Params, Properties: opts.Properties,
		MaxRetries: ratchet.DefaultMaxRetries, Backoff: ratchet.DefaultBackoff, BackoffParam: ratchet.DefaultBackoffBase,
	}
	pipe, err := ratchet.NewPipeline(ser, 0)
	if err != nil {
		return res, err
	}
	st, err := runningJob(ctx, job, opts.State)
	if err != nil {
		return res, fmt.Errorf("simtest: run task %q: %w", task.Name(), err)
	}
	defer st.keep(ctx, opts.State)
	clock := opts.Clock
	if clock == nil {
		clock = fixedClock(job.ScheduledAt)
	}
	jc := ratchet.NewJobContextWith(job, ratchet.JobContextOptions{Logger: opts.Logger, State: st, Properties: st.store, Pipeline: pipe, Clock: clock})
	ctx = ratchet.ContextWithJob(context.WithValue(ctx, envKey{}, instantSleep{}), jc)
	defer func() {
		if r := recover(); r != nil {
			var zero R
			res, err = zero, &ratchet.PanicError{Value: r, Stack: string(debug.Stack())}
		}
	}()
	out, err := task.Execute(ctx, payload, ser)
	if err != nil {
		return res, err
	}
	if out != nil {
		res = out.(R)
	}
	return res, nil
}

// taskState is the private store of one RunTask run: it holds the job as
// RUNNING, with its properties and state, and remembers which state
// namespaces the body wrote.
type taskState struct {
	spi.JobStateStore
	store   *memory.Store
	id      uuid.UUID
	written map[string]bool
}

// runningJob puts job into a new memory store, claims it (job.ClaimSeq
// and Status are set from the claim) and seeds its state.
func runningJob(ctx context.Context, job *spi.Job, state map[string][]byte) (*taskState, error) {
	s := memory.New()
	if _, err := s.InsertJobs(ctx, []*spi.Job{job}, spi.InsertOptions{}); err != nil {
		return nil, err
	}
	got, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "simtest", Limit: 1, Now: job.ScheduledAt})
	if err != nil {
		return nil, err
	}
	if len(got) != 1 {
		return nil, fmt.Errorf("the job could not be claimed")
	}
	job.Status, job.ClaimSeq, job.OwnerNode, job.ClaimedAt = got[0].Status, got[0].ClaimSeq, got[0].OwnerNode, got[0].ClaimedAt
	for ns, b := range state {
		if _, err := s.InitStateUnfenced(ctx, job.ID, ns, b); err != nil {
			return nil, fmt.Errorf("seed state %q: %w", ns, err)
		}
	}
	return &taskState{JobStateStore: s, store: s, id: job.ID, written: map[string]bool{}}, nil
}

func (t *taskState) InitState(ctx context.Context, id uuid.UUID, ns string, state []byte, seq int64) (spi.StateWriteResult, error) {
	t.written[ns] = true
	return t.JobStateStore.InitState(ctx, id, ns, state, seq)
}

func (t *taskState) UpdateState(ctx context.Context, id uuid.UUID, ns string, state []byte, version, seq int64) (spi.StateWriteResult, error) {
	t.written[ns] = true
	return t.JobStateStore.UpdateState(ctx, id, ns, state, version, seq)
}

// keep writes the state the body left back into out (when not nil).
func (t *taskState) keep(ctx context.Context, out map[string][]byte) {
	if out == nil {
		return
	}
	for ns := range t.written {
		if vs, ok, err := t.store.GetState(context.WithoutCancel(ctx), t.id, ns); err == nil && ok {
			out[ns] = vs.JSON
		}
	}
}

// instantSleep is the sleeper of RunTask: simulated delays take no time.
type instantSleep struct{}

// Sleep waits d inside a job body. In an Env it waits d of simulated time
// (the clock jumps, no real time passes); under RunTask it returns at once;
// elsewhere it waits d of real time. It returns early with ctx's error when
// ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	switch s := ctx.Value(envKey{}).(type) {
	case *Env:
		return s.sleep(ctx, d)
	case instantSleep:
		return ctx.Err()
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
