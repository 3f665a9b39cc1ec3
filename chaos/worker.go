package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Planted store defects, for testing the harness: a worker started with
// --plant NAME wraps its store so that it breaks an invariant on purpose.
const (
	// PlantLoseCompletion drops every fifth success write of a worker
	// while telling the engine it applied: the job stays RUNNING under a
	// live node, never terminal (no-job-lost), and the finalization the
	// engine reported is not in the store (finalized-once).
	PlantLoseCompletion = "lose-completion"
	// PlantDoubleFinalize stores every fifth success write of a worker as
	// a retry while telling the engine it applied: the job runs and is
	// finalized a second time (finalized-once).
	PlantDoubleFinalize = "double-finalize"
)

// Plants are the planted defects a worker accepts.
var Plants = []string{PlantLoseCompletion, PlantDoubleFinalize, PlantSkipSlot, PlantRunFailedChildren, PlantUnique, PlantDebounce, PlantSequence, PlantRateLimit, PlantFairShare}

// WorkerMain is the main function of a chaos worker: it runs RunWorker with
// the process's arguments, stops gracefully on SIGTERM or SIGINT, and exits
// (status 1 when the worker failed). A worker binary of one's own, with
// one's own tasks, opts into the harness with
//
//	func main() { chaos.WorkerMain(myTasks...) }
//
// and is given to Scenario.Worker (or ratchet chaos --worker).
func WorkerMain(tasks ...ratchet.Definition) { WorkerMainWith(WithTasks(tasks...)) }

// WorkerMainWith is WorkerMain with options: the application's tasks
// (WithTasks) and its workload (WithWorkload), which the harness runs by
// starting the binary once with --submit (Scenario.WorkerSubmits, ratchet
// chaos --workload user|both):
//
//	func main() {
//		chaos.WorkerMainWith(chaos.WithTasks(resize), chaos.WithWorkload(submitResizes))
//	}
func WorkerMainWith(opts ...WorkerOption) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := RunWorkerWith(ctx, os.Args[1:], os.Stdout, os.Stderr, opts...)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos worker:", err)
		os.Exit(1)
	}
}

// RunWorker runs one Ratchet node for the harness until ctx ends, then
// stops it gracefully. It registers the probe tasks (NewTasks) and tasks,
// records every execution of any task in chaos_run (Recorder.Middleware)
// and every finalization its engine reports in chaos_final, and prints
// one JSON line (Line) per event on stdout. Its flags:
//
//	--dsn URL      the database, a postgres:// or mysql:// URL, or
//	               sqlite:PATH (required)
//	--schema NAME  the PostgreSQL schema, or the MySQL/MariaDB database,
//	               holding the Ratchet tables and the ledger (required)
//	--node ID      the node id (default RATCHET_NODE_ID, else chaos-PID)
//	--migrate      create or migrate the schema and the ledger first
//	--plant NAME   a planted store defect (Plants), for testing the harness
//	--submit       run the worker's workload (WithWorkload) instead of a
//	               node: one submitted line per job, then submit-done
//	--seed N       the run's seed, for the workload's random source
//	--window D     the window over which the workload submits
//	--skew D       the offset of the node's clock from the real time
//	--control      read control lines on standard input: "skew D" sets
//	               the clock's offset (answered by a skewed line)
//
// The engine's settings come from the RATCHET_* variables (engine.FromEnv).
// Engine logs go to stderr as JSON.
func RunWorker(ctx context.Context, args []string, stdout, stderr io.Writer, tasks ...ratchet.Definition) error {
	return RunWorkerWith(ctx, args, stdout, stderr, WithTasks(tasks...))
}

// RunWorkerWith is RunWorker with options (WithTasks, WithWorkload).
func RunWorkerWith(ctx context.Context, args []string, stdout, stderr io.Writer, opts ...WorkerOption) error {
	var cfg workerConfig
	for _, o := range opts {
		o(&cfg)
	}
	out := NewLineWriter(stdout)
	err := runWorker(ctx, args, out, stderr, cfg)
	if err != nil {
		_ = out.Write(Line{Event: LineError, Error: err.Error()})
	}
	return err
}

