package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", the one River tests riversqlite with
)

// NoopArgs are the arguments of the benchmark's no-op job.
type NoopArgs struct{}

// Kind implements river.JobArgs.
func (NoopArgs) Kind() string { return "noop" }

// NoopWorker does nothing.
type NoopWorker struct {
	river.WorkerDefaults[NoopArgs]
}

// Work implements river.Worker.
func (NoopWorker) Work(context.Context, *river.Job[NoopArgs]) error { return nil }

// settings are the burn-down's parameters, the same on either database.
type settings struct {
	jobs, workers, batch int
	defaults             bool
}

func main() {
	dsn := flag.String("dsn", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL connection string")
	sqlitePath := flag.String("sqlite", "", "run on SQLite instead (riversqlite): the database file to create, which must not exist; removed at the end")
	jobs := flag.Int("jobs", 200000, "no-op jobs to insert and work")
	workers := flag.Int("workers", 2000, "River MaxWorkers")
	batch := flag.Int("insert-batch", 10000, "jobs per InsertManyFast call")
	defaults := flag.Bool("river-defaults", false, "use River's default fetch cooldown and poll interval")
	flag.Parse()
	s := settings{jobs: *jobs, workers: *workers, batch: *batch, defaults: *defaults}
	var err error
	if *sqlitePath != "" {
		err = runSQLite(context.Background(), *sqlitePath, s)
	} else {
		err = runPostgres(context.Background(), *dsn, s)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "river bench:", err)
		os.Exit(1)
	}
}

// runPostgres runs the burn-down with riverpgxv5 on a schema of its own,
// dropped at the end.
func runPostgres(ctx context.Context, dsn string, s settings) error {
	schema := "river_bench_" + strconv.Itoa(os.Getpid())
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return err
	}
	defer func() { _, _ = admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE") }()

	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return err
	}
	cfg.MaxConns = 20
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	return burndown(ctx, riverpgxv5.New(pool), schema, s)
}

// runSQLite runs the burn-down with riversqlite on a new database file at
// path, configured as River's own SQLite tests configure theirs: WAL
// journal mode and a pool of one connection (River's operations run
// concurrently, and a second connection meets SQLITE_BUSY). The file and
// its WAL and shared-memory files are removed at the end.
func runSQLite(ctx context.Context, path string, s settings) (err error) {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s already exists; the benchmark needs a new database file", path)
	}
	defer func() {
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			if rerr := os.Remove(f); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
				err = rerr
			}
		}
	}()
	// A file: URI, with the characters that would end its path escaped.
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	db, err := sql.Open("sqlite", uri+"?_pragma=journal_mode(WAL)")
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	db.SetMaxOpenConns(1)
	return burndown(ctx, riversqlite.New(db), "", s)
}

// burndown migrates River's tables (in schema, or the database's own when
// empty), inserts s.jobs no-op jobs in InsertManyFast calls of s.batch,
// then starts a client and waits for every job's completion, printing both
// rates.
func burndown[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], schema string, s settings) error {
	mig, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: schema, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	if _, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}

	ws := river.NewWorkers()
	river.AddWorker(ws, NoopWorker{})
	rc := &river.Config{
		Schema:  schema,
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: s.workers}},
		Workers: ws,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if !s.defaults {
		rc.FetchCooldown = 2 * time.Millisecond
		rc.FetchPollInterval = 20 * time.Millisecond
	}
	client, err := river.NewClient(driver, rc)
	if err != nil {
		return err
	}

	params := make([]river.InsertManyParams, s.batch)
	for i := range params {
		params[i] = river.InsertManyParams{Args: NoopArgs{}}
	}
	fmt.Printf("river: inserting %d jobs\n", s.jobs)
	start := time.Now()
	for left := s.jobs; left > 0; {
		n := min(left, s.batch)
		if _, err := client.InsertManyFast(ctx, params[:n]); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		left -= n
	}
	insert := time.Since(start)
	fmt.Printf("river: inserted %d jobs in %s (%.0f jobs/s)\n", s.jobs, insert.Round(time.Millisecond), float64(s.jobs)/insert.Seconds())

	events, cancel := client.SubscribeConfig(&river.SubscribeConfig{
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed},
		ChanSize: s.jobs + 1000, // River drops events that overflow the buffer
	})
	defer cancel()
	start = time.Now()
	if err := client.Start(ctx); err != nil {
		return err
	}
	for done := 0; done < s.jobs; {
		ev := <-events
		if ev == nil {
			return fmt.Errorf("subscription closed after %d jobs", done)
		}
		if ev.Kind != river.EventKindJobCompleted {
			return fmt.Errorf("job %d failed", ev.Job.ID)
		}
		done++
	}
	work := time.Since(start)
	fmt.Printf("river: worked %d jobs in %s (%.0f jobs/s)\n", s.jobs, work.Round(time.Millisecond), float64(s.jobs)/work.Seconds())
	fmt.Printf("river insert %.0f jobs/s, work %.0f jobs/s\n", float64(s.jobs)/insert.Seconds(), float64(s.jobs)/work.Seconds())
	return client.Stop(ctx)
}
