package engine

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/nodecore"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/breaker"
	"github.com/ratchet-go/ratchet/sdk/cronexpr"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// ErrNotStarted is returned by Stop on an engine that is not running.
var ErrNotStarted = errors.New("ratchet engine: not started")

// Engine runs jobs from a store. Create it with New, then Start and Stop it
// once each.
//
// The Engine is the supervisor of its parts, each a type with narrow
// dependencies and no pointer back to it: the poller claims, the executor
// runs bodies, the completer writes outcomes, the heartbeater keeps the
// node's row fresh and checks its claims, the rescuer recovers orphans, and
// the registered services run beside them. Start and Stop below are the one
// place that orders them.
type Engine struct {
	store  spi.Store
	caps   spi.Capabilities // the store's optional features
	opts   Options
	log    *slog.Logger
	tasks  map[string]ratchet.Definition
	client *ratchet.Client

	taskNames  []string                               // the registered tasks, sorted: a claim takes only their jobs
	conditions map[string]ratchet.ConditionDefinition // the registered workflow conditions
	// resilience guards the protected tasks (nil: none, or breaking off).
	resilience spi.ResilienceStrategy
	protected  map[string]protection
	// pollBreaker stops the claims while the store keeps failing them.
	pollBreaker *breaker.Breaker
	subs        subscribers
	// waiters are the client's WaitJob calls watching this node's writes.
	waiters waiters
	// order keeps each job's events in order on this node.
	order eventOrder

	runner    taskRunner   // the end of the work middleware's chain
	signals   *pollSignals // the poller's wakeups
	completer *nodecore.Completer
	executor  *executor
	poller    *poller
	beats     *nodecore.Heartbeater
	// runs are the executions in progress (the report counts them).
	runs *nodecore.Runs
	// startedAt is when Start began (the report's start time); set
	// before the first heartbeat.
	startedAt time.Time
	// checkClaims asks the heartbeat loop for a claim check now.
	checkClaims chan struct{}
	rescue      nodecore.Rescuer
	services    []Service

	mu       sync.Mutex
	state    int                // 0 new, 1 running, 2 stopped
	draining bool               // Stop has begun and not ended
	runCtx   context.Context    // parent of job contexts; cancelled when the engine has stopped
	cancel   context.CancelFunc //
	claiming *group             // poller, wakeup listener, orphan scans, services: stopped first
	// wakeMetrics counts the wakeups (the collector's, or no-ops).
	wakeMetrics spi.WakeupMetrics
	beating     *group // heartbeats: stopped after the drain
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
	if w, ok := store.(spi.SchemaWarner); ok {
		if msg := w.SchemaWarning(); msg != "" {
			o.Client.Logger.Warn("the store's schema is newer than this code", "node", o.NodeID, "detail", msg)
		}
	}
	store = timed(store, o.Client.Metrics, o.clock)
	e := &Engine{
		store: store,
		caps:  spi.CapabilitiesOf(store),
		opts:  o,
		log:   o.Client.Logger.With("node", o.NodeID),
		tasks: make(map[string]ratchet.Definition, len(tasks)),
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
	if e.resilience, e.protected, err = resilience(o, e.tasks); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if e.pollBreaker, err = pollerBreaker(o); err != nil {
		return nil, fmt.Errorf("engine: %w: poller breaker: %w", ratchet.ErrInvalidArgument, err)
	}
	for i, svc := range o.Services {
		if svc == nil {
			return nil, fmt.Errorf("%w: engine service %d is nil", ratchet.ErrInvalidArgument, i)
		}
		if s, ok := svc.(*singleton); ok {
			if err := s.validate(e.caps); err != nil {
				return nil, fmt.Errorf("engine: %w", err)
			}
		}
	}
	e.services = o.Services
	if e.conditions, err = conditionsByName(o.Client.Conditions); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	if len(o.Client.Conditions) > 0 && e.caps.Workflows == nil {
		return nil, fmt.Errorf("engine: %d workflow conditions: %w: store %T keeps no workflows", len(o.Client.Conditions), ratchet.ErrUnsupported, store)
	}
	co := o.Client
	co.Notifier, co.Source = clientNotifier{e}, o.NodeID
	co.InsertMiddleware = append(slices.Clone(co.InsertMiddleware), e.submitted)
	e.client, err = ratchet.NewClient(store, co)
	if err != nil {
		return nil, err
	}
	if len(o.Schedules) > 0 && e.caps.Schedules == nil {
		return nil, fmt.Errorf("engine: %d recurring schedules: %w: store %T keeps no schedules", len(o.Schedules), ratchet.ErrUnsupported, store)
	}
	sched, err := cronexpr.Parse(o.Archive.Cron, "")
	if err != nil {
		return nil, fmt.Errorf("engine: Archive.Cron: %w: %w", ratchet.ErrInvalidArgument, err)
	}
	if !o.Archive.Disabled {
		switch {
		case e.caps.Archive == nil:
			e.log.Info("archiving is on, but the store keeps no archive: finished jobs stay in its job table", "store", fmt.Sprintf("%T", store))
		case e.caps.Leases == nil:
			e.log.Info("archiving is on, but the store grants no leases to run the archiver on one node at a time: not archiving", "store", fmt.Sprintf("%T", store))
		default:
			e.services = append(slices.Clone(e.services), Singleton(archiverLease, archiverLeaseTTL,
				archiver(e.caps.Archive, sched, o.Archive)))
		}
	}
	if e.caps.Logs != nil && e.caps.Leases != nil && !o.JobLogs.Disabled {
		e.services = append(slices.Clone(e.services), Singleton(logSweeperLease, archiverLeaseTTL,
			logSweeper(e.caps.Logs, sched, o.JobLogs.Retention, o.Archive.BatchSize)))
	}
	if e.caps.Schedules != nil && !o.NoScheduler {
		e.services = append(slices.Clone(e.services), scheduler(nodecore.Recurring{
			Store: e.caps.Schedules, Jobs: store, Threshold: o.MisfireThreshold,
			NewID: e.client.NewJobID, Inserts: o.Client.InsertMiddleware, Woke: e.NotifyNewWork, Pipeline: e.client.Pipeline(),
			Fired: func(schedule string, j *spi.Job, now time.Time) {
				e.publishEvent(Event{Kind: EventScheduleFired, Name: schedule, JobID: j.ID, Task: j.TaskName, At: now})
			},
			Skipped: func(schedule string, n int64, now time.Time) {
				e.publishEvent(Event{Kind: EventScheduleSkipped, Name: schedule, Skipped: n, At: now})
			}}, o.ScheduleInterval))
	}
	if e.caps.Workflows != nil {
		repair := workflowRepairer(e.caps.Workflows, o.WorkflowRepairInterval)
		if e.caps.Leases != nil {
			repair = Singleton(workflowRepairLease, passLeaseTTL(o.WorkflowRepairInterval), repair)
		}
		e.services = append(slices.Clone(e.services), repair)
	}
	if e.caps.Signals != nil {
		sweep := signalSweeper(e.caps.Signals, o.SignalSweepInterval, o.Client.Metrics, e.NotifyNewWork, e.publishEvent)
		if e.caps.Leases != nil {
			sweep = Singleton(signalSweepLease, passLeaseTTL(o.SignalSweepInterval), sweep)
		}
		e.services = append(slices.Clone(e.services), sweep)
	}
	if e.caps.StartBy != nil {
		sweep := startBySweeper(e.caps.StartBy, o.StartBySweepInterval, o.ErrorSanitizer, o.Client.Metrics, e.publishEvent, e.finished)
		if e.caps.Leases != nil {
			sweep = Singleton(startBySweepLease, passLeaseTTL(o.StartBySweepInterval), sweep)
		}
		e.services = append(slices.Clone(e.services), sweep)
	}
	if e.caps.Batches != nil {
		finish := batchFinisher(e.caps.Batches, o.BatchFinishInterval, e.NotifyNewWork, e.publishEvent)
		if e.caps.Leases != nil {
			finish = Singleton(batchFinishLease, passLeaseTTL(o.BatchFinishInterval), finish)
		}
		e.services = append(slices.Clone(e.services), finish)
	}
	e.wire()
	return e, nil
}

// wire builds the parts on their dependencies.
func (e *Engine) wire() {
	o := e.opts
	e.runCtx, e.cancel = context.WithCancel(context.Background())
	m := newMetricsOf(o.Client.Metrics)
	e.wakeMetrics = m.wake
	e.subs.dropped = droppedEvents(o.Client.Metrics, o.NodeID)
	// The parts in the order of their dependencies: what two parts share
	// (the poller's wakeups, the claims a drain released) is made first.
	tasks := newTaskSlots(o.TaskTuning, e.taskNames, o.Concurrency)
	e.signals = newPollSignals(tasks != nil)
	runs := nodecore.NewRuns(o.Concurrency, tasks)
	e.runs = runs
	e.completer = nodecore.NewCompleter(nodecore.CompleterDeps{Store: e.store, Logs: e.caps.Logs, Clock: o.clock, Log: e.log,
		Batch: o.CompletionBatchSize, Workers: o.CompletionConcurrency, Finalization: m.fin,
		Written: e.written, Released: runs.WasReleased})
	out := outcomes{clock: o.clock, policy: o.RetryPolicy, sanitizer: o.ErrorSanitizer, metrics: m,
		results: o.ResultStrategy, pipe: e.client.Pipeline(), jitter: retryJitter(o.RetryJitter, e.tasks), draw: mathrand.Float64}
	e.runner = taskRunner{tasks: e.tasks, authorization: o.Client.Authorization, pipe: e.client.Pipeline(),
		serializer: o.Client.Serializer, protected: e.protected, resilience: e.resilience}
	run := ratchet.ChainWork(e.runner.run, o.WorkMiddleware...)
	jobs := ratchet.JobContextOptions{Logger: e.log, Loggers: o.JobLoggers, State: e.caps.State, Pipeline: e.client.Pipeline(), Clock: o.clock}
	if e.caps.Properties != nil {
		jobs.Properties = e.caps.Properties
	}
	if e.caps.Workflows != nil {
		jobs.Parents = e.client.Parents
	}
	if e.caps.Signals != nil {
		jobs.Signal = signalOf(e.store)
	}
	flow := workflowGate{conditions: e.conditions, pipe: e.client.Pipeline()}
	if e.caps.Workflows != nil {
		flow.deps = e.caps.Workflows
	}
	e.executor = newExecutor(e.runCtx, executorDeps{store: e.store, clock: o.clock, log: e.log, runs: runs,
		jobContext: func(j *spi.Job) (*ratchet.JobContext, *runLog) {
			jc := ratchet.NewJobContextWith(j, jobs)
			if e.caps.Logs == nil || o.JobLogs.Disabled {
				return jc, nil
			}
			rl := &runLog{ref: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, run: jc.Run, level: o.JobLogs.Level,
				max: o.JobLogs.MaxLines, clock: o.clock, sanitize: o.ErrorSanitizer, flush: e.completer.AddLogs}
			if len(o.Client.Codecs) > 0 {
				pipe, ref := e.client.Pipeline(), ratchet.JobRef(ratchet.SurfaceLog, j.ID)
				rl.seal = func(msg string) string {
					s, err := pipe.EncodeText(e.runCtx, ref, msg)
					if err != nil {
						// Never the plaintext: the line says it was lost.
						return "[log line not sealed: " + err.Error() + "]"
					}
					return s
				}
			}
			jc.Logger = rl.logger(jc.Logger.Handler())
			return jc, rl
		},
		run: func(ctx context.Context, j *spi.Job) (any, error) {
			o.Client.Metrics.JobStarted(ctx, j.ID, j.TaskName, j.Priority)
			if e.subs.wantsBit(bitStarted) {
				e.subs.publish(Event{Kind: EventStarted, JobID: j.ID, Task: j.TaskName, Run: j.Attempts + 1, At: o.clock.Now()})
			}
			return run(ctx, j)
		}, finish: out.finish, freed: e.signals.freed, timeout: o.RunTimeout,
		complete: func(p nodecore.Pending) {
			if p.C.Outcome.Status() == spi.StatusPending && !e.subs.empty() {
				e.order.hold(p.Job.ID) // due again at once, maybe: released once written reports it
			}
			e.completer.Add(p)
		},
		await: e.order.wait,
		overran: func(j *spi.Job, by time.Duration) {
			if m, ok := o.Client.Metrics.(spi.TimeoutMetrics); ok {
				m.RunOverran(context.Background(), j.ID, j.TaskName, by)
			}
		},
		expired: func(j *spi.Job) {
			if m, ok := o.Client.Metrics.(spi.StartByMetrics); ok {
				m.JobExpired(context.Background(), j.ID, j.TaskName)
			}
		},
		gaveBack: func(jobs []*spi.Job, at time.Time) {
			e.publishAll(EventReleased, func(emit func(Event)) {
				for _, j := range jobs {
					emit(Event{Kind: EventReleased, JobID: j.ID, Task: j.TaskName, Run: j.Attempts + 1, At: at})
				}
			})
		},
		gate: func(ctx context.Context, jc *ratchet.JobContext, j *spi.Job, started time.Time) (nodecore.Pending, bool) {
			return out.gate(ctx, flow, jc, j, started)
		},
	})
	e.checkClaims = make(chan struct{}, 1)
	e.beats = nodecore.NewHeartbeater(nodecore.HeartbeaterDeps{Clock: o.clock, Log: e.log,
		Write: e.writeBeat, Claims: e.caps.Claims, Running: runs.Running,
		Superseded: func(ctx context.Context, j *spi.Job) { o.Client.Metrics.WriteSuperseded(ctx, j.ID, j.TaskName) }})
	e.rescue = nodecore.Rescuer{Store: e.store, Clock: o.clock, Log: e.log, Grace: o.OrphanGrace, MaxCrash: o.MaxCrashRedeliveries,
		Recovered: func(ctx context.Context, rec []spi.RecoveredJob) {
			o.Client.Metrics.JobsRecovered(ctx, o.NodeID, len(rec))
			e.publishAll(EventRecovered, func(emit func(Event)) {
				now := o.clock.Now()
				for _, j := range rec {
					emit(Event{Kind: EventRecovered, JobID: j.JobID, Task: j.TaskName, Node: j.FromNode, Outcome: string(j.NewStatus), At: now})
				}
			})
		}}
	strategy := o.PollStrategy
	if strategy == nil {
		strategy = nodecore.AdaptivePolling
	}
	claim := nodecore.ClaimerDeps{Store: e.store, Clock: o.clock, Log: e.log,
		// Only jobs of the registered tasks: in a fleet whose nodes run
		// different task sets (a rolling deploy that adds a task), the
		// others wait for a node that runs them.
		Params: spi.ClaimParams{NodeID: o.NodeID, BoostInterval: o.PriorityBoostInterval, // AgingDisabled is negative: no aging in the store
			Tags: o.Tags, Tasks: e.taskNames},
		Dispatch: e.executor.dispatch, Breaker: e.pollBreaker, ProbeEvery: o.PollInterval, Adopter: e.caps.Adopter,
		Answered: e.completer.Answered,
		Claimed:  func(ctx context.Context, n int) { o.Client.Metrics.JobsClaimed(ctx, o.NodeID, n) },
		Failed:   func(ctx context.Context, err error) { o.Client.Metrics.ClaimTransientFailure(ctx, o.NodeID, err) }}
	policy := nodecore.PollPolicy{Slots: o.Concurrency, Batch: o.ClaimBatchSize, Gather: o.GatherTimeout, HeartbeatInterval: o.HeartbeatInterval}
	claim.Fresh = func() bool { return policy.Fresh(o.clock.Now(), e.beats.LastBeat()) }
	n := claimers(o, e.caps)
	if tasks != nil {
		claim.Limited, claim.Admit, claim.GiveBack = runs.Claimable, runs.Admit, e.executor.giveBack
		n = 1 // the per-task room does not count the claims in flight
	}
	pd := pollerDeps{clock: o.clock, log: e.log, signals: e.signals, claims: claim,
		policy: policy,
		strategy: strategy(spi.PollConfig{MinInterval: o.MinPollInterval, MaxInterval: o.PollInterval,
			Notified: o.Coordinator != nil || e.caps.Wakeups != nil}),
		free: runs.Free, lastBeat: e.beats.LastBeat, beat: e.beats.Beat,
		rejected: func(ctx context.Context, gate string, n int) { m.adm.GateRejected(ctx, o.NodeID, gate, n) },
		claimers: n}
	e.poller = newPoller(pd)
}

// claimers is how many claims the node keeps in flight at most: the
// option, or its default (see Options.ClaimConcurrency).
func claimers(o Options, caps spi.Capabilities) int {
	switch {
	case o.ClaimConcurrency > 0:
		return o.ClaimConcurrency
	case caps.ConcurrentClaims != nil && caps.ConcurrentClaims.ConcurrentClaims() && o.Concurrency >= 2*o.ClaimBatchSize:
		return 2
	}
	return 1
}

// taskRunner runs a claimed job's task: the end of the work middleware's
// chain.
type taskRunner struct {
	tasks         map[string]ratchet.Definition
	authorization ratchet.AuthorizationPolicy
	pipe          *ratchet.Pipeline
	serializer    spi.PayloadSerializer
	protected     map[string]protection
	resilience    spi.ResilienceStrategy
}

// run runs j's task. The payload's codecs are undone first; a payload they
// cannot decode (a wrong key, a corrupted envelope) fails the job at once,
// as one that does not deserialize does, and so do an unknown task and
// one the authorization policy refuses. A protected task runs through its
// circuit breaker.
func (r taskRunner) run(ctx context.Context, j *spi.Job) (any, error) {
	def, ok := r.tasks[j.TaskName]
	if !ok {
		return nil, ratchet.DoNotRetry(&ratchet.UnknownTaskError{Name: j.TaskName})
	}
	if a := r.authorization; a != nil {
		if err := a.CheckExecute(ctx, j); err != nil {
			return nil, ratchet.DoNotRetry(fmt.Errorf("ratchet: task %q refused at dispatch: %w: %w", j.TaskName, ratchet.ErrUnauthorized, err))
		}
	}
	payload, err := r.pipe.DecodeBytes(ctx, ratchet.JobRef(ratchet.SurfaceTask, j.ID), j.Payload)
	if err != nil {
		return nil, ratchet.DoNotRetry(&ratchet.PayloadDecodeError{Task: j.TaskName, Err: err})
	}
	if p, ok := r.protected[j.TaskName]; ok {
		return r.resilience.Execute(ctx, p.service, p.filter, func(ctx context.Context) (any, error) {
			return def.Execute(ctx, payload, r.serializer)
		})
	}
	return def.Execute(ctx, payload, r.serializer)
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
	ctx := context.Background()
	e.wakeMetrics.LocalWakeup(ctx, e.opts.NodeID)
	if c := e.opts.Coordinator; c != nil {
		c.NotifyNewWork(ctx, p, e.opts.NodeID)
		e.wakeMetrics.ClusterWakeupPublished(ctx, e.opts.NodeID, p)
	}
}

// onWakeup handles a wakeup from the cluster, ignoring the node's own
// new work. A wakeup that says claims were taken away starts the claim
// check at once (one pending at most).
func (e *Engine) onWakeup(h spi.WakeupHint) {
	switch {
	case len(h.Watching) > 0: // another process waits for these jobs' ends
		if h.Source != e.opts.NodeID {
			now := e.opts.clock.Now()
			e.waiters.watchRemote(h.Watching, now, now.Add(spi.WatchTTL))
		}
		return
	case len(h.Finished) > 0: // another node finished jobs watched here
		e.waiters.wake(h.Finished)
		return
	}
	if h.CheckClaims {
		select {
		case e.checkClaims <- struct{}{}:
		default:
		}
		return
	}
	if h.Source != "" && h.Source == e.opts.NodeID {
		return
	}
	e.wakeMetrics.ClusterWakeupReceived(context.Background(), e.opts.NodeID, h.Source)
	e.poke()
}

func (e *Engine) poke() { e.signals.poke() }

// Start registers the node, recovers orphans (including jobs left RUNNING by
// an earlier run under the same node id) and starts polling. ctx bounds only
// the start-up work; Stop ends the engine.
//
// The start order: recover the node's own jobs, register its heartbeat,
// start the completer, the heartbeats, then (the claiming group) the wakeup
// listener, the poller, the orphan scans and the services.
func (e *Engine) Start(ctx context.Context) error {
	e.mu.Lock()
	if e.state != 0 {
		e.mu.Unlock()
		return errors.New("ratchet engine: Start called twice")
	}
	e.state = 1
	e.mu.Unlock()

	for i, h := range e.opts.Hooks {
		if err := h.BeforeStart(ctx); err != nil {
			e.mu.Lock()
			e.state = 0
			e.mu.Unlock()
			return fmt.Errorf("ratchet engine: start: lifecycle hook %d: %w", i, err)
		}
	}
	for _, r := range e.opts.Schedules {
		if _, err := e.client.PutSchedule(ctx, r); err != nil {
			return fmt.Errorf("ratchet engine: start: %w", err)
		}
	}
	if _, err := e.rescue.Recover(ctx, []string{e.opts.NodeID}); err != nil {
		return fmt.Errorf("ratchet engine: start: %w", err)
	}
	e.startedAt = e.opts.clock.Now()
	if err := e.beats.Register(ctx); err != nil {
		return fmt.Errorf("ratchet engine: start: register node: %w", err)
	}
	e.completer.Start()
	// The tickers start here, not in their goroutines: the beats and scans
	// count from Start, however late the goroutines run (a fake clock may
	// move on before they do).
	beats, scans := e.opts.clock.NewTicker(e.opts.HeartbeatInterval), e.opts.clock.NewTicker(e.opts.OrphanScanInterval)
	// Heartbeats go on through the drain of Stop: a draining node is alive,
	// and its jobs must not be recovered (and charged) meanwhile.
	e.beating = newGroup(e.runCtx)
	e.beating.goFn(func(ctx context.Context) { every(ctx, beats, e.beats.Tick, e.checkClaims, e.beats.Check) })
	e.claiming = newGroup(e.runCtx)
	if c := e.opts.Coordinator; c != nil {
		claimCtx := e.claiming.ctx
		c.RegisterWakeupListener(func(h spi.WakeupHint) {
			if claimCtx.Err() == nil {
				e.onWakeup(h)
			}
		})
	} else if wl := e.caps.Wakeups; wl != nil {
		e.claiming.goFn(func(ctx context.Context) { _ = wl.ListenWakeups(ctx, e.onWakeup) })
	}
	e.claiming.goFn(func(ctx context.Context) { e.poller.run(ctx) })
	e.claiming.goFn(func(ctx context.Context) {
		every(ctx, scans, func(ctx context.Context) { _, _ = e.rescue.Recover(ctx, nil) }, nil, nil)
	})
	for _, svc := range e.services {
		h := ServiceHost{NodeID: e.opts.NodeID, Store: e.store, Client: e.client, Clock: e.opts.clock,
			Logger: e.log.With("service", svc.Name())}
		e.claiming.goFn(func(ctx context.Context) { superviseService(ctx, svc, h) })
	}
	e.log.Info("ratchet engine started", "concurrency", e.opts.Concurrency, "tasks", len(e.tasks), "services", len(e.services))
	for _, h := range e.opts.Hooks {
		h.AfterStart(ctx)
	}
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
	e.state, e.draining = 2, true
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.draining = false
		e.mu.Unlock()
	}()

	for _, h := range e.opts.Hooks {
		h.BeforeStop(ctx)
	}
	var errs []error
	for _, step := range e.stopOrder() {
		if err := step.run(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	e.log.Info("ratchet engine stopped")
	for _, h := range e.opts.Hooks {
		h.AfterStop(ctx)
	}
	return errors.Join(errs...)
}

// stopStep is one step of the stop order.
type stopStep struct {
	name string
	run  func(ctx context.Context) error
}

// stopOrder is the graceful stop: StopOrder's steps, each mapped to the
// part that carries it out.
func (e *Engine) stopOrder() []stopStep {
	do := map[nodecore.StopStep]func(ctx context.Context) error{
		nodecore.StopClaiming: func(context.Context) error { e.claiming.stop(); return nil },
		nodecore.DrainAndRelease: func(ctx context.Context) error {
			if n, err := e.poller.claimer.GiveBackLost(ctx, e.store, e.opts.clock.Now()); n > 0 || err != nil {
				e.log.Info("gave back the jobs of claims whose answer was lost", "jobs", n, "err", err)
			}
			_, err := e.executor.drain(ctx, e.opts.ShutdownTimeout)
			return err
		},
		nodecore.FlushCompletions: func(context.Context) error { return e.completer.Stop() },
		nodecore.StopHeartbeats:   func(context.Context) error { e.beating.stop(); e.cancel(); return nil },
		nodecore.Deregister: func(ctx context.Context) error {
			if err := e.store.DeregisterNode(context.WithoutCancel(ctx), e.opts.NodeID); err != nil {
				return fmt.Errorf("deregister node: %w", err)
			}
			return nil
		},
	}
	order := nodecore.StopOrder()
	steps := make([]stopStep, len(order))
	for i, s := range order {
		steps[i] = stopStep{s.String(), do[s]}
	}
	return steps
}

// submitted is the innermost insert middleware of the engine's client: it
// publishes the jobs the store wrote (not a key's duplicates).
func (e *Engine) submitted(ctx context.Context, jobs []*ratchet.Job, next ratchet.InsertFunc) ([]spi.InsertResult, error) {
	res, err := next(ctx, jobs)
	if err != nil || !e.subs.wantsBit(bitSubmitted) {
		return res, err
	}
	now := e.opts.clock.Now()
	for i, r := range res {
		if !r.Duplicate && i < len(jobs) {
			e.subs.publish(Event{Kind: EventSubmitted, JobID: r.ID, Task: jobs[i].TaskName, At: now})
		}
	}
	return res, nil
}

// clientNotifier is what the engine's client tells of its writes: new work
// (Engine.NotifyNewWork) and the signal waits it resolved. It implements
// ratchet.SignalNotifier, ratchet.ClaimsNotifier and
// ratchet.FinishNotifier without adding to the engine's API.
type clientNotifier struct{ *Engine }

// WatchFinished watches for a write of this node that finishes job id,
// and, through a publisher of WaitJob's notices (the coordinator, or the
// store's own wakeup channel: spi.FinishPublisher), for the end another
// node publishes: it announces the watch at once and again every third
// of spi.WatchTTL (on the engine's clock) until stopped.
func (n clientNotifier) WatchFinished(id uuid.UUID) (<-chan struct{}, func()) {
	ch, stop := n.waiters.watch(id)
	pub := n.finishPublisher()
	if pub == nil {
		return ch, stop
	}
	e := n.Engine
	announce := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		pub.NotifyWatching(ctx, []uuid.UUID{id}, e.opts.NodeID)
	}
	announce()
	ticker := e.opts.clock.NewTicker(spi.WatchTTL / 3)
	done := make(chan struct{})
	go func() {
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ch:
				return
			case <-ticker.Chan():
				announce()
			}
		}
	}()
	var once sync.Once
	return ch, func() { once.Do(func() { close(done); stop() }) }
}

