package tck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// bug names one deliberate defect of refStore; the empty bug is none.
type bug string

// The defects the self-test plants, each of which Run must catch.
const (
	bugNone                   bug = ""
	bugKeepsCallerJobs        bug = "insert keeps the caller's job"
	bugDropsParams            bug = "params are not stored"
	bugTruncatesTrace         bug = "trace context cut to 255 bytes"
	bugLocalTimes             bug = "times come back in time.Local"
	bugUnknownNilNil          bug = "GetJob of an unknown id returns nil, nil"
	bugNoIdempotency          bug = "idempotency keys ignored"
	bugBatchKeys              bug = "duplicate keys inside one batch not seen"
	bugListInsertionOrder     bug = "ListJobs lists a page in descending id order"
	bugListErrorCaseSensitive bug = "ListJobs matches ErrorContains with case"
	bugListNextAlways         bug = "ListJobs always returns a next cursor"
	bugListLimitBeforeFilter  bug = "ListJobs limits before filtering"
	bugListBeforeInclusive    bug = "ListJobs takes CreatedBefore inclusively"
	bugListPropertyAnyKey     bug = "ListJobs matches a property value under any key"
	bugCountIgnoresFilters    bug = "CountJobs ignores the filters"
	bugCountPastCap           bug = "CountJobs counts past its limit"
	bugClaimIgnoresPriority   bug = "claim ignores priority"
	bugClaimNoAging           bug = "claim ignores BoostInterval"
	bugClaimIDDesc            bug = "claim breaks ties by id descending"
	bugClaimPerLevelShort     bug = "claim merges only Limit/5 jobs per level"
	bugClaimDueExclusive      bug = "claim needs ScheduledAt < now"
	bugClaimWallClock         bug = "claim uses the wall clock"
	bugClaimRunning           bug = "claim takes RUNNING jobs again"
	bugDoubleClaim            bug = "claim is not atomic"
	bugCompleteIgnoresSeq     bug = "CompleteJobs ignores the claim sequence"
	bugCompleteIgnoresStatus  bug = "CompleteJobs ignores the status"
	bugCompleteAdvancesSeq    bug = "CompleteJobs advances the claim sequence"
	bugRetrySetsFinishedAt    bug = "retry outcome sets FinishedAt"
	bugRetryKeepsOwner        bug = "retry outcome keeps the owner"
	bugSuccessResetsAttempts  bug = "success writes Completion.Attempts"
	bugReleaseChargesCrash    bug = "release charges the crash budget"
	bugReleaseKeepsSeq        bug = "release does not advance the claim sequence"
	bugReleaseKeepsSchedule   bug = "release keeps the old due time"
	bugRetryFailedKeepsCrash  bug = "RetryFailedJob keeps the crash count"
	bugRetryFailedAnyState    bug = "RetryFailedJob accepts any state"
	bugCancelAnyState         bug = "CancelJob cancels RUNNING jobs"
	bugCancelUnknownNil       bug = "CancelJob of an unknown id succeeds"
	bugHeartbeatNoRefresh     bug = "Heartbeat does not refresh"
	bugRecoverAllNodes        bug = "RecoverOrphans ignores heartbeats"
	bugRecoverNoRowMissed     bug = "RecoverOrphans misses nodes without a row"
	bugRecoverKeepsNodeRows   bug = "RecoverOrphans keeps stale node rows"
	bugRecoverAnyStatus       bug = "RecoverOrphans recovers finished jobs"
	bugRecoverNoBudget        bug = "RecoverOrphans ignores the crash budget"
	bugRecoverGraceInclusive  bug = "RecoverOrphans treats a heartbeat grace old as stale"
	bugRecoverIgnoresNodes    bug = "RecoverOrphans ignores p.Nodes"
	bugRecoverKeepsSeq        bug = "RecoverOrphans does not advance the claim sequence"
	bugDeregisterNoop         bug = "DeregisterNode does nothing"
	bugCorruptPlainError      bug = "corrupt rows give an error without ErrCorruptJob"
	bugListSkipsCorrupt       bug = "ListJobs skips corrupt rows"
	bugCloseTwiceFails        bug = "second Close fails"
	bugUsableAfterClose       bug = "store works after Close"
	bugTruncatesPayload       bug = "payloads cut to 64 KiB"
	bugEmptyInsertFails       bug = "InsertJobs of no jobs fails"
	bugCompleteUnknownErrors  bug = "CompleteJobs fails on an unknown job"
	bugCompleteNoReplay       bug = "CompleteJobs reports a replayed completion superseded"
	bugCompletePartialBatch   bug = "CompleteJobs writes the entries before an unknown outcome"
	bugClaimCancelled         bug = "claim takes CANCELLED jobs"
	bugClaimIgnoresDue        bug = "claim ignores due times"
	bugClaimPanicsOnCorrupt   bug = "claim panics on a corrupt row"
	bugRetryFailedUnknownNil  bug = "RetryFailedJob of an unknown id succeeds"

	bugRecoverUnordered       bug = "RecoverOrphans reports in descending id order"
	bugRecoverKeepsForcedRows bug = "RecoverOrphans keeps the rows of p.Nodes"
	bugRecoverFailKeepsOwner  bug = "RecoverOrphans keeps the owner of a job it fails"

	bugClaimIgnoresTags      bug = "claim ignores the tag filter"
	bugTagsHeadOfLine        bug = "claim applies the tag filter after the limit"
	bugClaimIgnoresTasks     bug = "claim ignores ClaimParams.Tasks"
	bugTasksHeadOfLine       bug = "claim applies the task filter after the limit"
	bugTasksFirstOnly        bug = "claim honours only the first task listed"
	bugLiveNodesExclusive    bug = "LiveNodes leaves out a heartbeat at since"
	bugNodeTasksOutliveNode  bug = "a node's tasks outlive the node"
	bugNodeTasksUnsorted     bug = "node tasks kept as given"
	bugPendingCountsRunning  bug = "PendingTasks counts RUNNING jobs"
	bugPendingEarliestLatest bug = "PendingTasks reports the latest time"
	bugTagsSubstring         bug = "claim matches tags as substrings of a joined list"
	bugTagsDropUntagged      bug = "claim with a tag filter drops untagged jobs"
	bugClaimIgnoresPermits   bug = "claim ignores resource permits"
	bugPermitsHeadOfLine     bug = "claim applies resource permits after the limit"
	bugPermitsPerCall        bug = "claim counts only permits held before the call"
	bugPermitRace            bug = "claim counts permits outside its critical section"
	bugRetryKeepsPermit      bug = "retry outcome keeps the permit"
	bugRecoverKeepsPermit    bug = "RecoverOrphans keeps the permit"
	bugInsertAcceptsBadLimit bug = "InsertJobs accepts a resource limit below 1"
	bugInsertPartialBatch    bug = "InsertJobs writes the jobs before an invalid one"

	bugCheckIgnoresSeq    bug = "CheckClaims ignores the claim sequence"
	bugCheckIgnoresStatus bug = "CheckClaims ignores the status"

	bugAdoptIgnoresNode   bug = "AdoptClaims ignores the node"
	bugAdoptIgnoresTime   bug = "AdoptClaims ignores the claim time"
	bugAdoptIgnoresStatus bug = "AdoptClaims ignores the status"

	bugLeaseNeverExpires     bug = "a lease never expires"
	bugLeaseExpiryExclusive  bug = "a lease is held through now = expiry"
	bugLeaseRenewKeepsExpiry bug = "a lease renewal keeps the old expiry"
	bugLeaseReleaseAnyOwner  bug = "ReleaseLease frees another owner's lease"
	bugLeaseRace             bug = "TryAcquireLease checks and writes in two steps"

	bugStateIgnoresVersion     bug = "state update ignores the expected version"
	bugStateFenceIgnoresSeq    bug = "fenced state write ignores the claim sequence"
	bugStateFenceIgnoresStatus bug = "fenced state write ignores the status"
	bugStateCompactsJSON       bug = "state JSON is compacted"

	bugPropertyOverwrite bug = "properties are not write-once"
	bugInsertDropsProps  bug = "InsertJobs drops the properties"
	bugDuplicateProps    bug = "a duplicate's properties land on the job holding its key"
	bugPrefixLike        bug = "property prefix matched with LIKE"
	bugFindUnsorted      bug = "FindJobsByProperty lists ids in descending order"

	bugWakeupNoSource bug = "wakeups carry no source"

	bugFireIgnoresVersion   bug = "FireSchedule ignores the version"
	bugFireNotAtomic        bug = "FireSchedule inserts the jobs before it checks the version"
	bugUpdateIgnoresVersion bug = "UpdateSchedule ignores the expected version"
	bugDueIncludesPaused    bug = "DueSchedules includes paused schedules"
	bugDueExclusive         bug = "DueSchedules excludes a schedule due exactly now"
	bugFireWritesDuplicate  bug = "FireSchedule writes a second job for a slot's key"
	bugSkipsNotRecorded     bug = "FireSchedule counts skipped slots without recording them"

	bugArchiveRunning    bug = "ArchiveJobs archives jobs that are not finished"
	bugArchiveIgnoresAge bug = "ArchiveJobs ignores the cutoff"
	bugArchiveDropsProps bug = "ArchiveJobs loses the properties"
	bugArchiveKeepsLive  bug = "ArchiveJobs copies without removing the live job"
	bugPurgeIgnoresAge   bug = "PurgeArchivedJobs ignores the cutoff"
	bugPurgeLive         bug = "PurgeArchivedJobs deletes live jobs"

	bugLogUnfenced      bug = "AppendJobLogs ignores the claim sequence"
	bugLogResendTwice   bug = "AppendJobLogs writes a resent append's lines again"
	bugLogUnbounded     bug = "AppendJobLogs keeps every line"
	bugLogPerRunBound   bug = "AppendJobLogs bounds each execution, not the job"
	bugLogDeleteIgnores bug = "DeleteJobLogs ignores the cutoff"
)

