package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ratchet-go/ratchet/tools/internal/bench"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	store := fs.String("store", "sqlite", storeflag.Usage)
	db := fs.String("db", "", "SQLite database file for --store sqlite (default: a new file in a temporary folder)")
	mode := fs.String("mode", "burndown", "burndown (insert N, then work them all), steady (insert at --rate for --duration), claimscale (claim time at 10,000 and at --jobs pending), mixedfleet (claim time of a node's own jobs with none and with --jobs of a task it lacks pending) or archive (steady latency p99 alone and of the jobs that wait while the store archives --jobs finished jobs)")
	jobs := fs.Int("jobs", 200000, "burndown: number of no-op jobs")
	workers := fs.Int("workers", 1000, "jobs run at once")
	batch := fs.Int("insert-batch", 10000, "jobs per insert call")
	rate := fs.Int("rate", 1000, "steady: jobs inserted per second")
	duration := fs.Duration("duration", 10*time.Second, "steady: how long to insert")
	pause := fs.Duration("archive-pause", 0, "archive: pause between two batches of 1,000 (0: back to back)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	opened, err := storeflag.OpenForBench(ctx, *store, *db)
	if err != nil {
		fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
		return 1
	}
	defer func() { _ = opened.Close() }()
	fmt.Fprintf(stdout, "ratchet bench: %s on %s, %d workers\n", *mode, opened.Desc, *workers)
	res, err := bench.Run(ctx, opened.Store, bench.Config{
		Mode: bench.Mode(*mode), Jobs: *jobs, Workers: *workers, InsertBatch: *batch,
		Rate: *rate, Duration: *duration, ArchivePause: *pause, Progress: stdout,
	})
	if err != nil {
		fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, res.Summary())
	return 0
}
