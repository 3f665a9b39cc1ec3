package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/schollz/progressbar/v3"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/term"

	"github.com/ratchet-go/ratchet/metrics/ratchetprom"
	"github.com/ratchet-go/ratchet/sdk/spi"
	ratchetotel "github.com/ratchet-go/ratchet/tracing/ratchetotel"

	"github.com/ratchet-go/ratchet/tools/internal/bench"
	"github.com/ratchet-go/ratchet/tools/internal/storeflag"
)

func benchCommand(fs *flag.FlagSet) action {
	store := fs.String("store", "sqlite", storeflag.Usage)
	db := fs.String("db", "", "SQLite database file for --store sqlite (default: a new file in a temporary folder)")
	mode := fs.String("mode", "burndown", "burndown (insert N, then work them all), steady (insert at --rate for --duration), claimscale (claim time at 10,000 and at --jobs pending), mixedfleet (claim time of a node's own jobs with none and with --jobs of a task it lacks pending) or archive (steady latency p99 alone and of the jobs that wait while the store archives --jobs finished jobs)")
	jobs := fs.Int("jobs", 200000, "burndown: number of no-op jobs")
	workers := fs.Int("workers", 1000, "jobs run at once (with --compare: Ratchet's and River's, 2,000 unless set, as River's own benchmark runs)")
	batch := fs.Int("insert-batch", 10000, "jobs per insert call")
	tasks := fs.Int("tasks", 1, "burndown: spread the jobs over this many tasks, one node running them all: job i of every insert call gets task i mod N")
	priorities := fs.Int("priorities", 1, "burndown: spread the jobs over this many priority levels from LOWEST up: job i of every insert call gets level i mod N (1: all NORMAL)")
	serverCopy := fs.Bool("server-copy", true, "burndown on PostgreSQL: between the insert and the work, untimed, time the server's own COPY of the inserted rows into an empty table of the same migrations (same batch, one connection), then CHECKPOINT, and print insert / server COPY")
	rate := fs.Int("rate", 1000, "steady: jobs inserted per second")
	duration := fs.Duration("duration", 10*time.Second, "steady: how long to insert")
	warmup := fs.Duration("warmup", time.Second, "steady: inserts at the rate before --duration whose latencies are not counted (0: none)")
	pause := fs.Duration("archive-pause", 0, "archive: pause between two batches of 1,000 (0: back to back)")
	adapters := fs.String("adapters", "", "install adapters to measure their cost, comma-separated: prometheus, otel (otel-tracing and otel-metrics: one half of it)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run (go tool pprof) to this file")
	traceRatio := fs.Float64("trace-ratio", 1, "with --adapters otel: the share of the traces sampled (a root's TraceIDRatioBased, children follow their parent)")
	coordinator := fs.String("coordinator", "", "steady: submit on a client-only node and run the jobs on another, each with a cluster coordinator on this server (redis://host:port or nats://host:port), or with none (none: polling alone)")
	pollInterval := fs.Duration("poll-interval", 50*time.Millisecond, "the engine's longest delay between polls")
	compare := fs.String("compare", "", "river, or the path of another ratchet binary (a previous commit's) to run this one's burn-down against it alternately, each run a process of its own, --pairs times, printing the ratios this / BIN of the rates and of the machine's CPU per job and their medians, on any --store; river: run Ratchet's burn-down and River's (compare/river, as a separate process) alternately on --store postgres://... (a schema of each run's own) or sqlite[:PATH] (a new file for each run), --pairs times, and print the ratios and their median (and, where /proc/stat exists, the machine's CPU time per job in each phase)")
	pairs := fs.Int("pairs", 5, "--compare: pairs of runs")
	riverBin := fs.String("river-bin", "", "--compare river: a prebuilt compare/river binary (default: go build it from the repository)")
	mix := fs.Bool("mix", false, "--compare river on PostgreSQL: run --pairs pairs of the one-task burn-down and --pairs of a mixed one (Ratchet: 10 tasks and 5 priorities, job i of every insert call with task i mod 10 and priority i mod 5; River: --kinds 10 --priorities 5), and print the medians of each, mix / one task and insert / server COPY")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		if *mix && *compare != "river" {
			fmt.Fprintln(stderr, "ratchet bench: --mix goes with --compare river")
			return 2
		}
		if *compare != "" && *compare != "river" {
			if *mode != "burndown" || *priorities > 1 || *tasks > 1 {
				fmt.Fprintln(stderr, "ratchet bench: --compare BIN runs burn-downs of one task at one priority")
				return 2
			}
			return runCompareBinary(ctx, *store, *db, *jobs, *workers, *batch, *pairs, *compare, stdout, stderr)
		}
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err == nil {
				err = pprof.StartCPUProfile(f)
			}
			if err != nil {
				fmt.Fprintf(stderr, "ratchet bench: --cpuprofile: %v\n", err)
				return 2
			}
			defer func() {
				pprof.StopCPUProfile()
				_ = f.Close()
			}()
		}
		if *compare == "river" {
			switch {
			case *mix && (*priorities > 1 || *tasks > 1):
				fmt.Fprintln(stderr, "ratchet bench: --priorities and --tasks are not for --mix (its mixed shape is 10 tasks and 5 priorities)")
				return 2
			case *priorities > 1 || *tasks > 1:
				fmt.Fprintln(stderr, "ratchet bench: --priorities and --tasks are not for --compare (River's side submits one kind at one priority; --mix compares a mixed backlog)")
				return 2
			}
			set := false
			fs.Visit(func(f *flag.Flag) { set = set || f.Name == "workers" })
			if !set {
				*workers = compareWorkers
			}
			return runCompare(ctx, compareRun{store: *store, db: *db, jobs: *jobs, workers: *workers, batch: *batch, pairs: *pairs,
				riverBin: *riverBin, mix: *mix}, stdout, stderr)
		}
		opened, err := storeflag.OpenForBench(ctx, *store, *db)
		if err != nil {
			fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
			return 1
		}
		defer func() { _ = opened.Close() }()
		cfg := bench.Config{
			Mode: bench.Mode(*mode), Jobs: *jobs, Workers: *workers, InsertBatch: *batch, Priorities: *priorities, Tasks: *tasks,
			Rate: *rate, Duration: *duration, ArchivePause: *pause, Progress: stdout, PollInterval: *pollInterval,
			Warmup: cmp.Or(*warmup, -1), // the flag's 0 is none
			Settle: opened.Checkpoint,
		}
		nodes := ""
		if *coordinator != "" {
			desc, err := benchCoordinator(&cfg, *coordinator)
			if err != nil {
				fmt.Fprintf(stderr, "ratchet bench: --coordinator: %v\n", err)
				return 2
			}
			nodes = ", submitted on a client-only node and run on another, " + desc
		}
		fmt.Fprintf(stdout, "ratchet bench: %s on %s, %d workers%s\n", *mode, opened.Desc, *workers, nodes)
		if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			cfg.Advance = benchBars(stderr)
		}
		if err := installAdapters(&cfg, *adapters, *traceRatio); err != nil {
			fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
			return 2
		}
		var copyRate float64
		if cfg.Mode == bench.ModeBurndown && *serverCopy && opened.CopyReference != nil {
			cfg.AfterInsert = betweenPhases(opened, *batch, stdout, &copyRate)
		}
		res, err := bench.Run(ctx, opened.Store, cfg)
		if err != nil {
			fmt.Fprintf(stderr, "ratchet bench: %v\n", err)
			return 1
		}
		if copyRate > 0 {
			fmt.Fprintf(stdout, "insert / server COPY: %.2f (insert %.0f jobs/s, the server's own COPY of the same rows %.0f rows/s)\n",
				res.InsertRate()/copyRate, res.InsertRate(), copyRate)
		}
		fmt.Fprintln(stdout, res.Summary())
		return 0
	}
}

