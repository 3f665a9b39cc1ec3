package ratchet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Call is one invocation of a task with its arguments, not yet submitted:
// a step of a workflow or a callback. Create it with Task.With.
type Call struct {
	task     string
	args     any
	raw      []byte // already serialized (SubmitRaw's and Submit's own jobs); nil when args holds them
	isRaw    bool
	defaults []SubmitOption // the task's own defaults
	opts     []SubmitOption
	err      error
}

// With returns the call of t with args and opts (which override t's own
// defaults and the workflow's): a step for Workflow.Add or Step.Then, or a
// callback for OnSuccess and OnFailure.
func (t *Task[A, R]) With(args A, opts ...SubmitOption) Call {
	c := Call{args: args, opts: opts, err: t.Validate()}
	if t != nil {
		c.task, c.defaults = t.name, t.defaults
	}
	return c
}

// Task returns the name of the call's task.
func (c Call) Task() string { return c.task }

// ConditionDefinition is what an engine needs to evaluate a workflow
// condition by name (the spec's WorkflowCondition): conditions are
// registered with the engine like tasks, so that a stored condition name
// is never resolved to arbitrary code. [Condition] is the implementation
// users create.
type ConditionDefinition interface {
	// Name is the condition's stable name, stored on the dependency.
	Name() string
	// Evaluate reports whether the child may run, given its parent (as it
	// finished) and the condition's arguments, serialized with ser (nil
	// when the step gave none). A parent's result or arguments that do not
	// decode give an error wrapped in DoNotRetry.
	Evaluate(ctx context.Context, parent Parent, args []byte, ser spi.PayloadSerializer) (bool, error)
}

// Condition is a typed workflow condition: a predicate over a parent's
// result R, with arguments A given where the workflow uses it. Create it
// with NewCondition, register it with the engine (engine.Options.Client.Conditions)
// and use it with When.
type Condition[R, A any] struct {
	name string
	fn   func(ctx context.Context, result R, args A) (bool, error)
}

// NewCondition defines a workflow condition. name must be stable across
// deployments: it is what stored dependencies refer to. fn gets the
// parent's result (the zero R when the parent did not succeed, or returned
// nothing) and the arguments of the dependency; an error from fn fails the
// child through its retry policy.
func NewCondition[R, A any](name string, fn func(ctx context.Context, result R, args A) (bool, error)) *Condition[R, A] {
	return &Condition[R, A]{name: name, fn: fn}
}

// Name returns the condition's name.
func (c *Condition[R, A]) Name() string { return c.name }

// Validate reports a condition that cannot be registered or used: nil, an
// empty name or a nil function.
func (c *Condition[R, A]) Validate() error {
	switch {
	case c == nil:
		return invalidArg("nil workflow condition")
	case c.name == "":
		return invalidArg("workflow condition has an empty name")
	case c.fn == nil:
		return invalidArg("workflow condition %q has a nil function", c.name)
	}
	return nil
}

// Evaluate implements ConditionDefinition.
func (c *Condition[R, A]) Evaluate(ctx context.Context, parent Parent, args []byte, ser spi.PayloadSerializer) (bool, error) {
	var a A
	if args != nil {
		if err := ser.Unmarshal(args, &a); err != nil {
			return false, DoNotRetry(fmt.Errorf("ratchet: workflow condition %q: decode its arguments: %w", c.name, err))
		}
	}
	var r R
	if parent.Status == StatusSucceeded && parent.Result != nil {
		if err := parent.Decode(&r); err != nil {
			return false, DoNotRetry(fmt.Errorf("ratchet: workflow condition %q: %w", c.name, err))
		}
	}
	return c.fn(ctx, r, a)
}

// With returns the use of the condition with args, for When.
func (c *Condition[R, A]) With(args A) ConditionCall {
	cc := ConditionCall{args: args, err: c.Validate()}
	if c != nil {
		cc.name = c.name
	}
	return cc
}

// ConditionCall is a condition with its arguments, for When. Create it
// with Condition.With.
type ConditionCall struct {
	name string
	args any
	err  error
}

