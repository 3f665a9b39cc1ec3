package chaos

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// SubmitFunc submits a workload of the application's own jobs through c,
// spreading the submissions over window (the first two thirds of the fault
// phase, from the call). It draws every random choice from rng, which the
// harness derives from the run's seed (WorkloadRand), so that the same seed
// submits the same workload. Every job it submits through c (Submit,
// SubmitMany, workflows, batches) is recorded and checked; it must return
// before the fault phase ends, and its error fails the run.
type SubmitFunc func(ctx context.Context, c *ratchet.Client, rng *rand.Rand, window time.Duration) error

// WorkloadRand is the random source a SubmitFunc is given for seed.
func WorkloadRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x75_73_65_72)) // "user"
}

// ScheduleExpr is the expression of the probe recurring schedules: every
// 2 seconds (the 6-field form, seconds first).
const ScheduleExpr = "*/2 * * * * ?"

// planWorkflows adds the probe workflows and schedules to p, drawing
// after everything else so that a seed keeps the faults and jobs it gave
// before they existed.
func planWorkflows(p *Plan, w Workload, window time.Duration, rng *rand.Rand) {
	for i := range w.Workflows {
		pw := PlannedWorkflow{At: Duration(rng.Int64N(int64(window) + 1)), FailB: i%3 == 2}
		for k := range pw.Millis {
			pw.Millis[k] = 20 + rng.IntN(181)
		}
		p.Workflows = append(p.Workflows, pw)
	}
	slices.SortStableFunc(p.Workflows, func(a, b PlannedWorkflow) int { return cmp.Compare(a.At, b.At) })
	policies := []ratchet.MisfirePolicy{ratchet.MisfireSkip, ratchet.MisfireFireOnce, ratchet.MisfireCatchUp}
	for i := range w.Schedules {
		p.Schedules = append(p.Schedules, PlannedSchedule{ID: fmt.Sprintf("chaos.slots-%d", i+1), Expr: ScheduleExpr,
			Misfire: policies[rng.IntN(len(policies))], Millis: 50 + rng.IntN(101)})
	}
}

// Middleware returns a work middleware that records every execution of
// any task in chaos_run: its start before the body runs (an execution
// whose start cannot be recorded fails with that error and is retried,
// without running the body), its end and outcome (ok, error, cancelled,
// panic) after it. The chaos workers run every task under it, the
// application's as the probes.
func (r *Recorder) Middleware() ratchet.WorkMiddleware { return recording(r.Start, r.End) }

// recording is Recorder.Middleware over its start and end.
func recording(start func(context.Context) (int64, error), end func(context.Context, int64, string) error) ratchet.WorkMiddleware {
	return func(ctx context.Context, j *ratchet.Job, next ratchet.WorkFunc) (any, error) {
		run, err := start(ctx)
		if err != nil {
			return nil, err
		}
		ended := false
		defer func() {
			if !ended { // the body panicked: record it, the panic goes on
				_ = end(ctx, run, OutcomePanic)
			}
		}()
		res, err := next(ctx, j)
		ended = true
		outcome := OutcomeOK
		switch {
		case err != nil && ctx.Err() != nil:
			outcome = OutcomeCancelled
		case err != nil:
			outcome = OutcomeError
		}
		if endErr := end(ctx, run, outcome); endErr != nil && err == nil {
			return nil, endErr // the job runs again, so that its success is on record
		}
		return res, err
	}
}

// captureInserts is an insert middleware that hands record every job
// written (or found by its idempotency key).
func captureInserts(record func(id uuid.UUID, task string)) ratchet.InsertMiddleware {
	return func(ctx context.Context, jobs []*ratchet.Job, next ratchet.InsertFunc) ([]spi.InsertResult, error) {
		res, err := next(ctx, jobs)
		if err == nil {
			for i, r := range res {
				if i < len(jobs) && r.ID != uuid.Nil {
					record(r.ID, jobs[i].TaskName)
				}
			}
		}
		return res, err
	}
}

// WorkerOption is an option of WorkerMainWith and RunWorkerWith.
type WorkerOption func(*workerConfig)

type workerConfig struct {
	tasks    []ratchet.Definition
	workload SubmitFunc
}

// WithTasks registers the application's tasks on the worker's node, beside
// the probe tasks.
func WithTasks(tasks ...ratchet.Definition) WorkerOption {
	return func(c *workerConfig) { c.tasks = append(c.tasks, tasks...) }
}

// WithWorkload gives the worker binary a workload of its own: started with
// --submit (Scenario.WorkerSubmits, ratchet chaos --workload user|both),
// it runs fn instead of a node, then exits.
func WithWorkload(fn SubmitFunc) WorkerOption {
	return func(c *workerConfig) { c.workload = fn }
}

