// Package cluster is the seeded whole-cluster simulator that checks Ratchet
// itself: [Simulate] runs K virtual nodes over one spi.Store on one fake clock,
// stepped one action at a time by a seeded, single-goroutine discrete-event
// loop. The nodes do not imitate the engine: they step the engine's own
// decision code, the functions its poller, executor, completer and Stop
// call. Each poll is nodecore.PollPolicy.Next (wait for a free slot, gather
// more, refresh a stale heartbeat, or claim at most the free slots and a
// batch, with the node's tag filter) and waits as nodecore.AdaptivePolling
// says; an execution (outcome drawn from the seed) ends with
// nodecore.CompletionOf (the fence, nodecore.DecideRetry); completions go out
// in nodecore.NextBatch's batches; a graceful stop runs nodecore.StopOrder step
// by step; and, when the seed registers a recurring schedule (one seed in
// two), every node runs nodecore.RecurringPass each simulated second, while
// the model checks that no slot gets a second job and, at the end, that
// every slot was fired once or counted skipped by its policy. On a store
// that keeps workflows, about one arrival in five is a small workflow
// (chains, joins, "run anyway" edges, OnSuccess and OnFailure callbacks):
// a node dispatches a released step with spi.Decide and
// nodecore.GateCompletion, as the engine's gate does, and the model checks
// that no step starts before its parents finished in states it allows
// (workflow-order), that a step is BLOCKED exactly while a parent has not
// finished and the store records the states they finished in
// (workflow-release), and that each callback is skipped rather than
// cancelled, succeeds at most once and fires exactly when its parent's end
// calls for it (callback-once), through crashes, stalls, cancels of steps
// and of whole workflows, and DLQ retries that revive dependents. On a
// store that keeps signals, some jobs wait for a signal: the admin
// workload delivers it by id or by key and cancels waiting jobs, every
// node runs the signal sweeper's pass each simulated second, and the model
// checks that every wait is resolved exactly once, never timed out before
// its deadline (signal-once). On a store that keeps batches, some
// arrivals are batches of children with callbacks, some written in two
// chunks (a chunk at a stale offset must be refused, nothing written):
// every node runs the batch finisher's pass each simulated second, the
// admin workload cancels open batches, and the model checks that every
// batch ends exactly once, only once sealed and every child finished,
// with the outcome and the one callback its children's states call for,
// and that the store's counts are the model's (batch-once). The node
// itself supplies only the I/O around them: store calls,
// heartbeats with the claim check that cancels bodies recovered from under
// the node, orphan scans, restarts.
//
// The seed also chooses the submissions (priorities, delays, retries and
// backoff, idempotency keys, tags, optionally resource permits, poison jobs
// that crash their node every time), each node's slots, claim batch,
// gather timeout and completion batch, and the faults: node crashes at any
// point, stalls past the orphan grace period whose later writes must be
// superseded, heartbeat outages, graceful stops, clock jumps. After every
// step the simulator checks the invariants of docs/architecture.md against a model of what
// each store call must have done: claim order with aging, tags and
// permits, at most one current owner, fencing, exact orphan recovery and
// crash budget, release without charge, the retry path, no more bodies
// than slots, no recovery of a job claimed under a fresh heartbeat,
// nothing lost; and optionally an aging probe (a LOWEST job under a flood
// of CRITICAL ones, claimed within the bound the formula implies). The same
// seed gives a byte-identical trace; a violation is returned as a
// [*Violation] naming the seed, the invariant, a command that reproduces it
// and the last trace events concerning the jobs involved.
//
// [Scenario] can supply any store (NewStore) or wrap it (WrapStore) to show
// that a broken store is caught, and plant a broken engine decision
// (EngineBug, one of [EngineBugs]: a claim under a stale heartbeat, a claim
// past the free slots, heartbeats stopped before the drain, an off-by-one
// retry, an unfenced completion, a batch that loses a completion, skipped
// recurring slots left uncounted, a gate that runs a step after a failed
// parent, a callback cancelled instead of skipped) to show
// that a broken engine is caught: the engine's mutation test.
//
// The command simtest/cmd/simtest runs one seed or sweeps a range. The
// user test environment (simtest.NewEnv, RunTask) is the package simtest.
package cluster
