package ratchet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TaskBacklog is the PENDING jobs of one task: how many, and the earliest
// scheduled time among them.
type TaskBacklog = spi.TaskBacklog

// UnrunnableTasks returns, ordered by task, the tasks that have PENDING
// jobs that no live node runs: no node whose heartbeat is at most
// liveWithin old (use the fleet's orphan grace) registered the task. A
// node claims only the jobs of its own tasks, so in a mixed fleet these
// jobs wait for a node that may never come: a task dropped from the code
// while jobs of it were queued, a deploy that has not reached any node
// yet, or no node running at all. A live node that recorded no tasks (one
// of a version before nodes recorded them) counts as running every task.
//
// It needs a store that records the tasks of its nodes
// ([spi.NodeTaskStore], every store of this module); with another it fails
// with an error wrapping [errors.ErrUnsupported].
func (c *Client) UnrunnableTasks(ctx context.Context, liveWithin time.Duration) ([]TaskBacklog, error) {
	if liveWithin <= 0 {
		return nil, invalidArg("liveWithin must be positive, got %s", liveWithin)
	}
	nodes := spi.CapabilitiesOf(c.store).Nodes
	if nodes == nil {
		return nil, fmt.Errorf("ratchet: the store (%T) does not record the tasks of its nodes: %w", c.store, errors.ErrUnsupported)
	}
	live, err := nodes.LiveNodes(ctx, c.now().Add(-liveWithin))
	if err != nil {
		return nil, fmt.Errorf("ratchet: list the live nodes: %w", err)
	}
	run := map[string]bool{}
	for _, n := range live {
		if n.Tasks == nil {
			return nil, nil // a node that runs any task
		}
		for _, t := range n.Tasks {
			run[t] = true
		}
	}
	pending, err := nodes.PendingTasks(ctx)
	if err != nil {
		return nil, fmt.Errorf("ratchet: count the pending jobs per task: %w", err)
	}
	return slices.DeleteFunc(pending, func(b TaskBacklog) bool { return run[b.Task] }), nil
}
