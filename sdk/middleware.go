package ratchet

import (
	"context"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// InsertFunc writes jobs: the store's insert at the end of the chain.
type InsertFunc func(ctx context.Context, jobs []*Job) ([]spi.InsertResult, error)

// InsertMiddleware wraps every submission, typed or raw, after the jobs are
// built and their payloads encoded, and before the store writes them
// (River's JobInsertMiddleware, Temporal's client interceptors): tracing,
// metrics, authorization and audit plug in here. It may change the jobs
// (add a tag, a param), refuse them with an error (nothing is written), or
// observe the results. It must call next at most once.
type InsertMiddleware func(ctx context.Context, jobs []*Job, next InsertFunc) ([]spi.InsertResult, error)

// WorkFunc runs a job's body: the task at the end of the chain. Its result
// is what the task returned (nil for a void task).
type WorkFunc func(ctx context.Context, j *Job) (any, error)

// WorkMiddleware wraps every execution of a body on an engine (River's
// WorkerMiddleware, Temporal's worker interceptors): tracing, metrics,
// breakers and job-log capture plug in here. ctx carries the JobContext
// (JobFromContext). The error it returns goes through the retry decision
// as the body's own would; a middleware that skips next (a breaker that is
// open) returns the error that should be decided on.
type WorkMiddleware func(ctx context.Context, j *Job, next WorkFunc) (any, error)

// ChainInsert returns end wrapped in mws, the first outermost.
func ChainInsert(end InsertFunc, mws ...InsertMiddleware) InsertFunc {
	for i := len(mws) - 1; i >= 0; i-- {
		mw, next := mws[i], end
		end = func(ctx context.Context, jobs []*Job) ([]spi.InsertResult, error) { return mw(ctx, jobs, next) }
	}
	return end
}

// ChainWork returns end wrapped in mws, the first outermost.
func ChainWork(end WorkFunc, mws ...WorkMiddleware) WorkFunc {
	for i := len(mws) - 1; i >= 0; i-- {
		mw, next := mws[i], end
		end = func(ctx context.Context, j *Job) (any, error) { return mw(ctx, j, next) }
	}
	return end
}