// runSubmitter is the submit role of a worker: fn over a client of the
// store, each submitted job printed as a submitted line.
func runSubmitter(ctx context.Context, opened *Opened, cfg workerConfig, seed uint64, window time.Duration, out *LineWriter) error {
	if cfg.workload == nil {
		return errors.New("--submit: this worker has no workload; its main must call chaos.WorkerMainWith(chaos.WithWorkload(fn), ...)")
	}
	var mu sync.Mutex // the workload may submit from several goroutines
	var werr error
	client, err := ratchet.NewClient(opened.Store, ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler),
		InsertMiddleware: []ratchet.InsertMiddleware{captureInserts(func(id uuid.UUID, task string) {
			if err := out.Write(Line{Event: LineSubmitted, Job: id, Task: task}); err != nil {
				mu.Lock()
				werr = cmp.Or(werr, err)
				mu.Unlock()
			}
		})}})
	if err != nil {
		return err
	}
	if err := cfg.workload(ctx, client, WorkloadRand(seed), window); err != nil {
		return fmt.Errorf("the workload: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if werr != nil {
		return fmt.Errorf("print the submitted jobs: %w", werr)
	}
	return out.Write(Line{Event: LineSubmitDone})
}

// startSchedules registers the probe schedules, each from its first slot
// after its registration, under the planned id and a suffix of the run's
// own (a named schema may keep an earlier run's schedules, paused).
func (h *harness) startSchedules(ctx context.Context) error {
	tasks := NewTasks(nil)
	suffix := "." + strconv.FormatInt(time.Now().UnixMilli(), 36)
	for _, ps := range h.plan.Schedules {
		catchUp := 0
		if ps.Misfire == ratchet.MisfireCatchUp {
			catchUp = 3
		}
		id := ps.ID + suffix
		r := tasks.Sleep.Recurring(id, ps.Expr, SleepArgs{Millis: ps.Millis}, ratchet.OnMisfire(ps.Misfire, catchUp))
		if _, err := h.client.PutSchedule(ctx, r); err != nil {
			return fmt.Errorf("chaos: register the probe schedule: %w", err)
		}
		info, err := h.client.GetSchedule(ctx, id)
		if err != nil {
			return fmt.Errorf("chaos: read the probe schedule: %w", err)
		}
		h.schedules = append(h.schedules, &scheduleRun{ID: id, Expr: ps.Expr, Misfire: ps.Misfire, Registered: info.CreatedAt})
	}
	return nil
}

// pauseSchedules pauses every schedule of the run's schema (the probes'
// and the workload's), so that no job is due in the quiet phase, and
// reads the probe schedules' next slots: the slots before are the ones
// that must have fired.
func (h *harness) pauseSchedules(ctx context.Context) error {
	all, err := h.client.ListSchedules(ctx)
	if err != nil {
		return fmt.Errorf("chaos: list the schedules: %w", err)
	}
	for _, s := range all {
		if err := h.client.PauseSchedule(ctx, s.ID); err != nil {
			return fmt.Errorf("chaos: pause the schedules: %w", err)
		}
	}
	for _, sr := range h.schedules {
		info, err := h.client.GetSchedule(ctx, sr.ID)
		if err != nil {
			return fmt.Errorf("chaos: read the probe schedule: %w", err)
		}
		sr.Next, sr.Skipped = info.NextFireAt, info.Skipped
	}
	return nil
}

// submitWorkflows submits the planned workflows at their times and
// records their edges.
func (h *harness) submitWorkflows(ctx context.Context) error {
	tasks := NewTasks(nil)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for _, pw := range h.plan.Workflows {
		if !h.until(ctx, timer, pw.At) {
			return ctx.Err()
		}
		step := func(i int, fail bool) ratchet.Call {
			return tasks.Step.With(StepArgs{Millis: pw.Millis[i], Fail: fail})
		}
		wf := ratchet.NewWorkflow()
		a := wf.Add(step(0, false))
		b := a.Then(step(1, pw.FailB))
		c := a.Then(step(2, false))
		d := wf.Add(step(3, false)).After(b, c)
		if _, err := h.client.SubmitWorkflow(ctx, wf); err != nil {
			return fmt.Errorf("chaos: submit a probe workflow: %w", err)
		}
		h.mu.Lock()
		for _, s := range []*ratchet.Step{a, b, c, d} {
			h.submitted[s.ID()] = StepTask
		}
		h.edges = append(h.edges,
			wfEdge{Parent: a.ID(), Child: b.ID()}, wfEdge{Parent: a.ID(), Child: c.ID()},
			wfEdge{Parent: b.ID(), Child: d.ID()}, wfEdge{Parent: c.ID(), Child: d.ID()})
		h.mu.Unlock()
	}
	return nil
}

