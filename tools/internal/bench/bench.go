package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Mode selects what Run measures.
type Mode string

// The bench modes.
const (
	ModeBurndown Mode = "burndown"
	ModeSteady   Mode = "steady"
	// ModeClaimScale times claim batches at growing backlogs: the claim
	// must not slow down with the number of pending jobs.
	ModeClaimScale Mode = "claimscale"
	// ModeMixedFleet times the claim of a node's own jobs with no jobs of
	// another task pending, then with --jobs of a task the node lacks
	// pending ahead of them (older and more urgent): a node of a mixed
	// fleet must not pay for a backlog it cannot run.
	ModeMixedFleet Mode = "mixedfleet"
	// ModeArchive works --jobs jobs to SUCCEEDED, then measures the
	// steady latency twice: alone, and of the jobs that wait while the
	// store archives those jobs (spi.JobArchiver, batches of 1000, back to
	// back or ArchivePause apart): archiving must not stall claims.
	ModeArchive Mode = "archive"
)

// Config configures Run. Zero values take the defaults in brackets.
type Config struct {
	Mode        Mode          // [burndown]
	Jobs        int           // burndown: jobs to insert and work [200000]
	Workers     int           // engine concurrency [1000]
	InsertBatch int           // jobs per insert call [10000]
	Rate        int           // steady: jobs per second [1000]
	Duration    time.Duration // steady: how long to insert [10s]
	// Priorities spreads a burn-down's jobs over that many priority
	// levels, from LOWEST up, and Tasks over that many tasks (one node
	// runs them all): job i of every insert call gets task i mod Tasks and
	// priority i mod Priorities, so that each call, as each part of the
	// backlog, holds every task and level in equal parts (River's mixed
	// InsertMany, which compare/river's --kinds and --priorities
	// mirror). Such calls go through Client.SubmitCalls, the calls made
	// once and reused. Zero or one: one task, every job at NORMAL, and
	// each call is one Task.SubmitMany.
	Priorities int
	Tasks      int
	// Warmup is, in steady mode, a first phase of inserts at the rate
	// before Duration whose latencies are not counted: the node opens its
	// connections, prepares its statements and starts its goroutines then
	// (on PostgreSQL its first 200 ms had 600 jobs start 20 to 75 ms
	// late). Zero means 1 s, a negative value none.
	Warmup time.Duration
	// ArchivePause is the archive mode's pause between two batches: zero
	// archives back to back (the worst case); the archiver service runs
	// one batch per slot of its cron.
	ArchivePause time.Duration
	Progress     io.Writer // progress lines; nil for none
	// Advance, when set, hears the burn-down's progress: the jobs done of
	// total in phase "insert" (after each insert call) and "work" (every
	// 1,000 jobs worked, and at the end), for a progress bar.
	Advance func(phase string, done, total int)
	// Settle, when set, runs in claimscale mode after each size's backlog
	// is written and before its claims are timed: it lets the database
	// finish what the writes left it (ratchet bench sets a CHECKPOINT on
	// PostgreSQL, whose checkpoints during and right after a fill of
	// 10,000,000 jobs made claims there up to twice as slow). A failure is
	// reported in Progress and the timing goes on.
	Settle func(ctx context.Context) error
	// AfterInsert, when set, runs in a burn-down between the insert and
	// the work, timed in neither: ratchet bench times the server's own
	// COPY of the inserted rows there (storeflag.Opened.CopyReference),
	// then a CHECKPOINT, so that the work starts with none of that
	// write's pages left to flush. Its error fails the run.
	AfterInsert func(ctx context.Context) error
	// Metrics, InsertMiddleware and WorkMiddleware install adapters on the
	// engine (ratchet bench --adapters), to measure what they cost: Metrics
	// hears every callback besides the bench's own counters.
	Metrics          spi.MetricsCollector
	InsertMiddleware []ratchet.InsertMiddleware
	WorkMiddleware   []ratchet.WorkMiddleware
	// TwoNodes makes the steady mode submit on one node (an engine with
	// no tasks: a client-only process) and run the jobs on another, so
	// that only a cluster wakeup or a poll gets a job started. Each node
	// gets its own coordinator from Coordinator when it is set (ratchet
	// bench --coordinator), none when it is nil (polling alone).
	TwoNodes    bool
	Coordinator func(ctx context.Context) (spi.ClusterCoordinator, error)
	// PollInterval is the engine's longest delay between polls [50ms].
	PollInterval time.Duration
}

