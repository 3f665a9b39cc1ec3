package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// jobReleaser is what the executor needs of the store to give claims back.
type jobReleaser interface {
	ReleaseJobs(ctx context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error)
}

// executorDeps are the executor's dependencies.
type executorDeps struct {
	store jobReleaser
	clock clockwork.Clock
	log   *slog.Logger
	// runs are the executions in progress, the slots and the claims a
	// drain released (which the completer reads too).
	runs *nodecore.Runs
	// jobContext builds the JobContext of a job's run, and the log that
	// keeps what it logs (nil for none).
	jobContext func(*spi.Job) (*ratchet.JobContext, *runLog)
	// run runs a job's body (the task, through the work middleware); the
	// executor recovers its panics.
	run func(ctx context.Context, j *spi.Job) (any, error)
	// finish turns a body's return into the owner write that ends the job.
	finish func(ctx context.Context, jc *ratchet.JobContext, j *spi.Job, res any, err error, started time.Time) nodecore.Pending
	// gate, when not nil, decides before the body whether a workflow job
	// runs: when it must not, it returns the owner write that ends it
	// and true.
	gate func(ctx context.Context, jc *ratchet.JobContext, j *spi.Job, started time.Time) (nodecore.Pending, bool)
	// complete queues that write (the completer).
	complete func(nodecore.Pending)
	// await, when not nil, returns once the events of the job's earlier
	// runs are published (eventOrder), before a run of it starts.
	await func(ctx context.Context, id uuid.UUID)
	// freed is told when a slot frees up (the poller's wakeup).
	freed func()
	// gaveBack, when not nil, is told the jobs a timed-out drain gave
	// back to PENDING.
	gaveBack func(jobs []*spi.Job, at time.Time)
	// timeout is the node's run timeout (0: none), for a job that names
	// none (nodecore.Timeout).
	timeout time.Duration
	// overran, when not nil, is told of a body that returned after its
	// run's timeout, how long after.
	overran func(j *spi.Job, by time.Duration)
	// expired, when not nil, is told of a job claimed past its start-by
	// deadline, failed without running.
	expired func(j *spi.Job)
}

// executor runs claimed jobs, each on a goroutine of its own (reused: see
// worker), up to its slots; its runs (nodecore.Runs) know which claims it
// holds, and on a timed-out drain it gives them back.
type executor struct {
	executorDeps
	base context.Context // parent of job contexts
	jobs sync.WaitGroup
	// idle hands an execution to a goroutine that finished its last one
	// (see worker).
	idle chan func()
}

func newExecutor(base context.Context, d executorDeps) *executor {
	return &executor{executorDeps: d, base: base, idle: make(chan func())}
}

// dispatch starts one claimed job on a goroutine of its own: an idle
// worker's, or a new one.
func (x *executor) dispatch(j *spi.Job) {
	ctx, cancel := context.WithCancelCause(x.base)
	x.runs.Start(j, func() { cancel(context.Canceled) })
	x.jobs.Add(1)
	run := func() {
		defer x.jobs.Done()
		defer cancel(context.Canceled)
		p, deadline := x.execute(ctx, cancel, j)
		owed, expired := x.runs.End(j) // a released or timed-out job's write is not owed
		if owed {
			x.complete(p)
		}
		if by := x.clock.Since(deadline); expired && by > overrunGrace && x.overran != nil {
			x.overran(j, by)
		}
		x.freed()
	}
	select {
	case x.idle <- run:
	default:
		go x.worker(run)
	}
}

// worker runs run, then the executions handed to it while it waits on
// idle, until the engine has stopped (base ends). Reusing goroutines keeps
// the stacks that bodies grew: a new goroutine's stack is small, and
// growing it (encoding/json's decoder alone needs several doublings) was
// about a fifth of a node's CPU in a burn-down of no-op jobs. There are
// about as many workers as the most executions that ran at once: a worker
// is busy only from the start of one to the end of its completion.
func (x *executor) worker(run func()) {
	for {
		run()
		select {
		case run = <-x.idle:
		case <-x.base.Done():
			return
		}
	}
}

