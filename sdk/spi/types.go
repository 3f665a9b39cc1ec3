package spi

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Status is the lifecycle state of a job.
type Status string

// The job states. PENDING jobs are due at their scheduled time; a claim makes
// them RUNNING; an owner write finalizes them as SUCCEEDED or FAILED (the
// dead-letter queue) or puts them back to PENDING for a retry. CANCELLED jobs
// were withdrawn before they finished. In a workflow, BLOCKED jobs wait for
// their dependencies, and SKIPPED ones did not run because a dependency or
// a condition said so. WAITING jobs wait for a signal (StatusWaiting, in
// signal.go).
const (
	StatusPending   Status = "PENDING"
	StatusRunning   Status = "RUNNING"
	StatusSucceeded Status = "SUCCEEDED"
	StatusFailed    Status = "FAILED"
	StatusCancelled Status = "CANCELLED"
	StatusBlocked   Status = "BLOCKED"
	StatusSkipped   Status = "SKIPPED"
)

// Valid reports whether s is one of the known states.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusRunning, StatusSucceeded, StatusFailed, StatusCancelled, StatusBlocked, StatusSkipped, StatusWaiting:
		return true
	}
	return false
}

// Terminal reports whether no further transition happens to a job in state s
// without an explicit action (a DLQ retry).
func (s Status) Terminal() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCancelled || s == StatusSkipped
}

// Priority is a job's stored priority, 0 (lowest) to 4 (critical).
type Priority int

// The five priority levels. NORMAL is the default.
const (
	PriorityLowest   Priority = 0
	PriorityLow      Priority = 1
	PriorityNormal   Priority = 2
	PriorityHigh     Priority = 3
	PriorityCritical Priority = 4
)

// NumPriorities is the number of priority levels.
const NumPriorities = 5

// Valid reports whether p is within LOWEST..CRITICAL.
func (p Priority) Valid() bool { return p >= PriorityLowest && p <= PriorityCritical }

// String returns the level's name, e.g. "HIGH".
func (p Priority) String() string {
	switch p {
	case PriorityLowest:
		return "LOWEST"
	case PriorityLow:
		return "LOW"
	case PriorityNormal:
		return "NORMAL"
	case PriorityHigh:
		return "HIGH"
	case PriorityCritical:
		return "CRITICAL"
	}
	return fmt.Sprintf("Priority(%d)", int(p))
}

// CrashOutcome is the crash-budget decision of orphan recovery, the one
// every store applies: for a job whose node died while running it, after
// crash earlier crashes, under a budget of maxRedeliveries
// ([RecoverParams].MaxCrashRedeliveries), back to PENDING with the crash
// count + 1 while crash is below the budget, else FAILED (the dead-letter
// queue) with the count unchanged. A budget of 0 fails the job on its first
// crash.
func CrashOutcome(crash, maxRedeliveries int) (status Status, crashCount int) {
	if crash < maxRedeliveries {
		return StatusPending, crash + 1
	}
	return StatusFailed, crash
}

// EffectivePriority is the claim-ordering priority of docs/architecture.md, invariant 5:
// the stored priority plus one for every full boost interval that the job has
// waited since it became due. A boost interval of zero or less disables aging.
// A job that is not yet due gets no boost.
func EffectivePriority(p Priority, scheduled, now time.Time, boost time.Duration) int64 {
	eff := int64(p)
	if boost <= 0 {
		return eff
	}
	wait := now.Sub(scheduled)
	if wait <= 0 {
		return eff
	}
	return eff + int64(wait/boost)
}

// BackoffKind selects how the delay between retries grows.
type BackoffKind string

// The backoff kinds of the spec. The zero value behaves as BackoffNone.
const (
	BackoffNone        BackoffKind = "NONE"
	BackoffFixed       BackoffKind = "FIXED"
	BackoffExponential BackoffKind = "EXPONENTIAL"
)

// MaxBackoff caps an exponential backoff delay.
const MaxBackoff = 24 * time.Hour