// Parent is a finished dependency of a workflow job, as its body, its
// conditions and its argument resolver see it.
type Parent struct {
	ID     uuid.UUID
	Task   string
	Status Status
	// LastError is why the parent failed, was skipped or was cancelled
	// (empty when it succeeded or no longer exists): what a failure
	// callback reports.
	LastError string
	// Result is the parent's serialized result, the codecs already
	// undone; nil when it has none (it did not succeed, returned nothing,
	// or no longer exists).
	Result []byte
	ser    spi.PayloadSerializer
}

// Decode deserializes the parent's result into v. A parent without a
// result gives an error wrapping ErrNotFound.
func (p Parent) Decode(v any) error {
	if p.Result == nil {
		return fmt.Errorf("ratchet: job %s (%s) has no result: %w", p.ID, p.Status, ErrNotFound)
	}
	ser := p.ser
	if ser == nil {
		ser = JSONSerializer{}
	}
	if err := ser.Unmarshal(p.Result, v); err != nil {
		return fmt.Errorf("ratchet: decode the result of job %s (task %q): %w", p.ID, p.Task, err)
	}
	return nil
}

// ParentResult decodes p's result as an R.
func ParentResult[R any](p Parent) (R, error) {
	var r R
	err := p.Decode(&r)
	return r, err
}

// EdgeOption sets one option of a dependency (Step.AfterWith).
type EdgeOption func(*edge)

// edge is one dependency of a step on a step earlier in the graph.
type edge struct {
	parent *Step
	allow  spi.Allow
	cond   ConditionCall
}

// RunIfFailed lets the child run when its parent FAILED too (River Pro's
// ignore-discarded): by default a failed parent cancels it. A parent that
// succeeded always lets it run.
func RunIfFailed() EdgeOption { return func(e *edge) { e.allow |= spi.AllowFailed } }

// RunIfCancelled lets the child run when its parent was CANCELLED (River
// Pro's ignore-cancelled): by default it cancels the child.
func RunIfCancelled() EdgeOption { return func(e *edge) { e.allow |= spi.AllowCancelled } }

// RunIfSkipped lets the child run when its parent was SKIPPED: by default
// a skip propagates.
func RunIfSkipped() EdgeOption { return func(e *edge) { e.allow |= spi.AllowSkipped } }

// When makes the child run only if cond holds over the parent's result (a
// conditional branch): when it does not, the child ends SKIPPED and its
// own dependents follow the skip (they are skipped unless they allow it).
// The condition must be registered with the engines that run the child.
func When(cond ConditionCall) EdgeOption { return func(e *edge) { e.cond = cond } }

// Step is one job of a workflow: a task call and its dependencies. Create
// it with Workflow.Add, Step.Then, Step.OnSuccess or Step.OnFailure.
type Step struct {
	wf      *Workflow
	idx     int
	call    Call
	surface Surface
	edges   []edge
	id      uuid.UUID // set by SubmitWorkflow
}

// ID returns the job id of the step, once its workflow was submitted (the
// zero UUID before).
func (s *Step) ID() uuid.UUID { return s.id }

// String names the step in errors: its position and task.
func (s *Step) String() string { return fmt.Sprintf("step %d (task %q)", s.idx+1, s.call.task) }

// After makes s wait for each of parents, which must succeed for s to
// run (see AfterWith for other rules). It returns s.
func (s *Step) After(parents ...*Step) *Step {
	for _, p := range parents {
		s.AfterWith(p)
	}
	return s
}

// AfterWith makes s wait for parent, with options: RunIfFailed,
// RunIfCancelled, RunIfSkipped, When. It returns s.
func (s *Step) AfterWith(parent *Step, opts ...EdgeOption) *Step {
	e := edge{parent: parent, allow: spi.AllowSucceeded}
	for _, o := range opts {
		if o == nil {
			s.wf.errs = append(s.wf.errs, invalidArg("%s: nil edge option", s))
			continue
		}
		o(&e)
	}
	switch {
	case parent == nil:
		s.wf.errs = append(s.wf.errs, invalidArg("%s: depends on a nil step", s))
		return s
	case parent.wf != s.wf:
		s.wf.errs = append(s.wf.errs, invalidArg("%s: depends on %s of another workflow", s, parent))
		return s
	}
	s.edges = append(s.edges, e)
	return s
}

// StepNameProperty is the job property that holds a workflow step's name
// (Step.Named): the dashboard labels the step's node in the workflow's
// graph with it.
const StepNameProperty = "ratchet.step"