// refStore is a small, obviously correct in-memory spi.Store (O(n) per
// call) used to test the kit itself; with a bug set it misbehaves in one
// specific way. Rows are deep copies; a row marked corrupt cannot be
// decoded, like a row with invalid JSON in a column.
type refStore struct {
	bug bug

	mu        sync.Mutex
	rows      map[uuid.UUID]*refRow
	order     []uuid.UUID // insertion order
	keys      map[string]uuid.UUID
	nodes     map[string]time.Time
	nodeTasks map[string][]string // the tasks recorded with a node's heartbeat
	held      map[string]int      // permits held, per resource
	leases    map[string]refLease
	states    map[refStateKey]spi.VersionedState
	props     map[uuid.UUID]map[string]string
	scheds    map[string]spi.ScheduleRow
	skips     map[string][]spi.SkipRecord
	archived  map[uuid.UUID]*spi.Job
	logs      map[uuid.UUID][]spi.LogLine
	deps      map[uuid.UUID][]spi.Dependency // each child's dependencies
	batches   map[uuid.UUID]*spi.Batch
	audit     refAudit // the audit log (refstore_audit_test.go)
	listeners map[int]func(spi.WakeupHint)
	nextLsn   int
	closed    bool
	broken    atomic.Bool   // the next ClaimJobs or CompleteJobs fails (Harness.BreakConnections)
	inflight  atomic.Int32  // ClaimJobs calls in progress
	leasing   atomic.Int32  // TryAcquireLease calls in progress
	meet      chan struct{} // where two claimers of bugDoubleClaim meet
}

