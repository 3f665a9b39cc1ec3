// Package demo runs the ratchet command's demo: a node on a real store
// working a realistic mix of jobs (most succeed, some fail once and succeed
// on a retry, some return DoNotRetry, some exhaust their retries, some are
// delayed), with a recurring schedule firing every second and, on a store
// that keeps workflows, an 11-step workflow (a fan-out and a join, a failing
// step with its OnFailure and OnSuccess callbacks and a dependent that its
// failure cancels), with progress and a summary that checks that every job
// reached the state expected for it.
package demo