// Named names step s, for people: the dashboard's workflow graph labels
// its node with the name instead of its task's ("fetch invoices", not
// "http.get #3"). The name is the job's property StepNameProperty, so it
// needs a store that keeps job properties (every store of this module);
// the limits of properties apply. It returns s.
func (s *Step) Named(name string) *Step {
	s.call.opts = append(s.call.opts, WithProperty(StepNameProperty, name))
	return s
}

// Then adds the step c, which runs after s succeeds (a chain), and returns
// it.
func (s *Step) Then(c Call) *Step { return s.wf.Add(c).After(s) }

// OnSuccess adds the callback c, which runs once s has SUCCEEDED and is
// SKIPPED otherwise (never cancelled), and returns the callback's step,
// not s: s.OnSuccess(a).OnFailure(b) makes b a failure callback of a; give
// s both with two calls on s. Its payload is measured on its own against
// the payload limit (surface "callback").
func (s *Step) OnSuccess(c Call) *Step {
	return s.callback(c, spi.AllowSucceeded)
}

// OnFailure adds the callback c, which runs once s has FAILED for good
// (retries exhausted, DoNotRetry, or the crash budget spent) and is
// SKIPPED otherwise, and returns the callback's step (not s, as
// OnSuccess). Its payload is measured on its own (surface "callback").
func (s *Step) OnFailure(c Call) *Step {
	return s.callback(c, spi.AllowFailed)
}

func (s *Step) callback(c Call, allow spi.Allow) *Step {
	cb := s.wf.Add(c)
	cb.surface = SurfaceCallback
	cb.edges = append(cb.edges, edge{parent: s, allow: allow | spi.SkipUnlessAllowed})
	return cb
}

// Workflow is a graph of steps submitted as one unit (Client.SubmitWorkflow):
// chains, DAGs with joins, conditional branches and callbacks. A step runs
// once every step it depends on has finished in a state its dependency
// allows. Build it on one goroutine; the zero value is not ready, create it
// with NewWorkflow.
type Workflow struct {
	opts  []SubmitOption
	steps []*Step
	errs  []error
	id    uuid.UUID
}

// NewWorkflow returns an empty workflow; opts are defaults for every step
// (a task's own defaults come first, a step's own options win). The
// options that concern the whole submission (InTx, WithAfterCommit) go to
// SubmitWorkflow; an idempotency key cannot be given to workflow steps.
func NewWorkflow(opts ...SubmitOption) *Workflow { return &Workflow{opts: opts} }

// Add adds the step c, with no dependencies yet, and returns it.
func (w *Workflow) Add(c Call) *Step {
	s := &Step{wf: w, idx: len(w.steps), call: c, surface: SurfaceTask}
	w.steps = append(w.steps, s)
	return s
}

// Steps returns the workflow's steps in the order they were added.
func (w *Workflow) Steps() []*Step { return slices.Clone(w.steps) }

// ID returns the workflow's id once it was submitted (the zero UUID
// before).
func (w *Workflow) ID() uuid.UUID { return w.id }

// order returns the steps with every parent before its children (stable:
// in the order they were added where the graph allows), or an error naming
// the steps of a cycle.
func (w *Workflow) order() ([]*Step, error) {
	indeg := make([]int, len(w.steps))
	children := make([][]int, len(w.steps))
	for _, s := range w.steps {
		seen := map[*Step]bool{}
		for _, e := range s.edges {
			if seen[e.parent] {
				return nil, invalidArg("%s depends on %s twice", s, e.parent)
			}
			if e.parent == s {
				return nil, invalidArg("%s depends on itself", s)
			}
			seen[e.parent] = true
			indeg[s.idx]++
			children[e.parent.idx] = append(children[e.parent.idx], s.idx)
		}
	}
	var ready []int
	for i, d := range indeg {
		if d == 0 {
			ready = append(ready, i)
		}
	}
	out := make([]*Step, 0, len(w.steps))
	for len(ready) > 0 {
		i := ready[0]
		ready = ready[1:]
		out = append(out, w.steps[i])
		for _, c := range children[i] {
			if indeg[c]--; indeg[c] == 0 {
				ready = append(ready, c)
			}
		}
	}
	if len(out) < len(w.steps) {
		return nil, invalidArg("workflow has a cycle: %s", w.cycle(indeg))
	}
	return out, nil
}