// Valid reports whether k is a known kind (the empty kind counts as NONE).
func (k BackoffKind) Valid() bool {
	switch k {
	case "", BackoffNone, BackoffFixed, BackoffExponential:
		return true
	}
	return false
}

// Delay returns the delay before retry number attempt (1 for the first retry)
// with base parameter param: zero for NONE, param for FIXED and
// param·2^(attempt−1) for EXPONENTIAL, capped at [MaxBackoff].
func (k BackoffKind) Delay(param time.Duration, attempt int) time.Duration {
	if param < 0 {
		param = 0
	}
	switch k {
	case BackoffFixed:
		return param
	case BackoffExponential:
		if attempt < 1 {
			attempt = 1
		}
		d := param
		for i := 1; i < attempt; i++ {
			if d >= MaxBackoff/2 {
				return MaxBackoff
			}
			d *= 2
		}
		return min(d, MaxBackoff)
	}
	return 0
}

// Job is a job as a store holds it: one row of scheduler_job plus its tags.
// Times are UTC with microsecond precision once stored.
type Job struct {
	ID             uuid.UUID
	TaskName       string
	Payload        []byte // serialized task arguments
	Status         Status
	Priority       Priority
	ScheduledAt    time.Time // when the job is due
	CreatedAt      time.Time
	Attempts       int // failed executions so far
	MaxRetries     int
	Backoff        BackoffKind
	BackoffParam   time.Duration
	CrashCount     int   // orphan recoveries charged to the crash budget
	Snoozes        int   // runs that ended in a snooze or a wait (OutcomeSnoozed, OutcomeWaiting), which spend no attempt
	ClaimSeq       int64 // advanced by every claim, release and recovery
	OwnerNode      string
	ClaimedAt      time.Time // zero unless claimed at least once
	FinishedAt     time.Time // zero unless terminal
	LastError      string    // sanitized; empty when none
	Result         []byte    // JSON; nil when none
	ResultType     string
	IdempotencyKey string // empty when none
	Tags           []string
	Params         map[string]string
	// TraceContext is the trace context of the job's submitter, opaque to
	// the store: a tracing middleware writes it at submit and reads it back
	// when the job runs (days later, maybe), to link the run to the
	// submission. At most MaxTraceContextBytes; nil (or empty) for none.
	// Every store keeps it through every read, claim and the archive.
	TraceContext []byte
	// Properties are the job's write-once properties (JobPropertyStore),
	// written by InsertJobs in the same atomic step as the job; job reads
	// do not load them (GetProperty and GetPropertiesByPrefix do).
	Properties map[string]string
	// Resource names a resource permit the job holds while RUNNING; empty
	// for none. No more than ResourceLimit jobs naming the same resource
	// run at once across all nodes.
	Resource      string
	ResourceLimit int // at least 1 when Resource is set

	// WorkflowID is the workflow the job belongs to; zero for none.
	WorkflowID uuid.UUID
	// Dependencies are the jobs this one waits for (a WorkflowStore):
	// InsertJobs writes them, and the job as BLOCKED; job reads leave them
	// nil (WorkflowStore.Dependencies reads them).
	Dependencies []Dependency
	// DependencyCount is the number of the job's dependencies and Waiting
	// how many of them have not finished; reads fill both.
	DependencyCount, Waiting int
	// Dependents is the number of jobs that depend on this one; the
	// inserter sets it, and a completion of the job carries it as
	// HasDependents.
	Dependents int

	// Signal, when set, is the job's wait for a signal (a SignalStore):
	// InsertJobs writes the job WAITING, and reads fill the outcome once
	// the wait is resolved. Nil for a job that awaits none.
	Signal *SignalWait

	// Unique, when set, makes the insert write the job only when no job
	// holding its key is in one of its states (a UniqueStore); inserts
	// read it, reads leave it nil.
	Unique *Unique

	// Sequence, when set, puts the job in a FIFO sequence (a
	// SequenceStore): the insert links it to the sequence's last job;
	// inserts read it, reads leave it nil.
	Sequence *Sequence
}