// Result holds the figures of one run.
type Result struct {
	Mode        Mode
	Jobs        int
	InsertTime  time.Duration
	WorkTime    time.Duration
	LatencyP50  time.Duration // steady only
	LatencyP99  time.Duration // steady only
	LatencyMax  time.Duration // steady only
	ClaimRounds int
	// ClaimScale: the median time of one claim batch at each backlog;
	// MixedFleet: at each number of pending jobs of the other task.
	Backlogs   []int
	ClaimTimes []time.Duration
	// ClaimScale: the peak resident memory of the process (VmHWM, bytes)
	// while a node worked NodeJobs jobs at each backlog, and that node's
	// work rate, each the median of nodeRuns nodes; 0 where /proc gives no
	// peak.
	NodeRSS   []int64
	NodeRates []float64
	// Archive: the steady p99 latency alone and of the jobs that waited
	// while the archive ran, the jobs archived and how long that took.
	BaseP99, ArchiveP99 time.Duration
	Archived            int
	ArchiveTime         time.Duration
	// Burndown: the times the store stopped answering during the work.
	Outages []Outage
	// Burndown: the work rate of each quarter of the jobs, in jobs per
	// second, from the time the worked count crossed the quarter before
	// (the work's start for the first) to the time it crossed this one: a
	// rate that falls from the first quarter to the last is a cost that
	// grows with the jobs worked (such as the dead index entries of the
	// jobs claimed since the last VACUUM).
	QuarterRates [4]float64
}

// InsertRate is inserted jobs per second.
func (r Result) InsertRate() float64 { return rate(r.Jobs, r.InsertTime) }

// WorkRate is worked jobs per second.
func (r Result) WorkRate() float64 { return rate(r.Jobs, r.WorkTime) }

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Summary is the machine-readable last line of a run.
func (r Result) Summary() string {
	if r.Mode == ModeClaimScale && len(r.ClaimTimes) > 1 {
		first, last := r.ClaimTimes[0], r.ClaimTimes[len(r.ClaimTimes)-1]
		out := fmt.Sprintf("claim %s at %d pending, %s at %d pending, ratio %.2f", first.Round(time.Microsecond), r.Backlogs[0],
			last.Round(time.Microsecond), r.Backlogs[len(r.Backlogs)-1], float64(last)/float64(first))
		if n := len(r.NodeRSS); n > 1 && r.NodeRSS[0] > 0 {
			out += fmt.Sprintf("; node peak RSS %.1f MiB, %.1f MiB, ratio %.2f", mib(r.NodeRSS[0]), mib(r.NodeRSS[n-1]),
				float64(r.NodeRSS[n-1])/float64(r.NodeRSS[0]))
		}
		return out
	}
	if r.Mode == ModeMixedFleet && len(r.ClaimTimes) > 1 {
		first, last := r.ClaimTimes[0], r.ClaimTimes[len(r.ClaimTimes)-1]
		return fmt.Sprintf("claim %s with %d jobs of another task pending, %s with %d, ratio %.2f", first.Round(time.Microsecond), r.Backlogs[0],
			last.Round(time.Microsecond), r.Backlogs[len(r.Backlogs)-1], float64(last)/float64(first))
	}
	if r.Mode == ModeArchive {
		return fmt.Sprintf("archive %d jobs in %s: latency p99 %s alone, %s during the archive (bound 2x+5ms: %s)", r.Archived,
			r.ArchiveTime.Round(time.Millisecond), r.BaseP99.Round(time.Microsecond), r.ArchiveP99.Round(time.Microsecond),
			(2*r.BaseP99 + 5*time.Millisecond).Round(time.Microsecond))
	}
	if r.Mode == ModeSteady {
		return fmt.Sprintf("steady %d jobs, latency p50 %s p99 %s max %s", r.Jobs,
			r.LatencyP50.Round(time.Microsecond), r.LatencyP99.Round(time.Microsecond), r.LatencyMax.Round(time.Microsecond))
	}
	out := fmt.Sprintf("insert %.0f jobs/s, work %.0f jobs/s", r.InsertRate(), r.WorkRate())
	if q := r.quarters(); q != "" {
		out += "; quarters " + q
	}
	for _, o := range r.Outages {
		if !o.Resumed.IsZero() {
			out += fmt.Sprintf("; store unreachable %.1f s, resumed %.1f s after it answered", o.Answered.Sub(o.Down).Seconds(), o.ResumedAfter().Seconds())
		}
	}
	return out
}

// quarters formats QuarterRates: "41200, 40100, 39800, 39000 jobs/s
// (last / first 0.95)"; "" when they were not measured.
func (r Result) quarters() string {
	q := r.QuarterRates
	if q[0] <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f, %.0f, %.0f, %.0f jobs/s (last / first %.2f)", q[0], q[1], q[2], q[3], q[3]/q[0])
}