// finishPublisher is what carries WaitJob's notices between processes:
// the coordinator when it does (spi.FinishPublisher), else the store when
// it publishes and hears them on its own wakeup channel; nil for none.
func (e *Engine) finishPublisher() spi.FinishPublisher {
	if c := e.opts.Coordinator; c != nil {
		p, _ := c.(spi.FinishPublisher)
		return p
	}
	if e.caps.Wakeups == nil {
		return nil
	}
	return e.caps.Finish
}

// finished wakes the WaitJob calls that watch job id, which this node
// just finished: this process's, and, by a notice (finishPublisher), the
// ones another process announced.
func (e *Engine) finished(id uuid.UUID) {
	if e.waiters.n.Load() == 0 { // the hot path: nobody waits
		return
	}
	if !e.waiters.finished(id, e.opts.clock.Now()) {
		return
	}
	if pub := e.finishPublisher(); pub != nil {
		go func() { // off the completer's path; best effort (the waiter polls)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			pub.NotifyFinished(ctx, []uuid.UUID{id}, e.opts.NodeID)
		}()
	}
}

// ClaimsChanged runs the node's claim check at once: its client cancelled
// jobs, which may be running here; and, through a coordinator that
// carries the notice (spi.ClaimsPublisher), on every other node.
func (n clientNotifier) ClaimsChanged(ctx context.Context) {
	n.onWakeup(spi.WakeupHint{CheckClaims: true})
	if p, ok := n.opts.Coordinator.(spi.ClaimsPublisher); ok {
		p.NotifyClaimsChanged(ctx, n.opts.NodeID)
	}
}