// cycle names the steps of one cycle among those order could not place
// (indeg > 0).
func (w *Workflow) cycle(indeg []int) string {
	start := -1
	for i, d := range indeg {
		if d > 0 {
			start = i
			break
		}
	}
	// Walk parents that are also unplaced: every unplaced step has one, so
	// the walk revisits a step, and from there it goes around a cycle.
	at := map[int]int{}
	var path []int
	for i := start; ; {
		if k, ok := at[i]; ok {
			path = append(path[k:], i)
			break
		}
		at[i] = len(path)
		path = append(path, i)
		for _, e := range w.steps[i].edges {
			if indeg[e.parent.idx] > 0 {
				i = e.parent.idx
				break
			}
		}
	}
	names := make([]string, len(path))
	for k := range path { // path runs child → parent; print parent → child
		names[k] = w.steps[path[len(path)-1-k]].String()
	}
	return strings.Join(names, " → ")
}

// SubmitWorkflow writes every step of w as one unit, all or nothing (also
// with InTx), and returns the workflow's id. The steps without
// dependencies are due at once (or as their options say); the others wait
// BLOCKED until their dependencies have finished. opts are options of the
// whole submission: InTx and WithAfterCommit.
//
// Nothing is written when w has a cycle, a step depends on a step of
// another workflow or on one twice, a step's options are invalid or carry
// an idempotency key, a payload is over its limit (each step's arguments,
// callback and condition arguments are measured on their own), a task is
// unknown to a client with ClientOptions.Tasks, or the store keeps no
// workflows (ErrUnsupported). A workflow is submitted once.
func (c *Client) SubmitWorkflow(ctx context.Context, w *Workflow, opts ...SubmitOption) (uuid.UUID, error) {
	fail := func(err error) (uuid.UUID, error) { return uuid.Nil, fmt.Errorf("ratchet: submit workflow: %w", err) }
	switch {
	case w == nil:
		return fail(invalidArg("nil workflow"))
	case len(w.steps) == 0:
		return fail(invalidArg("empty workflow"))
	case w.id != uuid.Nil:
		return fail(invalidArg("workflow %s was already submitted", w.id))
	case spi.CapabilitiesOf(c.store).Workflows == nil:
		return fail(fmt.Errorf("%w: store %T keeps no workflows", ErrUnsupported, c.store))
	}
	if err := errors.Join(w.errs...); err != nil {
		return fail(err)
	}
	var whole submitConfig
	for _, o := range opts {
		o(&whole)
	}
	if err := whole.submissionOnly(); err != nil {
		return fail(err)
	}
	steps, err := w.order()
	if err != nil {
		return fail(err)
	}
	now := c.now()
	wfID := c.ids.next(now)
	jobs := make([]*spi.Job, 0, len(steps))
	ids := make(map[*Step]uuid.UUID, len(steps))
	for _, s := range steps {
		j, err := c.stepJob(ctx, s.call, s.surface, w.opts, now)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", s, err))
		}
		ids[s] = j.ID
		j.WorkflowID = wfID
		for _, e := range s.edges {
			d := spi.Dependency{ParentID: ids[e.parent], Allow: e.allow}
			if e.cond.name != "" || e.cond.err != nil {
				if e.cond.err != nil {
					return fail(fmt.Errorf("%s: %w", s, e.cond.err))
				}
				if c.conds != nil && !c.conds[e.cond.name] {
					return fail(invalidArg("%s: workflow condition %q is not registered (ClientOptions.Conditions)", s, e.cond.name))
				}
				d.Condition = e.cond.name
				if d.ConditionArgs, err = c.pipe.Encode(ctx, JobRef(SurfaceBranch, j.ID), s.call.task, e.cond.args); err != nil {
					return fail(fmt.Errorf("%s: condition %q: %w", s, e.cond.name, err))
				}
			}
			j.Dependencies = append(j.Dependencies, d)
		}
		jobs = append(jobs, j)
	}
	byID := make(map[uuid.UUID]*spi.Job, len(jobs))
	for _, j := range jobs {
		byID[j.ID] = j
		for _, d := range j.Dependencies {
			byID[d.ParentID].Dependents++
		}
	}
	if _, err := c.insert(ctx, &whole, "workflow", jobs); err != nil {
		return uuid.Nil, err
	}
	w.id = wfID
	for _, s := range steps {
		s.id = ids[s]
	}
	return wfID, nil
}