// betweenPhases is the bench.Config.AfterInsert of a burn-down on
// PostgreSQL (opened from storeflag.OpenForBench): with copyRate not nil,
// the server's own COPY of the rows just inserted, in transactions of
// batch rows (opened.CopyReference), its rate printed on progress and
// stored in *copyRate; then a CHECKPOINT, so that the work starts with
// neither that copy's nor the insert's writes left to flush (on either
// side of --compare river, whose River runs take --checkpoint). A failed
// CHECKPOINT is reported and the run goes on, as the claimscale's Settle.
func betweenPhases(opened *storeflag.Opened, batch int, progress io.Writer, copyRate *float64) func(context.Context) error {
	return func(ctx context.Context) error {
		if copyRate != nil {
			r, err := opened.CopyReference(ctx, batch)
			if err != nil {
				return err
			}
			*copyRate = r
			fmt.Fprintf(progress, "server COPY of the same rows: %.0f rows/s (transactions of %d rows, one connection)\n", r, batch)
		}
		if err := opened.Checkpoint(ctx); err != nil {
			fmt.Fprintf(progress, "CHECKPOINT after the insert failed, working anyway: %v\n", err)
		}
		return nil
	}
}

// benchCoordinator sets cfg up for two nodes with a coordinator each on
// the server at url (none: no coordinator), on a cluster of the run's own,
// and describes it.
func benchCoordinator(cfg *bench.Config, url string) (string, error) {
	cfg.TwoNodes = true
	var b [4]byte
	_, _ = rand.Read(b[:])
	cluster := "bench-" + hex.EncodeToString(b[:])
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if url == "none" {
		return "no coordinator (polling alone)", nil
	}
	open, kind, err := coordinatorOpener(url, cluster, logger)
	if err != nil {
		return "", fmt.Errorf("%q: want redis://host:port, nats://host:port or none", url)
	}
	cfg.Coordinator = open
	return "a " + kind + " coordinator each", nil
}

