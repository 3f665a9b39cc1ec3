package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// Names of the chaos tasks.
const (
	// SleepTask sleeps SleepArgs.Millis, honouring cancellation, and records
	// the execution in chaos_run.
	SleepTask = "chaos.sleep"
	// PoisonTask records its start in chaos_run, then kills its own process
	// with SIGKILL: a job that takes its node down every time it runs.
	PoisonTask = "chaos.poison"
	// PermitTask is SleepTask under another name, for jobs submitted with a
	// resource permit (ratchet.WithResource).
	PermitTask = "chaos.permit"
	// StepTask is a workflow step: SleepTask that then fails for good
	// (DoNotRetry) when StepArgs.Fail is set.
	StepTask = "chaos.step"
)

// RunTable is the table, in the Ratchet schema, where task bodies record
// their executions.
const RunTable = "chaos_run"

// FinalTable is the table, in the Ratchet schema, where workers record each
// finalization their engine reports (a succeeded, failed, skipped or
// cancelled event: a completion the store said it applied).
const FinalTable = "chaos_final"

// Outcomes of an execution recorded in chaos_run.
const (
	OutcomeOK        = "ok"        // the body ran to its end
	OutcomeCancelled = "cancelled" // the body's context ended first
)

// SleepArgs are the arguments of chaos.sleep and chaos.permit.
type SleepArgs struct {
	// Millis is how long the body sleeps.
	Millis int `json:"millis"`
}

// StepArgs are the arguments of chaos.step.
type StepArgs struct {
	Millis int  `json:"millis"`
	Fail   bool `json:"fail,omitempty"`
}

// ErrStepFailed is the failure of a chaos.step told to fail.
var ErrStepFailed = errors.New("chaos: step told to fail")

// PoisonArgs are the arguments of chaos.poison (none).
type PoisonArgs struct{}

// Tasks are the chaos tasks. Register Definitions with an engine; submit
// with the fields.
type Tasks struct {
	// Sleep is chaos.sleep.
	Sleep *ratchet.Task[SleepArgs, ratchet.Void]
	// Poison is chaos.poison.
	Poison *ratchet.Task[PoisonArgs, ratchet.Void]
	// Permit is chaos.permit; submit it with ratchet.WithResource.
	Permit *ratchet.Task[SleepArgs, ratchet.Void]
	// Step is chaos.step, for workflows.
	Step *ratchet.Task[StepArgs, ratchet.Void]
}

// Definitions returns the tasks for engine.New.
func (t Tasks) Definitions() []ratchet.Definition {
	return []ratchet.Definition{t.Sleep, t.Poison, t.Permit, t.Step}
}

// ErrNoRecorder is the error of a body run by tasks made without a
// Recorder (tasks meant for submitting only).
var ErrNoRecorder = errors.New("chaos: task built without a recorder cannot run")

// NewTasks returns the chaos tasks, whose bodies record their executions
// with rec. A nil rec gives tasks that can be submitted but not run (their
// bodies fail with ErrNoRecorder, wrapped in DoNotRetry).
func NewTasks(rec *Recorder) Tasks {
	sleep := func(ctx context.Context, a SleepArgs) error {
		if rec == nil {
			return ratchet.DoNotRetry(ErrNoRecorder)
		}
		run, err := rec.Start(ctx)
		if err != nil {
			return err
		}
		t := time.NewTimer(time.Duration(a.Millis) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return rec.End(ctx, run, OutcomeOK)
		case <-ctx.Done():
			return errors.Join(ctx.Err(), rec.End(ctx, run, OutcomeCancelled))
		}
	}
	poison := func(ctx context.Context, _ PoisonArgs) error {
		if rec == nil {
			return ratchet.DoNotRetry(ErrNoRecorder)
		}
		if _, err := rec.Start(ctx); err != nil {
			return err
		}
		killSelf()
		<-ctx.Done() // not reached: the process is gone
		return ctx.Err()
	}
	step := func(ctx context.Context, a StepArgs) error {
		if err := sleep(ctx, SleepArgs{Millis: a.Millis}); err != nil || !a.Fail {
			return err
		}
		return ratchet.DoNotRetry(ErrStepFailed)
	}
	return Tasks{
		Sleep:  ratchet.NewVoidTask(SleepTask, sleep),
		Poison: ratchet.NewVoidTask(PoisonTask, poison),
		Permit: ratchet.NewVoidTask(PermitTask, sleep),
		Step:   ratchet.NewVoidTask(StepTask, step),
	}
}