// submitAll runs the probe workload and the application's at once, within
// the fault phase.
func (h *harness) submitAll(ctx context.Context) error {
	phaseCtx, cancel := context.WithDeadline(ctx, h.began.Add(h.sc.Duration))
	defer cancel()
	errs := make(chan error, 8)
	go func() { errs <- h.submit(ctx) }()
	go func() { errs <- h.submitWorkflows(ctx) }()
	go func() { errs <- h.submitUser(phaseCtx, ctx) }()
	go func() { errs <- h.submitUnique(phaseCtx) }()
	go func() { errs <- h.submitDebounced(phaseCtx) }()
	go func() { errs <- h.submitSequences(phaseCtx) }()
	go func() { errs <- h.submitRated(phaseCtx) }()
	go func() { errs <- h.submitFair(phaseCtx) }()
	var all []error
	for range 8 {
		if err := <-errs; err != nil {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}

// record notes a job submitted by the application's workload.
func (h *harness) recordUser(id uuid.UUID, task string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.submitted[id]; !ok {
		h.user++
	}
	h.submitted[id] = task
}

// submitUser runs the application's workload, in this process
// (Scenario.Submit) or in the worker command (Scenario.WorkerSubmits).
func (h *harness) submitUser(phaseCtx, ctx context.Context) error {
	sc := h.sc
	window := sc.Duration * 2 / 3
	late := func(err error) error {
		if phaseCtx.Err() != nil && ctx.Err() == nil {
			return fmt.Errorf("chaos: the workload did not return within the fault phase (%s): %w", sc.Duration, err)
		}
		return fmt.Errorf("chaos: the workload: %w", err)
	}
	switch {
	case sc.Submit != nil:
		client, err := ratchet.NewClient(h.store.Store, ratchet.ClientOptions{Logger: slog.New(slog.DiscardHandler),
			InsertMiddleware: []ratchet.InsertMiddleware{captureInserts(h.recordUser)}})
		if err != nil {
			return err
		}
		if err := sc.Submit(phaseCtx, client, WorkloadRand(sc.Seed), window); err != nil {
			return late(err)
		}
		return nil
	case sc.WorkerSubmits:
		if err := h.runSubmitter(phaseCtx, window); err != nil {
			return late(err)
		}
	}
	return nil
}

// runSubmitter starts the worker command in its submit role and records
// the jobs it prints.
func (h *harness) runSubmitter(ctx context.Context, window time.Duration) error {
	args := append(append([]string(nil), h.worker[1:]...), "--dsn", h.sc.DSN, "--schema", h.schema,
		"--submit", "--seed", strconv.FormatUint(h.sc.Seed, 10), "--window", window.String())
	cmd := exec.CommandContext(ctx, h.worker[0], args...)
	cmd.Env = h.env()
	logPath := filepath.Join(h.sc.LogDir, "submit.log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd.Stderr = f
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the submitter %s: %w", h.worker[0], err)
	}
	var lineErr string
	done := false
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var l Line
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch l.Event {
		case LineSubmitted:
			h.recordUser(l.Job, l.Task)
		case LineSubmitDone:
			done = true
		case LineError:
			lineErr = l.Error
		}
	}
	err = cmd.Wait()
	switch {
	case lineErr != "":
		return fmt.Errorf("the submitter failed: %s (its log: %s)", lineErr, logPath)
	case err != nil:
		return fmt.Errorf("the submitter %s: %w (its log: %s)", h.worker[0], err, logPath)
	case !done:
		return fmt.Errorf("the submitter %s exited without finishing its workload (its log: %s)", h.worker[0], logPath)
	}
	return nil
}

// scheduleRun is a probe schedule as the run saw it.
type scheduleRun struct {
	ID      string
	Expr    string
	Misfire ratchet.MisfirePolicy
	// Registered is when it was created: its first slot is the first
	// after. Next is its next slot once paused at the end of the fault
	// phase: every slot before it must have fired, once.
	Registered, Next time.Time
	// Skipped is the schedule's count of skipped slots.
	Skipped int64
}

// wfEdge is one dependency of a workflow: Child waits for Parent. A probe
// workflow's edges are recorded at its submission (Child runs only after
// Parent succeeded); the application's are read from the store.
type wfEdge struct {
	Parent, Child uuid.UUID
	// allow is the parent's states that let the child run (zero:
	// SUCCEEDED only); cond says a condition must hold too.
	allow spi.Allow
	cond  bool
	// app marks an edge of the application's workflows: the child may be
	// cancelled by hand, so only a cancel or skip that names a dependency
	// counts against it.
	app bool
}

// keySlot returns the slot of a job fired by schedule id, from its
// idempotency key (the slot key of the recurring scheduler).
func keySlot(id, key string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(key, "ratchet-schedule:"+id+"@")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, rest)
	return t, err == nil
}
