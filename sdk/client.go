package ratchet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// WorkNotifier is told when new jobs were written, so that idle pollers can
// wake at once instead of at their next poll. The engine implements it.
type WorkNotifier interface {
	NotifyNewWork(p Priority)
}

// SignalNotifier is a WorkNotifier that is also told which signal waits a
// client's deliveries resolved (Signal, SignalByKey). The engine
// implements it and publishes them to its subscribers.
type SignalNotifier interface {
	WorkNotifier
	SignalsDelivered(ctx context.Context, rs []spi.ResolvedSignal)
}

// ClaimsNotifier is a WorkNotifier that is also told when a client's
// cancel may have taken claims of RUNNING jobs away (CancelJob, the bulk
// cancel, CancelWorkflow, CancelBatch), so that it can check its running
// claims at once and stop the bodies of the cancelled jobs without
// waiting for its next heartbeat. The engine implements it.
type ClaimsNotifier interface {
	WorkNotifier
	ClaimsChanged(ctx context.Context)
}

// FinishNotifier is a WorkNotifier that also tells of the jobs its process
// finished: the engine's client has one. WaitJob watches through it, so a
// job that a node of the waiter's own process finishes wakes the waiter
// at once, as does one that another process's node finishes where the
// engine's coordinator or store carries WaitJob's notices
// (spi.FinishPublisher); reading the job at intervals finds the rest.
type FinishNotifier interface {
	WorkNotifier
	// WatchFinished returns a channel closed once the process has written
	// a finished state (SUCCEEDED, FAILED, CANCELLED or SKIPPED) of job id
	// after the call, and a function that ends the watch.
	WatchFinished(id uuid.UUID) (<-chan struct{}, func())
}

// ClientOptions configure a Client. The zero value is ready to use.
type ClientOptions struct {
	// Clock is the time source; nil means the system clock.
	Clock Clock
	// Serializer encodes arguments and decodes results; nil means JSON.
	Serializer spi.PayloadSerializer
	// MaxPayloadBytes limits each serialized payload; zero means 100 KiB,
	// a negative value is an error.
	MaxPayloadBytes int
	// Notifier, when set, is told about every submission that wrote jobs.
	Notifier WorkNotifier
	// Logger receives the client's own log lines; nil means slog.Default().
	Logger *slog.Logger
	// Source is the node id that wakeups published by this client's writes
	// carry (the engine sets its own); empty for none.
	Source string
	// Codecs transform serialized payloads after the size check, in order
	// (and results back, in reverse): see PayloadCodec.
	Codecs []PayloadCodec
	// InsertMiddleware wraps every submission, the first outermost.
	InsertMiddleware []InsertMiddleware
	// Tasks, when set, are the task names a raw submission (SubmitRaw) may
	// name; others fail with an *UnknownTaskError. Empty accepts any name
	// (a client cannot know which tasks the fleet runs).
	Tasks []string
	// Conditions, when set, are the workflow conditions a workflow may
	// use (When); a step that names another fails SubmitWorkflow before
	// anything is written. An engine evaluates the conditions of its
	// Options.Client.Conditions. Empty accepts any name.
	Conditions []ConditionDefinition
	// Metrics, when it implements spi.SignalMetrics, is told of the
	// signal waits this client writes, delivers and cancels; nil reports
	// nothing. An engine reports every lifecycle callback to it.
	Metrics spi.MetricsCollector
	// Authorization, when not nil, checks every job this client would
	// create before anything is written (see AuthorizationPolicy); an
	// engine also checks the jobs it runs.
	Authorization AuthorizationPolicy
	// MaskPayloads masks the sensitive fields of the arguments and results
	// that JobDetail returns (the spec's mask-payloads,
	// RATCHET_MASK_PAYLOADS), as MaskingPolicy decides (nil means
	// DefaultMaskingPolicy). Stored values and what bodies receive are
	// never masked.
	MaskPayloads  bool
	MaskingPolicy MaskingPolicy
}

