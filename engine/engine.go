package engine

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// ErrNotStarted is returned by Stop on an engine that is not running.
var ErrNotStarted = errors.New("ratchet engine: not started")

// Engine runs jobs from a store. Create it with New, then Start and Stop it
// once each.
type Engine struct {
	store  spi.Store
	caps   spi.Capabilities // the store's optional features
	opts   Options
	log    *slog.Logger
	tasks  map[string]ratchet.Definition
	client *ratchet.Client

	taskNames []string      // the registered tasks, sorted: a claim takes only their jobs
	wake      chan struct{} // a submission or a freed slot
	completer *completer
	subs      subscribers
	lastBeat  atomic.Int64 // unix nanoseconds of the last successful heartbeat

	mu       sync.Mutex
	state    int                         // 0 new, 1 running, 2 stopped
	inflight map[spi.ClaimRef]*execution // keyed by claim: a node may hold a stale and a new claim of one job
	released map[spi.ClaimRef]bool       // claims given back by Stop: their completions would be superseded
	stopPoll context.CancelFunc          // ends claiming, wakeups and orphan scans
	stopBeat context.CancelFunc          // ends heartbeats, after the drain
	runCtx   context.Context             // parent of job contexts; cancelled when the drain times out
	cancel   context.CancelFunc
	loops    sync.WaitGroup // poller, orphan scan, wakeup listener
	beat     sync.WaitGroup // heartbeat
	jobs     sync.WaitGroup // running job bodies
}

type execution struct {
	job    *spi.Job
	cancel context.CancelFunc
}

// New returns an engine over store that runs the given tasks. Task names
// must be unique.
func New(store spi.Store, opts Options, tasks ...ratchet.Definition) (*Engine, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: nil store", ratchet.ErrInvalidArgument)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Engine{
		store:    store,
		caps:     spi.CapabilitiesOf(store),
		opts:     o,
		log:      o.Logger.With("node", o.NodeID),
		tasks:    make(map[string]ratchet.Definition, len(tasks)),
		wake:     make(chan struct{}, 1),
		inflight: map[spi.ClaimRef]*execution{},
		released: map[spi.ClaimRef]bool{},
	}
	for i, t := range tasks {
		if err := validateDefinition(t); err != nil {
			return nil, fmt.Errorf("engine: task %d: %w", i, err)
		}
		if _, dup := e.tasks[t.Name()]; dup {
			return nil, fmt.Errorf("%w: task %q registered twice", ratchet.ErrInvalidArgument, t.Name())
		}
		e.tasks[t.Name()] = t
		e.taskNames = append(e.taskNames, t.Name())
	}
	slices.Sort(e.taskNames)
	e.client, err = ratchet.NewClient(store, ratchet.ClientOptions{
		Clock: o.Clock, Serializer: o.Serializer, MaxPayloadBytes: o.MaxPayloadBytes,
		Notifier: e, Logger: o.Logger, Source: o.NodeID,
	})
	if err != nil {
		return nil, err
	}
	e.completer = newCompleter(completerDeps{store: store, clock: o.Clock, log: e.log,
		batch: o.CompletionBatchSize, workers: o.CompletionConcurrency,
		written: e.written, released: e.wasReleased})
	return e, nil
}

func validateDefinition(t ratchet.Definition) error {
	if t == nil {
		return fmt.Errorf("%w: nil task", ratchet.ErrInvalidArgument)
	}
	if v, ok := t.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	if t.Name() == "" {
		return fmt.Errorf("%w: task has an empty name", ratchet.ErrInvalidArgument)
	}
	return nil
}

// Client returns a client that shares the engine's store, clock, serializer
// and payload limit, and wakes the engine's poller on every submission.
func (e *Engine) Client() *ratchet.Client { return e.client }

// NodeID returns the node's id.
func (e *Engine) NodeID() string { return e.opts.NodeID }

// Options returns the engine's options with defaults applied.
func (e *Engine) Options() Options { return e.opts }

// NotifyNewWork wakes the poller, and the other nodes through the
// coordinator when there is one; it implements ratchet.WorkNotifier.
func (e *Engine) NotifyNewWork(p ratchet.Priority) {
	e.poke()
	if c := e.opts.Coordinator; c != nil {
		c.NotifyNewWork(context.Background(), p, e.opts.NodeID)
	}
}

