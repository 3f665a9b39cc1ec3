// Package simtest tests Ratchet jobs on simulated time.
//
// It has two parts.
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
// its siblings. Recurring schedules (engine.Options.Schedules) fire at
// each slot's simulated time as Advance moves through the slots: the Env
// runs the engine's RecurringPass itself at each instant; RunUntilIdle
// does not wait for a next slot.
//
// The engine makes progress only inside Advance and RunUntilIdle, and the
// environment waits, at each simulated instant, until the engine is idle
// before moving the clock: a claim is in flight until the engine publishes
// its outcome. So a test sees the same event log on every run.
//
// # Testing one job body
//
// [RunTask] runs a task's body once with no engine, store or clock, with a
// fake JobContext (id, run number, params, properties, logger, and job
// state the test seeds and reads back), like River's rivertest.Worker.
//
// The seeded whole-cluster simulator is the package simtest/cluster.
package simtest