// Clone returns a deep copy of j.
func (j *Job) Clone() *Job {
	c := new(Job)
	j.CloneInto(c)
	return c
}

// CloneInto makes *dst a deep copy of j, as Clone does, in memory that
// the caller allocated: one slice of jobs for a whole batch, say, which
// stays alive as long as any of its jobs does.
func (j *Job) CloneInto(dst *Job) {
	*dst = *j
	dst.Payload = cloneBytes(j.Payload)
	dst.Result = cloneBytes(j.Result)
	dst.TraceContext = cloneBytes(j.TraceContext)
	if j.Tags != nil {
		dst.Tags = append([]string(nil), j.Tags...)
	}
	if j.Params != nil {
		dst.Params = make(map[string]string, len(j.Params))
		for k, v := range j.Params {
			dst.Params[k] = v
		}
	}
	if j.Properties != nil {
		dst.Properties = make(map[string]string, len(j.Properties))
		for k, v := range j.Properties {
			dst.Properties[k] = v
		}
	}
	dst.Signal = j.Signal.clone()
	if j.Unique != nil {
		u := *j.Unique
		u.States = slices.Clone(u.States)
		dst.Unique = &u
	}
	if j.Sequence != nil {
		q := *j.Sequence
		dst.Sequence = &q
	}
	if j.Dependencies != nil {
		dst.Dependencies = make([]Dependency, len(j.Dependencies))
		for i, d := range j.Dependencies {
			d.ConditionArgs = cloneBytes(d.ConditionArgs)
			dst.Dependencies[i] = d
		}
	}
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// ClaimRef names one claim of a job: the fence of every owner write.
type ClaimRef struct {
	JobID    uuid.UUID
	ClaimSeq int64
}

// ClaimParams selects what [Store.ClaimJobs] claims.
type ClaimParams struct {
	NodeID string
	Limit  int
	// Now is the claim's time, written as the claimed jobs' claim time;
	// the engine gives each claim of a node a Now of its own, to the
	// microsecond, so that it names the claim (ClaimAdopter).
	Now time.Time
	// BoostInterval is the aging interval; zero or less disables aging.
	BoostInterval time.Duration
	// Tags restricts the claim to jobs whose tags pass the filter.
	Tags TagFilter
	// Tasks, when not empty, restricts the claim to jobs whose TaskName is
	// one of them: a node passes the tasks it has registered, so that in a
	// fleet whose nodes run different task sets (a rolling deploy that
	// adds a task) no node claims a job it cannot run. Jobs of other tasks
	// are not read: the stores scan per task, so a backlog of a task no
	// claimer lists costs its claims nothing. Empty claims jobs of any task
	// (tools and tests); the engine always lists its tasks.
	Tasks []string
	// Held, when not nil, is where a store that keeps rate limits reports
	// what the claim held back for them (RateLimitStore): the engine waits
	// for the window to have room instead of polling blindly, and counts
	// the held-back jobs (GateRateLimit). A store may leave it alone.
	Held *ClaimHeld
}

// ClaimHeld is what a claim held back for rate limits (ClaimParams.Held).
type ClaimHeld struct {
	// Jobs is how many due jobs of full rate windows the claim passed
	// over (of the candidates it read).
	Jobs int
	// Room is how long after the claim, by the database's clock, one of
	// those windows has room again, rounded up to the millisecond; zero
	// when none was full.
	Room time.Duration
}

// Hold records in h (when not nil) n jobs held back by a window that has
// room again after room.
func (h *ClaimHeld) Hold(n int, room time.Duration) {
	if h == nil || n <= 0 {
		return
	}
	// Whole milliseconds, rounded up: a wait no finer than the pollers'.
	room = max(room, time.Microsecond).Truncate(time.Millisecond) + time.Millisecond
	h.Jobs += n
	if h.Room == 0 || room < h.Room {
		h.Room = room
	}
}

// TaskSet returns tasks sorted and without repeats, never nil: the form
// in which stores keep and compare task lists (ClaimParams.Tasks, the
// tasks of [NodeTaskStore.HeartbeatTasks]).
func TaskSet(tasks []string) []string {
	t := append([]string{}, tasks...)
	slices.Sort(t)
	return slices.Compact(t)
}

// AllowsTask reports whether p.Tasks lets the claim take a job of task.
func (p ClaimParams) AllowsTask(task string) bool {
	return len(p.Tasks) == 0 || slices.Contains(p.Tasks, task)
}

// TagFilter is a node's tag affinity: a job passes when it carries every tag
// of All, at least one tag of Any (when Any is not empty) and no tag of
// None. The zero filter passes every job.
type TagFilter struct {
	All  []string
	Any  []string
	None []string
}

// Empty reports whether f passes every job.
func (f TagFilter) Empty() bool { return len(f.All) == 0 && len(f.Any) == 0 && len(f.None) == 0 }

// Match reports whether a job with tags passes f.
func (f TagFilter) Match(tags []string) bool {
	has := func(t string) bool {
		for _, x := range tags {
			if x == t {
				return true
			}
		}
		return false
	}
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
	if len(f.Any) == 0 {
		return true
	}
	for _, t := range f.Any {
		if has(t) {
			return true
		}
	}
	return false
}

// Outcome is what an owner write sets.
type Outcome int

// The outcomes of [Completion].
const (
	// OutcomeSucceeded finalizes the job as SUCCEEDED with an optional result.
	OutcomeSucceeded Outcome = iota + 1
	// OutcomeRetry puts the job back to PENDING at RetryAt.
	OutcomeRetry
	// OutcomeFailed finalizes the job as FAILED (the dead-letter queue).
	OutcomeFailed
	// OutcomeSkipped finalizes the job as SKIPPED and OutcomeCancelled as
	// CANCELLED, with LastError as the reason: the engine's decision for
	// a workflow job whose dependencies or conditions say it must not run
	// (a WorkflowStore).
	OutcomeSkipped
	OutcomeCancelled
	// OutcomeSnoozed puts the job back to PENDING at RetryAt without
	// spending an attempt: the body asked to run again later
	// (ratchet.Snooze). Snoozes is the job's new snooze count; its
	// attempts and last error stay as they are.
	OutcomeSnoozed
	// OutcomeWaiting makes the job WAITING for Signal (ratchet.WaitSignal):
	// the wait replaces any the job had, unresolved, and a delivery, its
	// deadline or a cancel ends it as for a job submitted waiting
	// (SignalStore). Like a snooze it spends no attempt: Snoozes is the
	// job's new snooze count, its attempts and last error stay as they
	// are. Only a store with a SignalStore accepts it.
	OutcomeWaiting
)

// Status is the state a completion of outcome o leaves its job in.
func (o Outcome) Status() Status {
	switch o {
	case OutcomeSucceeded:
		return StatusSucceeded
	case OutcomeRetry, OutcomeSnoozed:
		return StatusPending
	case OutcomeFailed:
		return StatusFailed
	case OutcomeSkipped:
		return StatusSkipped
	case OutcomeCancelled:
		return StatusCancelled
	case OutcomeWaiting:
		return StatusWaiting
	}
	return ""
}

// Completion is one fenced owner write that ends an execution.
type Completion struct {
	ClaimRef
	Outcome    Outcome
	FinishedAt time.Time   // the time of the write
	RetryAt    time.Time   // OutcomeRetry and OutcomeSnoozed
	Attempts   int         // OutcomeRetry and OutcomeFailed: the new attempt count (a success's or a snooze's: the run's number, not written)
	Snoozes    int         // OutcomeSnoozed and OutcomeWaiting: the new snooze count
	Signal     *SignalWait // OutcomeWaiting: the wait (Name, Key, Deadline)
	LastError  string      // OutcomeRetry and OutcomeFailed
	Result     []byte      // OutcomeSucceeded only; nil for none
	ResultType string
	// HasDependents says that the job has dependents (Job.Dependents > 0
	// when it was claimed): a finishing completion then records its status
	// on their dependencies and releases them in the same write.
	HasDependents bool
	// Attempt is how the run ended, for its attempt record (empty: the
	// completion ends no run, as a workflow job's skip); Node and
	// StartedAt are the run's node and claim time. A store with an
	// AttemptStore writes the completion's Record with its change.
	Attempt   AttemptOutcome
	Node      string
	StartedAt time.Time
}

// AlreadyApplied reports whether j, as read from a store, is in exactly the
// state that c writes: the same claim sequence and every field of
// c.Change (Change.Holds). It is how a store recognises a completion that
// an earlier call already applied (a batch whose commit succeeded but whose
// answer was lost, and that the caller sends again): such a completion
// counts as applied, not superseded.
func (c Completion) AlreadyApplied(j *Job) bool {
	if j == nil || j.ID != c.JobID || j.ClaimSeq != c.ClaimSeq {
		return false
	}
	ch, err := c.Change()
	return err == nil && ch.Holds(j)
}

// InsertResult reports what [Store.InsertJobs] did with one job.
type InsertResult struct {
	ID uuid.UUID
	// Duplicate is true when the job's idempotency key already existed; ID is
	// then the existing job's and nothing was written.
	Duplicate bool
}

// ListParams selects a page of jobs for [Store.ListJobs].
type ListParams struct {
	// Status filters by state; empty lists every state.
	Status Status
	// After is the cursor: only jobs with a larger ID are listed. The zero
	// UUID starts from the beginning.
	After uuid.UUID
	// Limit is the page size; zero or less means 100.
	Limit int
	// TaskName filters by task; empty lists every task.
	TaskName string
	// CreatedFrom (inclusive) and CreatedBefore (exclusive) bound the
	// creation time; a zero bound is no bound.
	CreatedFrom, CreatedBefore time.Time
	// PropertyKey, when set, lists only jobs whose property of that key
	// equals PropertyValue (a store with JobPropertyStore).
	PropertyKey, PropertyValue string
	// WorkflowID, when not zero, lists only the jobs of that workflow (a
	// store with WorkflowStore; others list none).
	WorkflowID uuid.UUID
	// Tag, when set, lists only jobs carrying that tag.
	Tag string
	// Priorities, when not empty, lists only jobs of one of them.
	Priorities []Priority
	// ErrorContains, when set, lists only jobs whose last error contains
	// it, ignoring case (ASCII letters at least: how a database folds
	// other letters is its collation's).
	ErrorContains string
	// DueBy, when not zero, lists only jobs scheduled at or before it;
	// DueAfter, when not zero, only jobs scheduled after it. With Status
	// PENDING and the time of the question, they split the PENDING jobs
	// into those due now and those scheduled later.
	DueBy, DueAfter time.Time
}

// ContainsFold reports whether s contains substr ignoring case, as
// ListParams.ErrorContains matches: for stores that filter in memory.
func ContainsFold(s, substr string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(substr))
}

