package tck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
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
	t := append([]string{}, tasks...)
	if s.bug != bugNodeTasksUnsorted {
		slices.Sort(t)
		t = slices.Compact(t)
	}
	s.nodeTasks[nodeID] = t
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
		if hb.Before(since) || (s.bug == bugLiveNodesExclusive && hb.Equal(since)) {
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
		if j.Status != spi.StatusPending && !(s.bug == bugPendingCountsRunning && j.Status == spi.StatusRunning) {
			continue
		}
		b := by[j.TaskName]
		if b == nil {
			b = &spi.TaskBacklog{Task: j.TaskName, Earliest: j.ScheduledAt}
			by[j.TaskName] = b
		}
		b.Pending++
		if later := j.ScheduledAt.After(b.Earliest); later == (s.bug == bugPendingEarliestLatest) && !j.ScheduledAt.Equal(b.Earliest) {
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
	switch s.bug {
	case bugClaimIgnoresTasks:
		return true
	case bugTasksFirstOnly:
		return len(p.Tasks) == 0 || p.Tasks[0] == task
	}
	return p.AllowsTask(task)
}

// tagsPass reports whether a job with tags passes f.
func (s *refStore) tagsPass(f spi.TagFilter, tags []string) bool {
	switch s.bug {
	case bugClaimIgnoresTags:
		return true
	case bugTagsDropUntagged:
		if !f.Empty() && len(tags) == 0 {
			return false
		}
	case bugTagsSubstring:
		joined := strings.Join(tags, ",")
		has := func(t string) bool { return strings.Contains(joined, t) }
		for _, t := range f.All {
			if !has(t) {
				return false
			}
		}
		for _, t := range f.None {
			if has(t) {
				return false
			}
		}
		return len(f.Any) == 0 || slices.ContainsFunc(f.Any, has)
	}
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
		out[i] = ok &&
			(r.job.Status == spi.StatusRunning || s.bug == bugCheckIgnoresStatus) &&
			(r.job.ClaimSeq == rf.ClaimSeq || s.bug == bugCheckIgnoresSeq)
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
	switch s.bug {
	case bugLeaseNeverExpires:
	case bugLeaseExpiryExclusive:
		free = free || now.After(l.expires)
	default:
		free = free || !now.Before(l.expires)
	}
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
	exp := now.Add(ttl)
	if held && l.owner == owner && s.bug == bugLeaseRenewKeepsExpiry {
		exp = l.expires
	}
	s.leases[name] = refLease{owner: owner, expires: exp}
	return true, nil
}

func (s *refStore) ReleaseLease(_ context.Context, name, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if l, ok := s.leases[name]; ok && (l.owner == owner || s.bug == bugLeaseReleaseAnyOwner) {
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
		owner := (j.Status == spi.StatusRunning || s.bug == bugStateFenceIgnoresStatus) &&
			(j.ClaimSeq == claimSeq || s.bug == bugStateFenceIgnoresSeq)
		if !owner {
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
		if !exists || (cur.Version != expected && s.bug != bugStateIgnoresVersion) {
			return spi.StateVersionConflict, nil
		}
		next = cur.Version + 1
	}
	data := bytes.Clone(state)
	if s.bug == bugStateCompactsJSON {
		var b bytes.Buffer
		if json.Compact(&b, state) == nil {
			data = b.Bytes()
		}
	}
	s.states[k] = spi.VersionedState{JSON: data, Version: next}
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
	if old, ok := p[key]; ok && old != value && s.bug != bugPropertyOverwrite {
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

// likePrefix matches like SQL's key LIKE prefix || '%' without escaping,
// with SQLite's ASCII case folding.
func likePrefix(key, prefix string) bool {
	var b strings.Builder
	b.WriteString("(?is)^")
	for _, r := range prefix {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return regexp.MustCompile(b.String()).MatchString(key)
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
		if strings.HasPrefix(k, prefix) || (s.bug == bugPrefixLike && likePrefix(k, prefix)) {
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
	if s.bug != bugFindUnsorted {
		sortUUIDs(all)
	}
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
