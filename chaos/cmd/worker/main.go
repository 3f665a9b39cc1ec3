// Command worker is the chaos harness's probe worker: one Ratchet node on
// PostgreSQL, MySQL, MariaDB or an SQLite file that runs the probe tasks (chaos.sleep, chaos.poison,
// chaos.permit, chaos.step) and records their executions and its
// finalizations in the chaos ledger, for the harness to start, kill, freeze,
// stop and check.
//
// Usage:
//
//	worker --dsn postgres://...|mysql://...|sqlite:PATH --schema NAME [--node ID] [--migrate] [--plant DEFECT] [--skew D] [--control]
//
// The engine's settings come from the RATCHET_* environment variables
// (engine.FromEnv: RATCHET_NODE_HEARTBEAT_INTERVAL_SECONDS,
// RATCHET_NODE_ORPHAN_GRACE_SECONDS, RATCHET_NODE_ORPHAN_SCAN_INTERVAL_SECONDS,
// RATCHET_NODE_MAX_CRASH_REDELIVERIES, RATCHET_WORKER_CONCURRENCY, ...). The
// node id is --node, else RATCHET_NODE_ID, else "chaos-" and the process id.
// The schema must hold the Ratchet tables and the ledger (chaos.Prepare), or
// --migrate creates them. --plant wraps the store with a planted defect
// (chaos.Plants), to show that the harness catches it. --skew D runs the
// engine on a clock D ahead of the real time (behind when negative), and
// --control reads lines "skew D" on standard input that change D while it
// runs (the harness's skew faults).
//
// The worker prints one JSON line (chaos.Line) per event on stdout: "ready"
// once the engine started, "run" when a task body starts, the engine's job
// events (succeeded, retrying, failed, superseded) as it publishes them,
// then "stopping" and "stopped" around a graceful stop. Engine logs go to
// stderr as JSON. It runs until SIGTERM or SIGINT, which stop the engine
// gracefully (exit status 0, or 1 when the stop failed), or until it is
// killed.
//
// It is chaos.WorkerMain with no tasks of its own; a worker binary with an
// application's tasks is the same one line with the tasks as arguments.
package main

import "github.com/ratchet-go/ratchet/chaos"

func main() { chaos.WorkerMain() }