// Matches reports whether j passes the filters of p other than the cursor
// and the property (which lives beside the job): for stores that filter in
// memory.
func (p ListParams) Matches(j *Job) bool {
	switch {
	case p.Status != "" && j.Status != p.Status,
		p.TaskName != "" && j.TaskName != p.TaskName,
		p.WorkflowID != uuid.Nil && j.WorkflowID != p.WorkflowID,
		!p.CreatedFrom.IsZero() && j.CreatedAt.Before(p.CreatedFrom),
		!p.CreatedBefore.IsZero() && !j.CreatedAt.Before(p.CreatedBefore),
		p.Tag != "" && !slices.Contains(j.Tags, p.Tag),
		len(p.Priorities) > 0 && !slices.Contains(p.Priorities, j.Priority),
		p.ErrorContains != "" && !ContainsFold(j.LastError, p.ErrorContains),
		!p.DueBy.IsZero() && j.ScheduledAt.After(p.DueBy),
		!p.DueAfter.IsZero() && !j.ScheduledAt.After(p.DueAfter):
		return false
	}
	return true
}

// RecoverParams drives [Store.RecoverOrphans].
type RecoverParams struct {
	Now time.Time
	// Grace is how old a node's heartbeat may be before its jobs are orphans.
	Grace time.Duration
	// MaxCrashRedeliveries is the crash budget: an orphan with a crash count
	// below it goes back to PENDING with the count plus one, otherwise it
	// fails into the DLQ.
	MaxCrashRedeliveries int
	// Nodes, when not empty, also names nodes whose running jobs are orphans
	// whatever their heartbeat (a node restarting under the same id).
	Nodes []string
	// LastError is stored on jobs that the recovery fails.
	LastError string
}

