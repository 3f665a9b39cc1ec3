// Package simtest tests Ratchet jobs and Ratchet itself on simulated time.
//
// It has three parts.
//
// # The test environment
//
// [NewEnv] gives a test its own memory store, a fake clock and a real
// engine.Engine running on that clock, with the test's tasks registered as
// production registers them. Submit through [Env.Client]; drive time with
// [Env.Advance] and [Env.RunUntilIdle], which skips the clock straight to
// the next due job, retry backoff, simulated delay or callback, so a job
// that retries for a simulated day finishes in milliseconds; act at a
// simulated time with [Env.RegisterDelayedCallback]. Replace task bodies
// with mocks ([Env.Mock], [Env.MockTask], [MockFunc]): return a value, an
// error or DoNotRetry, run a function, only N times, after a simulated
// delay. Inspect jobs ([Env.Job], [Env.DLQ]), what ran when
// ([Env.Executions]) and an event log with simulated timestamps
// ([Env.Events], [Env.EventLog]); assert calls with [Env.AssertCalled] and
// its siblings.
//
// The engine makes progress only inside Advance and RunUntilIdle, and the
// environment waits, at each simulated instant, until the engine is idle
// before moving the clock: a claim is in flight until the engine publishes
// its outcome. So a test sees the same event log on every run.
//
// # Testing one job body
//
// [RunTask] runs a task's body once with no engine, store or clock, with a
// fake JobContext (id, run number, params, logger), like River's
// rivertest.Worker.
//
// # The simulator
//
// [Simulate] runs K virtual nodes over one spi.Store on one fake clock,
// stepped one action at a time by a seeded, single-goroutine discrete-event
// loop: poll and claim (with the node's tag filter), execute (outcome drawn
// from the seed), complete with the claim's fence, heartbeat (with the
// claim check that cancels bodies recovered from under the node), orphan
// scan, graceful stop with drain timeout; the retry decision is
// engine.DecideRetry itself. The seed also chooses the submissions
// (priorities, delays, retries and backoff, idempotency keys, tags,
// optionally resource permits, poison jobs that crash their node every
// time) and the faults: node crashes at any point, stalls past the orphan
// grace period whose later writes must be superseded, graceful stops,
// clock jumps. After every step the simulator checks DESIGN.md's
// invariants against a model of what each store call must have done: claim
// order with aging, tags and permits, at most one current owner, fencing,
// exact orphan recovery and crash budget, release without charge, the
// retry path, nothing lost; and optionally an aging probe (a LOWEST job
// under a flood of CRITICAL ones, claimed within the bound the formula
// implies). The same seed gives a byte-identical trace; a violation is
// returned as a [*Violation] naming the seed, the invariant, a command
// that reproduces it and the last trace events concerning the jobs
// involved. [Scenario] can supply any store (NewStore) or wrap it
// (WrapStore) to show that a broken variant is caught.
//
// The command simtest/cmd/simtest runs one seed or sweeps a range.
package simtest