// onWakeup handles a wakeup from the cluster, ignoring the node's own.
func (e *Engine) onWakeup(h spi.WakeupHint) {
	if h.Source != "" && h.Source == e.opts.NodeID {
		return
	}
	e.poke()
}

func (e *Engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Start registers the node, recovers orphans (including jobs left RUNNING by
// an earlier run under the same node id) and starts polling. ctx bounds only
// the start-up work; Stop ends the engine.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	if e.state != 0 {
		e.mu.Unlock()
		return errors.New("ratchet engine: Start called twice")
	}
	e.state = 1
	e.mu.Unlock()

	now := e.now()
	if _, err := e.recoverOrphans(ctx, []string{e.opts.NodeID}); err != nil {
		return fmt.Errorf("ratchet engine: start: %w", err)
	}
	if err := e.writeBeat(ctx, now); err != nil {
		return fmt.Errorf("ratchet engine: start: register node: %w", err)
	}
	e.lastBeat.Store(now.UnixNano())
	e.runCtx, e.cancel = context.WithCancel(context.Background())
	pollCtx, stopPoll := context.WithCancel(e.runCtx)
	e.stopPoll = stopPoll
	e.completer.start()
	e.loops.Add(2)
	if c := e.opts.Coordinator; c != nil {
		c.RegisterWakeupListener(func(h spi.WakeupHint) {
			if pollCtx.Err() == nil {
				e.onWakeup(h)
			}
		})
	} else if wl := e.caps.Wakeups; wl != nil {
		e.loops.Add(1)
		go func() {
			defer e.loops.Done()
			_ = wl.ListenWakeups(pollCtx, e.onWakeup)
		}()
	}
	// Heartbeats go on through the drain of Stop: a draining node is alive,
	// and its jobs must not be recovered (and charged) meanwhile.
	beatCtx, stopBeat := context.WithCancel(e.runCtx)
	e.stopBeat = stopBeat
	// The tickers start here, not in their goroutines: the beats and scans
	// count from Start, however late the goroutines run (a fake clock may
	// move on before they do).
	beats, scans := e.opts.Clock.NewTicker(e.opts.HeartbeatInterval), e.opts.Clock.NewTicker(e.opts.OrphanScanInterval)
	e.beat.Add(1)
	go func() {
		defer e.beat.Done()
		e.every(beatCtx, beats, e.heartbeat)
	}()
	go e.pollLoop(pollCtx)
	go func() {
		defer e.loops.Done()
		e.every(pollCtx, scans, func(ctx context.Context) {
			_, _ = e.recoverOrphans(ctx, nil)
		})
	}()
	e.log.Info("ratchet engine started", "concurrency", e.opts.Concurrency, "tasks", len(e.tasks))
	return nil
}

// Stop stops claiming, waits up to ShutdownTimeout (or until ctx ends) for
// running jobs to finish, then releases the rest back to PENDING without
// charging their attempts or crash budget and cancels their bodies, writes
// the completions of the jobs that finished, and removes the node's row.
//
// Writing those completions is not cut short by ctx (it is bounded by 10 s
// of its own), so a short deadline still leaves every job either finished
// or released. The error reports only what really went wrong: a release
// that failed, completions the store refused (those jobs stay RUNNING until
// orphan recovery), a node row not removed.
func (e *Engine) Stop(ctx context.Context) error {
	e.mu.Lock()
	if e.state != 1 {
		e.mu.Unlock()
		return ErrNotStarted
	}
	e.state = 2
	e.mu.Unlock()

	e.stopPoll()
	e.loops.Wait()

	drained := make(chan struct{})
	go func() { e.jobs.Wait(); close(drained) }()
	timer := e.opts.Clock.NewTimer(e.opts.ShutdownTimeout)
	defer timer.Stop()
	var errs []error
	select {
	case <-drained:
	case <-timer.Chan():
		errs = append(errs, e.releaseInflight(ctx))
	case <-ctx.Done():
		errs = append(errs, e.releaseInflight(context.WithoutCancel(ctx)))
	}
	errs = append(errs, e.completer.stop())
	e.stopBeat()
	e.beat.Wait()
	e.cancel()
	if err := e.store.DeregisterNode(context.WithoutCancel(ctx), e.opts.NodeID); err != nil {
		errs = append(errs, fmt.Errorf("deregister node: %w", err))
	}
	e.log.Info("ratchet engine stopped")
	return errors.Join(errs...)
}