type refLease struct {
	owner   string
	expires time.Time
}

type refStateKey struct {
	id uuid.UUID
	ns string
}

type refRow struct {
	job     *spi.Job
	corrupt bool
}

func newRefStore(b bug) *refStore {
	return &refStore{
		bug: b, rows: map[uuid.UUID]*refRow{}, keys: map[string]uuid.UUID{}, nodes: map[string]time.Time{}, nodeTasks: map[string][]string{},
		held: map[string]int{}, leases: map[string]refLease{}, states: map[refStateKey]spi.VersionedState{},
		props: map[uuid.UUID]map[string]string{}, scheds: map[string]spi.ScheduleRow{}, skips: map[string][]spi.SkipRecord{}, archived: map[uuid.UUID]*spi.Job{}, logs: map[uuid.UUID][]spi.LogLine{}, deps: map[uuid.UUID][]spi.Dependency{}, batches: map[uuid.UUID]*spi.Batch{}, listeners: map[int]func(spi.WakeupHint){},
		meet: make(chan struct{}),
	}
}

// corruptJob marks job id as undecodable.
func (s *refStore) corruptJob(id uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[id].corrupt = true
}

func (s *refStore) check() error {
	if s.closed {
		return spi.ErrClosed
	}
	return nil
}

// decode returns a copy of row r as a job, or the corrupt-row error.
func (s *refStore) decode(r *refRow) (*spi.Job, error) {
	if r.corrupt {
		if s.bug == bugCorruptPlainError {
			return nil, errors.New("invalid character in params")
		}
		return nil, fmt.Errorf("%w: job %s: params: invalid JSON", spi.ErrCorruptJob, r.job.ID)
	}
	return r.job.Clone(), nil
}