// RecoveredJob reports one job that [Store.RecoverOrphans] moved.
type RecoveredJob struct {
	JobID      uuid.UUID
	TaskName   string
	FromNode   string
	NewStatus  Status // PENDING or FAILED
	CrashCount int
}

// ValidateJobs reports the first job of a batch that no store may write: a
// nil job, the zero id, a priority outside LOWEST..CRITICAL, a resource
// without a limit of at least 1, or a trace context over
// MaxTraceContextBytes. Stores call it before writing anything.
func ValidateJobs(jobs []*Job) error {
	for i, j := range jobs {
		switch {
		case j == nil:
			return fmt.Errorf("job %d is nil", i)
		case j.ID == uuid.Nil:
			return fmt.Errorf("job %d (task %q) has the zero id", i, j.TaskName)
		case !j.Priority.Valid():
			return fmt.Errorf("job %s: priority %d out of range 0..4", j.ID, int(j.Priority))
		case j.Resource != "" && j.ResourceLimit < 1:
			return fmt.Errorf("job %s names resource %q with limit %d; the limit must be at least 1", j.ID, j.Resource, j.ResourceLimit)
		case len(j.TraceContext) > MaxTraceContextBytes:
			return fmt.Errorf("job %s: trace context of %d bytes, over the limit of %d", j.ID, len(j.TraceContext), MaxTraceContextBytes)
		}
		for k, v := range j.Properties {
			if err := ValidateProperty(k, v); err != nil {
				return fmt.Errorf("job %s: %w", j.ID, err)
			}
		}
		if err := validateSignal(j); err != nil {
			return err
		}
		if err := validateUnique(j); err != nil {
			return err
		}
		if err := validateRate(j); err != nil {
			return err
		}
		if err := validateSequence(j); err != nil {
			return err
		}
	}
	if WorkflowBatch(jobs) {
		return ValidateWorkflowBatch(jobs)
	}
	return nil
}

// MaxTraceContextBytes is the largest Job.TraceContext that every store
// keeps.
const MaxTraceContextBytes = 512

// The largest property key and value, in bytes, that every store keeps.
const (
	MaxPropertyKeyBytes   = 255
	MaxPropertyValueBytes = 1000
)

// ValidateProperty checks a property's key and value against what every
// store keeps: a key of 1 to MaxPropertyKeyBytes bytes, a value of at most
// MaxPropertyValueBytes.
func ValidateProperty(key, value string) error {
	switch {
	case key == "":
		return errors.New("property with an empty key")
	case len(key) > MaxPropertyKeyBytes:
		return fmt.Errorf("property key %.40q... is %d bytes, over the limit of %d", key, len(key), MaxPropertyKeyBytes)
	case len(value) > MaxPropertyValueBytes:
		return fmt.Errorf("property %q: value of %d bytes, over the limit of %d", key, len(value), MaxPropertyValueBytes)
	}
	return nil
}
