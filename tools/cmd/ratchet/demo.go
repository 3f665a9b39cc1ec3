package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ratchet-go/ratchet/tools/internal/demo"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

func demoCommand(fs *flag.FlagSet) action {
	jobs := fs.Int("jobs", 1000, "number of jobs to submit")
	store := fs.String("store", "sqlite", storeflag.Usage)
	db := fs.String("db", "", "SQLite database file for --store sqlite (default: a new file in a temporary folder)")
	schema := fs.String("schema", "ratchet_demo", "PostgreSQL schema for a postgres:// --store (created when missing)")
	concurrency := fs.Int("concurrency", 50, "jobs run at once")
	seed := fs.Uint64("seed", 1, "seed of the job mix")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after this long")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		opened, err := storeflag.Open(ctx, *store, *db, *schema, true)
		if err != nil {
			fmt.Fprintf(stderr, "ratchet demo: %v\n", err)
			return 1
		}
		defer func() { _ = opened.Close() }()
		fmt.Fprintf(stdout, "ratchet demo: %d jobs on %s, concurrency %d\n", *jobs, opened.Desc, *concurrency)

		cfg := demo.Config{Jobs: *jobs, Concurrency: *concurrency, Seed: *seed, Timeout: *timeout}
		if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			bar := progressbar.NewOptions(*jobs, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("jobs"),
				progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("jobs"),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
			cfg.Progress = func(done, total int) { _ = bar.Set(done) }
		} else {
			next := 0
			cfg.Progress = func(done, total int) {
				if done*10/total >= next {
					fmt.Fprintf(stdout, "progress %d/%d jobs finished\n", done, total)
					next = done*10/total + 1
				}
			}
		}
		sum, err := demo.Run(ctx, opened.Store, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "ratchet demo: %v\n", err)
			return 1
		}
		sum.Print(stdout)
		if !sum.OK() {
			return 1
		}
		return 0
	}
}