func (s *refStore) InsertJobs(ctx context.Context, jobs []*spi.Job, o spi.InsertOptions) ([]spi.InsertResult, error) {
	for i, j := range jobs { // the resource limit is checked by insertLocked
		switch {
		case j == nil:
			return nil, fmt.Errorf("job %d is nil", i)
		case j.ID == uuid.Nil:
			return nil, fmt.Errorf("job %d has the zero id", i)
		case !j.Priority.Valid():
			return nil, fmt.Errorf("job %s: priority %d out of range", j.ID, j.Priority)
		case len(j.TraceContext) > spi.MaxTraceContextBytes:
			return nil, fmt.Errorf("job %s: trace context of %d bytes", j.ID, len(j.TraceContext))
		}
		for k := range j.Properties {
			if k == "" {
				return nil, fmt.Errorf("job %s: property with an empty key", j.ID)
			}
		}
	}
	s.mu.Lock()
	res, err := s.insertLocked(jobs)
	var fns []func(spi.WakeupHint)
	hint := spi.WakeupHint{Priority: spi.PriorityLowest, Source: o.Source}
	written := false
	for i, r := range res {
		if !r.Duplicate {
			written = true
			hint.Priority = max(hint.Priority, jobs[i].Priority)
		}
	}
	if err == nil && written {
		for _, fn := range s.listeners {
			fns = append(fns, fn)
		}
	}
	s.mu.Unlock()
	for _, fn := range fns {
		fn(hint)
	}
	return res, err
}

func (s *refStore) insertLocked(jobs []*spi.Job) ([]spi.InsertResult, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	validLimit := func(j *spi.Job) error {
		if j.Resource != "" && j.ResourceLimit < 1 {
			return fmt.Errorf("job %s: resource %q with limit %d", j.ID, j.Resource, j.ResourceLimit)
		}
		return nil
	}
	for _, j := range jobs {
		if err := validLimit(j); err != nil {
			return nil, err
		}
	}
	for _, j := range jobs {
		if err := s.checkSignal(j); err != nil {
			return nil, err
		}
	}
	if spi.WorkflowBatch(jobs) {
		if err := spi.ValidateWorkflowBatch(jobs); err != nil {
			return nil, err
		}
	}
	res := make([]spi.InsertResult, len(jobs))
	for i, j := range jobs {
		if err := validLimit(j); err != nil {
			return nil, err
		}
		if j.IdempotencyKey != "" {
			if old, ok := s.keys[j.IdempotencyKey]; ok {
				res[i] = spi.InsertResult{ID: old, Duplicate: true}
				continue
			}
		}
		c := j.Clone()
		for k, v := range c.Properties {
			s.putPropLocked(c.ID, k, v)
		}
		c.Properties = nil
		c.Status = spi.StatusPending
		s.linkLocked(c)
		s.awaitLocked(c)
		s.rows[c.ID] = &refRow{job: c}
		s.order = append(s.order, c.ID)
		if c.IdempotencyKey != "" {
			s.keys[c.IdempotencyKey] = c.ID
		}
		res[i] = spi.InsertResult{ID: c.ID}
	}
	return res, nil
}

