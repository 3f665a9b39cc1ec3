package memory

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"maps"
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
	mu     sync.Mutex
	closed bool
	jobs   map[uuid.UUID]*spi.Job
	order  []uuid.UUID // all ids, sorted
	byKey  map[string]uuid.UUID
	// uniques maps each unique key to its holder, and uniqueOf each
	// holder to its key (unique.go).
	uniques  map[string]uniqueHold
	uniqueOf map[uuid.UUID]string
	queued   map[uuid.UUID]*entry                     // current heap entry of each PENDING job
	levels   map[string]*[spi.NumPriorities]levelHeap // per task name: a claim reads only its tasks' heaps
	running  map[uuid.UUID]struct{}
	holders  map[string]int // RUNNING jobs per resource
	// rates holds the starts (claim times) of each rate limit's resource
	// within its period, oldest first (ratelimit.go).
	rates   map[string][]time.Time
	rateNow time.Time // the latest claim time that started a rate-limited job
	nodes   map[string]time.Time
	tasks   map[string][]string // the tasks each node recorded with its heartbeat
	reports map[string]string   // the report each node recorded (spi.EncodeNodeReport)
	samples map[int64]string    // the job counts of each minute (spi.StatsSampleStore), by Unix time
	leases  map[string]lease
	states  map[stateKey]spi.VersionedState
	props   map[uuid.UUID]map[string]string
	scheds  map[string]spi.ScheduleRow
	skips   map[string][]spi.SkipRecord // per schedule, in fire order
	archive map[uuid.UUID]archived      // archived jobs (JobArchiver)
	arcIDs  []uuid.UUID                 // their ids, sorted
	logs    map[uuid.UUID][]spi.LogLine // job logs (JobLogStore), in (claim, line) order
	// attempts holds the attempt records (AttemptStore), in claim order.
	attempts map[uuid.UUID][]spi.Attempt
	// Workflows (WorkflowStore): each child's dependencies, each parent's
	// children, each workflow's live jobs.
	deps     map[uuid.UUID][]spi.Dependency
	children map[uuid.UUID][]uuid.UUID
	flows    map[uuid.UUID][]uuid.UUID
	// Signals (SignalStore): the WAITING jobs.
	waits map[uuid.UUID]struct{}
	// Batches (BatchStore); their children are in flows.
	batches map[uuid.UUID]*spi.Batch
	// The paused tasks (TaskPauser), with when each was paused.
	paused map[string]time.Time
	// The audit log (AuditLog), in Seq order, and the last Seq given.
	audit    []spi.AuditEntry
	auditSeq int64
	// Wakeups (WakeupListener): the listeners, and the wakeup the call
	// holding s.mu owes them; checkOwed: a claim check it owes them (it
	// cancelled RUNNING jobs).
	listeners    map[int]func(spi.WakeupHint)
	nextListener int
	owed         bool
	checkOwed    bool
	hint         spi.WakeupHint
	// The conformance kit's planted defect, in a build with the tag
	// ratchet_bugs (bugs.go).
	planted planted
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
		levels: map[string]*[spi.NumPriorities]levelHeap{},
		jobs:   map[uuid.UUID]*spi.Job{},
		byKey:  map[string]uuid.UUID{},

		uniques:  map[string]uniqueHold{},
		uniqueOf: map[uuid.UUID]string{},

		queued:  map[uuid.UUID]*entry{},
		running: map[uuid.UUID]struct{}{},
		holders: map[string]int{},
		rates:   map[string][]time.Time{},
		nodes:   map[string]time.Time{},
		tasks:   map[string][]string{},
		reports: map[string]string{},
		samples: map[int64]string{},
		leases:  map[string]lease{},
		states:  map[stateKey]spi.VersionedState{},
		props:   map[uuid.UUID]map[string]string{},
		scheds:  map[string]spi.ScheduleRow{},
		skips:   map[string][]spi.SkipRecord{},
		archive: map[uuid.UUID]archived{},
		logs:    map[uuid.UUID][]spi.LogLine{},

		attempts: map[uuid.UUID][]spi.Attempt{},

		deps:     map[uuid.UUID][]spi.Dependency{},
		children: map[uuid.UUID][]uuid.UUID{},
		flows:    map[uuid.UUID][]uuid.UUID{},
		waits:    map[uuid.UUID]struct{}{},
		batches:  map[uuid.UUID]*spi.Batch{},
		paused:   map[string]time.Time{},

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
	if s.closed && !s.bug("store works after Close") {
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
	defer s.enterUnique(jobs)()
	res, err := s.insertLocked(jobs)
	if s.owed && !s.bug("wakeups carry no source") {
		s.hint.Source = o.Source
	}
	return res, err
}

