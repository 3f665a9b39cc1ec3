package tck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The optional capabilities of refStore, each with its planted defects.

var (
	_ spi.ClaimChecker     = (*refStore)(nil)
	_ spi.LeaseStore       = (*refStore)(nil)
	_ spi.JobStateStore    = (*refStore)(nil)
	_ spi.JobPropertyStore = (*refStore)(nil)
	_ spi.WakeupListener   = (*refStore)(nil)
)

// refHandle is a second handle on a refStore's data, as Harness.Reopen
// returns: closing it leaves the data and the other handle open.
type refHandle struct{ *refStore }

// Close closes the handle only.
func (refHandle) Close() error { return nil }

// plainStore hides every optional capability of the store it wraps.
type plainStore struct{ spi.Store }

// leaveRunning gives back the permit of a RUNNING job leaving that state.
func (s *refStore) leaveRunning(j *spi.Job) {
	if j.Resource != "" && j.Status == spi.StatusRunning {
		s.held[j.Resource]--
	}
}

func (s *refStore) HeartbeatTasks(ctx context.Context, nodeID string, tasks []string, now time.Time) error {
	if err := s.Heartbeat(ctx, nodeID, now); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodeTasks[nodeID] = spi.TaskSet(tasks)
	return nil
}

func (s *refStore) LiveNodes(_ context.Context, since time.Time) ([]spi.NodeInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	var out []spi.NodeInfo
	for id, hb := range s.nodes {
		if hb.Before(since) {
			continue
		}
		out = append(out, spi.NodeInfo{ID: id, Heartbeat: hb, Tasks: slices.Clone(s.nodeTasks[id])})
	}
	slices.SortFunc(out, func(a, b spi.NodeInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (s *refStore) PendingTasks(context.Context) ([]spi.TaskBacklog, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	by := map[string]*spi.TaskBacklog{}
	for _, r := range s.rows {
		j := r.job
		if j.Status != spi.StatusPending {
			continue
		}
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
	var out []spi.TaskBacklog
	for _, b := range by {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b spi.TaskBacklog) int { return strings.Compare(a.Task, b.Task) })
	return out, nil
}

// taskPasses reports whether the claim p may take a job of task.
func (s *refStore) taskPasses(p spi.ClaimParams, task string) bool {
	return p.AllowsTask(task)
}

// tagsPass reports whether a job with tags passes f.
func (s *refStore) tagsPass(f spi.TagFilter, tags []string) bool {
	return f.Match(tags)
}

func (s *refStore) CheckClaims(_ context.Context, refs []spi.ClaimRef) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	out := make([]bool, len(refs))
	for i, rf := range refs {
		r, ok := s.rows[rf.JobID]
		out[i] = ok && r.job.Status == spi.StatusRunning && r.job.ClaimSeq == rf.ClaimSeq
	}
	return out, nil
}

func (s *refStore) AdoptClaims(_ context.Context, node string, claimedAt []time.Time) ([]*spi.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	var out []*spi.Job
	for _, r := range s.rows {
		j := r.job
		if r.corrupt || j.Status != spi.StatusRunning || j.OwnerNode != node || !slices.ContainsFunc(claimedAt, j.ClaimedAt.Equal) {
			continue
		}
		out = append(out, j.Clone())
	}
	return out, nil
}

func (s *refStore) TryAcquireLease(_ context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	s.leasing.Add(1)
	defer s.leasing.Add(-1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return false, err
	}
	l, held := s.leases[name]
	free := !held || l.owner == owner
	free = free || !now.Before(l.expires)
	if !free {
		return false, nil
	}
	if s.bug == bugLeaseRace && s.leasing.Load() > 0 {
		// Checked; now let go of the lock until another caller has
		// checked too, then write.
		s.mu.Unlock()
		for i := 0; i < 1000 && s.leasing.Load() < 2; i++ {
			runtime.Gosched()
		}
		runtime.Gosched()
		s.mu.Lock()
	}
	s.leases[name] = refLease{owner: owner, expires: now.Add(ttl)}
	return true, nil
}

func (s *refStore) ReleaseLease(_ context.Context, name, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if l, ok := s.leases[name]; ok && l.owner == owner {
		delete(s.leases, name)
	}
	return nil
}

// job returns the row of job id, or an error wrapping spi.ErrNotFound.
func (s *refStore) job(id uuid.UUID) (*spi.Job, error) {
	r, ok := s.rows[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	return r.job, nil
}

func (s *refStore) GetState(_ context.Context, id uuid.UUID, ns string) (spi.VersionedState, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return spi.VersionedState{}, false, err
	}
	if _, err := s.job(id); err != nil {
		return spi.VersionedState{}, false, err
	}
	v, ok := s.states[refStateKey{id, ns}]
	v.JSON = bytes.Clone(v.JSON)
	return v, ok, nil
}

// writeState applies one state write; fenced writes name claimSeq.
func (s *refStore) writeState(id uuid.UUID, ns string, state []byte, expected int64, init, fenced bool, claimSeq int64) (spi.StateWriteResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	j, err := s.job(id)
	if err != nil {
		return 0, err
	}
	if fenced {
		if j.Status != spi.StatusRunning || j.ClaimSeq != claimSeq {
			return spi.StateSuperseded, nil
		}
	}
	k := refStateKey{id, ns}
	cur, exists := s.states[k]
	next := int64(0)
	if init {
		if exists {
			return spi.StateVersionConflict, nil
		}
	} else {
		if !exists || cur.Version != expected {
			return spi.StateVersionConflict, nil
		}
		next = cur.Version + 1
	}
	s.states[k] = spi.VersionedState{JSON: bytes.Clone(state), Version: next}
	return spi.StateUpdated, nil
}

func (s *refStore) InitState(_ context.Context, id uuid.UUID, ns string, state []byte, claimSeq int64) (spi.StateWriteResult, error) {
	return s.writeState(id, ns, state, 0, true, true, claimSeq)
}

func (s *refStore) UpdateState(_ context.Context, id uuid.UUID, ns string, state []byte, expected, claimSeq int64) (spi.StateWriteResult, error) {
	return s.writeState(id, ns, state, expected, false, true, claimSeq)
}

func (s *refStore) InitStateUnfenced(_ context.Context, id uuid.UUID, ns string, state []byte) (spi.StateWriteResult, error) {
	return s.writeState(id, ns, state, 0, true, false, 0)
}

func (s *refStore) UpdateStateUnfenced(_ context.Context, id uuid.UUID, ns string, state []byte, expected int64) (spi.StateWriteResult, error) {
	return s.writeState(id, ns, state, expected, false, false, 0)
}

func (s *refStore) PutProperty(_ context.Context, id uuid.UUID, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if _, err := s.job(id); err != nil {
		return err
	}
	p := s.props[id]
	if p == nil {
		p = map[string]string{}
		s.props[id] = p
	}
	if old, ok := p[key]; ok && old != value {
		return fmt.Errorf("%w: job %s property %q", spi.ErrPropertyExists, id, key)
	}
	p[key] = value
	return nil
}

func (s *refStore) GetProperty(_ context.Context, id uuid.UUID, key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return "", false, err
	}
	if _, err := s.job(id); err != nil {
		return "", false, err
	}
	v, ok := s.props[id][key]
	return v, ok, nil
}

func (s *refStore) GetPropertiesByPrefix(_ context.Context, id uuid.UUID, prefix string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	if _, err := s.job(id); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range s.props[id] {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out, nil
}

func (s *refStore) FindJobsByProperty(_ context.Context, key, value string, limit int) ([]uuid.UUID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	all := slices.Clone(s.order)
	sortUUIDs(all)
	var out []uuid.UUID
	for _, id := range all {
		if len(out) >= limit {
			break
		}
		if v, ok := s.props[id][key]; ok && v == value {
			out = append(out, id)
		}
	}
	return out, nil
}

func (s *refStore) ListenWakeups(ctx context.Context, fn func(spi.WakeupHint)) error {
	s.mu.Lock()
	if err := s.check(); err != nil {
		s.mu.Unlock()
		return err
	}
	n := s.nextLsn
	s.nextLsn++
	s.listeners[n] = fn
	s.mu.Unlock()
	<-ctx.Done()
	s.mu.Lock()
	delete(s.listeners, n)
	s.mu.Unlock()
	return ctx.Err()
}

// putPropLocked sets job id's property key, with s.mu held.
func (s *refStore) putPropLocked(id uuid.UUID, key, value string) {
	if s.props[id] == nil {
		s.props[id] = map[string]string{}
	}
	s.props[id][key] = value
}

func (s *refStore) CreateSchedule(_ context.Context, r spi.ScheduleRow) (bool, error) {
	if r.ID == "" || r.TaskName == "" {
		return false, errors.New("schedule without an id or a task")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return false, err
	}
	if _, ok := s.scheds[r.ID]; ok {
		return false, nil
	}
	r.Version, r.Definition = 1, slices.Clone(r.Definition)
	s.scheds[r.ID] = r
	return true, nil
}

func (s *refStore) UpdateSchedule(_ context.Context, r spi.ScheduleRow, expected int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return false, err
	}
	old, ok := s.scheds[r.ID]
	if !ok || old.Version != expected {
		return false, nil
	}
	old.TaskName, old.Definition, old.Paused, old.NextFireAt, old.UpdatedAt = r.TaskName, slices.Clone(r.Definition), r.Paused, r.NextFireAt, r.UpdatedAt
	old.Version++
	s.scheds[r.ID] = old
	return true, nil
}

func (s *refStore) GetSchedule(_ context.Context, id string) (spi.ScheduleRow, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return spi.ScheduleRow{}, false, err
	}
	r, ok := s.scheds[id]
	r.Definition = slices.Clone(r.Definition)
	return r, ok, nil
}

