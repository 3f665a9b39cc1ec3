package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

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
	// slots bounds the bodies running at once.
	slots int
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
	// freed is told when a slot frees up (the poller's wakeup).
	freed func()
	// released records the claims release gave back to PENDING, which
	// the completer reads too.
	released *claimSet
	// gaveBack, when not nil, is told the jobs a timed-out drain gave
	// back to PENDING.
	gaveBack func(jobs []*spi.Job, at time.Time)
	// tasks are the per-task limits; nil for none.
	tasks *nodecore.TaskSlots
}

// executor runs claimed jobs, each on a goroutine of its own (reused: see
// worker), up to its slots;
// it knows which claims it holds, and on a timed-out drain gives them back.
type executor struct {
	executorDeps
	base     context.Context // parent of job contexts
	mu       sync.Mutex
	inflight map[spi.ClaimRef]*nodecore.Run // keyed by claim: a node may hold a stale and a new claim of one job
	jobs     sync.WaitGroup
	// idle hands an execution to a goroutine that finished its last one
	// (see worker).
	idle chan func()
}

func newExecutor(base context.Context, d executorDeps) *executor {
	if d.released == nil {
		d.released = &claimSet{}
	}
	return &executor{executorDeps: d, base: base, inflight: map[spi.ClaimRef]*nodecore.Run{}, idle: make(chan func())}
}

// free returns the number of free slots.
func (x *executor) free() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.slots - len(x.inflight)
}

// running returns the executions in progress.
func (x *executor) running() []*nodecore.Run {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]*nodecore.Run, 0, len(x.inflight))
	for _, r := range x.inflight {
		out = append(out, r)
	}
	return out
}

// claimSet is a set of claims, safe for concurrent use; the zero value is
// empty.
type claimSet struct {
	mu sync.Mutex
	m  map[spi.ClaimRef]bool
}

func (s *claimSet) add(ref spi.ClaimRef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[spi.ClaimRef]bool{}
	}
	s.m[ref] = true
}

func (s *claimSet) has(ref spi.ClaimRef) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[ref]
}

// dispatch starts one claimed job on a goroutine of its own: an idle
// worker's, or a new one.
func (x *executor) dispatch(j *spi.Job) {
	ctx, cancel := context.WithCancel(x.base)
	ref := spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}
	x.mu.Lock()
	x.inflight[ref] = &nodecore.Run{Job: j, Cancel: cancel}
	x.mu.Unlock()
	x.jobs.Add(1)
	run := func() {
		defer x.jobs.Done()
		defer cancel()
		p := x.execute(ctx, j)
		x.mu.Lock()
		delete(x.inflight, ref)
		if x.tasks != nil {
			x.tasks.Done(j.TaskName)
		}
		x.mu.Unlock()
		if !x.released.has(ref) { // a released job's write would only be superseded
			x.complete(p)
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
// write that ends it.
func (x *executor) execute(ctx context.Context, j *spi.Job) nodecore.Pending {
	jc, log := x.jobContext(j)
	start := x.clock.Now()
	ctx = ratchet.ContextWithJob(ctx, jc)
	var p nodecore.Pending
	stop := false
	if x.gate != nil && j.DependencyCount > 0 {
		p, stop = x.gate(ctx, jc, j, start)
	}
	if !stop {
		res, err := x.runSafely(ctx, j)
		p = x.finish(context.WithoutCancel(ctx), jc, j, res, err, start)
	}
	if log != nil {
		p.Logs = log.end()
	}
	return p
}

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
// cancels those bodies. Releasing first matters: a cancelled body's failure
// must reach the store only after the release has fenced it out, or it
// would charge an attempt (or dead-letter the job).
func (x *executor) release(ctx context.Context) error {
	execs := x.running()
	if len(execs) == 0 {
		return nil
	}
	refs := make([]spi.ClaimRef, len(execs))
	for i, r := range execs {
		refs[i] = spi.ClaimRef{JobID: r.Job.ID, ClaimSeq: r.Job.ClaimSeq}
	}
	now := x.clock.Now().UTC().Truncate(time.Microsecond)
	ok, err := x.store.ReleaseJobs(ctx, refs, now)
	var gave []*spi.Job
	for i, applied := range ok {
		if applied && err == nil {
			x.released.add(refs[i])
			gave = append(gave, execs[i].Job)
		}
	}
	n := len(gave)
	if x.gaveBack != nil && n > 0 {
		x.gaveBack(gave, now)
	}
	for _, r := range execs {
		r.Cancel()
	}
	if err != nil {
		return fmt.Errorf("release %d running jobs: %w", len(refs), err)
	}
	x.log.Warn("drain timed out; released running jobs", "released", n, "running", len(refs))
	return nil
}
