package memory

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Store is the in-memory spi.Store. Create it with New; the zero value is not
// usable.
type Store struct {
	mu      sync.Mutex
	closed  bool
	jobs    map[uuid.UUID]*spi.Job
	order   []uuid.UUID // all ids, sorted
	byKey   map[string]uuid.UUID
	queued  map[uuid.UUID]*entry                     // current heap entry of each PENDING job
	levels  map[string]*[spi.NumPriorities]levelHeap // per task name: a claim reads only its tasks' heaps
	running map[uuid.UUID]struct{}
	holders map[string]int // RUNNING jobs per resource
	nodes   map[string]time.Time
	tasks   map[string][]string // the tasks each node recorded with its heartbeat
	leases  map[string]lease
	states  map[stateKey]spi.VersionedState
	props   map[uuid.UUID]map[string]string
	scheds  map[string]spi.ScheduleRow
	skips   map[string][]spi.SkipRecord // per schedule, in fire order
	archive map[uuid.UUID]archived      // archived jobs (JobArchiver)
	arcIDs  []uuid.UUID                 // their ids, sorted
	logs    map[uuid.UUID][]spi.LogLine // job logs (JobLogStore), in (claim, line) order
	// Workflows (WorkflowStore): each child's dependencies, each parent's
	// children, each workflow's live jobs.
	deps     map[uuid.UUID][]spi.Dependency
	children map[uuid.UUID][]uuid.UUID
	flows    map[uuid.UUID][]uuid.UUID
	// Signals (SignalStore): the WAITING jobs.
	waits map[uuid.UUID]struct{}
	// Batches (BatchStore); their children are in flows.
	batches map[uuid.UUID]*spi.Batch
	// The audit log (AuditLog), in Seq order, and the last Seq given.
	audit    []spi.AuditEntry
	auditSeq int64
	// Wakeups (WakeupListener): the listeners, and the wakeup the call
	// holding s.mu owes them.
	listeners    map[int]func(spi.WakeupHint)
	nextListener int
	owed         bool
	hint         spi.WakeupHint
}

type lease struct {
	owner   string
	expires time.Time
}

type stateKey struct {
	id uuid.UUID
	ns string
}

var (
	_ spi.Store            = (*Store)(nil)
	_ spi.ClaimChecker     = (*Store)(nil)
	_ spi.LeaseStore       = (*Store)(nil)
	_ spi.JobStateStore    = (*Store)(nil)
	_ spi.JobPropertyStore = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{
		levels:  map[string]*[spi.NumPriorities]levelHeap{},
		jobs:    map[uuid.UUID]*spi.Job{},
		byKey:   map[string]uuid.UUID{},
		queued:  map[uuid.UUID]*entry{},
		running: map[uuid.UUID]struct{}{},
		holders: map[string]int{},
		nodes:   map[string]time.Time{},
		tasks:   map[string][]string{},
		leases:  map[string]lease{},
		states:  map[stateKey]spi.VersionedState{},
		props:   map[uuid.UUID]map[string]string{},
		scheds:  map[string]spi.ScheduleRow{},
		skips:   map[string][]spi.SkipRecord{},
		archive: map[uuid.UUID]archived{},
		logs:    map[uuid.UUID][]spi.LogLine{},

		deps:     map[uuid.UUID][]spi.Dependency{},
		children: map[uuid.UUID][]uuid.UUID{},
		flows:    map[uuid.UUID][]uuid.UUID{},
		waits:    map[uuid.UUID]struct{}{},
		batches:  map[uuid.UUID]*spi.Batch{},

		listeners: map[int]func(spi.WakeupHint){},
	}
}

type entry struct {
	id    uuid.UUID
	due   time.Time
	valid bool
}

func entryLess(a, b *entry) bool {
	if !a.due.Equal(b.due) {
		return a.due.Before(b.due)
	}
	return bytes.Compare(a.id[:], b.id[:]) < 0
}

type levelHeap []*entry

func (h levelHeap) Len() int           { return len(h) }
func (h levelHeap) Less(i, j int) bool { return entryLess(h[i], h[j]) }
func (h levelHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *levelHeap) Push(x any)        { *h = append(*h, x.(*entry)) }
func (h *levelHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

func (s *Store) lock() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return spi.ErrClosed
	}
	return nil
}

// enqueue files a PENDING job in its level's heap.
func (s *Store) enqueue(j *spi.Job) {
	if old := s.queued[j.ID]; old != nil {
		old.valid = false
	}
	e := &entry{id: j.ID, due: j.ScheduledAt, valid: true}
	s.queued[j.ID] = e
	s.owe(j)
	heap.Push(&s.taskLevels(j.TaskName)[j.Priority], e)
}

