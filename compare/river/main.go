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

// The kinds of a mixed burn-down (--kinds N, N > 1): ten argument types
// with no fields (their JSON is {}, as NoopArgs' and Ratchet's no-op
// job's), each its own kind, "noop0" to "noop9", worked by the same no-op
// worker.
type (
	Noop0Args struct{} // kind noop0
	Noop1Args struct{} // kind noop1
	Noop2Args struct{} // kind noop2
	Noop3Args struct{} // kind noop3
	Noop4Args struct{} // kind noop4
	Noop5Args struct{} // kind noop5
	Noop6Args struct{} // kind noop6
	Noop7Args struct{} // kind noop7
	Noop8Args struct{} // kind noop8
	Noop9Args struct{} // kind noop9
)

// Kind implements river.JobArgs.
func (Noop0Args) Kind() string { return "noop0" }

// Kind implements river.JobArgs.
func (Noop1Args) Kind() string { return "noop1" }

// Kind implements river.JobArgs.
func (Noop2Args) Kind() string { return "noop2" }

// Kind implements river.JobArgs.
func (Noop3Args) Kind() string { return "noop3" }

// Kind implements river.JobArgs.
func (Noop4Args) Kind() string { return "noop4" }

// Kind implements river.JobArgs.
func (Noop5Args) Kind() string { return "noop5" }

// Kind implements river.JobArgs.
func (Noop6Args) Kind() string { return "noop6" }

// Kind implements river.JobArgs.
func (Noop7Args) Kind() string { return "noop7" }

// Kind implements river.JobArgs.
func (Noop8Args) Kind() string { return "noop8" }

// Kind implements river.JobArgs.
func (Noop9Args) Kind() string { return "noop9" }

// mixedKinds are the arguments of each kind of a mixed burn-down, in
// order: job i of an insert call of --kinds N gets mixedKinds[i mod N].
var mixedKinds = []river.JobArgs{Noop0Args{}, Noop1Args{}, Noop2Args{}, Noop3Args{}, Noop4Args{},
	Noop5Args{}, Noop6Args{}, Noop7Args{}, Noop8Args{}, Noop9Args{}}

// mixedWorkers registers the no-op worker of every kind of mixedKinds.
func mixedWorkers(ws *river.Workers) {
	river.AddWorker(ws, noopWorker[Noop0Args]{})
	river.AddWorker(ws, noopWorker[Noop1Args]{})
	river.AddWorker(ws, noopWorker[Noop2Args]{})
	river.AddWorker(ws, noopWorker[Noop3Args]{})
	river.AddWorker(ws, noopWorker[Noop4Args]{})
	river.AddWorker(ws, noopWorker[Noop5Args]{})
	river.AddWorker(ws, noopWorker[Noop6Args]{})
	river.AddWorker(ws, noopWorker[Noop7Args]{})
	river.AddWorker(ws, noopWorker[Noop8Args]{})
	river.AddWorker(ws, noopWorker[Noop9Args]{})
}

// noopWorker does nothing, for jobs of any kind.
type noopWorker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
}

// Work implements river.Worker.
func (noopWorker[T]) Work(context.Context, *river.Job[T]) error { return nil }

// riverPriorities is the number of River's priority levels, 1 (the most
// urgent, the default) to 4.
const riverPriorities = 4

// settings are the burn-down's parameters, the same on either database.
type settings struct {
	jobs, workers, batch int
	defaults             bool
	// kinds and priorities spread the jobs of every insert call: job i
	// gets kind i mod kinds and, when priorities > 1, priority
	// (i mod priorities) mod 4 + 1.
	kinds, priorities int
	// checkpoint runs a CHECKPOINT between the insert and the work
	// (PostgreSQL only).
	checkpoint bool
}

// check refuses settings the burn-down cannot run.
func (s settings) check() error {
	switch {
	case s.jobs < 1 || s.workers < 1 || s.batch < 1:
		return errors.New("--jobs, --workers and --insert-batch must be at least 1")
	case s.kinds < 1 || s.kinds > len(mixedKinds):
		return fmt.Errorf("--kinds %d: from 1 to %d", s.kinds, len(mixedKinds))
	case s.priorities < 1:
		return fmt.Errorf("--priorities %d: at least 1", s.priorities)
	}
	return nil
}