// quarterMarks records when a burn-down's worked count crosses each
// quarter of its jobs.
type quarterMarks struct {
	start  time.Time
	bounds [4]int // the worked counts of the quarters' ends
	at     [4]time.Time
	next   int // the first quarter not yet crossed
}

func newQuarterMarks(jobs int, start time.Time) *quarterMarks {
	return &quarterMarks{start: start, bounds: [4]int{jobs / 4, jobs / 2, jobs * 3 / 4, jobs}}
}

// worked notes that finished jobs are done at now.
func (q *quarterMarks) worked(finished int, now time.Time) {
	for q.next < len(q.bounds) && finished >= q.bounds[q.next] {
		q.at[q.next] = now
		q.next++
	}
}

// rates are the work rates of the quarters (zero for a quarter not
// crossed, or one with no jobs).
func (q *quarterMarks) rates() [4]float64 {
	var out [4]float64
	from, prev := q.start, 0
	for k := range q.next {
		out[k] = rate(q.bounds[k]-prev, q.at[k].Sub(from))
		from, prev = q.at[k], q.bounds[k]
	}
	return out
}

// outagePoll is how often a burn-down reads the store to tell an outage
// (Result.Outages): the resolution of the resume time it reports.
const outagePoll = 100 * time.Millisecond

// noop is the arguments of the benchmark's no-op jobs: none, as
// compare/river's NoopArgs, so that both sides store and decode the same
// payload ({}).
type noop struct{}