// submissionOnly reports options that a workflow's whole submission cannot
// take: only InTx and WithAfterCommit concern it.
func (cfg *submitConfig) submissionOnly() error {
	if err := errors.Join(cfg.errs...); err != nil {
		return err
	}
	if cfg.afterCommit != nil && cfg.tx == nil {
		return invalidArg("WithAfterCommit needs InTx")
	}
	rest := *cfg
	rest.tx, rest.afterCommit = nil, nil
	if !rest.empty() {
		return invalidArg("SubmitWorkflow takes only InTx and WithAfterCommit; give the steps' options to NewWorkflow or to the steps")
	}
	return nil
}

// empty reports whether no option was set.
func (cfg *submitConfig) empty() bool {
	return cfg.delay == 0 && cfg.at.IsZero() && cfg.maxRetries == nil && cfg.backoff == "" && cfg.priority == nil &&
		len(cfg.tags) == 0 && len(cfg.params) == 0 && len(cfg.properties) == 0 && cfg.idempotencyKey == "" && cfg.unique == nil && cfg.debounce == nil && cfg.sequence == nil &&
		cfg.resource == "" && cfg.tx == nil && cfg.afterCommit == nil && len(cfg.callbacks) == 0
}

// stepJob builds the job of one workflow step (or callback): its options
// (the task's defaults, then wf's, then its own), its payload through the
// pipeline on surface s.
func (c *Client) stepJob(ctx context.Context, call Call, s Surface, wf []SubmitOption, now time.Time) (*spi.Job, error) {
	if call.err != nil {
		return nil, call.err
	}
	if c.tasks != nil && !c.tasks[call.task] {
		return nil, &UnknownTaskError{Name: call.task}
	}
	cfg, err := c.config(slices.Concat(call.defaults, wf), call.opts)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.tx != nil || cfg.afterCommit != nil:
		return nil, invalidArg("InTx and WithAfterCommit go to SubmitWorkflow, not to a step")
	case cfg.idempotencyKey != "":
		return nil, invalidArg("a workflow step cannot carry an idempotency key")
	case cfg.unique != nil || cfg.debounce != nil:
		return nil, invalidArg("a workflow step, batch child or callback cannot be unique or debounced (WithUnique, WithDebounce)")
	case cfg.sequence != nil:
		return nil, invalidArg("a workflow step, batch child or callback cannot have %s: its workflow orders it", cfg.sequence.option())
	case len(cfg.callbacks) > 0:
		return nil, invalidArg("OnSuccess and OnFailure options go to Submit; in a workflow use Step.OnSuccess and Step.OnFailure")
	case cfg.signal != "" || cfg.signalKey != "":
		return nil, invalidArg("AwaitSignal goes to Submit: a workflow step or callback cannot wait for a signal")
	}
	if err := c.checkRate(cfg); err != nil {
		return nil, err
	}
	id := c.ids.next(now)
	var payload []byte
	if call.isRaw {
		payload, err = c.pipe.EncodeBytes(ctx, JobRef(s, id), call.task, call.raw)
	} else {
		payload, err = c.pipe.Encode(ctx, JobRef(s, id), call.task, call.args)
	}
	if err != nil {
		return nil, err
	}
	base := template(call.task, cfg, now, cfg.due(now))
	c.markStartBy(&base)
	j := base.Clone()
	j.ID = id
	j.Payload = payload
	if s == SurfaceCallback {
		if j.Params == nil {
			j.Params = map[string]string{}
		}
		j.Params[spi.CallbackParam] = "1"
	}
	if err := c.authorize(ctx, s, j, ""); err != nil {
		return nil, err
	}
	return j, nil
}