func (s *refStore) ListSchedules(_ context.Context, after string, limit int) ([]spi.ScheduleRow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	var out []spi.ScheduleRow
	for id, r := range s.scheds {
		if id > after {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b spi.ScheduleRow) int { return strings.Compare(a.ID, b.ID) })
	return out[:min(len(out), limit)], nil
}

func (s *refStore) DeleteSchedule(_ context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return false, err
	}
	_, ok := s.scheds[id]
	delete(s.scheds, id)
	delete(s.skips, id)
	return ok, nil
}

func (s *refStore) ScheduleSkips(_ context.Context, id string, limit int) ([]spi.SkipRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	out := slices.Clone(s.skips[id])
	slices.Reverse(out)
	return out[:min(len(out), limit)], nil
}

func (s *refStore) DueSchedules(_ context.Context, now time.Time, limit int) ([]spi.ScheduleRow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	var out []spi.ScheduleRow
	for _, r := range s.scheds {
		if !r.NextFireAt.After(now) && !r.Paused {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b spi.ScheduleRow) int {
		if c := a.NextFireAt.Compare(b.NextFireAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out[:min(len(out), limit)], nil
}

func (s *refStore) FireSchedule(_ context.Context, f spi.ScheduleFire) (bool, []spi.InsertResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return false, nil, err
	}
	r, ok := s.scheds[f.ID]
	if !ok {
		return false, nil, nil
	}
	jobs := f.Jobs
	if r.Version != f.Version {
		return false, nil, nil
	}
	for _, j := range jobs {
		if !j.Priority.Valid() {
			return false, nil, fmt.Errorf("job %s: priority %d out of range", j.ID, j.Priority)
		}
	}
	res, err := s.insertLocked(jobs)
	if err != nil {
		return false, nil, err
	}
	r.NextFireAt, r.Skipped, r.UpdatedAt = f.NextFireAt, r.Skipped+f.Skipped, f.Now
	if f.Skipped > 0 {
		s.skips[f.ID] = append(s.skips[f.ID], spi.SkipRecord{From: f.SkippedFrom.UTC(), To: f.SkippedTo.UTC(), Slots: f.Skipped, At: f.Now.UTC()})
	}
	if len(f.Jobs) > 0 {
		r.LastFireAt, r.LastJobID = f.LastFireAt, f.LastJobID
	}
	r.Version++
	s.scheds[f.ID] = r
	return true, res, nil
}

func (s *refStore) ArchiveJobs(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	var ids []uuid.UUID
	for id, r := range s.rows {
		j := r.job
		if j.Status.Terminal() && j.FinishedAt.Before(before) && !s.liveDependentsLocked(id) && !s.inOpenBatchLocked(j) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	ids = ids[:min(len(ids), limit)]
	for _, id := range ids {
		j := s.rows[id].job.Clone()
		if p := s.props[id]; len(p) > 0 {
			j.Properties = maps.Clone(p)
		}
		s.archived[id] = j
		delete(s.deps, id)
		delete(s.rows, id)
		delete(s.props, id)
		if k := j.IdempotencyKey; k != "" && s.keys[k] == id {
			delete(s.keys, k)
		}
		s.order = slices.DeleteFunc(s.order, func(o uuid.UUID) bool { return o == id })
		for k := range s.states {
			if k.id == id {
				delete(s.states, k)
			}
		}
	}
	return len(ids), nil
}

func (s *refStore) GetArchivedJob(_ context.Context, id uuid.UUID) (*spi.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	j, ok := s.archived[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	return j.Clone(), nil
}

func (s *refStore) ListArchivedJobs(_ context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, uuid.Nil, err
	}
	var all []*spi.Job
	for id, j := range s.archived {
		if bytes.Compare(id[:], p.After[:]) <= 0 || !p.Matches(j) {
			continue
		}
		if v, ok := j.Properties[p.PropertyKey]; p.PropertyKey != "" && (!ok || v != p.PropertyValue) {
			continue
		}
		all = append(all, j.Clone())
	}
	slices.SortFunc(all, func(a, b *spi.Job) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	if len(all) > limit {
		return all[:limit], all[limit-1].ID, nil
	}
	return all, uuid.Nil, nil
}

func (s *refStore) PurgeArchivedJobs(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	var old []*spi.Job
	for _, j := range s.archived {
		if j.FinishedAt.Before(before) {
			old = append(old, j)
		}
	}
	slices.SortFunc(old, func(a, b *spi.Job) int {
		if c := a.FinishedAt.Compare(b.FinishedAt); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	old = old[:min(len(old), max(limit, 1))]
	for _, j := range old {
		delete(s.archived, j.ID)
		delete(s.logs, j.ID)
	}
	return len(old), nil
}

func (s *refStore) AppendJobLogs(_ context.Context, as []spi.LogAppend) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	out := make([]bool, len(as))
	for i, a := range as {
		r, ok := s.rows[a.JobID]
		if !ok || r.job.ClaimSeq != a.ClaimSeq {
			continue
		}
		out[i] = true
		limit := a.MaxLines
		if limit <= 0 {
			limit = spi.DefaultMaxLogLines
		}
		for _, l := range a.Lines {
			have, dup := 0, false
			for _, o := range s.logs[a.JobID] {
				have++
				dup = dup || (o.ClaimSeq == a.ClaimSeq && o.Line == l.Line)
			}
			if dup {
				continue
			}
			if have > limit {
				break
			}
			l.ClaimSeq, l.Time = a.ClaimSeq, l.Time.UTC().Truncate(time.Microsecond)
			if have == limit {
				l.Level, l.Message = "WARN", "log truncated"
			}
			s.logs[a.JobID] = append(s.logs[a.JobID], l)
		}
	}
	return out, nil
}

func (s *refStore) JobLogs(_ context.Context, id uuid.UUID, after spi.LogCursor, limit int) ([]spi.LogLine, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	var out []spi.LogLine
	for _, l := range s.logs[id] {
		if (l.ClaimSeq > after.ClaimSeq || (l.ClaimSeq == after.ClaimSeq && l.Line > after.Line)) && len(out) < limit {
			out = append(out, l)
		}
	}
	return out, nil
}

func (s *refStore) DeleteJobLogs(_ context.Context, before time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return 0, err
	}
	ids := slices.SortedFunc(maps.Keys(s.logs), func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	n, jobs := 0, 0
	for _, id := range ids {
		kept := slices.DeleteFunc(slices.Clone(s.logs[id]), func(l spi.LogLine) bool {
			return l.Time.Before(before)
		})
		if len(kept) == len(s.logs[id]) {
			continue
		}
		if jobs++; jobs > limit {
			break
		}
		n += len(s.logs[id]) - len(kept)
		s.logs[id] = kept
	}
	return n, nil
}