func (s *refStore) GetJob(_ context.Context, id uuid.UUID) (*spi.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	r, ok := s.rows[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	return s.decode(r)
}

// hasProperty reports whether job id has property key = value (any job,
// for an empty key); the caller holds s.mu.
func (s *refStore) hasProperty(id uuid.UUID, key, value string) bool {
	if key == "" {
		return true
	}
	v, ok := s.props[id][key]
	return ok && v == value
}

func (s *refStore) CountJobs(ctx context.Context, p spi.ListParams, limit int) (int, error) {
	n := 0
	for limit > 0 {
		p.Limit = min(limit, 1000)
		page, next, err := s.ListJobs(ctx, p)
		if err != nil {
			return 0, err
		}
		n, limit = n+len(page), limit-len(page)
		if next == (uuid.UUID{}) {
			break
		}
		p.After = next
	}
	return n, nil
}

func (s *refStore) ListJobs(_ context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, uuid.UUID{}, err
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	all := slices.Clone(s.order)
	sortUUIDs(all)
	var page []*refRow
	more := false
	for _, id := range all {
		if bytes.Compare(id[:], p.After[:]) <= 0 {
			continue
		}
		r := s.rows[id]
		if !p.Matches(r.job) || !s.hasProperty(id, p.PropertyKey, p.PropertyValue) {
			continue
		}
		if len(page) == limit {
			more = true
			break
		}
		page = append(page, r)
	}
	var out []*spi.Job
	for _, r := range page {
		j, err := s.decode(r)
		if err != nil {
			if s.bug == bugListSkipsCorrupt {
				continue
			}
			return nil, uuid.UUID{}, err
		}
		out = append(out, j)
	}
	var next uuid.UUID
	if more && len(page) > 0 {
		next = page[len(page)-1].job.ID
	}
	return out, next, nil
}

func (s *refStore) ClaimJobs(_ context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	if s.broken.Swap(false) {
		return nil, errors.New("refstore: connection lost")
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	s.mu.Lock()
	if err := s.check(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	now, b := p.Now, p.BoostInterval
	var due []*spi.Job
	for _, r := range s.rows {
		j := r.job
		if r.corrupt && s.bug == bugClaimPanicsOnCorrupt && j.Status == spi.StatusPending {
			s.mu.Unlock()
			panic("corrupt row " + j.ID.String())
		}
		if r.corrupt || j.Status != spi.StatusPending || j.ScheduledAt.After(now) {
			continue
		}
		due = append(due, j)
	}
	slices.SortFunc(due, func(x, y *spi.Job) int {
		ex := spi.EffectivePriority(x.Priority, x.ScheduledAt, now, b)
		ey := spi.EffectivePriority(y.Priority, y.ScheduledAt, now, b)
		if ex != ey {
			if ex > ey {
				return -1
			}
			return 1
		}
		if c := x.ScheduledAt.Compare(y.ScheduledAt); c != 0 {
			return c
		}
		return bytes.Compare(x.ID[:], y.ID[:])
	})
	held := s.held
	if s.bug == bugPermitRace {
		// Counts the permits, lets go of the lock until another claimer
		// has come in (if one does), picks later: both can take the same
		// free permits.
		held = maps.Clone(s.held)
		s.mu.Unlock()
		for i := 0; i < 1000 && s.inflight.Load() < 2; i++ {
			runtime.Gosched()
		}
		runtime.Gosched()
		s.mu.Lock()
		due = slices.DeleteFunc(due, func(j *spi.Job) bool { return j.Status != spi.StatusPending })
	}
	taken := map[string]int{}
	var picked []*spi.Job
	for _, j := range due {
		if len(picked) >= p.Limit {
			break
		}
		if !s.tagsPass(p.Tags, j.Tags) || !s.taskPasses(p, j.TaskName) {
			continue
		}
		if j.Resource != "" {
			if held[j.Resource]+taken[j.Resource] >= j.ResourceLimit {
				continue
			}
			taken[j.Resource]++
		}
		picked = append(picked, j)
	}
	due = picked
	if s.bug == bugDoubleClaim && len(due) > 0 && s.inflight.Load() <= 1 {
		// On a loaded machine the other claimers may not have begun yet:
		// give them the processor a few times before deciding there are
		// none.
		s.mu.Unlock()
		for i := 0; i < 1000 && s.inflight.Load() <= 1; i++ {
			runtime.Gosched()
		}
		s.mu.Lock()
	}
	if s.bug == bugDoubleClaim && s.inflight.Load() > 1 {
		// Select, let go of the lock, and meet another claimer that has
		// selected too (if one comes within 250 ms) before updating: both
		// update the same jobs. A rendezvous, not a yield, so that the
		// defect shows however the goroutines are scheduled.
		s.mu.Unlock()
		select {
		case s.meet <- struct{}{}:
		case <-s.meet:
		case <-time.After(250 * time.Millisecond):
		}
		s.mu.Lock()
	}
	out := make([]*spi.Job, 0, len(due))
	for _, j := range due {
		if j.Resource != "" && j.Status != spi.StatusRunning {
			s.held[j.Resource]++
		}
		j.Status = spi.StatusRunning
		j.OwnerNode = p.NodeID
		j.ClaimSeq++
		j.ClaimedAt = p.Now
		out = append(out, j.Clone())
	}
	s.mu.Unlock()
	return out, nil
}

func (s *refStore) CompleteJobs(_ context.Context, cs []spi.Completion) ([]bool, error) {
	if s.broken.Swap(false) {
		return nil, errors.New("refstore: connection lost")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	for _, c := range cs {
		if c.Outcome < spi.OutcomeSucceeded || c.Outcome > spi.OutcomeCancelled {
			return nil, fmt.Errorf("unknown outcome %d", c.Outcome)
		}
	}
	res := make([]bool, len(cs))
	seen := make(map[spi.ClaimRef]bool, len(cs))
	for i, c := range cs {
		first := !seen[c.ClaimRef]
		seen[c.ClaimRef] = true
		r, ok := s.rows[c.JobID]
		if ok && first && c.AlreadyApplied(r.job) {
			res[i] = true
			continue
		}
		if !ok {
			continue
		}
		j := r.job
		if j.Status != spi.StatusRunning || j.ClaimSeq != c.ClaimSeq {
			continue
		}
		s.leaveRunning(j)
		switch c.Outcome {
		case spi.OutcomeSucceeded:
			j.Status = spi.StatusSucceeded
			j.Result = bytes.Clone(c.Result)
			j.ResultType = c.ResultType
			j.FinishedAt = c.FinishedAt
		case spi.OutcomeRetry:
			j.Status = spi.StatusPending
			j.ScheduledAt = c.RetryAt
			j.Attempts = c.Attempts
			j.LastError = c.LastError
			j.OwnerNode = ""
		case spi.OutcomeFailed:
			j.Status = spi.StatusFailed
			j.Attempts = c.Attempts
			j.LastError = c.LastError
			j.FinishedAt = c.FinishedAt
		case spi.OutcomeSkipped, spi.OutcomeCancelled:
			j.Status = c.Outcome.Status()
			j.LastError = c.LastError
			j.FinishedAt = c.FinishedAt
		default:
			return nil, fmt.Errorf("unknown outcome %d", c.Outcome)
		}
		if j.Status.Terminal() {
			s.finishedLocked(j, c.FinishedAt)
		}
		res[i] = true
	}
	return res, nil
}

func (s *refStore) ReleaseJobs(_ context.Context, refs []spi.ClaimRef, now time.Time) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	res := make([]bool, len(refs))
	for i, rf := range refs {
		r, ok := s.rows[rf.JobID]
		if !ok || r.job.Status != spi.StatusRunning || r.job.ClaimSeq != rf.ClaimSeq {
			continue
		}
		j := r.job
		s.leaveRunning(j)
		j.Status = spi.StatusPending
		j.ScheduledAt = now
		j.OwnerNode = ""
		j.ClaimSeq++
		res[i] = true
	}
	return res, nil
}

func (s *refStore) RetryFailedJob(_ context.Context, id uuid.UUID, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	return s.retryFailedLocked(id, now)
}

// retryFailedLocked is RetryFailedJob under the lock.
func (s *refStore) retryFailedLocked(id uuid.UUID, now time.Time) error {
	r, ok := s.rows[id]
	if !ok {
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	j := r.job
	if j.Status != spi.StatusFailed {
		return fmt.Errorf("%w: job %s is %s, not FAILED", spi.ErrInvalidState, id, j.Status)
	}
	j.Status = spi.StatusPending
	j.LastError = ""
	j.Attempts = 0
	j.CrashCount = 0
	j.ScheduledAt = now
	j.FinishedAt = time.Time{}
	j.OwnerNode = ""
	s.reviveLocked(id)
	return nil
}

func (s *refStore) CancelJob(_ context.Context, id uuid.UUID, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	return s.cancelLocked(id, now)
}

// cancelLocked is CancelJob under the lock.
func (s *refStore) cancelLocked(id uuid.UUID, now time.Time) error {
	r, ok := s.rows[id]
	if !ok {
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	j := r.job
	if j.Status == spi.StatusWaiting {
		s.resolveLocked(j, spi.SignalCancelled, nil, now)
		return nil
	}
	if j.Status != spi.StatusPending && j.Status != spi.StatusBlocked {
		return fmt.Errorf("%w: job %s is %s, not PENDING", spi.ErrInvalidState, id, j.Status)
	}
	j.Status = spi.StatusCancelled
	j.FinishedAt = now
	s.finishedLocked(j, now)
	return nil
}

func (s *refStore) Heartbeat(_ context.Context, nodeID string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	if _, ok := s.nodes[nodeID]; !ok {
		delete(s.nodeTasks, nodeID) // a node registering afresh has recorded nothing
	}
	s.nodes[nodeID] = now
	return nil
}

func (s *refStore) DeregisterNode(_ context.Context, nodeID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err
	}
	delete(s.nodes, nodeID)
	return nil
}

func (s *refStore) RecoverOrphans(_ context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return nil, err
	}
	cutoff := p.Now.Add(-p.Grace)
	stale := func(node string) bool {
		hb, ok := s.nodes[node]
		return !ok || hb.Before(cutoff)
	}
	forced := func(node string) bool { return slices.Contains(p.Nodes, node) }
	var out []spi.RecoveredJob
	dead := map[string]bool{}
	all := slices.Clone(s.order)
	sortUUIDs(all)
	for _, id := range all {
		j := s.rows[id].job
		if j.OwnerNode == "" || j.Status != spi.StatusRunning {
			continue
		}
		isStale := stale(j.OwnerNode)
		if !isStale && !forced(j.OwnerNode) {
			continue
		}
		if isStale {
			dead[j.OwnerNode] = true
		}
		rj := spi.RecoveredJob{JobID: j.ID, TaskName: j.TaskName, FromNode: j.OwnerNode}
		s.leaveRunning(j)
		if j.CrashCount < p.MaxCrashRedeliveries {
			j.Status = spi.StatusPending
			j.ScheduledAt = p.Now
			j.CrashCount++
		} else {
			j.Status = spi.StatusFailed
			j.LastError = p.LastError
			j.FinishedAt = p.Now
			s.finishedLocked(j, p.Now)
		}
		j.OwnerNode = ""
		j.ClaimSeq++
		rj.NewStatus, rj.CrashCount = j.Status, j.CrashCount
		out = append(out, rj)
	}
	for node, hb := range s.nodes {
		if dead[node] || hb.Before(cutoff) || forced(node) {
			delete(s.nodes, node)
		}
	}
	return out, nil
}

func (s *refStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

var _ spi.Store = (*refStore)(nil)
