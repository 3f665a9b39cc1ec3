package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// Ledger is the effects ledger of a run, in the database of its jobs: the
// chaos_run table (one row per execution of a probe task body) and the
// chaos_final table (one row per finalization an engine reported). Times
// are the database's clock, so the rows of all processes share one clock.
type Ledger struct {
	pg     *pgxpool.Pool
	db     *sql.DB
	lite   bool // db is SQLite (ledger_sqlite.go)
	schema string

	run, final, job string // qualified table names
}

// PostgresLedger is the ledger in schema of a PostgreSQL database.
func PostgresLedger(pool *pgxpool.Pool, schema string) *Ledger {
	return &Ledger{pg: pool, schema: schema,
		run:   pgx.Identifier{schema, RunTable}.Sanitize(),
		final: pgx.Identifier{schema, FinalTable}.Sanitize(),
		job:   pgx.Identifier{schema, "scheduler_job"}.Sanitize(),
	}
}

// MySQLLedger is the ledger in the database of db (MySQL 8 or MariaDB
// 10.6+, as stores/mysql opens it: UTC session, parseTime).
func MySQLLedger(db *sql.DB) *Ledger {
	return &Ledger{db: db, run: RunTable, final: FinalTable, job: "scheduler_job"}
}

// Prepare creates the ledger's tables when missing.
func (l *Ledger) Prepare(ctx context.Context) error {
	if l.lite {
		return l.prepareSQLite(ctx)
	}
	if l.pg != nil {
		if _, err := l.pg.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+l.run+` (
			run_id      bigserial   PRIMARY KEY,
			job_id      uuid        NOT NULL,
			node        text        NOT NULL,
			task        text        NOT NULL,
			claim_seq   bigint,
			attempt     integer     NOT NULL,
			crash_count integer     NOT NULL,
			started_at  timestamptz NOT NULL,
			ended_at    timestamptz,
			outcome     text,
			token       uuid        NOT NULL UNIQUE
		)`); err != nil {
			return fmt.Errorf("chaos: create %s: %w", RunTable, err)
		}
		if _, err := l.pg.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+l.final+` (
			final_id bigserial   PRIMARY KEY,
			job_id   uuid        NOT NULL,
			node     text        NOT NULL,
			event    text        NOT NULL,
			at       timestamptz NOT NULL
		)`); err != nil {
			return fmt.Errorf("chaos: create %s: %w", FinalTable, err)
		}
		return nil
	}
	if _, err := l.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+l.run+` (
		run_id      BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
		job_id      BINARY(16)   NOT NULL,
		node        VARCHAR(255) NOT NULL,
		task        VARCHAR(255) NOT NULL,
		claim_seq   BIGINT       NULL,
		attempt     INT          NOT NULL,
		crash_count INT          NOT NULL,
		started_at  DATETIME(6)  NOT NULL,
		ended_at    DATETIME(6)  NULL,
		outcome     VARCHAR(32)  NULL,
		token       BINARY(16)   NOT NULL UNIQUE
	)`); err != nil {
		return fmt.Errorf("chaos: create %s: %w", RunTable, err)
	}
	if _, err := l.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+l.final+` (
		final_id BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
		job_id   BINARY(16)   NOT NULL,
		node     VARCHAR(255) NOT NULL,
		event    VARCHAR(32)  NOT NULL,
		at       DATETIME(6)  NOT NULL
	)`); err != nil {
		return fmt.Errorf("chaos: create %s: %w", FinalTable, err)
	}
	return nil
}

// startRetry bounds how long start keeps trying to record a start through
// a database fault (the harness's own submissions retry as long).
const startRetry = 30 * time.Second

// start records the start of an execution of job and returns its run id;
// the claim sequence is read from the job row. The row carries a token of
// its own, so that a write whose reply was lost (the database node died
// as it committed) is found rather than written twice: a start recorded
// once per execution is what the crash-budget and overlap checks count.
// It retries for up to startRetry while ctx lasts.
func (l *Ledger) start(ctx context.Context, jc *ratchet.JobContext, node string) (int64, error) {
	return recordOnce(ctx, startRetry,
		func(token uuid.UUID) (int64, error) { return l.insertRun(ctx, jc, node, token) },
		func(token uuid.UUID) (int64, bool, error) { return l.runOf(ctx, token) })
}