// killSelf kills the current process at once, as the OOM killer or a
// segfault in cgo would: no deferred functions, no graceful stop. On Unix
// this is SIGKILL (exit status 137 in a shell).
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	os.Exit(137) // only if the kill could not be sent
}

// Recorder writes one chaos_run row per execution of a chaos task body.
// Times are the database's clock_timestamp(), so the rows of all processes
// share one clock.
type Recorder struct {
	pool *pgxpool.Pool
	node string
	// OnStart, when set, is called after an execution's start is recorded.
	OnStart func(jc *ratchet.JobContext, run int64)
	start   string
	end     string
}

// NewRecorder returns a recorder writing to chaos_run in schema through
// pool, naming node as the executing node.
func NewRecorder(pool *pgxpool.Pool, schema, node string) *Recorder {
	run := pgx.Identifier{schema, RunTable}.Sanitize()
	job := pgx.Identifier{schema, "scheduler_job"}.Sanitize()
	return &Recorder{
		pool: pool,
		node: node,
		start: `INSERT INTO ` + run + ` (job_id, node, task, claim_seq, attempt, crash_count, started_at)
			VALUES ($1, $2, $3, (SELECT claim_seq FROM ` + job + ` WHERE job_id = $1), $4, $5, clock_timestamp())
			RETURNING run_id`,
		end: `UPDATE ` + run + ` SET ended_at = clock_timestamp(), outcome = $2 WHERE run_id = $1`,
	}
}

// Start records the start of the execution whose JobContext is in ctx and
// returns the run's id.
func (r *Recorder) Start(ctx context.Context) (int64, error) {
	jc, ok := ratchet.JobFromContext(ctx)
	if !ok {
		return 0, ratchet.DoNotRetry(errors.New("chaos: body run without a JobContext"))
	}
	var run int64
	if err := r.pool.QueryRow(ctx, r.start, jc.ID, r.node, jc.TaskName, jc.Run, jc.CrashCount).Scan(&run); err != nil {
		return 0, fmt.Errorf("chaos: record start of %s: %w", jc.ID, err)
	}
	if r.OnStart != nil {
		r.OnStart(jc, run)
	}
	return run, nil
}

// End records the end of run with outcome. It writes even when ctx was
// cancelled (a cancelled body still ends), within 5 seconds.
func (r *Recorder) End(ctx context.Context, run int64, outcome string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := r.pool.Exec(ctx, r.end, run, outcome); err != nil {
		return fmt.Errorf("chaos: record end of run %d: %w", run, err)
	}
	return nil
}

// Prepare brings schema to the latest Ratchet version (creating it when
// missing) and creates the ledger tables chaos_run and chaos_final in it. Run it once before the
// workers start.
func Prepare(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	if _, err := postgres.Migrate(ctx, pool, schema); err != nil {
		return err
	}
	run := pgx.Identifier{schema, RunTable}.Sanitize()
	_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+run+` (
		run_id      bigserial   PRIMARY KEY,
		job_id      uuid        NOT NULL,
		node        text        NOT NULL,
		task        text        NOT NULL,
		claim_seq   bigint,
		attempt     integer     NOT NULL,
		crash_count integer     NOT NULL,
		started_at  timestamptz NOT NULL,
		ended_at    timestamptz,
		outcome     text
	)`)
	if err != nil {
		return fmt.Errorf("chaos: create %s: %w", RunTable, err)
	}
	final := pgx.Identifier{schema, FinalTable}.Sanitize()
	_, err = pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+final+` (
		final_id bigserial   PRIMARY KEY,
		job_id   uuid        NOT NULL,
		node     text        NOT NULL,
		event    text        NOT NULL,
		at       timestamptz NOT NULL
	)`)
	if err != nil {
		return fmt.Errorf("chaos: create %s: %w", FinalTable, err)
	}
	return nil
}

