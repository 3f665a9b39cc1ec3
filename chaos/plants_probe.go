package chaos

import (
	"context"
	"sync"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Planted defects of the schedules and the workflows (see Plants).
const (
	// PlantSkipSlot drops the jobs of a worker's first schedule fire and
	// of every third one after, while the schedule advances as if they
	// were written: slots without a job (recurring-slots).
	PlantSkipSlot = "skip-slot"
	// PlantRunFailedChildren reports every parent of a workflow job that
	// ended FAILED as SUCCEEDED when the worker decides whether the job
	// runs: the child of a failed step runs (workflow-order).
	PlantRunFailedChildren = "run-failed-children"
)

// plantCaps returns caps with the planted schedule or workflow defect of
// kind, if it is one.
func plantCaps(kind string, caps spi.Capabilities) spi.Capabilities {
	switch {
	case kind == PlantSkipSlot && caps.Schedules != nil:
		caps.Schedules = &skipSlots{ScheduleStore: caps.Schedules}
	case kind == PlantRunFailedChildren && caps.Workflows != nil:
		caps.Workflows = failedAsSucceeded{caps.Workflows}
	}
	return caps
}

// skipSlots is a schedule store that drops the jobs of the first fire and
// every third one after.
type skipSlots struct {
	spi.ScheduleStore
	mu sync.Mutex
	n  int
}

// FireSchedule applies f, without its jobs the first time and every third
// one after.
func (s *skipSlots) FireSchedule(ctx context.Context, f spi.ScheduleFire) (bool, []spi.InsertResult, error) {
	if len(f.Jobs) > 0 {
		s.mu.Lock()
		s.n++
		drop := s.n%3 == 1
		s.mu.Unlock()
		if drop {
			n := len(f.Jobs)
			f.Jobs, f.LastJobID = nil, uuid.Nil
			ok, _, err := s.ScheduleStore.FireSchedule(ctx, f)
			return ok, make([]spi.InsertResult, n), err
		}
	}
	return s.ScheduleStore.FireSchedule(ctx, f)
}

// failedAsSucceeded is a workflow store whose dependencies show a FAILED
// parent as SUCCEEDED.
type failedAsSucceeded struct{ spi.WorkflowStore }

// Dependencies returns id's dependencies, FAILED parents as SUCCEEDED.
func (w failedAsSucceeded) Dependencies(ctx context.Context, id uuid.UUID) ([]spi.Dependency, error) {
	deps, err := w.WorkflowStore.Dependencies(ctx, id)
	for i := range deps {
		if deps[i].ParentStatus == ratchet.StatusFailed {
			deps[i].ParentStatus = ratchet.StatusSucceeded
		}
	}
	return deps, err
}