// recordOnce writes a row through insert under a fresh token, and after a
// failed write looks for the token (the write may have committed with its
// reply lost) before writing again, 100 ms later, until retry has passed
// or ctx is done.
func recordOnce(ctx context.Context, retry time.Duration,
	insert func(token uuid.UUID) (int64, error), find func(token uuid.UUID) (int64, bool, error)) (int64, error) {
	token := uuid.New()
	give := time.Now().Add(retry)
	for {
		id, err := insert(token)
		if err == nil {
			return id, nil
		}
		if id, found, ferr := find(token); ferr == nil && found {
			return id, nil
		}
		if ctx.Err() != nil || time.Now().After(give) {
			return 0, err
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// insertRun writes the chaos_run row of a start.
func (l *Ledger) insertRun(ctx context.Context, jc *ratchet.JobContext, node string, token uuid.UUID) (int64, error) {
	var run int64
	if l.lite {
		return l.startSQLite(ctx, jc, node, token)
	}
	if l.pg != nil {
		err := l.pg.QueryRow(ctx, `INSERT INTO `+l.run+` (job_id, node, task, claim_seq, attempt, crash_count, started_at, token)
			VALUES ($1, $2, $3, (SELECT claim_seq FROM `+l.job+` WHERE job_id = $1), $4, $5, clock_timestamp(), $6)
			RETURNING run_id`, jc.ID, node, jc.TaskName, jc.Run, jc.CrashCount, token).Scan(&run)
		return run, err
	}
	res, err := l.db.ExecContext(ctx, `INSERT INTO `+l.run+` (job_id, node, task, claim_seq, attempt, crash_count, started_at, token)
		VALUES (?, ?, ?, (SELECT claim_seq FROM `+l.job+` WHERE job_id = ?), ?, ?, NOW(6), ?)`,
		jc.ID[:], node, jc.TaskName, jc.ID[:], jc.Run, jc.CrashCount, token[:])
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// runOf returns the run id of the row written with token, if there is one.
func (l *Ledger) runOf(ctx context.Context, token uuid.UUID) (run int64, found bool, err error) {
	switch {
	case l.pg != nil:
		err = l.pg.QueryRow(ctx, `SELECT run_id FROM `+l.run+` WHERE token = $1`, token).Scan(&run)
	case l.lite:
		err = l.db.QueryRowContext(ctx, `SELECT run_id FROM `+l.run+` WHERE token = ?`, token.String()).Scan(&run)
	default:
		err = l.db.QueryRowContext(ctx, `SELECT run_id FROM `+l.run+` WHERE token = ?`, token[:]).Scan(&run)
	}
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return run, err == nil, err
}

// end records the end of run with outcome.
func (l *Ledger) end(ctx context.Context, run int64, outcome string) error {
	if l.lite {
		return l.endSQLite(ctx, run, outcome)
	}
	if l.pg != nil {
		_, err := l.pg.Exec(ctx, `UPDATE `+l.run+` SET ended_at = clock_timestamp(), outcome = $2 WHERE run_id = $1`, run, outcome)
		return err
	}
	_, err := l.db.ExecContext(ctx, `UPDATE `+l.run+` SET ended_at = NOW(6), outcome = ? WHERE run_id = ?`, outcome, run)
	return err
}

// Now reads the database's time (the process's on SQLite, whose writers
// share its host), the clock of the ledger's rows.
func (l *Ledger) Now(ctx context.Context) (time.Time, error) {
	var t time.Time
	var err error
	switch {
	case l.lite:
		return time.Now().UTC(), nil
	case l.pg != nil:
		err = l.pg.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&t)
	default:
		err = l.db.QueryRowContext(ctx, "SELECT NOW(6)").Scan(&t)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("chaos: read the database's time: %w", err)
	}
	return t.UTC(), nil
}

// RecordFinal writes one chaos_final row.
func (l *Ledger) RecordFinal(ctx context.Context, f Final) error {
	var err error
	if l.lite {
		err = l.recordFinalSQLite(ctx, f)
	} else if l.pg != nil {
		_, err = l.pg.Exec(ctx, `INSERT INTO `+l.final+` (job_id, node, event, at) VALUES ($1, $2, $3, $4)`,
			f.JobID, f.Node, f.Event, f.At)
	} else {
		_, err = l.db.ExecContext(ctx, `INSERT INTO `+l.final+` (job_id, node, event, at) VALUES (?, ?, ?, ?)`,
			f.JobID[:], f.Node, f.Event, f.At.UTC())
	}
	if err != nil {
		return fmt.Errorf("chaos: record the finalization of %s: %w", f.JobID, err)
	}
	return nil
}

// rows is what both drivers' row sets offer.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

func (l *Ledger) query(ctx context.Context, q string) (rows, error) {
	if l.pg != nil {
		return l.pg.Query(ctx, q)
	}
	r, err := l.db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return sqlRows{r}, nil
}

// jobID scans a job id of either database.
type jobID struct{ id *uuid.UUID }

func (j jobID) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		if len(v) == 16 {
			id, err := uuid.FromBytes(v)
			*j.id = id
			return err
		}
		id, err := uuid.ParseBytes(v)
		*j.id = id
		return err
	case string:
		id, err := uuid.Parse(v)
		*j.id = id
		return err
	case [16]byte:
		*j.id = v
		return nil
	}
	return fmt.Errorf("chaos: job id of type %T", src)
}

// Executions returns every row of chaos_run, in run id order.
func (l *Ledger) Executions(ctx context.Context) ([]Execution, error) {
	rs, err := l.query(ctx, `SELECT run_id, job_id, node, task, COALESCE(claim_seq, 0), attempt, crash_count,
			started_at, ended_at, COALESCE(outcome, '') FROM `+l.run+` ORDER BY run_id`)
	if err != nil {
		return nil, fmt.Errorf("chaos: read %s: %w", RunTable, err)
	}
	defer rs.Close()
	var out []Execution
	for rs.Next() {
		var r Execution
		var id uuid.UUID
		var ended sql.NullTime
		if l.pg != nil {
			var e *time.Time
			if err := rs.Scan(&r.ID, &id, &r.Node, &r.Task, &r.ClaimSeq, &r.Attempt, &r.CrashCount, &r.StartedAt, &e, &r.Outcome); err != nil {
				return nil, fmt.Errorf("chaos: read %s: %w", RunTable, err)
			}
			if e != nil {
				ended = sql.NullTime{Time: *e, Valid: true}
			}
		} else if err := rs.Scan(&r.ID, jobID{&id}, &r.Node, &r.Task, &r.ClaimSeq, &r.Attempt, &r.CrashCount, &r.StartedAt, &ended, &r.Outcome); err != nil {
			return nil, fmt.Errorf("chaos: read %s: %w", RunTable, err)
		}
		r.JobID = id
		if ended.Valid {
			r.EndedAt = ended.Time
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// Finals returns every row of chaos_final, in the order written.
func (l *Ledger) Finals(ctx context.Context) ([]Final, error) {
	rs, err := l.query(ctx, `SELECT job_id, node, event, at FROM `+l.final+` ORDER BY final_id`)
	if err != nil {
		return nil, fmt.Errorf("chaos: read %s: %w", FinalTable, err)
	}
	defer rs.Close()
	var out []Final
	for rs.Next() {
		var f Final
		var err error
		if l.pg != nil {
			err = rs.Scan(&f.JobID, &f.Node, &f.Event, &f.At)
		} else {
			err = rs.Scan(jobID{&f.JobID}, &f.Node, &f.Event, &f.At)
		}
		if err != nil {
			return nil, fmt.Errorf("chaos: read %s: %w", FinalTable, err)
		}
		out = append(out, f)
	}
	return out, rs.Err()
}

// Recorder writes one chaos_run row per execution of a chaos task body.
type Recorder struct {
	ledger *Ledger
	node   string
	// OnStart, when set, is called after an execution's start is recorded.
	OnStart func(jc *ratchet.JobContext, run int64)
}

// NewRecorder returns a recorder writing to chaos_run in schema through
// pool, naming node as the executing node.
func NewRecorder(pool *pgxpool.Pool, schema, node string) *Recorder {
	return &Recorder{ledger: PostgresLedger(pool, schema), node: node}
}

// NewLedgerRecorder returns a recorder writing to l, naming node as the
// executing node.
func NewLedgerRecorder(l *Ledger, node string) *Recorder {
	return &Recorder{ledger: l, node: node}
}

// Start records the start of the execution whose JobContext is in ctx and
// returns the run's id.
func (r *Recorder) Start(ctx context.Context) (int64, error) {
	jc, ok := ratchet.JobFromContext(ctx)
	if !ok {
		return 0, ratchet.DoNotRetry(errors.New("chaos: body run without a JobContext"))
	}
	run, err := r.ledger.start(ctx, jc, r.node)
	if err != nil {
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
	if err := r.ledger.end(ctx, run, outcome); err != nil {
		return fmt.Errorf("chaos: record end of run %d: %w", run, err)
	}
	return nil
}

// Prepare brings schema to the latest Ratchet version (creating it when
// missing) and creates the ledger tables chaos_run and chaos_final in it.
// Run it once before the workers start.
func Prepare(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	if _, err := postgres.Migrate(ctx, pool, schema); err != nil {
		return err
	}
	return PostgresLedger(pool, schema).Prepare(ctx)
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

// Finals returns every row of chaos_final in schema, in the order written.
func Finals(ctx context.Context, pool *pgxpool.Pool, schema string) ([]Final, error) {
	return PostgresLedger(pool, schema).Finals(ctx)
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
	return PostgresLedger(pool, schema).Executions(ctx)
}
