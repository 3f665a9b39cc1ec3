// Command worker is one Ratchet node on PostgreSQL that runs the chaos
// tasks (chaos.sleep, chaos.poison, chaos.permit), for the chaos scenarios
// to start, kill, freeze and resume.
//
// Usage:
//
//	worker --dsn postgres://... --schema NAME [--node ID] [--migrate]
//
// The engine's settings come from the RATCHET_* environment variables
// (engine.FromEnv: RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS,
// RATCHET_NODE_ORPHAN_GRACE_SECONDS, RATCHET_NODE_ORPHAN_SCAN_INTERVAL_SECONDS,
// RATCHET_NODE_MAX_CRASH_REDELIVERIES, RATCHET_WORKER_CONCURRENCY, ...). The
// node id is --node, else RATCHET_NODE_ID, else "chaos-" and the process id.
// The schema must hold the Ratchet tables and chaos_run (chaos.Prepare), or
// --migrate creates them.
//
// The worker prints one JSON line (chaos.Line) per event on stdout: "ready"
// once the engine started, "run" when a task body starts, the engine's job
// events (succeeded, retrying, failed, superseded) as it publishes them,
// then "stopping" and "stopped" around a graceful stop. Engine logs go to
// stderr as JSON. It runs until SIGTERM or SIGINT, which stop the engine
// gracefully (exit status 0, or 1 when the stop failed), or until it is
// killed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/ratchet-go/ratchet/chaos"
	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

func main() {
	out := chaos.NewLineWriter(os.Stdout)
	if err := run(os.Args[1:], out, os.Stderr); err != nil {
		_ = out.Write(chaos.Line{Event: chaos.LineError, Error: err.Error()})
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(args []string, out *chaos.LineWriter, stderr io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := fs.String("dsn", "", "PostgreSQL DSN (required)")
	schema := fs.String("schema", "", "schema holding the Ratchet tables and chaos_run (required)")
	node := fs.String("node", "", "node id (default RATCHET_NODE_ID, else chaos-PID)")
	migrate := fs.Bool("migrate", false, "create or migrate the schema and chaos_run before starting")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" || *schema == "" {
		return errors.New("--dsn and --schema are required")
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
	opts.Logger = slog.New(slog.NewJSONHandler(stderr, nil))

	ctx := context.Background()
	store, err := postgres.Open(ctx, *dsn, postgres.Options{Schema: *schema, ApplyMigrations: *migrate})
	if err != nil {
		return err
	}
	defer store.Close()
	if *migrate {
		if err := chaos.Prepare(ctx, store.Pool(), *schema); err != nil {
			return err
		}
	}

	rec := chaos.NewRecorder(store.Pool(), *schema, opts.NodeID)
	rec.OnStart = func(jc *ratchet.JobContext, run int64) {
		_ = out.Write(chaos.Line{Event: chaos.LineRun, Node: opts.NodeID, Job: jc.ID, Task: jc.TaskName,
			Attempt: jc.Run, CrashCount: jc.CrashCount, Run: run})
	}
	eng, err := engine.New(store, opts, chaos.NewTasks(rec).Definitions()...)
	if err != nil {
		return err
	}
	events, unsubscribe := eng.Subscribe(100000)
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		for ev := range events {
			_ = out.Write(chaos.Line{Event: string(ev.Kind), Node: opts.NodeID, Job: ev.JobID, Task: ev.Task,
				Attempt: ev.Run, Error: ev.Error, At: ev.At})
		}
	}()

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)
	if err := eng.Start(ctx); err != nil {
		return err
	}
	_ = out.Write(chaos.Line{Event: chaos.LineReady, Node: opts.NodeID, PID: os.Getpid()})

	sig := <-signals
	_ = out.Write(chaos.Line{Event: chaos.LineStopping, Node: opts.NodeID, Signal: sig.String()})
	stopCtx, cancel := context.WithTimeout(ctx, eng.Options().ShutdownTimeout+10*time.Second)
	defer cancel()
	stopErr := eng.Stop(stopCtx)
	unsubscribe()
	<-printed
	if err := store.Close(); err != nil {
		stopErr = errors.Join(stopErr, err)
	}
	if stopErr != nil {
		return fmt.Errorf("stop: %w", stopErr)
	}
	_ = out.Write(chaos.Line{Event: chaos.LineStopped, Node: opts.NodeID})
	return nil
}
