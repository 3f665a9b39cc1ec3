package engine

import "context"

// LifecycleHook is told of an engine's start and stop: the spec's
// SchedulerLifecycleHook. Embed NoOpHook to implement only the calls you
// need. Hooks run in the order of Options.Hooks, on the goroutine of Start
// or Stop.
type LifecycleHook interface {
	// BeforeStart runs first in Start, before anything is started; an
	// error stops Start there (the engine can be started again).
	BeforeStart(ctx context.Context) error
	// AfterStart runs once the engine runs: claiming, heartbeats and the
	// services are started.
	AfterStart(ctx context.Context)
	// BeforeStop runs first in Stop, while the engine still claims.
	BeforeStop(ctx context.Context)
	// AfterStop runs last in Stop, once every job finished or was
	// released and the node's row is gone.
	AfterStop(ctx context.Context)
}

// NoOpHook is a LifecycleHook that does nothing; its zero value is ready
// to use.
type NoOpHook struct{}

// BeforeStart does nothing.
func (NoOpHook) BeforeStart(context.Context) error { return nil }

// AfterStart does nothing.
func (NoOpHook) AfterStart(context.Context) {}

// BeforeStop does nothing.
func (NoOpHook) BeforeStop(context.Context) {}

// AfterStop does nothing.
func (NoOpHook) AfterStop(context.Context) {}