// taskLevels returns the level heaps of task, creating them.
func (s *Store) taskLevels(task string) *[spi.NumPriorities]levelHeap {
	l := s.levels[task]
	if l == nil {
		l = new([spi.NumPriorities]levelHeap)
		s.levels[task] = l
	}
	return l
}

// dequeue forgets the heap entry of a job leaving PENDING.
func (s *Store) dequeue(id uuid.UUID) {
	if e := s.queued[id]; e != nil {
		e.valid = false
		delete(s.queued, id)
	}
}

// InsertJobs implements spi.Store.
func (s *Store) InsertJobs(_ context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	res, err := s.insertLocked(jobs)
	if s.owed {
		s.hint.Source = o.Source
	}
	return res, err
}

// insertLocked is InsertJobs with s.mu held.
func (s *Store) insertLocked(jobs []*spi.Job) ([]spi.InsertResult, error) {
	if err := spi.ValidateJobs(jobs); err != nil {
		return nil, fmt.Errorf("memory: insert: %w", err)
	}
	for _, j := range jobs {
		if _, dup := s.jobs[j.ID]; dup {
			return nil, fmt.Errorf("memory: insert: job id %s already exists", j.ID)
		}
	}
	res := make([]spi.InsertResult, len(jobs))
	for i, j := range jobs {
		if j.IdempotencyKey != "" {
			if id, ok := s.byKey[j.IdempotencyKey]; ok {
				res[i] = spi.InsertResult{ID: id, Duplicate: true}
				continue
			}
			s.byKey[j.IdempotencyKey] = j.ID
		}
		c := j.Clone()
		c.Status = spi.StatusPending
		if len(c.Properties) > 0 {
			s.props[c.ID], c.Properties = c.Properties, nil // kept where PutProperty keeps them
		}
		s.jobs[c.ID] = c
		s.insertOrder(c.ID)
		s.link(c)
		if s.await(c); c.Status == spi.StatusPending {
			s.enqueue(c)
		}
		res[i] = spi.InsertResult{ID: c.ID}
	}
	return res, nil
}

func (s *Store) insertOrder(id uuid.UUID) {
	n := len(s.order)
	if n == 0 || bytes.Compare(s.order[n-1][:], id[:]) < 0 {
		s.order = append(s.order, id)
		return
	}
	i := sort.Search(n, func(i int) bool { return bytes.Compare(s.order[i][:], id[:]) >= 0 })
	s.order = slices.Insert(s.order, i, id)
}

// GetJob implements spi.Store.
func (s *Store) GetJob(_ context.Context, id uuid.UUID) (*spi.Job, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	j, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	return j.Clone(), nil
}

// ListJobs implements spi.Store.
func (s *Store) ListJobs(_ context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return nil, uuid.Nil, err
	}
	defer s.unlock()
	return page(s.order, p, func(id uuid.UUID) *spi.Job { return s.jobs[id] },
		func(j *spi.Job) bool { return s.listed(p, j) })
}

// page lists one page of the jobs of ids (sorted) that keep passes, above
// p.After, in id order.
func page(ids []uuid.UUID, p spi.ListParams, job func(uuid.UUID) *spi.Job, keep func(*spi.Job) bool) ([]*spi.Job, uuid.UUID, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	start := sort.Search(len(ids), func(i int) bool { return bytes.Compare(ids[i][:], p.After[:]) > 0 })
	var out []*spi.Job
	for _, id := range ids[start:] {
		j := job(id)
		if !keep(j) {
			continue
		}
		if len(out) == limit {
			return out, out[len(out)-1].ID, nil
		}
		out = append(out, j.Clone())
	}
	return out, uuid.Nil, nil
}

// CountJobs implements spi.JobCounter.
func (s *Store) CountJobs(_ context.Context, p spi.ListParams, limit int) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.unlock()
	n := 0
	start := sort.Search(len(s.order), func(i int) bool { return bytes.Compare(s.order[i][:], p.After[:]) > 0 })
	for i := start; i < len(s.order) && n < limit; i++ {
		if s.listed(p, s.jobs[s.order[i]]) {
			n++
		}
	}
	return n, nil
}

// listed reports whether j passes p's filters; the caller holds s.mu.
func (s *Store) listed(p spi.ListParams, j *spi.Job) bool {
	if !p.Matches(j) {
		return false
	}
	if p.PropertyKey != "" {
		v, ok := s.props[j.ID][p.PropertyKey]
		return ok && v == p.PropertyValue
	}
	return true
}