// releaseInflight gives the jobs whose bodies still run back to PENDING,
// then cancels those bodies. Releasing first matters: a cancelled body's
// failure must reach the store only after the release has fenced it out,
// or it would charge an attempt (or dead-letter the job).
func (e *Engine) releaseInflight(ctx context.Context) error {
	e.mu.Lock()
	execs := make([]*execution, 0, len(e.inflight))
	refs := make([]spi.ClaimRef, 0, len(e.inflight))
	for _, x := range e.inflight {
		execs = append(execs, x)
		refs = append(refs, spi.ClaimRef{JobID: x.job.ID, ClaimSeq: x.job.ClaimSeq})
	}
	e.mu.Unlock()
	if len(refs) == 0 {
		return nil
	}
	ok, err := e.store.ReleaseJobs(ctx, refs, e.now())
	n := 0
	e.mu.Lock()
	for i, applied := range ok {
		if applied && err == nil {
			e.released[refs[i]] = true
			n++
		}
	}
	e.mu.Unlock()
	for _, x := range execs {
		x.cancel()
	}
	if err != nil {
		return fmt.Errorf("release %d running jobs: %w", len(refs), err)
	}
	e.log.Warn("drain timed out; released running jobs", "released", n, "running", len(refs))
	return nil
}

// written reports a completion the store answered: its event, and for one
// that did not apply (superseded) a metric and a warning.
func (e *Engine) written(p pendingCompletion, applied bool) {
	if !e.subs.empty() {
		e.subs.publish(eventOf(p.c, p.job.TaskName, applied))
	}
	if !applied {
		j := p.job
		e.opts.Metrics.WriteSuperseded(j.ID, j.TaskName)
		e.log.Warn("completion superseded: the job was recovered or released meanwhile; nothing written",
			"job_id", j.ID, "task", j.TaskName, "claim_seq", j.ClaimSeq)
	}
}

// wasReleased reports whether Stop gave the claim back to PENDING.
func (e *Engine) wasReleased(ref spi.ClaimRef) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.released[ref]
}

func (e *Engine) now() time.Time { return e.opts.Clock.Now().UTC().Truncate(time.Microsecond) }

// every runs fn at each tick of t until ctx ends, and then stops t.
func (e *Engine) every(ctx context.Context, t clockwork.Ticker, fn func(context.Context)) {
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.Chan():
			fn(ctx)
		}
	}
}

// writeBeat writes the node's heartbeat at now, with the node's tasks
// where the store records them (so that clients can tell which pending
// jobs no live node runs).
func (e *Engine) writeBeat(ctx context.Context, now time.Time) error {
	if e.caps.Nodes != nil {
		return e.caps.Nodes.HeartbeatTasks(ctx, e.opts.NodeID, e.taskNames, now)
	}
	return e.store.Heartbeat(ctx, e.opts.NodeID, now)
}

// beatOnce writes the node's heartbeat and remembers when it succeeded.
func (e *Engine) beatOnce(ctx context.Context) bool {
	now := e.now()
	if err := e.writeBeat(ctx, now); err != nil {
		if ctx.Err() == nil {
			e.log.Warn("heartbeat failed", "err", err)
		}
		return false
	}
	e.lastBeat.Store(now.UnixNano())
	return true
}

// freshBeat makes sure the node's row is fresh before it claims: after a
// stall (a paused process, a long GC, a suspended VM) other nodes may have
// recovered its jobs and deleted its row, and jobs claimed before the
// heartbeat loop re-registers it would look orphaned at once.
func (e *Engine) freshBeat(ctx context.Context) bool {
	if e.now().UnixNano()-e.lastBeat.Load() < int64(2*e.opts.HeartbeatInterval) {
		return true
	}
	return e.beatOnce(ctx)
}