// SignalsDelivered publishes a signal-resolved event for each wait the
// engine's client resolved.
func (n clientNotifier) SignalsDelivered(_ context.Context, rs []spi.ResolvedSignal) {
	e := n.Engine
	if !e.subs.wanted(EventSignalResolved) {
		return
	}
	now := e.opts.clock.Now()
	for _, r := range rs {
		e.subs.publish(Event{Kind: EventSignalResolved, JobID: r.JobID, Task: r.TaskName, Name: r.Name, Outcome: string(spi.SignalDelivered), At: now})
	}
}

// publishEvent publishes ev to the engine's subscribers.
func (e *Engine) publishEvent(ev Event) {
	if e.subs.wanted(ev.Kind) {
		e.subs.publish(ev)
	}
}

// written reports a completion the store answered: its event, and for one
// that did not apply (superseded) a metric and a warning.
func (e *Engine) written(ctx context.Context, p nodecore.Pending, applied bool) {
	if applied && p.C.Outcome.Status().Terminal() {
		if p.C.HasDependents {
			e.signals.poke() // the write released its dependents: they may be due now
		}
		e.finished(p.Job.ID)
	}
	if !e.subs.empty() {
		e.subs.publish(eventOf(p.C, p.Job.TaskName, applied))
	}
	e.order.release(p.Job.ID)
	if !applied {
		j := p.Job
		e.opts.Client.Metrics.WriteSuperseded(ctx, j.ID, j.TaskName)
		e.log.Warn("completion superseded: the job was recovered or released meanwhile; nothing written",
			"job_id", j.ID, "task", j.TaskName, "claim_seq", j.ClaimSeq)
	}
}

// writeBeat writes the node's heartbeat at now, with the node's tasks
// where the store records them (so that clients can tell which pending
// jobs no live node runs), and its report where the store records that
// (so that the dashboard shows every live node and its breakers).
func (e *Engine) writeBeat(ctx context.Context, now time.Time) error {
	if e.caps.Reports != nil {
		return e.caps.Reports.HeartbeatReport(ctx, e.opts.NodeID, e.taskNames, e.report(), now)
	}
	if e.caps.Nodes != nil {
		return e.caps.Nodes.HeartbeatTasks(ctx, e.opts.NodeID, e.taskNames, now)
	}
	return e.store.Heartbeat(ctx, e.opts.NodeID, now)
}

func randUint32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:])
}
