// Package chaos is a chaos harness to run in CI: it starts real Ratchet
// worker processes against a real database (PostgreSQL, MySQL 8 or MariaDB
// 10.6+, or an SQLite file that the processes share), submits a workload,
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
//   - prepares a schema, or a database on MySQL, or a file on SQLite (the
//     Ratchet tables and the ledger, [OpenStore] and [Ledger.Prepare]);
//   - starts the workers under a supervisor that restarts a node whenever
//     its process exits, under the same node id, with short node timings
//     (1 s heartbeats, 3 s grace, 1 s orphan scans, 4 jobs at once, a 3 s
//     drain; Scenario.Env overrides them);
//   - submits the workload, a seeded mix of probe jobs (chaos.sleep,
//     chaos.permit jobs holding one of 2 permits of a resource, chaos.poison
//     jobs that kill every node that runs them, and diamond workflows
//     A → {B, C} → D of chaos.step jobs, one in three with B failing),
//     spread over the first two thirds of the fault phase, plus a probe
//     recurring schedule firing chaos.sleep every 2 s through the fault
//     phase — and the application's own workload, if any (see below);
//   - injects the fault schedule ([NewPlan]): SIGKILL then a restart
//     ([FaultKill]), SIGSTOP then SIGCONT ([FaultStop]), SIGTERM then a
//     restart after the graceful stop ([FaultTerm]) — the default kinds —
//     and, through a TCP proxy on 127.0.0.1 between each node and the
//     database, added latency ([FaultLatency]), reset connections
//     ([FaultReset]) and a black hole ([FaultBlackhole]), not on SQLite;
//     a node's clock stepped ahead or behind ([FaultSkew]); and, given
//     the commands that do it, the database restarted under every node
//     ([FaultRestartDB]), failed over to its standby ([FaultFailover]) or
//     one server of its cluster lost and brought back
//     ([FaultDBNodeLoss]), never defaults; one fault at a
//     time, so that with two workers or more one node is always up, each
//     lasting at most 10 s, every enabled kind in the first round (a
//     duration without room for them is refused);
//   - pauses every recurring schedule of the schema at the end of the
//     fault phase, then waits a quiet phase without faults, of at most
//     30 s, by whose end every job must be terminal;
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
//   - no-job-lost: every submitted job exists, and every job of the run
//     is terminal;
//   - finalized-once: each job was finalized at most once (the ledger holds
//     one finalization per job that an engine reported as applied), and
//     each reported finalization is the one its job row shows;
//   - at-least-once: each SUCCEEDED job, the application's as the probes',
//     has a completed execution by the node and under the claim that
//     finalized it;
//   - crash-budget: no crash count above the budget; a job failed by the
//     crash budget was claimed budget + 1 times; a poison job ran at most
//     budget + 1 times and ended in the dead-letter queue;
//   - permits: the executions that finalized the permit jobs never
//     overlapped more than the resource's permits;
//   - recurring-slots: each slot of a probe schedule from its registration
//     to the end of the fault phase fired exactly one job (read from the
//     jobs' slot keys), and no job names another slot; a misfire policy
//     skips only slots later than the misfire threshold (1 min), which a
//     scheduler passing every second on a node that is always up never
//     is, so a missing slot is a violation whatever the policy;
//     violations name the jobs and the slot times, and for a missing
//     slot the fires the nodes reported (their schedule-fired events)
//     from it to the next slot, each job said to be in the store or not:
//     a write the store lost, or a slot no node fired;
//   - workflow-order: in the probe workflows and the application's (their
//     edges read from the store), no child's execution started (by the
//     database's clock, in the ledger) before the finalizing execution of
//     each of its parents ended; a child ran only when every parent ended
//     in a state its dependency allows (SUCCEEDED for the probes), and
//     did run when they all did;
//   - faults-injected: every enabled fault kind was injected at least once.
//
// Execution is at least once and finalization exactly once: the ledger's
// chaos_run table may hold several executions of one job (a killed or
// frozen node's, then another's), while its job row ends in exactly one
// terminal state written by exactly one claim. Each execution's start is
// recorded once: its row carries a token, so a write whose reply a
// database fault lost is found, not written again, when it is retried.
//
// # The workers
//
// A worker is a program whose main calls [WorkerMain] (or [RunWorker]): it
// runs one node with the probe tasks ([NewTasks]) and the application's
// own tasks, records every execution of any task in chaos_run (a work
// middleware, [Recorder.Middleware]) and each finalization its engine
// reports in chaos_final ([Ledger.RecordFinal]), and prints JSON lines
// ([Line]) on stdout. The probe worker chaos/cmd/worker is that program
// with no tasks of its own; an application opts its own binary in with
// one line:
//
//	func main() { chaos.WorkerMain(myTasks...) }
//
// # The application's workload
//
// The application says what to submit with a [SubmitFunc]: given a client
// of the run's schema, a random source derived from the seed
// ([WorkloadRand]: draw every choice from it, and the same seed submits
// the same workload) and the window to spread the submissions over (the
// first two thirds of the fault phase), it submits its own jobs —
// single jobs, workflows, batches, schedules — and returns before the
// fault phase ends. Every job submitted through that client is checked
// like the probes (and every execution of its tasks is in the ledger).
// In Go, Scenario.Submit runs it in the harness's process; for the
// command line, where the harness cannot call the application's code,
// the worker binary carries it:
//
//	func main() {
//		chaos.WorkerMainWith(chaos.WithTasks(myTasks...), chaos.WithWorkload(submitMine))
//	}
//
// and Scenario.WorkerSubmits (ratchet chaos --worker BIN --workload
// user|both) starts it once more with --submit, --seed and --window as
// the submitter. Workload.NoProbes (--workload user) leaves the probe jobs
// out.
//
// A worker started with --plant runs over a store with a planted defect
// ([Plants]: a lost or a doubled completion, a schedule fire without its
// job, a failed parent shown as succeeded): a run over it must fail, which
// shows that the harness catches what it claims to.
//
// # Requirements and limits
//
// A Unix system (the harness sends signals), and a PostgreSQL, MySQL or
// MariaDB server or an SQLite file on a local file system. The workers
// share an SQLite file through its WAL and a 5 s busy timeout; a worker
// frozen while it holds SQLite's one write lock stalls every other
// writer, heartbeats included, while it is frozen, so that the others may
// recover live nodes' jobs afterwards: the fences keep that safe, and the
// crash budget pays for it. On SQLite the network faults and restart-db
// are refused: no server stands between the nodes and the file.
//
// A failover needs Scenario.Failover, a command that fails the database
// over to its standby and returns once the new primary accepts writes,
// with a DSN that reaches whichever server is the primary (PostgreSQL: a
// multi-host URL with target_session_attrs=read-write); the loss of a
// server of a multi-primary cluster (Galera) needs Scenario.DBNodeLoss
// and DBNodeRejoin, and Scenario.SpreadHosts spreads the workers over a
// DSN's list of servers. The report gives, for each database fault, how
// long after it each node started a job again (Injection.Resumed).
// ratchet chaos --private-db builds such clusters from the machine's
// packages and runs these commands itself.
//
// A database restart needs Scenario.RestartDB (ratchet chaos
// --db-restart), a command that restarts the database and returns once it
// is up again (pg_ctlcluster 15 main restart, systemctl restart mariadb,
// docker restart NAME): the harness does not manage the server. Inserts
// through the harness's client (the probe workload, Scenario.Submit's)
// wait out the restart; a worker's own submissions (WorkerSubmits) and
// the nodes must ride it out, reconnecting.
//
// Clock skew goes through the worker's cooperation: a worker calling
// WorkerMain takes --skew D (a static offset of its engine's clock,
// engine.Options.Client.Clock) and --control (lines "skew D" on its standard
// input step that clock, each confirmed by a skewed line), and the harness
// skews one node at a time by a seeded MaxSkew/2 to MaxSkew, ahead or
// behind (Scenario.MaxSkew: 500 ms by default, at most 1 s). The stores
// take the time from the engine, never from the database, and the one
// comparison across nodes' clocks is the heartbeat: a node writes it with
// its clock and the others' orphan scans compare it with theirs. A beat is
// at most a heartbeat interval old, so a live node is taken for dead when
// its clock is behind a scanner's by more than grace − interval: the
// design tolerates clocks each within ±(grace − interval)/2 of the true
// time, ±25 s at the defaults (60 s grace, 10 s heartbeats) and ±1 s with
// the harness's timings (3 s, 1 s) — hence the bound. Beyond it safety
// still holds (a recovered node's writes are superseded) but live nodes'
// jobs are recovered and charged to their crash budget. Within it a skew
// moves due times, retry times and the cluster singletons' lease expiries
// by the offset (a node ahead claims a job up to the offset early). The
// ledger keeps the database's clock (the machine's on SQLite), which no
// skew reaches.
//
// The recurring-slots invariant checks the probe schedules only:
// the application's own schedules are paused at the end of the fault
// phase (their later slots never fire) and their jobs checked by the
// other invariants. The edges of the application's workflows are read
// from the store, so one the store lost goes unchecked. An execution whose
// start cannot be written to the ledger fails (and is retried) without
// running its body. The package's own tests also run the scenarios of the
// test bed it grew from (SIGKILL recovery timing, SIGSTOP
// superseded writes, poison jobs under the crash budget, SIGTERM release,
// permits, a workflow DAG under a kill).
package chaos