// insertLocked is InsertJobs with s.mu held.
func (s *Store) insertLocked(jobs []*spi.Job) ([]spi.InsertResult, error) {
	if res, planted, err := s.insertBugs(jobs); planted {
		return res, err
	}
	if err := spi.ValidateJobs(jobs); err != nil {
		return nil, fmt.Errorf("memory: insert: %w", err)
	}
	if len(jobs) == 0 && s.bug("InsertJobs of no jobs fails") {
		return nil, fmt.Errorf("memory: insert: no jobs")
	}
	for _, j := range jobs {
		if _, dup := s.jobs[j.ID]; dup {
			return nil, fmt.Errorf("memory: insert: job id %s already exists", j.ID)
		}
	}
	return s.writeLocked(jobs), nil
}

// writeLocked writes the valid new jobs, with s.mu held.
func (s *Store) writeLocked(jobs []*spi.Job) []spi.InsertResult {
	res := make([]spi.InsertResult, len(jobs))
	var batchKeys map[string]uuid.UUID // keys a planted defect hides until the batch is written
	for i, j := range jobs {
		if id, dup := s.admitUnique(j); dup {
			res[i] = spi.InsertResult{ID: id, Duplicate: true}
			continue
		}
		if j.IdempotencyKey != "" && !s.bug("idempotency keys ignored") {
			if id, ok := s.byKey[j.IdempotencyKey]; ok {
				res[i] = spi.InsertResult{ID: id, Duplicate: true}
				if s.bug("a duplicate's properties land on the job holding its key") && len(j.Properties) > 0 {
					s.props[id] = maps.Clone(j.Properties)
				}
				continue
			}
			if s.bug("duplicate keys inside one batch not seen") {
				if batchKeys == nil {
					batchKeys = map[string]uuid.UUID{}
				}
				batchKeys[j.IdempotencyKey] = j.ID
			} else {
				s.byKey[j.IdempotencyKey] = j.ID
			}
		}
		c := j.Clone()
		c.Unique = nil // reads leave it nil: the key lives in s.uniques
		if s.bug("insert keeps the caller's job") {
			c = j
		}
		if s.bug("params are not stored") {
			c.Params = nil
		}
		if s.bug("trace context cut to 255 bytes") && len(c.TraceContext) > 255 {
			c.TraceContext = c.TraceContext[:255]
		}
		if s.bug("payloads cut to 64 KiB") && len(c.Payload) > 65535 {
			c.Payload = c.Payload[:65535]
		}
		c.Status = spi.StatusPending
		if len(c.Properties) > 0 {
			if !s.bug("InsertJobs drops the properties") {
				s.props[c.ID] = c.Properties // kept where PutProperty keeps them
			}
			c.Properties = nil
		}
		s.jobs[c.ID] = c
		s.insertOrder(c.ID)
		s.link(c)
		q := c.Sequence
		c.Sequence = nil // reads leave it nil: the tail lives in s.uniques
		s.sequence(c, q)
		if s.await(c); c.Status == spi.StatusPending {
			s.enqueue(c)
		}
		res[i] = spi.InsertResult{ID: c.ID}
	}
	maps.Copy(s.byKey, batchKeys)
	return res
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
		if s.bug("GetJob of an unknown id returns nil, nil") {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if err := s.decodeErr(id); err != nil {
		return nil, err
	}
	return s.copyOut(j), nil
}

// copyOut is the copy of j a read returns.
func (s *Store) copyOut(j *spi.Job) *spi.Job {
	c := j.Clone()
	if s.bug("times come back in time.Local") {
		c.ScheduledAt, c.CreatedAt = c.ScheduledAt.In(time.Local), c.CreatedAt.In(time.Local)
	}
	return c
}

// ListJobs implements spi.Store.
func (s *Store) ListJobs(_ context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	if err := s.lock(); err != nil {
		return nil, uuid.Nil, err
	}
	defer s.unlock()
	out, next, err := s.page(s.order, p, func(id uuid.UUID) *spi.Job { return s.jobs[id] },
		func(j *spi.Job) bool { return s.listed(p, j) })
	if s.bug("ListJobs lists a page in descending id order") {
		slices.Reverse(out)
	}
	return out, next, err
}

// page lists one page of the jobs of ids (sorted) that keep passes, above
// p.After, in id order.
func (s *Store) page(ids []uuid.UUID, p spi.ListParams, job func(uuid.UUID) *spi.Job, keep func(*spi.Job) bool) ([]*spi.Job, uuid.UUID, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	start := sort.Search(len(ids), func(i int) bool { return bytes.Compare(ids[i][:], p.After[:]) > 0 })
	var out []*spi.Job
	for n, id := range ids[start:] {
		if n == limit && s.bug("ListJobs limits before filtering") {
			if len(out) == 0 {
				return out, uuid.Nil, nil
			}
			return out, out[len(out)-1].ID, nil
		}
		j := job(id)
		if !keep(j) {
			continue
		}
		if err := s.decodeErr(id); err != nil {
			if s.bug("ListJobs skips corrupt rows") {
				continue
			}
			return nil, uuid.Nil, err
		}
		if len(out) == limit {
			return out, out[len(out)-1].ID, nil
		}
		out = append(out, j.Clone())
	}
	if len(out) > 0 && s.bug("ListJobs always returns a next cursor") {
		return out, out[len(out)-1].ID, nil
	}
	return out, uuid.Nil, nil
}

// CountJobs implements spi.JobCounter.
func (s *Store) CountJobs(_ context.Context, p spi.ListParams, limit int) (int, error) {
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.unlock()
	if s.bug("CountJobs ignores the filters") {
		p = spi.ListParams{After: p.After}
	}
	if s.bug("CountJobs counts past its limit") {
		limit = 1 << 30
	}
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
	if s.bug("ListJobs takes CreatedBefore inclusively") && !p.CreatedBefore.IsZero() {
		p.CreatedBefore = p.CreatedBefore.Add(time.Nanosecond)
	}
	if s.bug("ListJobs takes DueBy exclusively") && !p.DueBy.IsZero() {
		p.DueBy = p.DueBy.Add(-time.Nanosecond)
	}
	if s.bug("ListJobs matches ErrorContains with case") && p.ErrorContains != "" {
		if !strings.Contains(j.LastError, p.ErrorContains) {
			return false
		}
		p.ErrorContains = ""
	}
	if !p.Matches(j) {
		return false
	}
	if p.PropertyKey != "" {
		if s.bug("ListJobs matches a property value under any key") {
			return slices.Contains(slices.Collect(maps.Values(s.props[j.ID])), p.PropertyValue)
		}
		v, ok := s.props[j.ID][p.PropertyKey]
		return ok && v == p.PropertyValue
	}
	return true
}

// ClaimJobs implements spi.Store.
func (s *Store) ClaimJobs(_ context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	if err := s.lostConnection(); err != nil {
		return nil, err
	}
	if p.Limit <= 0 {
		return nil, nil
	}
	defer s.enterClaim()()
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	if s.bug("claim is not atomic") {
		return s.claimSplit(p), nil
	}
	now, boost := p.Now, p.BoostInterval
	if s.bug("claim uses the wall clock") {
		now = time.Now()
	}
	if s.bug("claim ignores BoostInterval") {
		boost = 0
	}
	s.requeueTaken()
	// Merge the five levels of each task the node runs lazily in claim
	// order: within a level the effective priority only grows with
	// waiting time, so each heap's head is its best job and the best head
	// overall is the next job to take. Jobs the node may not run (tag
	// filter) or that wait for a full resource are passed over and put
	// back afterwards. Heaps of tasks the claim does not list are not
	// read.
	var heaps []*levelHeap
	tasks := p.Tasks
	if s.bug("claim honours only the first task listed") && len(tasks) > 1 {
		tasks = tasks[:1]
	}
	if len(tasks) == 0 || s.bug("claim ignores ClaimParams.Tasks") || s.bug("claim applies the task filter after the limit") {
		for t, l := range s.levels {
			if s.isPaused(t) {
				continue
			}
			for lvl := range l {
				heaps = append(heaps, &l[lvl])
			}
		}
	} else {
		for _, t := range tasks {
			if l := s.levels[t]; l != nil && !s.isPaused(t) {
				for lvl := range l {
					heaps = append(heaps, &l[lvl])
				}
			}
		}
	}
	holders := s.holders
	if s.bug("claim counts only permits held before the call") {
		holders = maps.Clone(s.holders)
	}
	if s.bug("claim counts permits outside its critical section") {
		holders = s.claimRace()
	}
	claimed := spi.Claimed(p.NodeID, p.Now)
	var perLevel map[*levelHeap]int // the jobs taken from each level, for a planted defect
	var out []*spi.Job
	var passed []*entry
	for len(out) < p.Limit {
		var best *levelHeap
		var bestEff int64
		for _, h := range heaps {
			for h.Len() > 0 && !(*h)[0].valid {
				heap.Pop(h)
			}
			if h.Len() == 0 || s.dueLater((*h)[0].due, now) || (s.bug("claim merges only Limit/5 jobs per level") && perLevel[h] >= max(p.Limit/spi.NumPriorities, 1)) {
				continue
			}
			e := (*h)[0]
			eff := spi.EffectivePriority(s.jobs[e.id].Priority, e.due, now, boost)
			if s.bug("claim ignores priority") {
				eff = 0
			}
			if best == nil || eff > bestEff || (eff == bestEff && entryLess(e, (*best)[0])) {
				best, bestEff = h, eff
			}
		}
		if best == nil {
			break
		}
		if s.bug("claim merges only Limit/5 jobs per level") {
			if perLevel == nil {
				perLevel = map[*levelHeap]int{}
			}
			perLevel[best]++
		}
		e := heap.Pop(best).(*entry)
		if s.bug("claim breaks ties by id descending") {
			e = lastOfTies(best, e)
		}
		if s.decodeErr(e.id) != nil { // passed over: it cannot be read
			if s.bug("claim panics on a corrupt row") {
				panic("memory: corrupt row " + e.id.String())
			}
			passed = append(passed, e)
			continue
		}
		j := s.jobs[e.id]
		if !s.claimable(p, j, holders) {
			passed = append(passed, e)
			if len(out)+len(passed) >= p.Limit && s.headOfLine() {
				break
			}
			continue
		}
		s.dequeue(j.ID)
		if j.Status == spi.StatusPending && j.Resource != "" {
			s.holders[j.Resource]++
			s.started(p, j)
		}
		claimed.Apply(j)
		s.running[j.ID] = struct{}{}
		c := s.copyOut(j)
		if s.bug("claims return no params") {
			c.Params = nil
		}
		out = append(out, c)
	}
	for _, e := range passed {
		j := s.jobs[e.id]
		heap.Push(&s.taskLevels(j.TaskName)[j.Priority], e)
		s.heldBack(p, j)
	}
	// After the loop, so that no successor let go joins this claim.
	s.passTurns(out, now)
	return out, nil
}

// dueLater reports whether a job due at due waits past now.
func (s *Store) dueLater(due, now time.Time) bool {
	if s.bug("claim ignores due times") {
		return false
	}
	return due.After(now) || (s.bug("claim needs ScheduledAt < now") && due.Equal(now))
}

// claimable reports whether the claim p may take job j, with the permits
// of holders.
func (s *Store) claimable(p spi.ClaimParams, j *spi.Job, holders map[string]int) bool {
	if s.bug("claim applies the task filter after the limit") && len(p.Tasks) > 0 && !slices.Contains(p.Tasks, j.TaskName) {
		return false
	}
	if !s.tagsPass(p.Tags, j.Tags) {
		return false
	}
	if j.Resource != "" && spi.IsRateResource(j.Resource) && !s.rateFree(p, j) {
		return false
	}
	return j.Resource == "" || holders[j.Resource] < j.ResourceLimit || s.bug("claim ignores resource permits")
}

// tagsPass reports whether tags pass the tag filter f.
func (s *Store) tagsPass(f spi.TagFilter, tags []string) bool {
	switch {
	case s.bug("claim ignores the tag filter"):
		return true
	case s.bug("claim with a tag filter drops untagged jobs") && !f.Empty() && len(tags) == 0:
		return false
	case s.bug("claim matches tags as substrings of a joined list"):
		joined := strings.Join(tags, ",")
		has := func(t string) bool { return strings.Contains(joined, t) }
		return !slices.ContainsFunc(f.All, func(t string) bool { return !has(t) }) &&
			!slices.ContainsFunc(f.None, has) && (len(f.Any) == 0 || slices.ContainsFunc(f.Any, has))
	}
	return f.Match(tags)
}

// headOfLine reports whether a planted defect stops a claim at its limit
// counting the jobs it passed over.
func (s *Store) headOfLine() bool {
	return s.bug("claim applies the tag filter after the limit") || s.bug("claim applies resource permits after the limit") ||
		s.bug("claim applies the task filter after the limit")
}

// requeueTaken files the jobs a planted defect lets a claim take again
// (RUNNING, CANCELLED or WAITING ones) in the claim heaps.
func (s *Store) requeueTaken() {
	if !s.bug("claim takes RUNNING jobs again") && !s.bug("claim takes CANCELLED jobs") && !s.bug("claim takes WAITING jobs") {
		return
	}
	for _, j := range s.jobs {
		if (j.Status == spi.StatusRunning && s.bug("claim takes RUNNING jobs again")) ||
			(j.Status == spi.StatusCancelled && s.bug("claim takes CANCELLED jobs")) ||
			(j.Status == spi.StatusWaiting && s.bug("claim takes WAITING jobs")) {
			s.enqueue(j)
		}
	}
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
	if !ok || (j.Status != spi.StatusRunning && !s.bug("CompleteJobs ignores the status")) ||
		(j.ClaimSeq != ref.ClaimSeq && !s.bug("CompleteJobs ignores the claim sequence")) {
		return nil
	}
	return j
}

// completionBugs plants the defects of a completion c applied to j, whose
// owner was owner.
func (s *Store) completionBugs(j *spi.Job, c spi.Completion, owner string) {
	if c.Outcome == spi.OutcomeSucceeded && s.bug("success writes Completion.Attempts") {
		j.Attempts = c.Attempts
	}
	if c.Outcome == spi.OutcomeRetry && s.bug("retry outcome keeps the owner") {
		j.OwnerNode = owner
	}
	if c.Outcome == spi.OutcomeRetry && s.bug("retry outcome sets FinishedAt") {
		j.FinishedAt = c.FinishedAt
	}
	if c.Outcome == spi.OutcomeSnoozed && s.bug("snooze outcome keeps the snooze count") {
		j.Snoozes--
	}
	if s.bug("CompleteJobs advances the claim sequence") {
		j.ClaimSeq++
	}
}

// CompleteJobs implements spi.Store.
func (s *Store) CompleteJobs(_ context.Context, cs []spi.Completion) ([]bool, error) {
	if err := s.lostConnection(); err != nil {
		return nil, err
	}
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.unlock()
	changes := make([]spi.Change, len(cs))
	bad := len(cs) // the first entry of an unknown outcome, written up to with a planted defect
	for i, c := range cs {
		var err error
		if changes[i], err = c.Change(); err != nil {
			if !s.bug("CompleteJobs writes the entries before an unknown outcome") {
				return nil, fmt.Errorf("memory: complete: %w", err)
			}
			bad = min(bad, i)
		}
	}
	out := make([]bool, len(cs))
	seen := make(map[spi.ClaimRef]bool, len(cs))
	for i, c := range cs {
		first := !seen[c.ClaimRef]
		seen[c.ClaimRef] = true
		j := s.owned(c.ClaimRef)
		if j == nil {
			if _, ok := s.jobs[c.JobID]; !ok && s.bug("CompleteJobs fails on an unknown job") {
				return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, c.JobID)
			}
			// A replay of a completion that applied already counts.
			out[i] = first && c.AlreadyApplied(s.jobs[c.JobID]) && !s.bug("CompleteJobs reports a replayed completion superseded")
			continue
		}
		if i == bad {
			return nil, fmt.Errorf("memory: complete job %s: unknown outcome %d", c.JobID, c.Outcome)
		}
		owner := j.OwnerNode
		if a, ok := c.Record(); ok {
			s.record(a)
		}
		changes[i].Apply(j)
		s.completionBugs(j, c, owner)
		if c.Outcome != spi.OutcomeRetry || !s.bug("retry outcome keeps the permit") {
			s.leaveRunning(j)
		} else {
			delete(s.running, j.ID)
		}
		switch j.Status {
		case spi.StatusPending:
			s.enqueue(j)
		case spi.StatusWaiting:
			s.rewait(j, c.Signal)
		default:
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
		s.recordRun(j, spi.AttemptReleased, now)
		s.toPending(j, now)
		out[i] = true
	}
	return out, nil
}

// toPending returns a RUNNING job to PENDING due at now, fencing its owner.
func (s *Store) toPending(j *spi.Job, now time.Time) {
	due, seq := j.ScheduledAt, j.ClaimSeq
	spi.Released(now).Apply(j)
	if s.bug("release keeps the old due time") {
		j.ScheduledAt = due
	}
	if s.bug("release does not advance the claim sequence") {
		j.ClaimSeq = seq
	}
	if s.bug("release charges the crash budget") {
		j.CrashCount++
	}
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
		if s.bug("RetryFailedJob of an unknown id succeeds") {
			return nil
		}
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if j.Status != spi.StatusFailed && !s.bug("RetryFailedJob accepts any state") {
		return fmt.Errorf("%w: job %s is %s, only FAILED jobs can be retried", spi.ErrInvalidState, id, j.Status)
	}
	crashes, snoozes := j.CrashCount, j.Snoozes
	if s.retryLocked(j, now); s.bug("RetryFailedJob keeps the crash count") {
		j.CrashCount = crashes
	}
	if s.bug("RetryFailedJob keeps the snooze count") {
		j.Snoozes = snoozes
	}
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
		if s.bug("CancelJob of an unknown id succeeds") {
			return nil
		}
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	if !s.cancelLocked(j, now) {
		return fmt.Errorf("%w: job %s is %s, only PENDING, BLOCKED, WAITING and RUNNING jobs can be cancelled", spi.ErrInvalidState, id, j.Status)
	}
	return nil
}

// cancelLocked cancels j when it is PENDING, BLOCKED, WAITING (its wait
// then ends CANCELLED) or RUNNING (abortLocked), with its dependents'
// cancel policies, and reports whether it did.
func (s *Store) cancelLocked(j *spi.Job, now time.Time) bool {
	switch {
	case j.Status == spi.StatusWaiting && !s.bug("CancelJob refuses WAITING jobs"):
		s.resolve(j, spi.SignalCancelled, nil, now)
		return true
	case j.Status == spi.StatusRunning && !s.bug("CancelJob refuses RUNNING jobs"):
		s.abortLocked(j, now)
	case j.Status == spi.StatusPending, j.Status == spi.StatusBlocked && !s.bug("CancelJob refuses BLOCKED jobs"):
		s.leaveSequence(j, now)
		s.dequeue(j.ID)
		spi.Cancelled(now).Apply(j)
	default:
		return false
	}
	if !s.bug("CancelJob releases nothing") {
		s.finished(j, now)
	}
	return true
}

// abortLocked cancels RUNNING job j at now (spi.Aborted): its claim ends,
// its permit is free, and the call owes the listeners a claim check.
func (s *Store) abortLocked(j *spi.Job, now time.Time) {
	s.recordRun(j, spi.AttemptCancelled, now)
	if !s.bug("cancelling a RUNNING job keeps its permit") {
		s.leaveRunning(j)
	}
	seq := j.ClaimSeq
	if spi.Aborted(now).Apply(j); s.bug("cancelling a RUNNING job keeps its claim sequence") {
		j.ClaimSeq = seq
	}
	if len(s.listeners) > 0 && !s.bug("cancelling a RUNNING job sends no claim check") {
		s.checkOwed = true
	}
}

// Heartbeat implements spi.Store.
func (s *Store) Heartbeat(_ context.Context, nodeID string, now time.Time) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	if _, ok := s.nodes[nodeID]; ok && s.bug("Heartbeat does not refresh") {
		return nil
	}
	s.nodes[nodeID] = now
	return nil
}

