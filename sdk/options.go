package ratchet

import (
	"strconv"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// SubmitOption sets one option of a submission. Options given to NewTask are
// the task's defaults; options given to Submit override them.
type SubmitOption func(*submitConfig)

type submitConfig struct {
	delay          time.Duration
	at             time.Time
	maxRetries     *int
	backoff        BackoffKind
	backoffBase    *time.Duration
	priority       *Priority
	tags           []string
	params         map[string]string
	properties     map[string]string
	idempotencyKey string
	unique         *UniqueOpts
	debounce       *debounce
	sequence       *sequence
	resource       string
	resourceLimit  int
	tx             any
	afterCommit    AfterCommitRegistrar
	callbacks      []callback
	signal         string
	signalKey      string
	signalTimeout  time.Duration
	startBy        time.Time
	errs           []error
}

// WithDelay makes the job due d after submission. A negative d is an error.
func WithDelay(d time.Duration) SubmitOption {
	return func(c *submitConfig) {
		if d < 0 {
			c.errs = append(c.errs, invalidArg("negative delay %s", d))
			return
		}
		c.delay, c.at = d, time.Time{}
	}
}

// At makes the job due at t (a time in the past means now).
func At(t time.Time) SubmitOption {
	return func(c *submitConfig) {
		if t.IsZero() {
			c.errs = append(c.errs, invalidArg("zero time for At"))
			return
		}
		c.at, c.delay = t, 0
	}
}

// WithMaxRetries sets how many times a failed job is retried before it goes
// to the dead-letter queue; 0 means it never is. Default 3.
func WithMaxRetries(n int) SubmitOption {
	return func(c *submitConfig) {
		if n < 0 {
			c.errs = append(c.errs, invalidArg("negative max retries %d", n))
			return
		}
		c.maxRetries = &n
	}
}

// WithBackoff sets the retry delay: NONE (immediate), FIXED (base every
// time) or EXPONENTIAL (base·2^(attempt−1), capped at 24 h). Default
// EXPONENTIAL with a 1 s base.
func WithBackoff(kind BackoffKind, base time.Duration) SubmitOption {
	return func(c *submitConfig) {
		if !kind.Valid() || kind == "" {
			c.errs = append(c.errs, invalidArg("unknown backoff kind %q", kind))
			return
		}
		if base < 0 {
			c.errs = append(c.errs, invalidArg("negative backoff base %s", base))
			return
		}
		c.backoff, c.backoffBase = kind, &base
	}
}

// WithPriority sets the job's priority, LOWEST..CRITICAL. Default NORMAL.
func WithPriority(p Priority) SubmitOption {
	return func(c *submitConfig) {
		if !p.Valid() {
			c.errs = append(c.errs, invalidArg("priority %d out of range %d..%d", int(p), int(PriorityLowest), int(PriorityCritical)))
			return
		}
		c.priority = &p
	}
}

// WithTags adds tags to the job (used by node tag affinity). Tags must be
// non-empty; duplicates are dropped.
func WithTags(tags ...string) SubmitOption {
	return func(c *submitConfig) {
		for _, t := range tags {
			if t == "" {
				c.errs = append(c.errs, invalidArg("empty tag"))
				return
			}
		}
		c.tags = append(c.tags, tags...)
	}
}

// WithParam sets a string parameter that the job body reads with
// JobContext.Param.
func WithParam(key, value string) SubmitOption {
	return func(c *submitConfig) {
		if key == "" {
			c.errs = append(c.errs, invalidArg("empty param key"))
			return
		}
		if c.params == nil {
			c.params = map[string]string{}
		}
		c.params[key] = value
	}
}

// WithTimeout bounds each run of the job to d: past it, the run ends as a
// failure whose error wraps ErrTimeout (retried like any failure, see
// WithTimeoutNotRetried), written at once, and the body's context ends
// with ErrTimeout as its cause. A body that ignores its context keeps its
// slot until it returns, but what it returns then changes nothing. Given
// to NewTask, it is the task's default; given to Submit, it overrides it;
// either overrides the node's engine.Options.RunTimeout. 0 means no
// timeout; a negative d is an error.
func WithTimeout(d time.Duration) SubmitOption {
	return func(c *submitConfig) {
		if d < 0 {
			c.errs = append(c.errs, invalidArg("negative timeout %s", d))
			return
		}
		WithParam(spi.TimeoutParam, d.String())(c)
	}
}

// WithStartBy makes t the job's start-by deadline: a run that has not
// started by t (on the claiming node's clock) never starts. The job ends
// FAILED with an error wrapping ErrExpired, not retried, and its body does
// not run; its workflow dependents follow that failure. It holds for every
// run, a retry's and a crash redelivery's as the first. The node decides
// when it claims the job: a job that no node claims stays PENDING past t
// until one does. A zero t, or a t before the job is due, is an error.
func WithStartBy(t time.Time) SubmitOption {
	return func(c *submitConfig) {
		if t.IsZero() {
			c.errs = append(c.errs, invalidArg("zero time for WithStartBy"))
			return
		}
		c.startBy = t.UTC()
		WithParam(spi.StartByParam, c.startBy.Format(time.RFC3339Nano))(c)
	}
}

// WithStartWithin gives each run of the job d after the job is due to
// start: a run that has not started by then never starts, and the job
// ends FAILED with ErrExpired, as with WithStartBy (both given, the
// earlier time holds). The window opens again each time the job is due
// again: a retry's, a release's or a crash redelivery's due time. Unlike
// WithStartBy it suits a task's default (NewTask) and recurring
// schedules. d must be positive.
func WithStartWithin(d time.Duration) SubmitOption {
	return func(c *submitConfig) {
		if d <= 0 {
			c.errs = append(c.errs, invalidArg("start-within window %s is not positive", d))
			return
		}
		WithParam(spi.StartWithinParam, d.String())(c)
	}
}

// WithMaxSnoozes bounds how many times the job may snooze (a body
// returning Snooze): the run that would snooze the (n+1)th time fails the
// job instead, for good, with an error wrapping ErrTooManySnoozes. Given
// to NewTask, it is the task's default; given to Submit, it overrides it.
// Without it a job may snooze 100 times (spi.DefaultMaxSnoozes). 0 makes
// every snooze fail; a negative n is an error.
func WithMaxSnoozes(n int) SubmitOption {
	return func(c *submitConfig) {
		if n < 0 {
			c.errs = append(c.errs, invalidArg("negative snooze bound %d", n))
			return
		}
		WithParam(spi.MaxSnoozesParam, strconv.Itoa(n))(c)
	}
}

// WithTimeoutNotRetried makes a run that goes past its timeout fail for
// good (the dead-letter queue) instead of being retried.
func WithTimeoutNotRetried() SubmitOption {
	return WithParam(spi.TimeoutFinalParam, "1")
}

// WithProperty gives the job a write-once, indexed property, written in the
// same atomic step as the job itself: Client.ListJobs and CountJobs filter
// by it, and the job body reads it with JobContext.Property. The key is 1
// to 255 bytes, the value at most 1000. It needs a store with job
// properties (every store here has them); with another, the submission
// fails with ErrUnsupported and writes nothing. Giving the same key twice
// keeps the last value.
func WithProperty(key, value string) SubmitOption {
	return func(c *submitConfig) {
		if err := spi.ValidateProperty(key, value); err != nil {
			c.errs = append(c.errs, invalidArg("%v", err))
			return
		}
		if c.properties == nil {
			c.properties = map[string]string{}
		}
		c.properties[key] = value
	}
}

// WithIdempotencyKey makes the submission idempotent: a second submission
// with the same key returns the first job's id and writes nothing.
func WithIdempotencyKey(key string) SubmitOption {
	return func(c *submitConfig) {
		if key == "" {
			c.errs = append(c.errs, invalidArg("empty idempotency key"))
			return
		}
		c.idempotencyKey = key
	}
}

// InTx writes the submission inside tx, a transaction the application owns,
// so that the jobs exist only if tx commits: pgx.Tx for the PostgreSQL
// store, *sql.Tx for the database/sql stores. The store must have the
// spi.TxInserter capability.
//
// The client cannot see the commit, so it does not wake a node at once, as
// it does for a plain submission. PostgreSQL publishes a wakeup when the
// transaction commits, which reaches every node (the submitting one too).
// With the other stores, give WithAfterCommit as well, or the job starts at
// the next poll.
func InTx(tx any) SubmitOption {
	return func(c *submitConfig) {
		if tx == nil {
			c.errs = append(c.errs, invalidArg("nil transaction"))
			return
		}
		c.tx = tx
	}
}

// WithAfterCommit goes with InTx: the client registers the submission's
// wakeup with r, which runs it once the transaction has committed (see
// AfterCommit), so the node that will run the job wakes at the commit.
// Given without InTx it is an error.
func WithAfterCommit(r AfterCommitRegistrar) SubmitOption {
	return func(c *submitConfig) {
		if r == nil {
			c.errs = append(c.errs, invalidArg("nil after-commit registrar"))
			return
		}
		c.afterCommit = r
	}
}

// WithResource makes the job hold a permit of the named resource while it
// runs: across all nodes, no more than limit jobs naming the resource run at
// once (the limit is the job's own; give every job of a resource the same
// one). Permits are released on completion, failure, retry, release and
// crash recovery.
func WithResource(name string, limit int) SubmitOption {
	return func(c *submitConfig) {
		if name == "" || limit < 1 {
			c.errs = append(c.errs, invalidArg("resource %q needs a name and a limit of at least 1 (got %d)", name, limit))
			return
		}
		if spi.IsRateResource(name) {
			c.errs = append(c.errs, invalidArg("resource %q: names starting %q are WithRateLimit's", name, "ratchet.rate:"))
			return
		}
		if spi.IsRateResource(c.resource) {
			c.errs = append(c.errs, invalidArg("WithResource(%q) and WithRateLimit: a job holds one resource, a permit or a rate limit", name))
			return
		}
		c.resource, c.resourceLimit = name, limit
	}
}

// callback is one OnSuccess or OnFailure option.
type callback struct {
	call  Call
	allow spi.Allow
}

// OnSuccess adds the callback c to each submitted job: c runs once the job
// has SUCCEEDED and is SKIPPED otherwise. The job and its callbacks form a
// workflow of their own, written all or nothing; its id is the job's
// WorkflowID. c's payload is measured on its own against the payload limit
// (surface "callback"). The store must keep workflows; the job cannot
// carry an idempotency key. In a Workflow, use Step.OnSuccess.
func OnSuccess(c Call) SubmitOption {
	return func(cfg *submitConfig) {
		cfg.callbacks = append(cfg.callbacks, callback{call: c, allow: spi.AllowSucceeded})
	}
}

// OnFailure adds the callback c to each submitted job: c runs once the job
// has FAILED for good (its retries exhausted, DoNotRetry, or its crash
// budget spent) and is SKIPPED otherwise. Otherwise as OnSuccess.
func OnFailure(c Call) SubmitOption {
	return func(cfg *submitConfig) {
		cfg.callbacks = append(cfg.callbacks, callback{call: c, allow: spi.AllowFailed})
	}
}
