// Package bench measures Ratchet's throughput and latency on a real store,
// for the ratchet bench command.
//
// Burn-down mode inserts N no-op jobs (reporting insert jobs/s), then starts
// one node and works them all (reporting work jobs/s): claims, execution and
// fenced completions included, and the work rate of each quarter of the
// jobs; Config.Priorities and Config.Tasks spread the jobs of every insert
// call over priority levels and tasks (job i: task i mod Tasks, priority
// i mod Priorities), as a mixed backlog would be, and Config.AfterInsert
// runs between the phases, untimed.
// Steady mode inserts at a fixed rate for a
// duration while a node works, and reports enqueue-to-start latency
// percentiles; with TwoNodes it submits on a client-only node and works
// on another, with a cluster coordinator each (Redis, NATS) or none, to
// measure how fast a submission reaches another node. Figures are for comparing runs on one machine; the README's
// benchmark section records how they were obtained.
package bench