func (c *Config) defaults() error {
	if c.Mode == "" {
		c.Mode = ModeBurndown
	}
	if c.Mode != ModeBurndown && c.Mode != ModeSteady && c.Mode != ModeClaimScale && c.Mode != ModeMixedFleet && c.Mode != ModeArchive {
		return fmt.Errorf("unknown --mode %q: burndown, steady, claimscale, mixedfleet or archive", c.Mode)
	}
	if c.Jobs == 0 {
		c.Jobs = 200000
	}
	if c.Workers == 0 {
		c.Workers = 1000
	}
	if c.InsertBatch == 0 {
		c.InsertBatch = 10000
	}
	if c.Rate == 0 {
		c.Rate = 1000
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	switch {
	case c.Warmup == 0:
		c.Warmup = time.Second
	case c.Warmup < 0:
		c.Warmup = 0
	}
	if c.PollInterval == 0 {
		c.PollInterval = 50 * time.Millisecond
	}
	if c.Coordinator != nil && !c.TwoNodes {
		return fmt.Errorf("a coordinator needs two nodes (TwoNodes)")
	}
	if c.TwoNodes && c.Mode != ModeSteady {
		return fmt.Errorf("two nodes (--coordinator) are for --mode steady only")
	}
	if c.Jobs < 0 || c.Workers < 0 || c.InsertBatch < 0 || c.Rate < 0 || c.Duration < 0 || c.Priorities < 0 || c.Tasks < 0 {
		return fmt.Errorf("bench options must not be negative")
	}
	if c.Priorities > spi.NumPriorities {
		return fmt.Errorf("--priorities %d: there are %d priority levels", c.Priorities, spi.NumPriorities)
	}
	if c.Priorities > 1 && c.Mode != ModeBurndown {
		return fmt.Errorf("--priorities is for --mode burndown only")
	}
	if c.Tasks > 1 && c.Mode != ModeBurndown {
		return fmt.Errorf("--tasks is for --mode burndown only")
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return nil
}

// Run benchmarks store, which should hold no pending jobs.
func Run(ctx context.Context, store spi.Store, cfg Config) (Result, error) {
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	if cfg.Mode == ModeSteady {
		return steady(ctx, store, cfg)
	}
	if cfg.Mode == ModeClaimScale {
		return claimScale(ctx, store, cfg)
	}
	if cfg.Mode == ModeMixedFleet {
		return mixedFleet(ctx, store, cfg)
	}
	if cfg.Mode == ModeArchive {
		return archive(ctx, store, cfg)
	}
	return burndown(ctx, store, cfg)
}

// archive measures claims while the store archives: cfg.Jobs jobs are
// worked to SUCCEEDED (a burndown), then the steady latency is measured
// alone and while the store archives them all.
func archive(ctx context.Context, store spi.Store, cfg Config) (Result, error) {
	res := Result{Mode: ModeArchive, Jobs: cfg.Jobs}
	a := spi.CapabilitiesOf(store).Archive
	if a == nil {
		return res, fmt.Errorf("the store (%T) has no archive", store)
	}
	if _, err := burndown(ctx, store, cfg); err != nil {
		return res, err
	}
	fmt.Fprintf(cfg.Progress, "%d jobs SUCCEEDED; steady latency alone...\n", cfg.Jobs)
	cutoff := time.Now()
	base, err := steadyWith(ctx, store, cfg, nil, nil)
	if err != nil {
		return res, err
	}
	fmt.Fprintf(cfg.Progress, "steady latency while archiving...\n")
	var window struct{ from, to time.Time }
	during, err := steadyWith(ctx, store, cfg, func(ctx context.Context) error {
		window.from = time.Now()
		for {
			n, err := a.ArchiveJobs(ctx, cutoff, DefaultArchiveBatch)
			if err != nil {
				return err
			}
			res.Archived += n
			if n == 0 {
				window.to = time.Now()
				res.ArchiveTime = window.to.Sub(window.from)
				return nil
			}
			if cfg.ArchivePause > 0 {
				select {
				case <-time.After(cfg.ArchivePause):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
	}, func(submitted, started time.Time) bool { // its wait overlaps the archive run
		return !started.Before(window.from) && submitted.Before(window.to)
	})
	if err != nil {
		return res, err
	}
	res.BaseP99, res.ArchiveP99 = base.LatencyP99, during.LatencyP99
	return res, nil
}

// DefaultArchiveBatch is the archive bench's batch: the spec's jobs per
// archiver run.
const DefaultArchiveBatch = 1000

// counters counts claim rounds for the report.
type counters struct {
	spi.NoOpMetrics
	claims, claimed atomic.Int64
}

// JobsClaimed implements spi.MetricsCollector.
func (c *counters) JobsClaimed(_ context.Context, _ string, n int) {
	c.claims.Add(1)
	c.claimed.Add(int64(n))
}

func newEngine(store spi.Store, cfg Config, task ratchet.Definition, m spi.MetricsCollector) (*engine.Engine, error) {
	return newNode(store, cfg, "", nil, m, task)
}

// newNode is newEngine with a node id and a coordinator; with no tasks it
// is a client-only node.
func newNode(store spi.Store, cfg Config, id string, coord spi.ClusterCoordinator, m spi.MetricsCollector, tasks ...ratchet.Definition) (*engine.Engine, error) {
	if cfg.Metrics != nil {
		m = spi.Fanout(m, cfg.Metrics)
	}
	return engine.New(store, engine.Options{
		Client:          ratchet.ClientOptions{Metrics: m, InsertMiddleware: cfg.InsertMiddleware, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		NodeID:          id,
		Coordinator:     coord,
		WorkMiddleware:  cfg.WorkMiddleware,
		Concurrency:     cfg.Workers,
		MinPollInterval: min(2*time.Millisecond, cfg.PollInterval),
		ClaimBatchSize:  500,
		PollInterval:    cfg.PollInterval,
	}, tasks...)
}

// nodes starts what steadyWith needs around its worker engine: with
// TwoNodes, the worker's coordinator and a client-only node (with its own)
// whose client submits; else the worker's own client. stop stops and
// closes them.
func nodes(ctx context.Context, store spi.Store, cfg Config, task ratchet.Definition) (worker *engine.Engine, client *ratchet.Client, stop func(), err error) {
	var closers []func()
	stop = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	coordinator := func() (spi.ClusterCoordinator, error) {
		if cfg.Coordinator == nil {
			return nil, nil
		}
		c, err := cfg.Coordinator(ctx)
		if err != nil {
			return nil, fmt.Errorf("coordinator: %w", err)
		}
		closers = append(closers, func() { _ = c.Close() })
		return c, nil
	}
	fail := func(e error) (*engine.Engine, *ratchet.Client, func(), error) {
		stop()
		return nil, nil, nil, e
	}
	if !cfg.TwoNodes {
		worker, err = newEngine(store, cfg, task, nil)
		if err != nil {
			return fail(err)
		}
		return worker, worker.Client(), stop, nil
	}
	wc, err := coordinator()
	if err != nil {
		return fail(err)
	}
	if worker, err = newNode(store, cfg, "bench-worker", wc, nil, task); err != nil {
		return fail(err)
	}
	cc, err := coordinator()
	if err != nil {
		return fail(err)
	}
	submitter, err := newNode(store, cfg, "bench-client", cc, nil)
	if err != nil {
		return fail(err)
	}
	if err := submitter.Start(ctx); err != nil {
		return fail(err)
	}
	closers = append(closers, func() { _ = submitter.Stop(context.WithoutCancel(ctx)) })
	return worker, submitter.Client(), stop, nil
}

func burndown(ctx context.Context, store spi.Store, cfg Config) (Result, error) {
	res := Result{Mode: ModeBurndown, Jobs: cfg.Jobs}
	var done sync.WaitGroup
	done.Add(cfg.Jobs)
	tasks := make([]*ratchet.Task[noop, ratchet.Void], max(cfg.Tasks, 1))
	defs := make([]ratchet.Definition, len(tasks))
	for k := range tasks {
		name := "bench.noop"
		if len(tasks) > 1 {
			name = fmt.Sprintf("bench.noop.%d", k)
		}
		tasks[k] = ratchet.NewVoidTask(name, func(context.Context, noop) error { return nil })
		defs[k] = tasks[k]
	}
	var m counters
	eng, err := newNode(store, cfg, "", nil, &m, defs...)
	if err != nil {
		return res, err
	}
	client := eng.Client()

	// One task at NORMAL: each insert call is one SubmitMany of no-op
	// arguments; else one SubmitCalls of calls made once, job i with task
	// i mod Tasks and priority i mod Priorities (see Config.Priorities).
	args := make([]noop, cfg.InsertBatch)
	submit := func(n int) error {
		_, err := tasks[0].SubmitMany(ctx, client, args[:n])
		return err
	}
	if cfg.Tasks > 1 || cfg.Priorities > 1 {
		calls := mixedCalls(tasks, cfg.Priorities, cfg.InsertBatch)
		submit = func(n int) error {
			_, err := client.SubmitCalls(ctx, calls[:n])
			return err
		}
	}
	fmt.Fprintf(cfg.Progress, "inserting %d jobs\n", cfg.Jobs)
	start := time.Now()
	for left := cfg.Jobs; left > 0; {
		n := min(left, cfg.InsertBatch)
		if err := submit(n); err != nil {
			return res, fmt.Errorf("insert: %w", err)
		}
		left -= n
		if cfg.Advance != nil {
			cfg.Advance("insert", cfg.Jobs-left, cfg.Jobs)
		}
	}
	res.InsertTime = time.Since(start)
	fmt.Fprintf(cfg.Progress, "inserted %d jobs in %s (%.0f jobs/s)\n", cfg.Jobs, res.InsertTime.Round(time.Millisecond), res.InsertRate())
	if cfg.AfterInsert != nil {
		if err := cfg.AfterInsert(ctx); err != nil {
			return res, fmt.Errorf("after the insert: %w", err)
		}
	}

	events, unsubscribe := eng.Subscribe(cfg.Jobs + 1000)
	defer unsubscribe()
	watch := watchOutages(ctx, store, outagePoll, cfg.Progress)
	defer watch.stop()
	// The line that marks the work's start for a CPU meter (ratchet bench
	// --compare), after whatever AfterInsert did.
	fmt.Fprintf(cfg.Progress, "working %d jobs\n", cfg.Jobs)
	start = time.Now()
	quarters := newQuarterMarks(cfg.Jobs, start)
	if err := eng.Start(ctx); err != nil {
		return res, err
	}
	finished := 0
	for finished < cfg.Jobs {
		select {
		case ev := <-events:
			switch ev.Kind {
			case engine.EventSucceeded:
				now := time.Now()
				watch.worked(now)
				finished++
				quarters.worked(finished, now)
				if cfg.Advance != nil && (finished%1000 == 0 || finished == cfg.Jobs) {
					cfg.Advance("work", finished, cfg.Jobs)
				}
			case engine.EventFailed, engine.EventRetrying:
				_ = eng.Stop(ctx)
				return res, fmt.Errorf("job %s failed: %s", ev.JobID, ev.Error)
			}
		case <-ctx.Done():
			_ = eng.Stop(context.WithoutCancel(ctx))
			return res, ctx.Err()
		}
	}
	res.WorkTime = time.Since(start)
	res.Outages = watch.stop()
	res.ClaimRounds = int(m.claims.Load())
	res.QuarterRates = quarters.rates()
	fmt.Fprintf(cfg.Progress, "worked %d jobs in %s (%.0f jobs/s; %d claims of %.0f jobs on average)\n", cfg.Jobs,
		res.WorkTime.Round(time.Millisecond), res.WorkRate(), res.ClaimRounds, float64(m.claimed.Load())/float64(max(1, res.ClaimRounds)))
	if q := res.quarters(); q != "" {
		fmt.Fprintf(cfg.Progress, "quarters: %s\n", q)
	}
	return res, eng.Stop(ctx)
}

// mixedCalls are the calls of an insert call of n jobs of a mixed
// burn-down, reused by every call (one of fewer jobs takes the first):
// call i is of tasks[i mod len(tasks)] at priority i mod priorities from
// LOWEST up (NORMAL when priorities is 0 or 1), the options of each
// priority made once and shared.
func mixedCalls(tasks []*ratchet.Task[noop, ratchet.Void], priorities, n int) []ratchet.Call {
	opts := make([][]ratchet.SubmitOption, max(priorities, 1))
	if priorities > 1 {
		for p := range opts {
			opts[p] = []ratchet.SubmitOption{ratchet.WithPriority(ratchet.Priority(p))}
		}
	}
	calls := make([]ratchet.Call, n)
	for i := range calls {
		calls[i] = tasks[i%len(tasks)].With(noop{}, opts[i%len(opts)]...)
	}
	return calls
}

func steady(ctx context.Context, store spi.Store, cfg Config) (Result, error) {
	return steadyWith(ctx, store, cfg, nil, nil)
}

// steadyWith is the steady mode with during, when not nil, running from the
// end of the warm-up; its error fails the run.
func steadyWith(ctx context.Context, store spi.Store, cfg Config, during func(context.Context) error, counted func(submitted, started time.Time) bool) (Result, error) {
	res := Result{Mode: ModeSteady}
	duringErr := make(chan error, 1)
	var mu sync.Mutex
	var lat []time.Duration
	var subs []time.Time
	task := ratchet.NewVoidTask("bench.noop", func(ctx context.Context, _ noop) error {
		jc, _ := ratchet.JobFromContext(ctx)
		d := time.Since(jc.ScheduledAt)
		mu.Lock()
		lat, subs = append(lat, d), append(subs, jc.ScheduledAt)
		mu.Unlock()
		return nil
	})
	eng, client, stop, err := nodes(ctx, store, cfg, task)
	if err != nil {
		return res, err
	}
	defer stop()
	events, unsubscribe := eng.Subscribe(cfg.Rate*int(cfg.Duration/time.Second+1) + 1000)
	defer unsubscribe()
	if err := eng.Start(ctx); err != nil {
		return res, err
	}
	defer func() { _ = eng.Stop(context.WithoutCancel(ctx)) }()

	if during != nil {
		go func() {
			// during runs with the counted part of the load.
			select {
			case <-time.After(cfg.Warmup):
			case <-ctx.Done():
				duringErr <- ctx.Err()
				return
			}
			duringErr <- during(ctx)
		}()
	} else {
		duringErr <- nil
	}
	// Insert in ticks of 10 ms, each tick the jobs the rate owes so far.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	measured := start.Add(cfg.Warmup) // the jobs submitted from then on count
	sent := 0
	var inserts []time.Duration
	for time.Since(start) < cfg.Warmup+cfg.Duration {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return res, ctx.Err()
		}
		owed := int(time.Since(start).Seconds()*float64(cfg.Rate)) - sent
		if owed <= 0 {
			continue
		}
		t0 := time.Now()
		if _, err := task.SubmitMany(ctx, client, make([]noop, owed)); err != nil {
			return res, fmt.Errorf("insert: %w", err)
		}
		inserts = append(inserts, time.Since(t0))
		sent += owed
	}
	res.Jobs = sent
	if len(inserts) > 0 {
		// The part of the latency before any wakeup can be sent: the
		// submission's own write.
		slices.Sort(inserts)
		fmt.Fprintf(cfg.Progress, "%d inserts of %d jobs on average, each taking %s (p50) %s (p99)\n", len(inserts), sent/len(inserts),
			inserts[len(inserts)/2].Round(time.Microsecond), inserts[min(len(inserts)-1, len(inserts)*99/100)].Round(time.Microsecond))
	}
	for finished := 0; finished < sent; {
		select {
		case ev := <-events:
			if ev.Kind == engine.EventSucceeded {
				finished++
			}
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	if err := <-duringErr; err != nil {
		return res, err
	}
	mu.Lock()
	defer mu.Unlock()
	kept := lat[:0]
	for i, d := range lat {
		if !subs[i].Before(measured) && (counted == nil || counted(subs[i], subs[i].Add(d))) {
			kept = append(kept, d)
		}
	}
	if cfg.Warmup > 0 {
		fmt.Fprintf(cfg.Progress, "%d jobs counted, after a warm-up of %s (%d jobs not counted)\n", len(kept), cfg.Warmup, len(lat)-len(kept))
	}
	lat = kept
	res.Jobs = len(kept) // the jobs the figures are of
	slices.Sort(lat)
	if len(lat) > 0 {
		res.LatencyP50 = lat[len(lat)*50/100]
		res.LatencyP99 = lat[min(len(lat)-1, len(lat)*99/100)]
		res.LatencyMax = lat[len(lat)-1]
	}
	return res, nil
}

// claimScale grows the backlog to 10,000 pending jobs, then to cfg.Jobs
// (at least 10 times more), and at each size times claim batches of 200
// (each followed by its completion and by as many new jobs, so the
// backlog stays the same size).
//
// Each size claims the jobs of a task of its own. The claim index leads
// with the task, and the entries of claimed jobs stay in it, skipped by
// every scan, until a VACUUM removes them (the bench database may run
// none): with one task, the claims of the first size left tens of
// thousands of such entries in front of the second size's jobs, a cost of
// how many jobs were claimed since the last VACUUM, not of the backlog.
// With a task per size each size starts from the same state.
func claimScale(ctx context.Context, store spi.Store, cfg Config) (Result, error) {
	res := Result{Mode: ModeClaimScale}
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		return res, err
	}
	sizes := []int{10000, max(cfg.Jobs, 100000)}
	have := 0 // pending jobs, of every size's task
	args := make([]noop, cfg.InsertBatch)
	for _, size := range sizes {
		task := ratchet.NewVoidTask(fmt.Sprintf("bench.noop.%d", size), func(context.Context, noop) error { return nil })
		fill := func() error {
			for have < size {
				n := min(size-have, cfg.InsertBatch)
				if _, err := task.SubmitMany(ctx, client, args[:n]); err != nil {
					return err
				}
				have += n
			}
			return nil
		}
		if err := fill(); err != nil {
			return res, err
		}
		refill := func(n int) error {
			have -= n
			return fill()
		}
		if cfg.Settle != nil {
			if err := cfg.Settle(ctx); err != nil {
				fmt.Fprintf(cfg.Progress, "backlog %d: settling the database failed, timing anyway: %v\n", size, err)
			}
		}
		claim, err := timeClaims(ctx, store, []string{task.Name()}, refill)
		if err != nil {
			return res, err
		}
		var rsss []int64
		var rates []float64
		for range nodeRuns {
			if err := fill(); err != nil { // each node works from the full backlog
				return res, err
			}
			rss, rate, finished, err := nodeFootprint(ctx, store, cfg, task)
			if err != nil {
				return res, err
			}
			have -= finished
			rsss, rates = append(rsss, rss), append(rates, rate)
		}
		rss, rate := median(rsss), median(rates)
		res.Backlogs = append(res.Backlogs, size)
		res.ClaimTimes = append(res.ClaimTimes, claim)
		res.NodeRSS = append(res.NodeRSS, rss)
		res.NodeRates = append(res.NodeRates, rate)
		fmt.Fprintf(cfg.Progress, "backlog %d: claim of 200 takes %s (median of %d); a node working %d jobs peaked at %.1f MiB resident (%.0f jobs/s; medians of %d nodes)\n",
			size, claim.Round(time.Microsecond), claimRounds, NodeJobs, mib(rss), rate, nodeRuns)
	}
	return res, nil
}

// NodeJobs is the number of jobs the node of claimscale works at each
// backlog, from the front of it.
const NodeJobs = 3000

// nodeRuns is the number of nodes claimscale starts, one after the other,
// at each backlog: it reports the median of their peaks and rates, a
// Go process's peak resident memory moving by about 10 % with where its
// collections happen to fall.
const nodeRuns = 3

// nodeFootprint starts a node with cfg's settings, lets it work NodeJobs
// jobs and stops it: it returns the process's peak resident memory during
// that time (VmHWM after clearing it: Linux only, else 0), the node's
// rate and how many jobs it finished in all (those it had started when
// it was told to stop too). What the node holds must not grow with the
// backlog; the inserts before it are not counted, the peak being cleared
// after them.
func nodeFootprint(ctx context.Context, store spi.Store, cfg Config, task ratchet.Definition) (peakRSS int64, jobsPerSec float64, finished int, err error) {
	eng, err := newEngine(store, cfg, task, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	events, unsubscribe := eng.Subscribe(NodeJobs + 2*cfg.Workers)
	defer unsubscribe()
	runtime.GC()
	peak := resetPeakRSS()
	start := time.Now()
	if err := eng.Start(ctx); err != nil {
		return 0, 0, 0, err
	}
	for finished < NodeJobs {
		select {
		case ev := <-events:
			if ev.Kind == engine.EventSucceeded {
				finished++
			}
		case <-ctx.Done():
			_ = eng.Stop(context.WithoutCancel(ctx))
			return 0, 0, 0, ctx.Err()
		}
	}
	took := time.Since(start)
	if err := eng.Stop(ctx); err != nil {
		return 0, 0, 0, err
	}
	for {
		select {
		case ev := <-events:
			if ev.Kind == engine.EventSucceeded {
				finished++
			}
		default:
			return peak(), rate(NodeJobs, took), finished, nil
		}
	}
}

// resetPeakRSS clears the process's peak resident set size (writing 5 to
// /proc/self/clear_refs) and returns a function that reads it (VmHWM of
// /proc/self/status, in bytes); where either fails, that function
// returns 0.
func resetPeakRSS() func() int64 {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return func() int64 { return 0 }
	}
	return func() int64 {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return 0
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err != nil {
					return 0
				}
				return kb << 10
			}
		}
		return 0
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// claimRounds is the number of claims timeClaims times. It reports
// their median, not their mean: on a shared VM one claim that waited for
// the disk or the other core moves a mean of a few dozen by tens of
// percent.
const claimRounds = 100

// benchTasks are the tasks the benchmark's claims list.
var benchTasks = []string{"bench.noop"}

// timeClaims returns the median time of claimRounds claims of 200 jobs of
// tasks by node "bench", each followed by its completion (not timed) and,
// when refill is not nil, by refill(n) with the number of jobs claimed.
func timeClaims(ctx context.Context, store spi.Store, tasks []string, refill func(n int) error) (time.Duration, error) {
	took := make([]time.Duration, 0, claimRounds)
	for range claimRounds {
		start := time.Now()
		jobs, err := store.ClaimJobs(ctx, spi.ClaimParams{NodeID: "bench", Limit: 200, Now: time.Now(),
			BoostInterval: engine.DefaultPriorityBoostInterval, Tasks: tasks})
		if err != nil {
			return 0, err
		}
		took = append(took, time.Since(start))
		cs := make([]spi.Completion, len(jobs))
		for i, j := range jobs {
			cs[i] = spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, Outcome: spi.OutcomeSucceeded, FinishedAt: time.Now()}
		}
		if _, err := store.CompleteJobs(ctx, cs); err != nil {
			return 0, err
		}
		if refill != nil {
			if err := refill(len(jobs)); err != nil {
				return 0, err
			}
		}
	}
	return median(took), nil
}

// median returns the middle value of xs (the upper one of an even
// count), sorting xs.
func median[T cmp.Ordered](xs []T) T {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// mixedFleet keeps 10,000 pending jobs of the bench task and times claims
// of that task (refilled after each, so the backlog stays the same), first
// alone, then with cfg.Jobs (at least 100,000) pending jobs of a task the
// claimer does not list, CRITICAL (the bench task's are NORMAL), so that a
// claim that read them would meet them first.
func mixedFleet(ctx context.Context, store spi.Store, cfg Config) (Result, error) {
	res := Result{Mode: ModeMixedFleet}
	mine := ratchet.NewVoidTask(benchTasks[0], func(context.Context, noop) error { return nil })
	other := ratchet.NewVoidTask("bench.other", func(context.Context, noop) error { return nil })
	client, err := ratchet.NewClient(store, ratchet.ClientOptions{})
	if err != nil {
		return res, err
	}
	args := make([]noop, cfg.InsertBatch)
	submit := func(task *ratchet.Task[noop, ratchet.Void], n int, opts ...ratchet.SubmitOption) error {
		for n > 0 {
			k := min(n, cfg.InsertBatch)
			if _, err := task.SubmitMany(ctx, client, args[:k], opts...); err != nil {
				return err
			}
			n -= k
		}
		return nil
	}
	if err := submit(mine, 10000); err != nil {
		return res, err
	}
	refill := func(n int) error { return submit(mine, n) }
	for _, foreign := range []int{0, max(cfg.Jobs, 100000)} {
		if err := submit(other, foreign, ratchet.WithPriority(ratchet.PriorityCritical)); err != nil {
			return res, err
		}
		claim, err := timeClaims(ctx, store, benchTasks, refill)
		if err != nil {
			return res, err
		}
		res.Backlogs = append(res.Backlogs, foreign)
		res.ClaimTimes = append(res.ClaimTimes, claim)
		fmt.Fprintf(cfg.Progress, "%d pending jobs of another task: claim of 200 takes %s (median of %d)\n", foreign, claim.Round(time.Microsecond), claimRounds)
	}
	return res, nil
}
