// Package nodecore holds what a node of the engine decides, as pure
// functions of their inputs, and the passes that the engine and the cluster
// simulator both run: when to claim and how much (PollPolicy,
// AdaptivePolling), the order of a graceful stop (StopOrder), the owner
// write that ends an execution (CompletionOf, DecideRetry, Jittered,
// GateCompletion), how completions are batched (NextBatch), and what a
// recurring schedule fires (PlanFire, RecurringPass).
//
// The engine's parts call them; the cluster simulator (simtest/cluster)
// steps the same functions on its own event loop, so that what it checks
// is the engine's own code rather than a model of it. The package is
// internal to the repository: users configure the engine through
// engine.Options, never through these.
package nodecore