// heartbeat refreshes the node's row and, where the store can tell, stops
// the bodies of jobs that were taken away from this node (recovered while it
// stalled, for instance): their writes would be superseded anyway.
func (e *Engine) heartbeat(ctx context.Context) {
	e.beatOnce(ctx)
	cc := e.caps.Claims
	if cc == nil {
		return
	}
	e.mu.Lock()
	execs := make([]*execution, 0, len(e.inflight))
	refs := make([]spi.ClaimRef, 0, len(e.inflight))
	for _, x := range e.inflight {
		execs = append(execs, x)
		refs = append(refs, spi.ClaimRef{JobID: x.job.ID, ClaimSeq: x.job.ClaimSeq})
	}
	e.mu.Unlock()
	if len(refs) == 0 {
		return
	}
	current, err := cc.CheckClaims(ctx, refs)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("checking claims failed", "err", err)
		}
		return
	}
	for i, ok := range current {
		if !ok {
			x := execs[i]
			e.opts.Metrics.WriteSuperseded(x.job.ID, x.job.TaskName)
			e.log.Warn("claim superseded while running: the job was recovered by another node; cancelling its body",
				"job_id", x.job.ID, "task", x.job.TaskName, "claim_seq", x.job.ClaimSeq)
			x.cancel()
		}
	}
}

func (e *Engine) recoverOrphans(ctx context.Context, nodes []string) ([]spi.RecoveredJob, error) {
	rec, err := e.store.RecoverOrphans(ctx, spi.RecoverParams{
		Now: e.now(), Grace: e.opts.OrphanGrace, MaxCrashRedeliveries: max(e.opts.MaxCrashRedeliveries, 0), // the store's 0 is FailOnFirstCrash
		Nodes: nodes, LastError: "crash budget exhausted: the job's node died while running it",
	})
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("orphan scan failed", "err", err)
		}
		return nil, err
	}
	if len(rec) > 0 {
		e.opts.Metrics.JobsRecovered(e.opts.NodeID, len(rec))
		for _, r := range rec {
			e.log.Warn("recovered orphaned job", "job_id", r.JobID, "task", r.TaskName, "from_node", r.FromNode,
				"status", r.NewStatus, "crash_count", r.CrashCount)
		}
	}
	return rec, nil
}

// pollLoop claims and dispatches jobs until ctx ends.
func (e *Engine) pollLoop(ctx context.Context) {
	defer e.loops.Done()
	delay := e.opts.MinPollInterval
	// Claiming a handful of slots at a time costs a round trip each, so
	// while most of the pool is busy the poller waits for a quarter of it
	// to free up, or for MinPollInterval, before claiming what is free.
	minClaim := max(1, min(e.opts.Concurrency, e.opts.ClaimBatchSize)/4)
	if len(e.taskNames) == 0 {
		return // a node without tasks runs nothing: it only heartbeats and recovers orphans
	}
	for ctx.Err() == nil {
		free, ok := e.freeSlots(), true
		if free == 0 {
			if !e.waitWake(ctx, 0) {
				return
			}
			continue
		}
		if free < minClaim && e.opts.GatherTimeout > 0 {
			if free, ok = e.gather(ctx, minClaim); !ok {
				return
			}
		}
		if !e.freshBeat(ctx) {
			if !e.waitWake(ctx, e.opts.PollInterval) {
				return
			}
			continue
		}
		// Only jobs of the registered tasks: in a fleet whose nodes run
		// different task sets (a rolling deploy that adds a task), the
		// others wait for a node that runs them.
		jobs, err := e.store.ClaimJobs(ctx, spi.ClaimParams{
			NodeID: e.opts.NodeID, Limit: min(free, e.opts.ClaimBatchSize), Now: e.now(),
			BoostInterval: e.opts.PriorityBoostInterval, Tags: e.opts.Tags, // AgingDisabled is negative: no aging in the store
			Tasks: e.taskNames,
		})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			e.opts.Metrics.ClaimTransientFailure(e.opts.NodeID, err)
			e.log.Warn("claim failed; backing off", "err", err)
			delay = e.opts.PollInterval
		} else if len(jobs) > 0 {
			e.opts.Metrics.JobsClaimed(e.opts.NodeID, len(jobs))
			for _, j := range jobs {
				e.dispatch(j)
			}
			delay = e.opts.MinPollInterval
			if len(jobs) == min(free, e.opts.ClaimBatchSize) {
				continue // there may be more due work: claim again at once
			}
		}
		if !e.waitWake(ctx, delay) {
			return
		}
		if err == nil && len(jobs) == 0 {
			delay = min(delay*2, e.opts.PollInterval)
		}
	}
}