// Client submits, reads and manages jobs. It needs no engine running. It is
// safe for concurrent use.
type Client struct {
	store    spi.Store
	clock    Clock
	pipe     *Pipeline
	inserts  []InsertMiddleware
	tasks    map[string]bool // SubmitRaw's allow-list; nil accepts any
	conds    map[string]bool // SubmitWorkflow's allow-list of conditions; nil accepts any
	notifier WorkNotifier
	log      *slog.Logger
	ids      *idGenerator
	source   string
	// signalMetrics is the Metrics' signal callbacks; nil when it has
	// none (or is NoOpMetrics), so that nothing is read for them.
	signalMetrics spi.SignalMetrics
	// joinMetrics counts the submissions that joined an earlier job;
	// nil when the Metrics do not.
	joinMetrics spi.JoinMetrics
	auth        AuthorizationPolicy
	mask        MaskingPolicy // nil: JobDetail does not mask
}

// NewClient returns a client over store.
func NewClient(store spi.Store, opts ClientOptions) (*Client, error) {
	if store == nil {
		return nil, invalidArg("nil store")
	}
	pipe, err := NewPipeline(opts.Serializer, opts.MaxPayloadBytes, opts.Codecs...)
	if err != nil {
		return nil, err
	}
	for i, mw := range opts.InsertMiddleware {
		if mw == nil {
			return nil, invalidArg("insert middleware %d is nil", i)
		}
	}
	c := &Client{
		store:    store,
		clock:    opts.Clock,
		pipe:     pipe,
		inserts:  opts.InsertMiddleware,
		notifier: opts.Notifier,
		log:      opts.Logger,
		ids:      newIDGenerator(),
		source:   opts.Source,
		auth:     opts.Authorization,
	}
	if opts.MaskPayloads {
		c.mask = opts.MaskingPolicy
		if c.mask == nil {
			c.mask = DefaultMaskingPolicy{}
		}
	}
	if sm, ok := opts.Metrics.(spi.SignalMetrics); ok {
		if _, noop := opts.Metrics.(spi.NoOpMetrics); !noop {
			c.signalMetrics = sm
		}
	}
	if am, ok := opts.Metrics.(spi.JoinMetrics); ok {
		if _, noop := opts.Metrics.(spi.NoOpMetrics); !noop {
			c.joinMetrics = am
		}
	}
	if len(opts.Tasks) > 0 {
		c.tasks = make(map[string]bool, len(opts.Tasks))
		for _, t := range opts.Tasks {
			c.tasks[t] = true
		}
	}
	if len(opts.Conditions) > 0 {
		c.conds = make(map[string]bool, len(opts.Conditions))
		for i, cond := range opts.Conditions {
			if cond == nil {
				return nil, invalidArg("workflow condition %d is nil", i)
			}
			c.conds[cond.Name()] = true
		}
	}
	if c.clock == nil {
		c.clock = systemClock{}
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	return c, nil
}

// Store returns the store the client writes to.
func (c *Client) Store() spi.Store { return c.store }

// Serializer returns the payload serializer the client encodes with.
func (c *Client) Serializer() spi.PayloadSerializer { return c.pipe.Serializer() }

// MaxPayloadBytes returns the payload limit in bytes.
func (c *Client) MaxPayloadBytes() int { return c.pipe.MaxPayloadBytes() }

// NewJobID returns a new job id: a UUIDv7 of the client's clock, greater
// than every id it returned before.
func (c *Client) NewJobID() uuid.UUID { return c.ids.next(c.now()) }

// Pipeline returns the payload pipeline the client encodes with, and the
// engine that shares it decodes with.
func (c *Client) Pipeline() *Pipeline { return c.pipe }

// SubmitRaw enqueues one job of the task named task with payload, its
// arguments already serialized with the client's serializer (with the
// default JSON serializer, a JSON document): for callers that hold no Go
// type of the task, such as the CLI, the dashboard and extensions. It takes
// the one path of a typed submission (options, size limit, codecs, insert
// middleware, wakeups), but not the task's own default options, which only
// its Go definition knows. An empty name, a name outside ClientOptions.Tasks
// when that is set, or a payload that is not JSON for the JSON serializer
// fail before anything is written.
func (c *Client) SubmitRaw(ctx context.Context, task string, payload []byte, opts ...SubmitOption) (uuid.UUID, error) {
	switch {
	case task == "":
		return uuid.Nil, invalidArg("raw submission with an empty task name")
	case c.tasks != nil && !c.tasks[task]:
		return uuid.Nil, fmt.Errorf("ratchet: submit: %w", &UnknownTaskError{Name: task})
	}
	if _, isJSON := c.pipe.Serializer().(JSONSerializer); isJSON && !json.Valid(payload) {
		return uuid.Nil, invalidArg("raw submission of task %q: the payload is not valid JSON", task)
	}
	ids, err := c.submit(ctx, task, [][]byte{payload}, nil, opts)
	if err != nil {
		return uuid.Nil, err
	}
	return ids[0], nil
}

// SubmitCalls enqueues one job per call, of any tasks and each with its
// own options (Task.With), in one store round trip, as River's InsertMany
// does: a mixed load written at once. opts apply to every call, under the
// call's own options and over its task's defaults. Either every job is
// written or, on error, none is: a call that fails its checks (its task's
// Validate, its options, its arguments' encoding) fails them all before
// anything is written. It returns the jobs' ids in the calls' order; a
// call whose idempotency key matches an existing job gets that job's id.
// InTx and WithAfterCommit go in opts, for the whole round trip, not in a
// call's options.
func (c *Client) SubmitCalls(ctx context.Context, calls []Call, opts ...SubmitOption) ([]uuid.UUID, error) {
	common, err := c.config(nil, opts)
	if err != nil {
		return nil, fmt.Errorf("ratchet: submit calls: %w", err)
	}
	var jobs []*spi.Job
	roots := make([]int, len(calls)) // each call's own job in jobs
	for i, call := range calls {
		if call.err != nil {
			return nil, fmt.Errorf("ratchet: submit calls: call %d: %w", i+1, call.err)
		}
		if c.tasks != nil && !c.tasks[call.task] {
			return nil, fmt.Errorf("ratchet: submit calls: call %d: %w", i+1, &UnknownTaskError{Name: call.task})
		}
		payload := call.raw
		if !call.isRaw {
			if payload, err = c.pipe.Serializer().Marshal(call.args); err != nil {
				return nil, fmt.Errorf("ratchet: submit calls: call %d: encode arguments of task %q: %w", i+1, call.task, err)
			}
		}
		own := opts
		if len(call.opts) > 0 {
			own = append(slices.Clone(opts), call.opts...)
		}
		cfg, js, err := c.prepare(ctx, call.task, [][]byte{payload}, call.defaults, own)
		if err != nil {
			return nil, fmt.Errorf("ratchet: submit calls: call %d: %w", i+1, err)
		}
		if cfg.tx != common.tx || (cfg.afterCommit != nil) != (common.afterCommit != nil) {
			return nil, fmt.Errorf("ratchet: submit calls: call %d: %w", i+1, invalidArg("InTx and WithAfterCommit go to SubmitCalls, for every call, not to one call"))
		}
		roots[i] = len(jobs)
		jobs = append(jobs, js...)
	}
	if len(jobs) == 0 {
		return []uuid.UUID{}, nil
	}
	ids, err := c.insert(ctx, common, fmt.Sprintf("%d calls", len(calls)), jobs)
	if err != nil {
		return nil, err
	}
	out := make([]uuid.UUID, len(calls))
	for i, k := range roots {
		out[i] = ids[k]
	}
	return out, nil
}

// jobSlab is how many jobs of a batch submission share one allocation: a
// slab of 64 (about 31 KiB) comes from the runtime's size classes, whose
// spans are reused as they are freed, and a job that something keeps pins
// only its slab. The client's side of a batch of 10,000 took about 600
// ns a job so (BenchmarkSubmitMany), against 760 with an allocation per
// job and 450 with one slab for the whole batch; but that one is a large
// object (4.9 MiB), often on pages fresh from the operating system: a
// SQLite burn-down of 50,000 jobs took 22,000-25,000 page faults with it,
// 13,000-16,000 with slabs of 64 and 15,000-19,000 with a job each.
const jobSlab = 64

// submit builds and inserts one job per serialized payload: the one
// creation path of every submission.
func (c *Client) submit(ctx context.Context, task string, payloads [][]byte, defaults, opts []SubmitOption) ([]uuid.UUID, error) {
	cfg, jobs, err := c.prepare(ctx, task, payloads, defaults, opts)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	ids, err := c.insert(ctx, cfg, task, jobs)
	if err != nil || len(cfg.callbacks) == 0 {
		return ids, err
	}
	roots := make([]uuid.UUID, 0, len(payloads))
	for i := 0; i < len(ids); i += 1 + len(cfg.callbacks) {
		roots = append(roots, ids[i])
	}
	return roots, nil
}

// prepare checks a submission's options and builds its jobs, one per
// serialized payload, each followed by its callbacks' jobs (none when
// payloads is empty), without writing anything.
func (c *Client) prepare(ctx context.Context, task string, payloads [][]byte, defaults, opts []SubmitOption) (*submitConfig, []*spi.Job, error) {
	cfg, err := c.config(defaults, opts)
	if err == nil && cfg.afterCommit != nil && cfg.tx == nil {
		err = invalidArg("WithAfterCommit needs InTx")
	}
	if err == nil {
		err = c.checkUnique(cfg)
	}
	if err == nil {
		err = c.checkDebounce(cfg, len(payloads))
	}
	if err == nil {
		err = c.checkRate(cfg)
	}
	if err == nil {
		err = c.checkSequence(cfg)
	}
	if err == nil && len(cfg.callbacks) > 0 {
		switch {
		case cfg.idempotencyKey != "":
			err = invalidArg("a job with OnSuccess or OnFailure callbacks cannot carry an idempotency key")
		case spi.CapabilitiesOf(c.store).Workflows == nil:
			err = fmt.Errorf("OnSuccess, OnFailure: %w: store %T keeps no workflows", ErrUnsupported, c.store)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("ratchet: submit %q: %w", task, err)
	}
	if len(payloads) == 0 {
		return cfg, nil, nil
	}
	now := c.now()
	jobIDs := make([]uuid.UUID, len(payloads))
	var uniques []*spi.Unique
	if cfg.unique != nil {
		uniques = make([]*spi.Unique, len(payloads))
	}
	var sequences []*spi.Sequence
	if cfg.sequence != nil {
		sequences = make([]*spi.Sequence, len(payloads))
	}
	for i, p := range payloads { // payloads is the caller's own slice, built for this call
		jobIDs[i] = c.ids.next(now)
		if uniques != nil {
			uniques[i] = cfg.unique.uniqueFor(task, p, now)
		}
		if sequences != nil {
			sequences[i] = cfg.sequence.spiSequence(jobIDs[i], p)
		}
		b, err := c.pipe.EncodeBytes(ctx, JobRef(SurfaceTask, jobIDs[i]), task, p)
		if err != nil {
			return nil, nil, err
		}
		payloads[i] = b
	}
	due := cfg.due(now)
	var debounced *spi.Unique
	if cfg.debounce != nil {
		debounced, due = cfg.debounce.uniqueFor(task, now)
	}
	base := template(task, cfg, now, due)
	c.markStartBy(&base)
	if base.Signal, err = c.signalWait(cfg, now); err != nil {
		return nil, nil, fmt.Errorf("ratchet: submit %q: %w", task, err)
	}
	jobs := make([]*spi.Job, 0, len(payloads)*(1+len(cfg.callbacks)))
	var slab []spi.Job
	for i, p := range payloads {
		if len(slab) == 0 {
			slab = make([]spi.Job, min(jobSlab, len(payloads)-i))
		}
		j := &slab[0]
		slab = slab[1:]
		base.CloneInto(j)
		j.ID = jobIDs[i]
		j.Payload = p
		if i == 0 {
			j.IdempotencyKey = cfg.idempotencyKey
		}
		if uniques != nil {
			j.Unique = uniques[i]
		}
		if debounced != nil {
			j.Unique = debounced
		}
		if sequences != nil {
			j.Sequence = sequences[i]
		}
		if err := c.authorize(ctx, SurfaceTask, j, ""); err != nil {
			return nil, nil, fmt.Errorf("ratchet: submit %q: %w", task, err)
		}
		jobs = append(jobs, j)
		if len(cfg.callbacks) > 0 {
			cbs, err := c.callbackJobs(ctx, j, cfg.callbacks, now)
			if err != nil {
				return nil, nil, fmt.Errorf("ratchet: submit %q: %w", task, err)
			}
			jobs = append(jobs, cbs...)
		}
	}
	return cfg, jobs, nil
}

// callbackJobs makes root a workflow of its own with its callbacks as
// children.
func (c *Client) callbackJobs(ctx context.Context, root *spi.Job, cbs []callback, now time.Time) ([]*spi.Job, error) {
	root.WorkflowID, root.Dependents = c.ids.next(now), len(cbs)
	out := make([]*spi.Job, len(cbs))
	for k, cb := range cbs {
		j, err := c.stepJob(ctx, cb.call, SurfaceCallback, nil, now)
		if err != nil {
			return nil, fmt.Errorf("callback %d (task %q): %w", k+1, cb.call.task, err)
		}
		j.WorkflowID = root.WorkflowID
		j.Dependencies = []spi.Dependency{{ParentID: root.ID, Allow: cb.allow | spi.SkipUnlessAllowed}}
		out[k] = j
	}
	return out, nil
}

// config applies a submission's options over its defaults and reports the
// errors they collected.
func (c *Client) config(defaults, opts []SubmitOption) (*submitConfig, error) {
	cfg := &submitConfig{}
	for _, o := range defaults {
		o(cfg)
	}
	for _, o := range opts {
		o(cfg)
	}
	if !cfg.startBy.IsZero() {
		if due := cfg.due(c.now()); cfg.startBy.Before(due) {
			cfg.errs = append(cfg.errs, invalidArg("WithStartBy(%s) is before the job is due (%s): it could never start",
				cfg.startBy.Format(time.RFC3339Nano), due.Format(time.RFC3339Nano)))
		}
	}
	if len(cfg.properties) > 0 && spi.CapabilitiesOf(c.store).Properties == nil {
		cfg.errs = append(cfg.errs, fmt.Errorf("WithProperty: %w: store %T keeps no job properties", ErrUnsupported, c.store))
	}
	return cfg, errors.Join(cfg.errs...)
}

// markStartBy gives j, when it has a start-by deadline and the store a
// start-by sweeper, the property that the sweeper reads
// (spi.StartByProperty): the deadline of its first run.
func (c *Client) markStartBy(j *spi.Job) {
	by, ok := spi.StartBy(j)
	if !ok || spi.CapabilitiesOf(c.store).StartBy == nil {
		return
	}
	props := make(map[string]string, len(j.Properties)+1)
	maps.Copy(props, j.Properties)
	props[spi.StartByProperty] = spi.FormatStartBy(by)
	j.Properties = props
}

// due is when a job submitted at now with cfg is due.
func (cfg *submitConfig) due(now time.Time) time.Time {
	if !cfg.at.IsZero() {
		return cfg.at.UTC().Truncate(time.Microsecond)
	}
	return now.Add(cfg.delay)
}

// storeInsert is the store's insert, naming the client's node (if any) as
// the insert's source: the end of the insert middleware's chain.
func (c *Client) storeInsert() InsertFunc {
	o := spi.InsertOptions{Source: c.source}
	return func(ctx context.Context, jobs []*Job) ([]spi.InsertResult, error) {
		return c.store.InsertJobs(ctx, jobs, o)
	}
}

// insert writes jobs in one insert through the store (or cfg's
// transaction) and the insert middleware, wakes the nodes when it wrote
// any, and returns the ids the insert answered. what names the submission
// in errors.
func (c *Client) insert(ctx context.Context, cfg *submitConfig, what string, jobs []*spi.Job) ([]uuid.UUID, error) {
	// A node ignores wakeups that name it, since it has woken itself. A
	// transactional write has not (its wakeup waits for the commit), so it
	// names no source and its commit's wakeup reaches this node too.
	insert := c.storeInsert()
	if cfg.tx != nil {
		txs := spi.CapabilitiesOf(c.store).Tx
		if txs == nil {
			return nil, invalidArg("store %T cannot join an application transaction", c.store)
		}
		insert = func(ctx context.Context, jobs []*Job) ([]spi.InsertResult, error) {
			return txs.InsertJobsTx(ctx, cfg.tx, jobs, spi.InsertOptions{})
		}
	}
	if len(c.inserts) > 0 {
		insert = ChainInsert(insert, c.inserts...)
	}
	res, err := insert(ctx, jobs)
	if err == nil && len(res) != len(jobs) {
		err = fmt.Errorf("the insert answered %d results for %d jobs", len(res), len(jobs))
	}
	if err != nil {
		return nil, fmt.Errorf("ratchet: submit %q: %w", what, err)
	}
	ids := make([]uuid.UUID, len(res))
	wrote := false
	top := PriorityLowest
	sm := c.signalMetrics
	for i, r := range res {
		ids[i] = r.ID
		if r.Duplicate && c.joinMetrics != nil {
			c.joinMetrics.SubmissionJoined(ctx, jobs[i].TaskName, spi.JoinReason(jobs[i]))
		}
		if !r.Duplicate {
			wrote = true
			top = max(top, jobs[i].Priority)
			if sm != nil && jobs[i].Signal != nil {
				sm.SignalWaiting(ctx, r.ID, jobs[i].TaskName, jobs[i].Signal.Name)
			}
		}
	}
	if wrote && c.notifier != nil {
		c.wake(top, cfg.afterCommit, cfg.tx != nil)
	}
	return ids, nil
}

// template is the job that a submission's options describe, due at due:
// everything but its id, payload and idempotency key.
func template(task string, cfg *submitConfig, now, due time.Time) spi.Job {
	base := spi.Job{
		TaskName:      task,
		Status:        spi.StatusPending,
		Priority:      PriorityNormal,
		ScheduledAt:   due,
		CreatedAt:     now,
		MaxRetries:    DefaultMaxRetries,
		Backoff:       DefaultBackoff,
		BackoffParam:  DefaultBackoffBase,
		Params:        cfg.params,
		Properties:    cfg.properties,
		Resource:      cfg.resource,
		ResourceLimit: cfg.resourceLimit,
	}
	if cfg.priority != nil {
		base.Priority = *cfg.priority
	}
	if cfg.maxRetries != nil {
		base.MaxRetries = *cfg.maxRetries
	}
	if cfg.backoff != "" {
		base.Backoff, base.BackoffParam = cfg.backoff, *cfg.backoffBase
	}
	if len(cfg.tags) > 0 {
		tags := slices.Clone(cfg.tags)
		slices.Sort(tags)
		base.Tags = slices.Compact(tags)
	}
	return base
}

// wake tells the notifier about new work: at once for a plain write; after
// the commit for a transactional one, when a registrar was given.
func (c *Client) wake(p Priority, after AfterCommitRegistrar, inTx bool) {
	notify := func() { c.notifier.NotifyNewWork(p) }
	switch {
	case !inTx:
		notify()
	case after == nil:
		// No way to see the commit: the store's own wakeup or the next poll.
	default:
		switch r := after.RegisterAfterCommit(notify); r {
		case AfterCommitRegistered, AfterCommitRollbackOnly:
		case AfterCommitNoTransaction:
			notify()
		default:
			c.log.Warn("ratchet: the submission's wakeup could not be registered to run after the commit; the job starts at the next poll",
				"result", r.String())
		}
	}
}

// GetJob returns the job with the given id, or an error wrapping
// ErrNotFound.
func (c *Client) GetJob(ctx context.Context, id uuid.UUID) (*Job, error) {
	j, err := c.store.GetJob(ctx, id)
	if errors.Is(err, ErrNotFound) {
		if a := spi.CapabilitiesOf(c.store).Archive; a != nil {
			if aj, aerr := a.GetArchivedJob(ctx, id); aerr == nil {
				return aj, nil
			}
		}
	}
	return j, err
}

// ListOptions select a page of jobs.
type ListOptions struct {
	// Status filters by state; empty lists all.
	Status Status
	// After is the cursor from the previous page's Next; zero starts over.
	After uuid.UUID
	// Limit is the page size; zero means 100, at most 10,000.
	Limit int
	// Task filters by task name; empty lists every task.
	Task string
	// CreatedFrom (inclusive) and CreatedBefore (exclusive) bound the
	// creation time; zero is no bound.
	CreatedFrom, CreatedBefore time.Time
	// PropertyKey, when set, lists only jobs whose property of that key is
	// PropertyValue; a store without job properties gives an error wrapping
	// ErrUnsupported.
	PropertyKey, PropertyValue string
	// WorkflowID, when set, lists only the jobs of that workflow.
	WorkflowID uuid.UUID
	// Tag, when set, lists only jobs carrying that tag.
	Tag string
	// Priorities, when not empty, lists only jobs of one of them.
	Priorities []Priority
	// ErrorContains, when set, lists only jobs whose last error contains
	// it, ignoring case (with CreatedFrom and CreatedBefore: "timeout" in
	// the last hour).
	ErrorContains string
	// Due, when set, lists only jobs due now (DueNow: scheduled at or
	// before the client's clock at the call) or only jobs scheduled
	// later (DueLater); with Status PENDING it splits the waiting jobs
	// from those that wait for their time.
	Due DueFilter
	// IncludeArchived lists the archived jobs too, merged in id order
	// (stores with an archive, spi.JobArchiver; elsewhere it changes
	// nothing). CountJobs counts live jobs only.
	IncludeArchived bool
}

// DueFilter selects jobs by their scheduled time against the client's
// clock (ListOptions.Due). Its zero value selects every job.
type DueFilter string

// The due filters.
const (
	// DueNow: jobs scheduled at or before now.
	DueNow DueFilter = "now"
	// DueLater: jobs scheduled after now.
	DueLater DueFilter = "later"
)

// JobPage is one page of a listing. Next is the cursor of the following
// page, or the zero UUID when this page is the last.
type JobPage struct {
	Jobs []*Job
	Next uuid.UUID
}

// ListJobs returns one page of jobs ordered by id (which is creation
// order), filtered by status, task, creation time and property; page on
// with JobPage.Next as ListOptions.After (keyset paging: a page costs the
// same however deep it is).
func (c *Client) ListJobs(ctx context.Context, o ListOptions) (JobPage, error) {
	p, err := c.listParams(o)
	if err != nil {
		return JobPage{}, err
	}
	if p.Limit < 0 || p.Limit > 10000 {
		return JobPage{}, invalidArg("page limit %d out of range 0..10000", p.Limit)
	}
	if p.Limit == 0 {
		p.Limit = 100
	}
	jobs, next, err := c.store.ListJobs(ctx, p)
	if err != nil {
		return JobPage{}, err
	}
	if a := spi.CapabilitiesOf(c.store).Archive; o.IncludeArchived && a != nil {
		old, oldNext, err := a.ListArchivedJobs(ctx, p)
		if err != nil {
			return JobPage{}, err
		}
		return mergePages(jobs, next, old, oldNext, p.Limit), nil
	}
	return JobPage{Jobs: jobs, Next: next}, nil
}

// mergePages merges two pages of the same listing (live and archived jobs,
// each in id order, each at most limit long) into its first limit jobs.
func mergePages(a []*Job, aNext uuid.UUID, b []*Job, bNext uuid.UUID, limit int) JobPage {
	out := make([]*Job, 0, min(limit, len(a)+len(b)))
	i, k := 0, 0
	for len(out) < limit && (i < len(a) || k < len(b)) {
		if k == len(b) || (i < len(a) && bytes.Compare(a[i].ID[:], b[k].ID[:]) < 0) {
			out, i = append(out, a[i]), i+1
		} else {
			out, k = append(out, b[k]), k+1
		}
	}
	var next uuid.UUID
	if i < len(a) || k < len(b) || aNext != uuid.Nil || bNext != uuid.Nil {
		next = out[len(out)-1].ID
	}
	return JobPage{Jobs: out, Next: next}
}

// DefaultCountCap is CountJobs' cap when none is given.
const DefaultCountCap = 10000

// CountJobs counts the jobs that ListJobs would list with the same options
// (from o.After on; o.Limit is ignored), reading at most upTo+1 of them
// (DefaultCountCap when upTo is zero or less): it returns upTo and
// capped = true when there are more. A store without spi.JobCounter gives
// an error wrapping ErrUnsupported.
func (c *Client) CountJobs(ctx context.Context, o ListOptions, upTo int) (n int, capped bool, err error) {
	p, err := c.listParams(o)
	if err != nil {
		return 0, false, err
	}
	counter := spi.CapabilitiesOf(c.store).Counter
	if counter == nil {
		return 0, false, fmt.Errorf("ratchet: count jobs: %w (%T)", ErrUnsupported, c.store)
	}
	if upTo <= 0 {
		upTo = DefaultCountCap
	}
	n, err = counter.CountJobs(ctx, p, upTo+1)
	if err != nil {
		return 0, false, err
	}
	if n > upTo {
		return upTo, true, nil
	}
	return n, false, nil
}

// listParams checks o's filters and turns them into the store's.
func (c *Client) listParams(o ListOptions) (spi.ListParams, error) {
	p := spi.ListParams{Status: o.Status, After: o.After, Limit: o.Limit,
		TaskName: o.Task, CreatedFrom: o.CreatedFrom, CreatedBefore: o.CreatedBefore,
		PropertyKey: o.PropertyKey, PropertyValue: o.PropertyValue, WorkflowID: o.WorkflowID,
		Tag: o.Tag, Priorities: o.Priorities, ErrorContains: o.ErrorContains}
	switch o.Due {
	case "":
	case DueNow:
		p.DueBy = c.now()
	case DueLater:
		p.DueAfter = c.now()
	default:
		return p, invalidArg("unknown due filter %q: want %q or %q", o.Due, DueNow, DueLater)
	}
	for _, pr := range o.Priorities {
		if !pr.Valid() {
			return p, invalidArg("unknown priority %d", int(pr))
		}
	}
	switch {
	case len(o.ErrorContains) > DefaultMaxErrorLength:
		return p, invalidArg("ErrorContains is %d bytes, over the %d of a stored error", len(o.ErrorContains), DefaultMaxErrorLength)
	case o.Status != "" && !o.Status.Valid():
		return p, invalidArg("unknown status %q", o.Status)
	case !o.CreatedFrom.IsZero() && !o.CreatedBefore.IsZero() && !o.CreatedFrom.Before(o.CreatedBefore):
		return p, invalidArg("empty creation range: CreatedFrom %s is not before CreatedBefore %s", o.CreatedFrom, o.CreatedBefore)
	case o.PropertyKey != "" && spi.CapabilitiesOf(c.store).Properties == nil:
		return p, fmt.Errorf("ratchet: list jobs by property %q: %w (%T)", o.PropertyKey, ErrUnsupported, c.store)
	}
	return p, nil
}

// DeleteJobs deletes finished jobs for good (SUCCEEDED, FAILED,
// CANCELLED, SKIPPED), with their tags, properties, state and log, and
// reports for each id whether it deleted it: not a job that is running or
// waiting, a parent whose dependents have not all finished, a child of a
// batch that has not ended, an unknown or an archived job (false). A
// store without spi.JobDeleter gives an error wrapping ErrUnsupported.
func (c *Client) DeleteJobs(ctx context.Context, ids []uuid.UUID) ([]bool, error) {
	d := spi.CapabilitiesOf(c.store).Deleter
	if d == nil {
		return nil, fmt.Errorf("ratchet: delete jobs: %w (%T)", ErrUnsupported, c.store)
	}
	return d.DeleteJobs(ctx, ids)
}

// RetryJob moves a FAILED job out of the dead-letter queue: status PENDING,
// error cleared, attempts and crash count reset, due now.
func (c *Client) RetryJob(ctx context.Context, id uuid.UUID) error {
	if err := c.store.RetryFailedJob(ctx, id, c.now()); err != nil {
		return err
	}
	if c.notifier != nil {
		if j, err := c.store.GetJob(ctx, id); err == nil {
			c.notifier.NotifyNewWork(j.Priority)
		}
	}
	return nil
}

// CancelJob cancels a job that has not finished: a PENDING job, a BLOCKED
// workflow job, a job WAITING for a signal (its wait ends CANCELLED), or a
// RUNNING job. Its dependents then follow their cancel policy, as for a
// parent that was cancelled. A finished job gives an error wrapping
// ErrInvalidState.
//
// A RUNNING job is CANCELLED at once, in one write that ends its claim:
// the completion its body writes later is superseded and changes nothing,
// and its permit is free. The body's context is cancelled on its node
// within about a second where the store carries wakeups (PostgreSQL's
// LISTEN, engines sharing a memory store) or the engine runs in this
// client's process, and otherwise at the node's next heartbeat
// (HeartbeatInterval, 10 s by default). A body that ignores its context
// keeps its slot until it returns.
func (c *Client) CancelJob(ctx context.Context, id uuid.UUID) error {
	sm := c.signalMetrics
	var waiting *spi.Job
	if sm != nil {
		if j, err := c.store.GetJob(ctx, id); err == nil && j.Status == spi.StatusWaiting && j.Signal != nil {
			waiting = j
		}
	}
	if err := c.store.CancelJob(ctx, id, c.now()); err != nil {
		return err
	}
	c.claimsChanged(ctx)
	if waiting != nil {
		sm.SignalCancelled(ctx, id, waiting.TaskName, waiting.Signal.Name)
	}
	return nil
}

// claimsChanged tells a notifier that checks claims that a cancel may have
// ended some.
func (c *Client) claimsChanged(ctx context.Context) {
	if n, ok := c.notifier.(ClaimsNotifier); ok {
		n.ClaimsChanged(ctx)
	}
}

func (c *Client) now() time.Time { return c.clock.Now().UTC().Truncate(time.Microsecond) }
