package ratchet

import (
	"context"
	"fmt"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// PausedTask is one paused task (Client.PausedTasks): its name and since
// when it is paused.
type PausedTask = spi.PausedTask

// PauseTask pauses task fleet-wide: from the moment it returns, no node's
// claim takes a job of the task, whichever node runs it and however many
// restart, until ResumeTask. Submissions are still accepted and wait
// PENDING; jobs already RUNNING run on and finish as usual (cancel them
// with CancelJob or Bulk). Pausing a paused task is no error and keeps its
// first pause time. A store without spi.TaskPauser gives an error wrapping
// ErrUnsupported.
func (c *Client) PauseTask(ctx context.Context, task string) error {
	p, err := c.pauser("pause task")
	if err != nil {
		return err
	}
	if task == "" {
		return invalidArg("pause task: empty task name")
	}
	_, err = p.PauseTask(ctx, task, c.now())
	return err
}

// ResumeTask ends the pause of task: its due jobs are claimed again (the
// nodes on this client's engine, and, through the store's or the
// coordinator's wakeups, the others, are woken at once). Resuming a task
// that is not paused is no error.
func (c *Client) ResumeTask(ctx context.Context, task string) error {
	p, err := c.pauser("resume task")
	if err != nil {
		return err
	}
	resumed, err := p.ResumeTask(ctx, task)
	if err == nil && resumed && c.notifier != nil {
		c.notifier.NotifyNewWork(PriorityCritical)
	}
	return err
}

// PausedTasks returns the paused tasks, ordered by name.
func (c *Client) PausedTasks(ctx context.Context) ([]PausedTask, error) {
	p, err := c.pauser("read paused tasks")
	if err != nil {
		return nil, err
	}
	return p.PausedTasks(ctx)
}

// pauser is the store's spi.TaskPauser, or an error naming op.
func (c *Client) pauser(op string) (spi.TaskPauser, error) {
	p := spi.CapabilitiesOf(c.store).Pauser
	if p == nil {
		return nil, fmt.Errorf("ratchet: %s: %w: store %T cannot pause tasks", op, ErrUnsupported, c.store)
	}
	return p, nil
}