// waitWake waits for a wakeup, or for d when d > 0. It returns false when
// ctx ends.
func (e *Engine) waitWake(ctx context.Context, d time.Duration) bool {
	var tc <-chan time.Time
	if d > 0 {
		t := e.opts.Clock.NewTimer(d)
		defer t.Stop()
		tc = t.Chan()
	}
	select {
	case <-ctx.Done():
		return false
	case <-e.wake:
	case <-tc:
	}
	return true
}

// gather waits until want slots are free or GatherTimeout has passed, and
// returns the free slots; false when ctx ends.
func (e *Engine) gather(ctx context.Context, want int) (int, bool) {
	t := e.opts.Clock.NewTimer(e.opts.GatherTimeout)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0, false
		case <-e.wake:
			if free := e.freeSlots(); free >= want {
				return free, true
			}
		case <-t.Chan():
			return e.freeSlots(), true
		}
	}
}

func (e *Engine) freeSlots() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.opts.Concurrency - len(e.inflight)
}

// dispatch starts one claimed job on its own goroutine.
func (e *Engine) dispatch(j *spi.Job) {
	ctx, cancel := context.WithCancel(e.runCtx)
	ref := spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}
	e.mu.Lock()
	e.inflight[ref] = &execution{job: j, cancel: cancel}
	e.mu.Unlock()
	e.jobs.Add(1)
	go func() {
		defer e.jobs.Done()
		defer cancel()
		c := e.execute(ctx, j)
		e.mu.Lock()
		delete(e.inflight, ref)
		released := e.released[ref]
		e.mu.Unlock()
		if !released { // a released job's write would only be superseded
			e.completer.add(c)
		}
		e.poke()
	}()
}

// execute runs one job and returns the owner write that ends it.
func (e *Engine) execute(ctx context.Context, j *spi.Job) pendingCompletion {
	jc := ratchet.NewJobContext(j, e.log)
	start := e.opts.Clock.Now()
	e.opts.Metrics.JobStarted(j.ID, j.TaskName, j.Priority)

	var res any
	var err error
	def, ok := e.tasks[j.TaskName]
	if !ok {
		err = ratchet.DoNotRetry(&ratchet.UnknownTaskError{Name: j.TaskName})
	} else {
		res, err = runSafely(ratchet.ContextWithJob(ctx, jc), def, j.Payload, e.opts.Serializer)
	}
	now := e.now()
	c := spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, FinishedAt: now}
	if err == nil {
		c.Outcome = spi.OutcomeSucceeded
		if res != nil {
			if b, merr := e.opts.Serializer.Marshal(res); merr != nil {
				jc.Logger.Warn("result not stored: it does not serialize; the job still succeeds", "err", merr)
			} else {
				c.Result, c.ResultType = b, ratchet.TypeName(res)
			}
		}
		c.Attempts = j.Attempts + 1 // reported in events; not written on success
		e.opts.Metrics.JobCompleted(j.ID, j.TaskName, e.opts.Clock.Since(start))
		return pendingCompletion{c: c, job: j}
	}
	d := DecideRetry(j, err, e.opts.RetryPolicy, now)
	c.Attempts = d.Attempt
	c.LastError = e.opts.ErrorSanitizer.Sanitize(err)
	e.opts.Metrics.JobFailed(j.ID, j.TaskName, err, d.Attempt)
	if d.Retry {
		c.Outcome, c.RetryAt = spi.OutcomeRetry, d.RetryAt
		jc.Logger.Info("job failed; retrying", "err", c.LastError, "retry_at", d.RetryAt)
	} else {
		c.Outcome = spi.OutcomeFailed
		jc.Logger.Warn("job failed; moved to the dead-letter queue", "err", c.LastError)
	}
	return pendingCompletion{c: c, job: j}
}

// runSafely runs a task body, turning a panic into a *ratchet.PanicError.
func runSafely(ctx context.Context, def ratchet.Definition, payload []byte, ser spi.PayloadSerializer) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, &ratchet.PanicError{Value: r, Stack: string(debug.Stack())}
		}
	}()
	return def.Execute(ctx, payload, ser)
}

func randUint32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:])
}