// ClaimJobs implements spi.Store.
func (s *Store) ClaimJobs(_ context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	// Merge the five levels of each task the node runs lazily in claim
	// order: within a level the effective priority only grows with
	// waiting time, so each heap's head is its best job and the best head
	// overall is the next job to take. Jobs the node may not run (tag
	// filter) or that wait for a full resource are passed over and put
	// back afterwards. Heaps of tasks the claim does not list are not
	// read.
	var heaps []*levelHeap
	if len(p.Tasks) == 0 {
		for _, l := range s.levels {
			for lvl := range l {
				heaps = append(heaps, &l[lvl])
			}
		}
	} else {
		for _, t := range p.Tasks {
			if l := s.levels[t]; l != nil {
				for lvl := range l {
					heaps = append(heaps, &l[lvl])
				}
			}
		}
	}
	var out []*spi.Job
	var passed []*entry
	for len(out) < p.Limit {
		var best *levelHeap
		var bestEff int64
		for _, h := range heaps {
			for h.Len() > 0 && !(*h)[0].valid {
				heap.Pop(h)
			}
			if h.Len() == 0 || (*h)[0].due.After(p.Now) {
				continue
			}
			e := (*h)[0]
			eff := spi.EffectivePriority(s.jobs[e.id].Priority, e.due, p.Now, p.BoostInterval)
			if best == nil || eff > bestEff || (eff == bestEff && entryLess(e, (*best)[0])) {
				best, bestEff = h, eff
			}
		}
		if best == nil {
			break
		}
		e := heap.Pop(best).(*entry)
		j := s.jobs[e.id]
		if !p.Tags.Match(j.Tags) || (j.Resource != "" && s.holders[j.Resource] >= j.ResourceLimit) {
			passed = append(passed, e)
			continue
		}
		s.dequeue(j.ID)
		spi.Claimed(p.NodeID, p.Now).Apply(j)
		s.running[j.ID] = struct{}{}
		if j.Resource != "" {
			s.holders[j.Resource]++
		}
		out = append(out, j.Clone())
	}
	for _, e := range passed {
		j := s.jobs[e.id]
		heap.Push(&s.taskLevels(j.TaskName)[j.Priority], e)
	}
	return out, nil
}

// leaveRunning updates the bookkeeping of a job leaving RUNNING.
func (s *Store) leaveRunning(j *spi.Job) {
	delete(s.running, j.ID)
	if j.Resource != "" {
		if s.holders[j.Resource]--; s.holders[j.Resource] <= 0 {
			delete(s.holders, j.Resource)
		}
	}
}

// owned returns the job if ref is its current claim.
func (s *Store) owned(ref spi.ClaimRef) *spi.Job {
	j, ok := s.jobs[ref.JobID]
	if !ok || j.Status != spi.StatusRunning || j.ClaimSeq != ref.ClaimSeq {
		return nil
	}
	return j
}

// CompleteJobs implements spi.Store.
func (s *Store) CompleteJobs(_ context.Context, cs []spi.Completion) ([]bool, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	changes := make([]spi.Change, len(cs))
	for i, c := range cs {
		var err error
		if changes[i], err = c.Change(); err != nil {
			return nil, fmt.Errorf("memory: complete: %w", err)
		}
	}
	out := make([]bool, len(cs))
	seen := make(map[spi.ClaimRef]bool, len(cs))
	for i, c := range cs {
		first := !seen[c.ClaimRef]
		seen[c.ClaimRef] = true
		j := s.owned(c.ClaimRef)
		if j == nil {
			// A replay of a completion that applied already counts.
			out[i] = first && c.AlreadyApplied(s.jobs[c.JobID])
			continue
		}
		changes[i].Apply(j)
		s.leaveRunning(j)
		if j.Status == spi.StatusPending {
			s.enqueue(j)
		} else {
			s.finished(j, c.FinishedAt)
		}
		out[i] = true
	}
	return out, nil
}

// ReleaseJobs implements spi.Store.
func (s *Store) ReleaseJobs(_ context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	out := make([]bool, len(refs))
	for i, r := range refs {
		j := s.owned(r)
		if j == nil {
			continue
		}
		s.toPending(j, now)
		out[i] = true
	}
	return out, nil
}

// toPending returns a RUNNING job to PENDING due at now, fencing its owner.
func (s *Store) toPending(j *spi.Job, now time.Time) {
	spi.Released(now).Apply(j)
	s.leaveRunning(j)
	s.enqueue(j)
}

// RetryFailedJob implements spi.Store.
func (s *Store) RetryFailedJob(_ context.Context, id uuid.UUID, now time.Time) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	j, ok := s.jobs[id]
	if !ok {
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if j.Status != spi.StatusFailed {
		return fmt.Errorf("%w: job %s is %s, only FAILED jobs can be retried", spi.ErrInvalidState, id, j.Status)
	}
	s.retryLocked(j, now)
	return nil
}

