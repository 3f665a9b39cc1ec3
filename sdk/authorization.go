package ratchet

import (
	"context"
	"errors"
	"fmt"
)

// ErrUnauthorized reports a job that the AuthorizationPolicy refused: to
// create (nothing of the submission is written) or to run (it fails
// without running).
var ErrUnauthorized = errors.New("ratchet: unauthorized")

// SurfaceRecurring is a recurring schedule as an AuthorizationPolicy sees
// it: registered (PutSchedule) or triggered (TriggerSchedule). The jobs its
// slots fire are not checked again.
const SurfaceRecurring Surface = "recurring"

// CreateRequest is a job about to be created, as CheckCreate sees it.
type CreateRequest struct {
	// Surface is what the job is: SurfaceTask (a submission or a workflow
	// step), SurfaceCallback, SurfaceBatchChild, or SurfaceRecurring (a
	// schedule registered or triggered; Job is then the template of its
	// jobs).
	Surface Surface
	// Job is the job as it will be written, its payload encoded (a
	// workflow's or batch's links are set after the check).
	Job *Job
	// ScheduleID names the schedule of a SurfaceRecurring request.
	ScheduleID string
}

// AuthorizationPolicy decides who may create jobs and which may run (the
// spec's JobAuthorizationPolicy). The caller's identity is the policy's
// to read from the context of the call (a value the application put
// there); the engine's own calls (a node registering Options.Schedules)
// carry the engine's context. Implementations must be safe for
// concurrent use.
type AuthorizationPolicy interface {
	// CheckCreate is called before anything is written, once for each job
	// a submission would create (its callbacks, workflow steps and batch
	// children included) and for a schedule registered or triggered; an
	// error refuses the whole call, wrapped with ErrUnauthorized.
	CheckCreate(ctx context.Context, r CreateRequest) error
	// CheckExecute is called at dispatch, before the payload is decoded
	// and the body runs; an error fails the job without running
	// (DLQ), wrapped with ErrUnauthorized.
	CheckExecute(ctx context.Context, j *Job) error
}

// authorize asks the client's policy whether job j of surface s may be
// created.
func (c *Client) authorize(ctx context.Context, s Surface, j *Job, scheduleID string) error {
	if c.auth == nil {
		return nil
	}
	if err := c.auth.CheckCreate(ctx, CreateRequest{Surface: s, Job: j, ScheduleID: scheduleID}); err != nil {
		return fmt.Errorf("%s %q refused: %w: %w", s, j.TaskName, ErrUnauthorized, err)
	}
	return nil
}

// Authorization returns the client's policy; nil for none.
func (c *Client) Authorization() AuthorizationPolicy { return c.auth }
