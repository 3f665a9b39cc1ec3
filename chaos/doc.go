// Package chaos runs Ratchet as real worker processes against a real
// PostgreSQL database and injects faults into them, checking the invariants
// of the design (DESIGN.md, "Invariants") from the outside: from what ends
// up in the database and what the processes print.
//
// The scenarios (the package's tests):
//
//   - SIGKILL: one of three workers is killed while it holds jobs; the
//     survivors recover its jobs within orphan scan + grace of the kill,
//     charging one crash each, and every job ends SUCCEEDED exactly once;
//   - SIGSTOP: a worker is frozen past the grace period while it runs jobs;
//     the others recover and finish them; resumed with SIGCONT, it tries to
//     finish them too, and every one of its writes is superseded (the rows
//     stay as the other nodes wrote them);
//   - poison: a job that kills every node that runs it is claimed
//     max_crash_redeliveries + 1 times while a supervisor restarts nodes,
//     then fails into the dead-letter queue with the crash-budget error;
//   - SIGTERM: a graceful stop whose drain times out releases the running
//     jobs without charging attempts or crashes, and others finish them;
//   - permits: 50 jobs of a resource limited to 2 permits, over three
//     workers, never run more than 2 at once (from the start and end times
//     that their bodies record).
//
// The module holds three things:
//
//   - this package: the chaos tasks ([NewTasks]: chaos.sleep, chaos.poison,
//     chaos.permit), the chaos_run table in which their bodies record each
//     execution ([Prepare], [Recorder], [Runs]) and the JSON lines that
//     workers print ([Line]);
//   - the worker command, chaos/cmd/worker: one Ratchet node on PostgreSQL
//     running the chaos tasks, configured by flags and the RATCHET_*
//     variables (engine.FromEnv), printing one JSON line per event on
//     stdout until SIGTERM (graceful stop) or a kill;
//   - the scenarios, in the package's tests: they build the worker once,
//     start fleets of it with os/exec, each scenario on a fresh schema
//     (internal/dbtest), and signal the processes.
//
// Execution is at least once, finalization exactly once: chaos_run may hold
// several executions of one job (a killed or frozen node's, then the
// survivor's), while the job row ends in exactly one terminal state,
// written by exactly one claim. The scenarios assert both.
//
// The scenarios need a Unix system (they send SIGKILL, SIGSTOP, SIGCONT and
// SIGTERM) and a PostgreSQL server (see internal/dbtest for how one is
// found; they skip without one, and fail under CI=true). They use short
// node timings (1 s heartbeats, 3 s grace, 1 s orphan scans) so that the
// whole module runs in well under a minute.
//
// Nothing imports this module: it is a test bed, not part of the API.
package chaos
