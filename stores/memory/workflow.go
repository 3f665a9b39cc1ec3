package memory

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

var _ spi.WorkflowStore = (*Store)(nil)

// link files the dependencies of a new job c (its parents are already
// stored, earlier in the same insert): c waits BLOCKED for them.
func (s *Store) link(c *spi.Job) {
	if c.WorkflowID != uuid.Nil {
		s.flows[c.WorkflowID] = append(s.flows[c.WorkflowID], c.ID)
	}
	c.DependencyCount, c.Waiting = len(c.Dependencies), 0
	if len(c.Dependencies) == 0 {
		c.Dependencies = nil
		return
	}
	deps := c.Dependencies
	c.Dependencies = nil
	for i := range deps {
		deps[i].ParentStatus = ""
		s.children[deps[i].ParentID] = append(s.children[deps[i].ParentID], c.ID)
	}
	s.deps[c.ID] = deps
	c.Status = spi.StatusBlocked
	c.Waiting = len(deps)
}

// finished records that j reached a terminal state at now on the
// dependencies of its dependents, and releases those that waited for it
// last.
func (s *Store) finished(j *spi.Job, now time.Time) { s.resolveLinks(j, j.Status, now) }

// resolveLinks records st on the dependencies on j that st resolves (a
// terminal state: those it does not hold; spi.TurnPassed: the fairness
// keys' links), and releases the dependents that waited for j last.
func (s *Store) resolveLinks(j *spi.Job, st spi.Status, now time.Time) {
	for _, cid := range s.children[j.ID] {
		c := s.jobs[cid]
		if c == nil {
			continue
		}
		deps := s.deps[cid]
		for i := range deps {
			if deps[i].ParentID == j.ID && deps[i].ParentStatus == "" {
				if st == spi.TurnPassed && deps[i].Allow != spi.TurnAllow {
					continue
				}
				if deps[i].Allow.Holds(st) && !s.bug("a sequence ignores its hold on failure") {
					continue
				}
				if !s.bug("dependencies do not record the parent's state") {
					deps[i].ParentStatus = st
				}
				c.Waiting--
			}
		}
		if c.Status == spi.StatusBlocked && (c.Waiting <= 0 || s.bug("a child is released by its first parent")) {
			s.release(c, now)
		}
	}
}

// release makes a BLOCKED job PENDING, due at the later of its due time and
// now.
func (s *Store) release(c *spi.Job, now time.Time) {
	c.Waiting = 0
	due := c.ScheduledAt
	if spi.Unblocked(due, now).Apply(c); s.bug("a released child keeps its old due time") {
		c.ScheduledAt = due
	}
	s.enqueue(c)
}

// revive undoes what the failure of the job parent did to its dependents
// (it is about to run again): each dependent that has not run yet, or that
// its dependencies cancelled or skipped, waits BLOCKED for parent again,
// and so on down the workflow.
func (s *Store) revive(parent uuid.UUID) {
	if s.bug("RetryFailedJob revives nothing") {
		return
	}
	frontier := []uuid.UUID{parent}
	for len(frontier) > 0 {
		p := frontier[0]
		frontier = frontier[1:]
		for _, cid := range s.children[p] {
			c := s.jobs[cid]
			if c == nil {
				continue
			}
			again := c.Status == spi.StatusBlocked || c.Status == spi.StatusPending ||
				((c.Status == spi.StatusCancelled || c.Status == spi.StatusSkipped) &&
					(spi.CancelledByDependency(c.LastError) || s.bug("RetryFailedJob revives jobs cancelled by hand")))
			if !again {
				continue
			}
			deps := s.deps[cid]
			for i := range deps {
				if deps[i].ParentID == p && deps[i].ParentStatus != "" {
					deps[i].ParentStatus = ""
					c.Waiting++
				}
			}
			if c.Status == spi.StatusCancelled || c.Status == spi.StatusSkipped {
				frontier = append(frontier, cid)
			}
			s.dequeue(cid)
			spi.Revived().Apply(c)
		}
	}
}

// hasLiveDependents reports whether a dependent of j has not finished: j
// then stays out of the archive.
func (s *Store) hasLiveDependents(j *spi.Job) bool {
	for _, cid := range s.children[j.ID] {
		if c := s.jobs[cid]; c != nil && !c.Status.Terminal() {
			return !s.bug("ArchiveJobs archives parents of unfinished children")
		}
	}
	return false
}