// installAdapters puts the adapters named in list (comma-separated) on
// the bench's engine: the Prometheus collector on a registry of its own;
// OpenTelemetry tracing, with a batching span processor whose exporter
// drops the spans (the cost of making them, not of shipping them), and
// OpenTelemetry metrics on a meter provider with a manual reader (recorded,
// never exported). Both adapters' metrics hear every callback
// (spi.Fanout).
func installAdapters(cfg *bench.Config, list string, traceRatio float64) error {
	sampler := sdktrace.ParentBased(sdktrace.TraceIDRatioBased(traceRatio))
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		switch a {
		case "":
		case "prometheus":
			c, err := ratchetprom.New(prometheus.NewRegistry())
			if err != nil {
				return err
			}
			cfg.Metrics = spi.Fanout(cfg.Metrics, c)
		case "otel", "otel-tracing", "otel-metrics":
			if a != "otel-metrics" {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{}), sdktrace.WithSampler(sampler))
				o := ratchetotel.Options{TracerProvider: tp}
				cfg.InsertMiddleware = append(cfg.InsertMiddleware, ratchetotel.InsertMiddleware(o))
				cfg.WorkMiddleware = append(cfg.WorkMiddleware, ratchetotel.WorkMiddleware(o))
			}
			if a != "otel-tracing" {
				m, err := ratchetotel.NewMetrics(sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())))
				if err != nil {
					return err
				}
				cfg.Metrics = spi.Fanout(cfg.Metrics, m)
			}
		default:
			return fmt.Errorf("--adapters: unknown adapter %q (prometheus, otel, otel-tracing, otel-metrics)", a)
		}
	}
	return nil
}

// discardSpans is a span exporter that drops what it is given.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }

func (discardSpans) Shutdown(context.Context) error { return nil }

// benchBars draws a progress bar on w for each phase of a burn-down (on a
// terminal only: elsewhere the progress lines say enough).
func benchBars(w io.Writer) func(phase string, done, total int) {
	var bar *progressbar.ProgressBar
	var phase string
	return func(p string, done, total int) {
		if p != phase {
			if bar != nil {
				_ = bar.Finish()
			}
			phase = p
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(p),
				progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("jobs"),
				progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		_ = bar.Set(done)
		if done >= total {
			_ = bar.Finish()
		}
	}
}