// batchParams are the parameters of one insert call of n jobs, made once
// and reused (a call of fewer jobs takes the first ones): job i has kind
// i mod s.kinds ("noop" when there is one kind, else "noop0".."noop9")
// and, with more than one priority, priority (i mod s.priorities) mod 4
// + 1; one InsertOpts per priority, shared by its jobs.
func batchParams(s settings, n int) []river.InsertManyParams {
	opts := make([]*river.InsertOpts, s.priorities)
	for p := range opts {
		opts[p] = &river.InsertOpts{Priority: p%riverPriorities + 1}
	}
	params := make([]river.InsertManyParams, n)
	for i := range params {
		params[i].Args = NoopArgs{}
		if s.kinds > 1 {
			params[i].Args = mixedKinds[i%s.kinds]
		}
		if s.priorities > 1 {
			params[i].InsertOpts = opts[i%s.priorities]
		}
	}
	return params
}

func main() {
	dsn := flag.String("dsn", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL connection string")
	sqlitePath := flag.String("sqlite", "", "run on SQLite instead (riversqlite): the database file to create, which must not exist; removed at the end")
	jobs := flag.Int("jobs", 200000, "no-op jobs to insert and work")
	workers := flag.Int("workers", 2000, "River MaxWorkers")
	batch := flag.Int("insert-batch", 10000, "jobs per InsertManyFast call")
	defaults := flag.Bool("river-defaults", false, "use River's default fetch cooldown and poll interval")
	kinds := flag.Int("kinds", 1, "spread the jobs over this many kinds (at most 10): job i of each InsertManyFast call gets kind i mod N (noop when 1, else noop0..noop9)")
	priorities := flag.Int("priorities", 1, "with more than 1, job i of each InsertManyFast call gets priority (i mod P) mod 4 + 1 (River's priorities are 1 to 4)")
	checkpoint := flag.Bool("checkpoint", false, "PostgreSQL: run a CHECKPOINT between the insert and the work, as ratchet bench --compare river does on its side")
	flag.Parse()
	s := settings{jobs: *jobs, workers: *workers, batch: *batch, defaults: *defaults, kinds: *kinds, priorities: *priorities, checkpoint: *checkpoint}
	err := s.check()
	switch {
	case err != nil:
	case *sqlitePath != "" && s.checkpoint:
		err = errors.New("--checkpoint is for PostgreSQL")
	case *sqlitePath != "":
		err = runSQLite(context.Background(), *sqlitePath, s)
	default:
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
	var between func(context.Context) error
	if s.checkpoint {
		between = func(ctx context.Context) error {
			_, err := admin.Exec(ctx, "CHECKPOINT")
			return err
		}
	}
	return burndown(ctx, riverpgxv5.New(pool), schema, s, between)
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
	return burndown(ctx, riversqlite.New(db), "", s, nil)
}

// burndown migrates River's tables (in schema, or the database's own when
// empty), inserts s.jobs no-op jobs in InsertManyFast calls of s.batch
// (of s.kinds kinds and s.priorities priorities, see batchParams), runs
// between (when not nil, untimed), then starts a client and waits for
// every job's completion, printing both rates.
func burndown[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], schema string, s settings, between func(context.Context) error) error {
	mig, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: schema, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	if _, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}

	ws := river.NewWorkers()
	if s.kinds > 1 {
		mixedWorkers(ws)
	} else {
		river.AddWorker(ws, NoopWorker{})
	}
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

	params := batchParams(s, s.batch)
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
	if between != nil {
		if err := between(ctx); err != nil {
			return fmt.Errorf("between the phases: %w", err)
		}
	}

	events, cancel := client.SubscribeConfig(&river.SubscribeConfig{
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed},
		ChanSize: s.jobs + 1000, // River drops events that overflow the buffer
	})
	defer cancel()
	fmt.Printf("river: working %d jobs\n", s.jobs)
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
