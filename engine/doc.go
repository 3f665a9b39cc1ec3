// Package engine is Ratchet's worker runtime. An Engine claims due jobs from
// a store in batches, runs them on a bounded pool of goroutines, and writes
// their outcomes back in batches, each write fenced by the claim sequence.
//
// Its parts:
//   - the poller claims up to the free capacity in one store call, in the
//     order of effective priority with aging, waking on submissions in this
//     process (NotifyNewWork) or after an adaptive delay that doubles while
//     polls come back empty;
//   - the executor runs each job with a JobContext (id, attempt, params, a
//     tagged slog.Logger), recovering panics as errors;
//   - the retry decision follows the spec's path exactly: DoNotRetry anywhere
//     in the error chain, then RetryPolicy.ShouldRetry, then the attempt
//     limit, then RetryPolicy.Delay or the job's own backoff;
//   - the completer batches finished jobs into one CompleteJobs call per
//     flush: while one flush runs, the next batch gathers;
//   - heartbeats register the node, and the orphan scan recovers the jobs
//     of nodes whose heartbeat went stale, charging their crash budget;
//   - Stop stops claiming, drains up to a timeout, and releases what is still
//     running back to PENDING without charging anything.
//
// All time comes from the injected clockwork.Clock, so tests and the
// simulator drive the engine on a fake clock.
//
// The clockwork dependency (github.com/jonboulle/clockwork) is the clock
// abstraction named by the design: one interface for real and fake time.
package engine