// execute runs one job's body with its JobContext and returns the owner
// write that ends it, and its run's deadline (zero for none). Past the
// deadline (on the executor's clock) the run expires: cancel ends the
// body's context with ErrTimeout, and the timeout's owner write is made
// at once, the body going on until it returns (see expire).
func (x *executor) execute(ctx context.Context, cancel context.CancelCauseFunc, j *spi.Job) (nodecore.Pending, time.Time) {
	if x.await != nil {
		x.await(ctx, j.ID)
	}
	jc, log := x.jobContext(j)
	start := x.clock.Now()
	expired := nodecore.Expired(j, start) // its start-by deadline passed: it fails unrun
	var deadline time.Time
	if d, final := nodecore.Timeout(j, x.timeout); d > 0 && expired == nil {
		deadline = start.Add(d)
		ctx = deadlineCtx{ctx, deadline}
		timed := ctx
		t := x.clock.AfterFunc(d, func() { x.expire(timed, cancel, jc, j, start, d, final) })
		defer t.Stop()
	}
	ctx = ratchet.ContextWithJob(ctx, jc)
	var p nodecore.Pending
	stop := false
	if expired != nil {
		p, stop = x.finish(context.WithoutCancel(ctx), jc, j, nil, expired, start), true
		if x.expired != nil {
			x.expired(j)
		}
	} else if x.gate != nil && j.DependencyCount > 0 {
		p, stop = x.gate(ctx, jc, j, start)
	}
	if !stop {
		res, err := x.runSafely(ctx, j)
		if !deadline.IsZero() && x.runs.Expired(j) {
			return p, deadline // finished at its timeout (expire): the return is not reported
		}
		p = x.finish(context.WithoutCancel(ctx), jc, j, res, err, start)
	}
	if log != nil {
		p.Logs = log.end()
	}
	return p, deadline
}

// expire ends a run whose body is still going at its timeout d: a failure
// wrapping ErrTimeout (final: not retried), written now, and the body's
// context cancelled with ErrTimeout. The body keeps its slot until it
// returns; its return is not written (nodecore.Runs.End).
func (x *executor) expire(ctx context.Context, cancel context.CancelCauseFunc, jc *ratchet.JobContext, j *spi.Job, start time.Time, d time.Duration, final bool) {
	if !x.runs.Expire(j) {
		return // it returned meanwhile, or a drain released it
	}
	cancel(ratchet.ErrTimeout)
	err := fmt.Errorf("%w after %s", ratchet.ErrTimeout, d)
	if final {
		err = ratchet.DoNotRetry(err)
	}
	x.log.Warn("run timed out; its failure is written now, and the body's return will change nothing",
		"job_id", j.ID, "task", j.TaskName, "timeout", d)
	x.complete(x.finish(context.WithoutCancel(ctx), jc, j, nil, err, start))
}

// overrunGrace is how long after its run's timeout a body may return
// before it counts as an overrun (spi.TimeoutMetrics): one that returns
// when its context ends does not.
const overrunGrace = 100 * time.Millisecond

// deadlineCtx is a body's context with its run's deadline, which
// Deadline reports; the executor's clock, not the context's timer, ends it
// (through expire).
type deadlineCtx struct {
	context.Context
	at time.Time
}

// Deadline returns the run's deadline.
func (c deadlineCtx) Deadline() (time.Time, bool) { return c.at, true }

// runSafely runs a body, turning a panic into a *ratchet.PanicError.
func (x *executor) runSafely(ctx context.Context, j *spi.Job) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &ratchet.PanicError{Value: r, Stack: string(debug.Stack())}
		}
	}()
	return x.run(ctx, j)
}

// drain waits until every body has returned, for at most timeout (on the
// executor's clock) or until ctx ends; then it releases what still runs. It
// reports whether the drain completed, and a release that failed.
func (x *executor) drain(ctx context.Context, timeout time.Duration) (bool, error) {
	drained := make(chan struct{})
	go func() { x.jobs.Wait(); close(drained) }()
	timer := x.clock.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-drained:
		return true, nil
	case <-timer.Chan():
		return false, x.release(ctx)
	case <-ctx.Done():
		return false, x.release(context.WithoutCancel(ctx))
	}
}

// release gives the jobs whose bodies still run back to PENDING, then
// cancels those bodies (nodecore.Runs.Release).
func (x *executor) release(ctx context.Context) error {
	now := x.clock.Now()
	gave, n, err := x.runs.Release(ctx, x.store, now)
	if x.gaveBack != nil && len(gave) > 0 {
		x.gaveBack(gave, now.UTC().Truncate(time.Microsecond))
	}
	if err != nil {
		return fmt.Errorf("release %d running jobs: %w", n, err)
	}
	if n > 0 {
		x.log.Warn("drain timed out; released running jobs", "released", len(gave), "running", n)
	}
	return nil
}
