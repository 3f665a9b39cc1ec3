package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
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

func main() {
	dsn := flag.String("dsn", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL connection string")
	jobs := flag.Int("jobs", 200000, "no-op jobs to insert and work")
	workers := flag.Int("workers", 2000, "River MaxWorkers")
	batch := flag.Int("insert-batch", 10000, "jobs per InsertManyFast call")
	defaults := flag.Bool("river-defaults", false, "use River's default fetch cooldown and poll interval")
	flag.Parse()
	if err := run(context.Background(), *dsn, *jobs, *workers, *batch, *defaults); err != nil {
		fmt.Fprintln(os.Stderr, "river bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dsn string, jobs, workers, batch int, defaults bool) error {
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
	driver := riverpgxv5.New(pool)
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
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers: ws,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if !defaults {
		rc.FetchCooldown = 2 * time.Millisecond
		rc.FetchPollInterval = 20 * time.Millisecond
	}
	client, err := river.NewClient(driver, rc)
	if err != nil {
		return err
	}

	params := make([]river.InsertManyParams, batch)
	for i := range params {
		params[i] = river.InsertManyParams{Args: NoopArgs{}}
	}
	start := time.Now()
	for left := jobs; left > 0; {
		n := min(left, batch)
		if _, err := client.InsertManyFast(ctx, params[:n]); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		left -= n
	}
	insert := time.Since(start)
	fmt.Printf("river: inserted %d jobs in %s (%.0f jobs/s)\n", jobs, insert.Round(time.Millisecond), float64(jobs)/insert.Seconds())

	events, cancel := client.SubscribeConfig(&river.SubscribeConfig{
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed},
		ChanSize: jobs + 1000, // River drops events that overflow the buffer
	})
	defer cancel()
	start = time.Now()
	if err := client.Start(ctx); err != nil {
		return err
	}
	for done := 0; done < jobs; {
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
	fmt.Printf("river: worked %d jobs in %s (%.0f jobs/s)\n", jobs, work.Round(time.Millisecond), float64(jobs)/work.Seconds())
	fmt.Printf("river insert %.0f jobs/s, work %.0f jobs/s\n", float64(jobs)/insert.Seconds(), float64(jobs)/work.Seconds())
	return client.Stop(ctx)
}