// Parents returns the dependencies of job id as they finished, in the
// order they were declared, with their results (live or archived): what a
// workflow job's conditions and argument resolver read. A job without
// dependencies has none; a store without workflows gives ErrUnsupported.
func (c *Client) Parents(ctx context.Context, id uuid.UUID) ([]Parent, error) {
	ws := spi.CapabilitiesOf(c.store).Workflows
	if ws == nil {
		return nil, fmt.Errorf("ratchet: parents of job %s: %w: store %T keeps no workflows", id, ErrUnsupported, c.store)
	}
	deps, err := ws.Dependencies(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("ratchet: parents of job %s: %w", id, err)
	}
	out := make([]Parent, len(deps))
	for i, d := range deps {
		p := Parent{ID: d.ParentID, Status: d.ParentStatus, ser: c.pipe.Serializer()}
		j, err := c.GetJob(ctx, d.ParentID)
		switch {
		case errors.Is(err, ErrNotFound): // gone: no task, no result
		case err != nil:
			return nil, fmt.Errorf("ratchet: parents of job %s: %w", id, err)
		default:
			p.Task = j.TaskName
			if j.Status.Terminal() {
				p.Status, p.LastError = j.Status, j.LastError
			}
			if j.Result != nil {
				if p.Result, err = c.pipe.DecodeBytes(ctx, JobRef(SurfaceResult, d.ParentID), j.Result); err != nil {
					return nil, fmt.Errorf("ratchet: parents of job %s: the result of %s: %w", id, d.ParentID, err)
				}
			}
		}
		out[i] = p
	}
	return out, nil
}

// WorkflowStatus is a workflow's jobs and what they add up to.
type WorkflowStatus struct {
	ID uuid.UUID
	// Jobs are the workflow's jobs in id order (the order of submission,
	// parents first), live and archived.
	Jobs []*Job
	// Counts counts the jobs by status.
	Counts map[Status]int
	// Done is true when every job has finished.
	Done bool

	byID map[uuid.UUID]*Job // filled by Client.Workflow
}

// Job returns the job of step s (which must be of this workflow), or nil.
func (ws *WorkflowStatus) Job(s *Step) *Job {
	if ws.byID != nil {
		return ws.byID[s.ID()]
	}
	for _, j := range ws.Jobs {
		if j.ID == s.ID() {
			return j
		}
	}
	return nil
}

// Workflow returns the status of workflow id: every job of it, live and
// archived, with their states and results (decode a result with
// Task.Result). An unknown id wraps ErrNotFound.
func (c *Client) Workflow(ctx context.Context, id uuid.UUID) (*WorkflowStatus, error) {
	if spi.CapabilitiesOf(c.store).Workflows == nil {
		return nil, fmt.Errorf("ratchet: workflow %s: %w: store %T keeps no workflows", id, ErrUnsupported, c.store)
	}
	if id == uuid.Nil {
		return nil, invalidArg("workflow: the zero id")
	}
	ws := &WorkflowStatus{ID: id, Counts: map[Status]int{}, Done: true, byID: map[uuid.UUID]*Job{}}
	o := ListOptions{WorkflowID: id, Limit: 1000, IncludeArchived: true}
	for {
		page, err := c.ListJobs(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("ratchet: workflow %s: %w", id, err)
		}
		for _, j := range page.Jobs {
			ws.Jobs = append(ws.Jobs, j)
			ws.byID[j.ID] = j
			ws.Counts[j.Status]++
			ws.Done = ws.Done && j.Status.Terminal()
		}
		if page.Next == uuid.Nil {
			break
		}
		o.After = page.Next
	}
	if len(ws.Jobs) == 0 {
		return nil, fmt.Errorf("ratchet: workflow %s: %w", id, ErrNotFound)
	}
	return ws, nil
}

// CancelWorkflow cancels every job of workflow id that has not finished:
// BLOCKED and PENDING ones at once, and RUNNING ones too, whose bodies
// their nodes then cancel (at their next heartbeat) and whose later writes
// are fenced out. It returns how many jobs it cancelled; a finished or
// unknown workflow cancels none.
func (c *Client) CancelWorkflow(ctx context.Context, id uuid.UUID) (int, error) {
	ws := spi.CapabilitiesOf(c.store).Workflows
	if ws == nil {
		return 0, fmt.Errorf("ratchet: cancel workflow %s: %w: store %T keeps no workflows", id, ErrUnsupported, c.store)
	}
	n, err := ws.CancelWorkflow(ctx, id, c.now())
	if err != nil {
		return 0, fmt.Errorf("ratchet: cancel workflow %s: %w", id, err)
	}
	if n > 0 {
		c.claimsChanged(ctx)
	}
	return n, nil
}
