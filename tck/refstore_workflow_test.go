package tck

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The reference store's workflows: each child's dependencies in refDeps,
// found from a parent by a scan.

// The defects of workflows the self-test plants.
const (
	bugReleaseFirstParent   bug = "a child is released by its first parent"
	bugReleaseKeepsDue      bug = "a released child keeps its old due time"
	bugNoReleaseOnRecovery  bug = "a crash-budget failure releases nothing"
	bugNoReleaseOnCancel    bug = "CancelJob releases nothing"
	bugCancelBlockedRefused bug = "CancelJob refuses BLOCKED jobs"
	bugRetryNoRevive        bug = "RetryFailedJob revives nothing"
	bugReviveManualCancel   bug = "RetryFailedJob revives jobs cancelled by hand"
	bugCancelFlowKeepsSeq   bug = "CancelWorkflow keeps the claim sequence of RUNNING jobs"
	bugArchiveParents       bug = "ArchiveJobs archives parents of unfinished children"
	bugWorkflowUnchecked    bug = "InsertJobs writes workflows without checking them"
	bugNoParentStatus       bug = "dependencies do not record the parent's state"
)

// linkLocked files a new job's dependencies.
func (s *refStore) linkLocked(c *spi.Job) {
	c.DependencyCount, c.Waiting = len(c.Dependencies), len(c.Dependencies)
	if len(c.Dependencies) > 0 {
		for i := range c.Dependencies {
			c.Dependencies[i].ParentStatus = ""
		}
		s.deps[c.ID] = c.Dependencies
		c.Status = spi.StatusBlocked
	}
	c.Dependencies = nil
}

// childrenLocked returns the ids of the jobs that depend on parent, sorted.
func (s *refStore) childrenLocked(parent uuid.UUID) []uuid.UUID {
	var out []uuid.UUID
	for cid, ds := range s.deps {
		for _, d := range ds {
			if d.ParentID == parent {
				out = append(out, cid)
			}
		}
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// finishedLocked records j's terminal state on its dependents and releases
// those it was the last for.
func (s *refStore) finishedLocked(j *spi.Job, now time.Time) {
	for _, cid := range s.childrenLocked(j.ID) {
		r := s.rows[cid]
		if r == nil {
			continue
		}
		c := r.job
		for i, d := range s.deps[cid] {
			if d.ParentID == j.ID && d.ParentStatus == "" {
				s.deps[cid][i].ParentStatus = j.Status
				c.Waiting--
			}
		}
		if c.Status == spi.StatusBlocked && c.Waiting == 0 {
			c.Status = spi.StatusPending
			if c.ScheduledAt.Before(now) {
				c.ScheduledAt = now
			}
		}
	}
}

// reviveLocked makes the dependents that parent's failure cancelled or
// skipped, and theirs, wait for it again.
func (s *refStore) reviveLocked(parent uuid.UUID) {
	for _, cid := range s.childrenLocked(parent) {
		c := s.rows[cid].job
		byDep := spi.CancelledByDependency(c.LastError)
		done := c.Status == spi.StatusCancelled || c.Status == spi.StatusSkipped
		if !(c.Status == spi.StatusBlocked || c.Status == spi.StatusPending || (done && byDep)) {
			continue
		}
		for i, d := range s.deps[cid] {
			if d.ParentID == parent && d.ParentStatus != "" {
				s.deps[cid][i].ParentStatus = ""
				c.Waiting++
			}
		}
		c.Status, c.FinishedAt, c.LastError = spi.StatusBlocked, time.Time{}, ""
		if done {
			s.reviveLocked(cid)
		}
	}
}

// liveDependentsLocked reports whether a dependent of id has not finished.
func (s *refStore) liveDependentsLocked(id uuid.UUID) bool {
	for _, cid := range s.childrenLocked(id) {
		if r := s.rows[cid]; r != nil && !r.job.Status.Terminal() {
			return true
		}
	}
	return false
}

func (s *refStore) Dependencies(_ context.Context, id uuid.UUID) ([]spi.Dependency, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	if _, ok := s.rows[id]; !ok {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	out := slices.Clone(s.deps[id])
	for i := range out {
		out[i].ConditionArgs = bytes.Clone(out[i].ConditionArgs)
	}
	return out, nil
}

func (s *refStore) WorkflowJobs(_ context.Context, id, after uuid.UUID, limit int) ([]*spi.Job, uuid.UUID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, uuid.Nil, err
	}
	all := slices.Clone(s.order)
	sortUUIDs(all)
	var out []*spi.Job
	for _, jid := range all {
		j := s.rows[jid].job
		if j.WorkflowID != id || bytes.Compare(jid[:], after[:]) <= 0 {
			continue
		}
		if len(out) == limit {
			return out, out[len(out)-1].ID, nil
		}
		out = append(out, j.Clone())
	}
	return out, uuid.Nil, nil
}

func (s *refStore) CancelWorkflow(_ context.Context, id uuid.UUID, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	return s.cancelWorkflowLocked(id, now), nil
}

// cancelWorkflowLocked is CancelWorkflow with s.mu held.
func (s *refStore) cancelWorkflowLocked(id uuid.UUID, now time.Time) int {
	var hit []*spi.Job
	for _, jid := range s.order {
		j := s.rows[jid].job
		if j.WorkflowID != id || j.Status.Terminal() {
			continue
		}
		if j.Status == spi.StatusRunning {
			s.leaveRunning(j)
			j.ClaimSeq++
			j.OwnerNode = ""
		}
		if j.Status == spi.StatusWaiting {
			j.Signal.Outcome, j.Signal.ResolvedAt = spi.SignalCancelled, now
		}
		j.Status, j.FinishedAt = spi.StatusCancelled, now
		hit = append(hit, j)
	}
	for _, j := range hit {
		s.finishedLocked(j, now)
	}
	return len(hit)
}

func (s *refStore) RepairWorkflows(_ context.Context, now time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	n := 0
	for _, cid := range s.order {
		c := s.rows[cid].job
		if n >= limit || c.Status != spi.StatusBlocked {
			continue
		}
		states := make([]spi.Status, len(s.deps[cid]))
		ok := true
		for i, d := range s.deps[cid] {
			states[i] = spi.StatusCancelled
			if p := s.rows[d.ParentID]; p != nil {
				states[i] = p.job.Status
			} else if a := s.archived[d.ParentID]; a != nil {
				states[i] = a.Status
			}
			ok = ok && states[i].Terminal()
		}
		if !ok {
			continue
		}
		for i := range s.deps[cid] {
			s.deps[cid][i].ParentStatus = states[i]
		}
		c.Waiting, c.Status = 0, spi.StatusPending
		if c.ScheduledAt.Before(now) {
			c.ScheduledAt = now
		}
		n++
	}
	return n, nil
}

var _ spi.WorkflowStore = (*refStore)(nil)