// DeregisterNode implements spi.Store.
func (s *Store) DeregisterNode(_ context.Context, nodeID string) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	if s.bug("DeregisterNode does nothing") {
		return nil
	}
	s.dropNode(nodeID)
	return nil
}

// dropNode forgets node's row and the tasks it recorded.
func (s *Store) dropNode(node string) {
	delete(s.nodes, node)
	if !s.bug("a node's tasks outlive the node") {
		delete(s.tasks, node)
		delete(s.reports, node)
	}
}

// HeartbeatTasks implements spi.NodeTaskStore.
func (s *Store) HeartbeatTasks(_ context.Context, nodeID string, tasks []string, now time.Time) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	s.beatTasks(nodeID, tasks, now)
	return nil
}

// beatTasks refreshes the node's heartbeat and records its tasks; s.mu is
// held.
func (s *Store) beatTasks(nodeID string, tasks []string, now time.Time) {
	s.nodes[nodeID] = now
	if s.tasks[nodeID] = spi.TaskSet(tasks); s.bug("node tasks kept as given") {
		s.tasks[nodeID] = slices.Clone(tasks)
	}
}

// HeartbeatReport implements spi.NodeReportStore: HeartbeatTasks that
// records the node's report too, in its stored form (as a database does).
func (s *Store) HeartbeatReport(_ context.Context, nodeID string, tasks []string, report spi.NodeReport, now time.Time) error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	s.beatTasks(nodeID, tasks, now)
	if _, ok := s.reports[nodeID]; ok && s.bug("a node's report is not replaced") {
		return nil
	}
	s.reports[nodeID] = spi.EncodeNodeReport(report)
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
		if !hb.Before(since) && !(hb.Equal(since) && s.bug("LiveNodes leaves out a heartbeat at since")) {
			n := spi.NodeInfo{ID: id, Heartbeat: hb, Tasks: slices.Clone(s.tasks[id])}
			if enc, ok := s.reports[id]; ok {
				n.Report, _ = spi.DecodeNodeReport(enc) // a report that cannot be read is left out (spi.NodeInfo.Report)
			}
			out = append(out, n)
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
	count := func(j *spi.Job) {
		b := by[j.TaskName]
		if b == nil {
			b = &spi.TaskBacklog{Task: j.TaskName, Earliest: j.ScheduledAt}
			by[j.TaskName] = b
		}
		b.Pending++
		if j.ScheduledAt.Before(b.Earliest) != s.bug("PendingTasks reports the latest time") && !j.ScheduledAt.Equal(b.Earliest) {
			b.Earliest = j.ScheduledAt
		}
	}
	for id := range s.queued {
		count(s.jobs[id])
	}
	if s.bug("PendingTasks counts RUNNING jobs") {
		for id := range s.running {
			count(s.jobs[id])
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
	forced := func(node string) bool {
		return slices.Contains(p.Nodes, node) && !s.bug("RecoverOrphans ignores p.Nodes")
	}
	stale := func(node string) bool {
		hb, ok := s.nodes[node]
		switch {
		case s.bug("RecoverOrphans ignores heartbeats"):
			return true
		case !ok:
			return !s.bug("RecoverOrphans misses nodes without a row")
		case s.bug("RecoverOrphans treats a heartbeat grace old as stale"):
			return !hb.After(cutoff)
		}
		return hb.Before(cutoff)
	}
	ids := make([]uuid.UUID, 0)
	for id := range s.running {
		if node := s.jobs[id].OwnerNode; stale(node) || forced(node) {
			ids = append(ids, id)
		}
	}
	if s.bug("RecoverOrphans recovers finished jobs") {
		for id, j := range s.jobs {
			if _, running := s.running[id]; !running && j.OwnerNode != "" && (stale(j.OwnerNode) || forced(j.OwnerNode)) {
				ids = append(ids, id)
			}
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	if s.bug("RecoverOrphans reports in descending id order") {
		slices.Reverse(ids)
	}
	out := make([]spi.RecoveredJob, 0, len(ids))
	dead := map[string]bool{}
	for _, id := range ids {
		j := s.jobs[id]
		from, seq := j.OwnerNode, j.ClaimSeq
		dead[from] = dead[from] || stale(from)
		budget := p.MaxCrashRedeliveries
		if s.bug("RecoverOrphans ignores the crash budget") {
			budget = j.CrashCount + 1
		}
		s.recordRun(j, spi.AttemptCrashed, p.Now)
		spi.Recovered(j.CrashCount, budget, p.LastError, p.Now).Apply(j)
		s.recoveryBugs(j, from, seq)
		if j.Status == spi.StatusPending {
			s.enqueue(j)
		} else if !s.bug("a crash-budget failure releases nothing") {
			s.finished(j, p.Now)
		}
		out = append(out, spi.RecoveredJob{JobID: id, TaskName: j.TaskName, FromNode: from, NewStatus: j.Status, CrashCount: j.CrashCount})
	}
	if s.bug("RecoverOrphans keeps stale node rows") {
		return out, nil
	}
	for node, hb := range s.nodes {
		if dead[node] || hb.Before(cutoff) || (forced(node) && !s.bug("RecoverOrphans keeps the rows of p.Nodes")) {
			s.dropNode(node)
		}
	}
	return out, nil
}

// recoveryBugs plants the defects of the recovery of job j, whose owner
// was from and claim sequence seq, and ends the claim's bookkeeping.
func (s *Store) recoveryBugs(j *spi.Job, from string, seq int64) {
	if j.Status == spi.StatusFailed && s.bug("RecoverOrphans keeps the owner of a job it fails") {
		j.OwnerNode = from
	}
	if s.bug("RecoverOrphans does not advance the claim sequence") {
		j.ClaimSeq = seq
	}
	if s.bug("RecoverOrphans keeps the permit") {
		delete(s.running, j.ID)
	} else {
		s.leaveRunning(j)
	}
}

// Close implements spi.Store. The jobs are dropped.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.unlock()
	if s.closed && s.bug("second Close fails") {
		return fmt.Errorf("memory: already closed")
	}
	s.closed = true
	return nil
}
