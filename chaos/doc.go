// Package chaos is a chaos harness to run in CI: it starts real Ratchet
// worker processes against a real database (PostgreSQL, MySQL 8 or MariaDB
// 10.6+), submits a workload,
// injects a seeded schedule of faults into the processes, and then checks
// the invariants of the design from the outside, from what the database and
// an effects ledger hold.
//
// # A run
//
// [Run] (or [RunT] in a test, or the command ratchet chaos) takes a
// [Scenario]: the database, the worker command, the number of workers, the
// length of the fault phase, a seed, the enabled fault kinds and the
// workload. It
//
//   - prepares a schema, or a database on MySQL (the Ratchet tables and
//     the ledger, [OpenStore] and [Ledger.Prepare]);
//   - starts the workers under a supervisor that restarts a node whenever
//     its process exits, under the same node id, with short node timings
//     (1 s heartbeats, 3 s grace, 1 s orphan scans, 4 jobs at once, a 3 s
//     drain; Scenario.Env overrides them);
//   - submits the workload, a seeded mix of probe jobs (chaos.sleep,
//     chaos.permit jobs holding one of 2 permits of a resource, and
//     chaos.poison jobs that kill every node that runs them), spread over
//     the first two thirds of the fault phase;
//   - injects the fault schedule ([NewPlan]): SIGKILL then a restart
//     ([FaultKill]), SIGSTOP then SIGCONT ([FaultStop]), SIGTERM then a
//     restart after the graceful stop ([FaultTerm]) — the default kinds —
//     and, through a TCP proxy on 127.0.0.1 between each node and the
//     database, added latency ([FaultLatency]), reset connections
//     ([FaultReset]) and a black hole ([FaultBlackhole]); one fault at a
//     time, so that with two workers or more one node is always up, each
//     lasting at most 10 s, every enabled kind in the first round (a
//     duration without room for them is refused);
//   - waits a quiet phase without faults, of at most 30 s, by whose end
//     every job must be terminal;
//   - stops the workers and checks the invariants.
//
// The same seed, with the same workers, duration, fault kinds and
// workload, gives the same fault schedule and the same workload; the
// report prints the seed so that a failing run can be run again.
//
// # The invariants
//
// A [Report] lists every [Violation] with its invariant and its jobs:
//
//   - no-job-lost: every submitted job exists and is terminal;
//   - finalized-once: each job was finalized at most once (the ledger holds
//     one finalization per job that an engine reported as applied), and
//     each reported finalization is the one its job row shows;
//   - at-least-once: each SUCCEEDED probe job has a completed execution by
//     the node and under the claim that finalized it;
//   - crash-budget: no crash count above the budget; a job failed by the
//     crash budget was claimed budget + 1 times; a poison job ran at most
//     budget + 1 times and ended in the dead-letter queue;
//   - permits: the executions that finalized the permit jobs never
//     overlapped more than the resource's permits;
//   - faults-injected: every enabled fault kind was injected at least once.
//
// Execution is at least once and finalization exactly once: the ledger's
// chaos_run table may hold several executions of one job (a killed or
// frozen node's, then another's), while its job row ends in exactly one
// terminal state written by exactly one claim.
//
// # The workers
//
// A worker is a program whose main calls [WorkerMain] (or [RunWorker]): it
// runs one node with the probe tasks ([NewTasks]) and the application's
// own tasks, records each execution of a probe task in chaos_run
// ([Recorder]) and each finalization its engine reports in chaos_final
// ([RecordFinal]), and prints JSON lines ([Line]) on stdout. The probe
// worker chaos/cmd/worker is that program with no tasks of its own; an
// application opts its own binary in with one line:
//
//	func main() { chaos.WorkerMain(myTasks...) }
//
// A worker started with --plant runs over a store with a planted defect
// ([Plants]): a run over it must fail, which shows that the harness catches
// what it claims to.
//
// # Requirements and limits
//
// A Unix system (the harness sends signals) and a PostgreSQL, MySQL or
// MariaDB server; SQLite, database restarts, clock skew and workloads of
// the application's own tasks are not in this version. The package's own tests also run the
// scenarios of the test bed it grew from (SIGKILL recovery timing, SIGSTOP
// superseded writes, poison jobs under the crash budget, SIGTERM release,
// permits, a workflow DAG under a kill).
package chaos