// retryLocked moves FAILED job j back to PENDING due at now, and its
// dependents to waiting for it again.
func (s *Store) retryLocked(j *spi.Job, now time.Time) {
	spi.Retried(now).Apply(j)
	s.enqueue(j)
	s.revive(j.ID)
}

// CancelJob implements spi.Store.
func (s *Store) CancelJob(_ context.Context, id uuid.UUID, now time.Time) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	j, ok := s.jobs[id]
	if !ok {
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if !s.cancelLocked(j, now) {
		return fmt.Errorf("%w: job %s is %s, only PENDING, BLOCKED and WAITING jobs can be cancelled", spi.ErrInvalidState, id, j.Status)
	}
	return nil
}

// cancelLocked cancels j when it is PENDING, BLOCKED or WAITING (its wait
// then ends CANCELLED), with its dependents' cancel policies, and reports
// whether it did.
func (s *Store) cancelLocked(j *spi.Job, now time.Time) bool {
	switch j.Status {
	case spi.StatusWaiting:
		s.resolve(j, spi.SignalCancelled, nil, now)
		return true
	case spi.StatusPending, spi.StatusBlocked:
	default:
		return false
	}
	s.dequeue(j.ID)
	spi.Cancelled(now).Apply(j)
	s.finished(j, now)
	return true
}

// Heartbeat implements spi.Store.
func (s *Store) Heartbeat(_ context.Context, nodeID string, now time.Time) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	s.nodes[nodeID] = now
	return nil
}

// DeregisterNode implements spi.Store.
func (s *Store) DeregisterNode(_ context.Context, nodeID string) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	delete(s.nodes, nodeID)
	delete(s.tasks, nodeID)
	return nil
}

// HeartbeatTasks implements spi.NodeTaskStore.
func (s *Store) HeartbeatTasks(_ context.Context, nodeID string, tasks []string, now time.Time) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	s.nodes[nodeID] = now
	s.tasks[nodeID] = spi.TaskSet(tasks)
	return nil
}

// LiveNodes implements spi.NodeTaskStore.
func (s *Store) LiveNodes(_ context.Context, since time.Time) ([]spi.NodeInfo, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	var out []spi.NodeInfo
	for id, hb := range s.nodes {
		if !hb.Before(since) {
			out = append(out, spi.NodeInfo{ID: id, Heartbeat: hb, Tasks: slices.Clone(s.tasks[id])})
		}
	}
	slices.SortFunc(out, func(a, b spi.NodeInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// PendingTasks implements spi.NodeTaskStore.
func (s *Store) PendingTasks(context.Context) ([]spi.TaskBacklog, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	by := map[string]*spi.TaskBacklog{}
	for id := range s.queued {
		j := s.jobs[id]
		b := by[j.TaskName]
		if b == nil {
			b = &spi.TaskBacklog{Task: j.TaskName, Earliest: j.ScheduledAt}
			by[j.TaskName] = b
		}
		b.Pending++
		if j.ScheduledAt.Before(b.Earliest) {
			b.Earliest = j.ScheduledAt
		}
	}
	out := make([]spi.TaskBacklog, 0, len(by))
	for _, b := range by {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b spi.TaskBacklog) int { return strings.Compare(a.Task, b.Task) })
	return out, nil
}

// RecoverOrphans implements spi.Store.
func (s *Store) RecoverOrphans(_ context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	cutoff := p.Now.Add(-p.Grace)
	dead := func(node string) bool {
		if slices.Contains(p.Nodes, node) {
			return true
		}
		hb, ok := s.nodes[node]
		return !ok || hb.Before(cutoff)
	}
	ids := make([]uuid.UUID, 0)
	for id := range s.running {
		if dead(s.jobs[id].OwnerNode) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	out := make([]spi.RecoveredJob, 0, len(ids))
	for _, id := range ids {
		j := s.jobs[id]
		from := j.OwnerNode
		spi.Recovered(j.CrashCount, p.MaxCrashRedeliveries, p.LastError, p.Now).Apply(j)
		if s.leaveRunning(j); j.Status == spi.StatusPending {
			s.enqueue(j)
		} else {
			s.finished(j, p.Now)
		}
		out = append(out, spi.RecoveredJob{JobID: id, TaskName: j.TaskName, FromNode: from, NewStatus: j.Status, CrashCount: j.CrashCount})
	}
	for node, hb := range s.nodes {
		if slices.Contains(p.Nodes, node) || hb.Before(cutoff) {
			delete(s.nodes, node)
			delete(s.tasks, node)
		}
	}
	return out, nil
}

// Close implements spi.Store. The jobs are dropped.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.unlock()
	s.closed = true
	return nil
}