// Final is one row of chaos_final: a finalization that a worker's engine
// reported.
type Final struct {
	JobID uuid.UUID
	Node  string
	// Event is the engine's event kind (succeeded, failed, skipped,
	// cancelled).
	Event string
	At    time.Time
}

// RecordFinal writes one chaos_final row.
func RecordFinal(ctx context.Context, pool *pgxpool.Pool, schema string, f Final) error {
	_, err := pool.Exec(ctx, `INSERT INTO `+pgx.Identifier{schema, FinalTable}.Sanitize()+
		` (job_id, node, event, at) VALUES ($1, $2, $3, $4)`, f.JobID, f.Node, f.Event, f.At)
	if err != nil {
		return fmt.Errorf("chaos: record the finalization of %s: %w", f.JobID, err)
	}
	return nil
}

// Finals returns every row of chaos_final in schema, in the order written.
func Finals(ctx context.Context, pool *pgxpool.Pool, schema string) ([]Final, error) {
	rows, err := pool.Query(ctx, `SELECT job_id, node, event, at FROM `+
		pgx.Identifier{schema, FinalTable}.Sanitize()+` ORDER BY final_id`)
	if err != nil {
		return nil, fmt.Errorf("chaos: read %s: %w", FinalTable, err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Final, error) {
		var f Final
		err := row.Scan(&f.JobID, &f.Node, &f.Event, &f.At)
		return f, err
	})
}

// Execution is one row of chaos_run: one execution of a chaos task body.
type Execution struct {
	ID    int64
	JobID uuid.UUID
	Node  string
	Task  string
	// ClaimSeq is the job's claim sequence read when the body started (the
	// claim it runs under, unless the job was recovered meanwhile).
	ClaimSeq   int64
	Attempt    int
	CrashCount int
	StartedAt  time.Time
	// EndedAt is zero when the body never recorded its end (its process
	// died).
	EndedAt time.Time
	Outcome string
}

// Runs returns every row of chaos_run in schema, in run id order.
func Runs(ctx context.Context, pool *pgxpool.Pool, schema string) ([]Execution, error) {
	rows, err := pool.Query(ctx, `SELECT run_id, job_id, node, task, COALESCE(claim_seq, 0), attempt, crash_count,
			started_at, ended_at, COALESCE(outcome, '')
		FROM `+pgx.Identifier{schema, RunTable}.Sanitize()+` ORDER BY run_id`)
	if err != nil {
		return nil, fmt.Errorf("chaos: read %s: %w", RunTable, err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Execution, error) {
		var r Execution
		var ended *time.Time
		err := row.Scan(&r.ID, &r.JobID, &r.Node, &r.Task, &r.ClaimSeq, &r.Attempt, &r.CrashCount,
			&r.StartedAt, &ended, &r.Outcome)
		if ended != nil {
			r.EndedAt = *ended
		}
		return r, err
	})
}

// MaxOverlap returns the largest number of runs that were executing at one
// instant, from their start and end records. A run that never ended counts
// as running until the end of time; a run that ends when another starts
// does not overlap it.
func MaxOverlap(runs []Execution) int {
	type edge struct {
		at    time.Time
		delta int
	}
	edges := make([]edge, 0, 2*len(runs))
	for _, r := range runs {
		edges = append(edges, edge{r.StartedAt, +1})
		if !r.EndedAt.IsZero() {
			edges = append(edges, edge{r.EndedAt, -1})
		}
	}
	sortEdges := func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta // ends before starts at the same instant
	}
	slices.SortFunc(edges, sortEdges)
	cur, peak := 0, 0
	for _, e := range edges {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}