func runWorker(ctx context.Context, args []string, out *LineWriter, stderr io.Writer, cfg workerConfig) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := fs.String("dsn", "", "the database: a postgres:// or mysql:// URL, or sqlite:PATH (required)")
	schema := fs.String("schema", "", "the PostgreSQL schema, or the MySQL database, holding the Ratchet tables and the chaos ledger (required)")
	node := fs.String("node", "", "node id (default RATCHET_NODE_ID, else chaos-PID)")
	migrate := fs.Bool("migrate", false, "create or migrate the schema and the ledger before starting")
	plant := fs.String("plant", "", "a planted store defect: "+strings.Join(Plants, ", "))
	submit := fs.Bool("submit", false, "run the worker's workload (chaos.WithWorkload) instead of a node")
	seed := fs.Uint64("seed", 0, "the run's seed (with --submit)")
	window := fs.Duration("window", 20*time.Second, "the window over which the workload submits (with --submit)")
	skew := fs.Duration("skew", 0, "offset of the node's clock from the real time")
	control := fs.Bool("control", false, `read control lines on standard input: "skew DURATION" sets the node clock's offset`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *window <= 0 {
		return fmt.Errorf("--window %s: must be above 0", *window)
	}
	if *dsn == "" || (*schema == "" && !IsSQLite(*dsn)) {
		return errors.New("--dsn and --schema are required (no --schema on SQLite)")
	}
	if *plant != "" && !slices.Contains(Plants, *plant) {
		return fmt.Errorf("unknown --plant %q (known: %s)", *plant, strings.Join(Plants, ", "))
	}
	opts, err := engine.FromEnv(engine.Options{})
	if err != nil {
		return err
	}
	switch {
	case *node != "":
		opts.NodeID = *node
	case opts.NodeID == "":
		opts.NodeID = "chaos-" + strconv.Itoa(os.Getpid())
	}
	opts.Client.Logger = slog.New(slog.NewJSONHandler(stderr, nil))
	clock := newSkewClock(*skew)
	if *skew != 0 || *control {
		opts.Client.Clock = clock
	}

	bg := context.WithoutCancel(ctx)
	opened, err := OpenStore(bg, *dsn, *schema, *migrate)
	if err != nil {
		return err
	}
	defer opened.Close()
	if *migrate {
		if err := opened.Ledger.Prepare(bg); err != nil {
			return err
		}
	}
	if *submit {
		return runSubmitter(ctx, opened, cfg, *seed, *window, out)
	}
	store := opened.Store
	if *plant != "" {
		store = &plantedStore{Store: store, kind: *plant, done: map[uuid.UUID]bool{}}
	}

	rec := NewLedgerRecorder(opened.Ledger, opts.NodeID)
	rec.OnStart = func(jc *ratchet.JobContext, run int64) {
		_ = out.Write(Line{Event: LineRun, Node: opts.NodeID, Job: jc.ID, Task: jc.TaskName,
			Attempt: jc.Run, CrashCount: jc.CrashCount, Run: run})
	}
	opts.WorkMiddleware = append([]ratchet.WorkMiddleware{rec.Middleware()}, opts.WorkMiddleware...)
	eng, err := engine.New(store, opts, append(newTasks(rec, true).Definitions(), cfg.tasks...)...)
	if err != nil {
		return err
	}
	events, unsubscribe := eng.SubscribeWith(engine.SubscribeOptions{Buffer: 100000,
		Kinds: append(slices.Clone(engine.CompletionKinds), engine.EventScheduleFired)})
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for ev := range events {
			switch ev.Kind {
			case engine.EventSucceeded, engine.EventFailed, engine.EventSkipped, engine.EventCancelled:
				if err := opened.Ledger.RecordFinal(bg, Final{JobID: ev.JobID, Node: opts.NodeID, Event: string(ev.Kind), At: ev.At}); err != nil {
					opts.Client.Logger.Error("chaos: ledger write failed", "job", ev.JobID, "err", err)
				}
			}
			l := Line{Event: string(ev.Kind), Node: opts.NodeID, Job: ev.JobID, Task: ev.Task,
				Attempt: ev.Run, Error: ev.Error, At: ev.At}
			if ev.Kind == engine.EventScheduleFired {
				l.Schedule = ev.Name
			}
			_ = out.Write(l)
		}
	}()

	if err := eng.Start(bg); err != nil {
		unsubscribe()
		return err
	}
	_ = out.Write(Line{Event: LineReady, Node: opts.NodeID, PID: os.Getpid()})
	if *control {
		go followControl(os.Stdin, clock, out, opts.NodeID, opts.Client.Logger)
	}

	<-ctx.Done()
	cause := ""
	if c := context.Cause(ctx); c != nil {
		cause = c.Error()
	}
	_ = out.Write(Line{Event: LineStopping, Node: opts.NodeID, Signal: cause})
	stopCtx, cancel := context.WithTimeout(bg, eng.Options().ShutdownTimeout+10*time.Second)
	defer cancel()
	stopErr := eng.Stop(stopCtx)
	unsubscribe()
	<-printed
	if err := opened.Close(); err != nil {
		stopErr = errors.Join(stopErr, err)
	}
	if stopErr != nil {
		return fmt.Errorf("stop: %w", stopErr)
	}
	_ = out.Write(Line{Event: LineStopped, Node: opts.NodeID})
	return nil
}

// plantedStore is a store with a planted defect in CompleteJobs.
type plantedStore struct {
	spi.Store
	kind string

	mu   sync.Mutex
	n    int
	done map[uuid.UUID]bool
}

// Capabilities forwards the inner store's, with a planted schedule or
// workflow defect (PlantSkipSlot, PlantRunFailedChildren).
func (p *plantedStore) Capabilities() spi.Capabilities {
	return plantCaps(p.kind, spi.CapabilitiesOf(p.Store))
}

// pick reports whether the defect hits this success write: every fifth,
// once per job.
func (p *plantedStore) pick(id uuid.UUID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done[id] {
		return false
	}
	p.n++
	if p.n%5 != 0 {
		return false
	}
	p.done[id] = true
	return true
}

// CompleteJobs applies cs with the planted defect.
func (p *plantedStore) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	out := make([]bool, len(cs))
	var idx []int
	var send []spi.Completion
	for i, c := range cs {
		if c.Outcome == spi.OutcomeSucceeded && p.pick(c.JobID) {
			switch p.kind {
			case PlantLoseCompletion:
				out[i] = true // dropped, but reported as applied
				continue
			case PlantDoubleFinalize:
				c.Outcome = spi.OutcomeRetry
				c.RetryAt = c.FinishedAt
				c.Result, c.ResultType = nil, ""
			}
		}
		idx = append(idx, i)
		send = append(send, c)
	}
	if len(send) == 0 {
		return out, nil
	}
	res, err := p.Store.CompleteJobs(ctx, send)
	if err != nil {
		return nil, err
	}
	for k, i := range idx {
		out[i] = res[k]
	}
	return out, nil
}
