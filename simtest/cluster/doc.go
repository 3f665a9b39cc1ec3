// Package cluster is the seeded whole-cluster simulator that checks Ratchet
// itself: [Simulate] runs K virtual nodes over one spi.Store on one fake clock,
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
// The command simtest/cmd/simtest runs one seed or sweeps a range. The
// user test environment (simtest.NewEnv, RunTask) is the package simtest.
package cluster
