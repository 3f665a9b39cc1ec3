// Package demo runs the ratchet command's demo: a node on a real store
// working a realistic mix of jobs (most succeed, some fail once and succeed
// on a retry, some return DoNotRetry, some exhaust their retries, some are
// delayed), with progress and a summary that checks that every job reached
// the state expected for it.
package demo
