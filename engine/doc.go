// Package engine is Ratchet's worker runtime. An Engine claims due jobs from
// a store in batches, runs them on a bounded pool of goroutines, and writes
// their outcomes back in batches, each write fenced by the claim sequence.
//
// The Engine is a supervisor over parts, each a type with narrow
// dependencies (a store interface of one or two methods, the clock, a
// logger, callbacks) and no pointer back to the Engine, built in the order
// of their dependencies (wire), with no closure bound to a part built
// later. Most of them live in internal/nodecore, which the cluster
// simulator runs too:
//   - the poller (poller.go) claims up to the free capacity in one store
//     call (nodecore.Claimer: its gates, the claim, the adoption of the
//     jobs of a claim whose answer was lost, the dispatch, the give-back),
//     in the order of effective priority with aging, waking on
//     submissions in this process (NotifyNewWork), on freed slots while it
//     waits for slots (not after a claim that found fewer jobs than it
//     asked for: a freed slot brings no new one), or after the delay its
//     spi.PollDelayStrategy gives (Options.PollStrategy;
//     AdaptivePolling by default, which doubles while polls come back
//     empty); while the pool is mostly busy it gathers free slots first,
//     it refreshes a stale heartbeat before it claims, and, from a store
//     that serves concurrent claims (spi.ConcurrentClaimer) while there is
//     a backlog, it keeps a second claim in flight on the slots the first
//     did not reserve (Options.ClaimConcurrency);
//   - the executor (executor.go) runs each job with a JobContext (id,
//     attempt, params, a tagged slog.Logger), recovering panics as errors,
//     and on a timed-out drain releases what still runs;
//   - the outcome of a body (outcome.go) follows the spec's retry path
//     exactly (nodecore.DecideRetry): DoNotRetry anywhere in the error chain, then
//     RetryPolicy.ShouldRetry, then the attempt limit, then
//     RetryPolicy.Delay or the job's own backoff;
//   - the completer (nodecore.Completer) batches finished jobs into one
//     CompleteJobs call per flush: while one flush runs, the next gathers;
//   - the heartbeater (nodecore.Heartbeater) registers the node, keeps its row
//     fresh and, where the store can tell (spi.ClaimChecker), cancels the
//     bodies of jobs recovered away from it;
//   - the rescuer (nodecore.Rescuer) recovers the jobs of nodes whose heartbeat
//     went stale, charging their crash budget.
//
// Services (Options.Services) run beside the parts from Start to Stop: a
// Service is restarted with a backoff when it fails, and one wrapped in
// Singleton runs on one node of the fleet at a time, while that node holds
// its lease. The recurring scheduler (recurring.go) is one: every node
// whose store keeps schedules runs it (Options.NoScheduler opts out); each
// pass reads the due schedules and fires each with PlanFire's slots (the
// misfire and overlap policies) in one atomic store step, a compare-and-set
// on the schedule's version with the slots' jobs under unique keys, so a
// slot fires once however many nodes race. Options.Schedules are registered
// at Start. The archiver (archive.go) is another, a Singleton: at each slot
// of Options.Archive.Cron it moves jobs finished longer than the retention
// ago to the store's archive (spi.JobArchiver). The log retention
// (joblog.go) is a third, a Singleton on the same slots, deleting the job
// log lines older than Options.JobLogs.Retention.
//
// Circuit breakers (breakers.go): the task runner (taskRunner) runs a task
// protected by a service (Task.ProtectedBy) through the engine's
// spi.ResilienceStrategy, package breaker's by default; a refused run's
// *spi.CircuitOpenError makes DecideRetry put the job back after the retry
// delay without
// charging an attempt. The poller has its own breaker (the same package's
// Breaker around ClaimJobs): open, it waits instead of claiming.
//
// Health (health.go): Engine.Health and the liveness and readiness
// handlers read the engine's state, the heartbeat's age and a one-row read
// of the store.
//
// Per-task limits (tuning.go, nodecore.TaskSlots): with Options.TaskTuning
// the executor counts the running jobs of each limited task; the poller
// claims only the tasks below their limit, the executor admits a claim's
// jobs up to each room and the rest are given back (nodecore.GiveBack:
// ReleaseJobs, not charged).
//
// Job logs (joblog.go): the executor gives each run a logger whose handler
// keeps what the body logs in a bounded per-run buffer (runLog); the
// buffer goes to the completer every 100 lines and with the run's
// completion, which writes the lines (spi.JobLogStore, fenced by the
// claim) just before the completions of the same batch.
//
// Start and Stop (engine.go) are the one place that orders the parts. Stop
// runs nodecore.StopOrder: stop claiming and the services, give back the
// jobs of claims whose answer was lost, drain up to a timeout and release
// the rest, flush the completions, stop the heartbeats, deregister.
//
// The parts' decisions are pure functions of internal/nodecore:
// PollPolicy.Next (idle, gather, refresh the beat, or claim at most the
// free slots and a batch), StopOrder, CompletionOf (the fenced owner write
// with DecideRetry's decision), NextBatch (the completer's batches),
// PlanFire and Decide. The cluster simulator (simtest/cluster) runs these
// and the parts above on its own event loop, and its mutation test plants
// bugs in them (guards compiled only with -tags ratchet_bugs) to show the
// simulator catches each.
//
// All time comes from the injected clockwork.Clock, so tests drive the
// engine on a fake clock.
//
// The clockwork dependency (github.com/jonboulle/clockwork) is the clock
// abstraction named by the design: one interface for real and fake time.
package engine