// unlink forgets the dependencies of an archived job and its place in its
// workflow's list of live jobs.
func (s *Store) unlink(j *spi.Job) {
	for _, d := range s.deps[j.ID] {
		s.children[d.ParentID] = slices.DeleteFunc(s.children[d.ParentID], func(id uuid.UUID) bool { return id == j.ID })
		if len(s.children[d.ParentID]) == 0 {
			delete(s.children, d.ParentID)
		}
	}
	delete(s.deps, j.ID)
	if j.WorkflowID != uuid.Nil {
		s.flows[j.WorkflowID] = slices.DeleteFunc(s.flows[j.WorkflowID], func(id uuid.UUID) bool { return id == j.ID })
		if len(s.flows[j.WorkflowID]) == 0 {
			delete(s.flows, j.WorkflowID)
		}
	}
}

// Dependencies implements spi.WorkflowStore.
func (s *Store) Dependencies(_ context.Context, id uuid.UUID) ([]spi.Dependency, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	if _, ok := s.jobs[id]; !ok {
		if _, ok := s.archive[id]; !ok {
			return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
		}
	}
	out := make([]spi.Dependency, len(s.deps[id]))
	for i, d := range s.deps[id] {
		d.ConditionArgs = slices.Clone(d.ConditionArgs)
		out[i] = d
	}
	return out, nil
}

// WorkflowJobs implements spi.WorkflowStore.
func (s *Store) WorkflowJobs(_ context.Context, id, after uuid.UUID, limit int) ([]*spi.Job, uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return nil, uuid.Nil, err
	}
	defer s.unlock()
	ids := slices.Clone(s.flows[id])
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return s.page(ids, spi.ListParams{After: after, Limit: limit}, func(id uuid.UUID) *spi.Job { return s.jobs[id] },
		func(*spi.Job) bool { return true })
}

// CancelWorkflow implements spi.WorkflowStore.
func (s *Store) CancelWorkflow(_ context.Context, id uuid.UUID, now time.Time) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.unlock()
	return s.cancelWorkflow(id, now), nil
}

// cancelWorkflow is CancelWorkflow with s.mu held.
func (s *Store) cancelWorkflow(id uuid.UUID, now time.Time) int {
	n := 0
	for _, jid := range s.flows[id] {
		j := s.jobs[jid]
		if j == nil || j.Status.Terminal() {
			continue
		}
		switch j.Status {
		case spi.StatusRunning:
			seq := j.ClaimSeq
			if s.abortLocked(j, now); s.bug("CancelWorkflow keeps the claim sequence of RUNNING jobs") {
				j.ClaimSeq = seq
			}
		case spi.StatusWaiting:
			delete(s.waits, jid)
			j.Signal.Outcome, j.Signal.ResolvedAt = spi.SignalCancelled, now
			spi.Woken(spi.SignalCancelled, now).Apply(j)
		default:
			s.dequeue(jid)
			spi.Cancelled(now).Apply(j)
		}
		n++
	}
	// Every job of the workflow has finished: record it on their
	// dependencies (nothing is left to release).
	for _, jid := range s.flows[id] {
		if j := s.jobs[jid]; j != nil {
			s.finished(j, now)
		}
	}
	return n
}

// RepairWorkflows implements spi.WorkflowStore. The memory store releases
// in the write that finishes the last parent, so it finds nothing unless a
// caller finished a parent without telling it (which it cannot).
func (s *Store) RepairWorkflows(_ context.Context, now time.Time, limit int) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.unlock()
	n := 0
	for _, id := range s.order {
		if n >= limit {
			break
		}
		c := s.jobs[id]
		if c.Status != spi.StatusBlocked {
			continue
		}
		deps, done := s.deps[id], true
		for _, d := range deps {
			if st := s.parentStatus(d.ParentID); !st.Terminal() {
				done = false
				break
			}
		}
		if !done {
			continue
		}
		for i := range deps {
			if deps[i].ParentStatus == "" {
				deps[i].ParentStatus = s.parentStatus(deps[i].ParentID)
			}
		}
		s.release(c, now)
		n++
	}
	return n, nil
}

// parentStatus is the status of a parent, live or archived; a parent that
// no longer exists counts as CANCELLED.
func (s *Store) parentStatus(id uuid.UUID) spi.Status {
	if p := s.jobs[id]; p != nil {
		return p.Status
	}
	if a, ok := s.archive[id]; ok {
		return a.job.Status
	}
	return spi.StatusCancelled
}
